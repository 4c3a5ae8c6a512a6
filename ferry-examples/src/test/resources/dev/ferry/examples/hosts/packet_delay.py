#!/usr/bin/env python3
"""Holds every packet of one NFQUEUE queue for a fixed time, then lets it go: the delay of
`tc netem delay`, for kernels built without sch_netem (the project's VMs). Standard library only.

Usage: packet_delay.py QUEUE DELAY_MS

Run it in the network namespace whose packets an iptables rule sends to QUEUE
(`iptables -A OUTPUT -o eth0 -j NFQUEUE --queue-num QUEUE --queue-bypass`). It binds the queue
over netlink (nfnetlink_queue), asks for the packets' metadata only, prints "ready", and accepts
each packet DELAY_MS after the kernel queued it, in order. Verdicts are batched (NFQNL_MSG_VERDICT_BATCH
accepts every packet up to an id), so a notification lost to a full socket buffer cannot strand
a packet. If the queue fills, the kernel lets packets through undelayed (fail-open).
"""
import collections
import socket
import struct
import sys
import threading
import time

NETLINK_NETFILTER = 12
SOL_NETLINK = 270
NETLINK_NO_ENOBUFS = 5
SO_RCVBUFFORCE = 33
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT_BATCH = 0, 2, 3
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 3, 4, 5
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_CFG_F_FAIL_OPEN = 1
NF_ACCEPT = 1


def attribute(kind, payload):
    length = 4 + len(payload)
    return struct.pack('=HH', length, kind) + payload + b'\0' * (-length % 4)


def message(kind, queue, attributes, flags=NLM_F_REQUEST):
    body = struct.pack('!BBH', socket.AF_UNSPEC, 0, queue) + b''.join(attributes)
    return struct.pack('=IHHII', 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, 0, 0) + body


def configure(sock, queue):
    sock.send(message(NFQNL_MSG_CONFIG, queue, [
        attribute(NFQA_CFG_CMD, struct.pack('!BBH', NFQNL_CFG_CMD_BIND, 0, socket.AF_INET)),
        attribute(NFQA_CFG_PARAMS, struct.pack('!IB', 0, NFQNL_COPY_META)),
        attribute(NFQA_CFG_QUEUE_MAXLEN, struct.pack('!I', 65536)),
        attribute(NFQA_CFG_MASK, struct.pack('!I', NFQA_CFG_F_FAIL_OPEN)),
        attribute(NFQA_CFG_FLAGS, struct.pack('!I', NFQA_CFG_F_FAIL_OPEN)),
    ], NLM_F_REQUEST | NLM_F_ACK))
    reply = sock.recv(65536)
    length, kind = struct.unpack_from('=IH', reply)
    if kind == NLMSG_ERROR:
        (error,) = struct.unpack_from('=i', reply, 16)
        if error != 0:
            raise OSError(-error, 'binding queue %d failed' % queue)


def packet_ids(data):
    """The ids of the packets announced in one read (several netlink messages)."""
    offset = 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from('=IH', data, offset)
        if length < 16:
            return
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            at = offset + 16 + 4  # past the nlmsghdr and the nfgenmsg
            while at + 4 <= offset + length:
                size, attr = struct.unpack_from('=HH', data, at)
                if size < 4:
                    break
                if attr & 0x7fff == NFQA_PACKET_HDR:
                    yield struct.unpack_from('!I', data, at + 4)[0]
                    break
                at += (size + 3) & ~3
        offset += (length + 3) & ~3


def main():
    queue, delay = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
    configure(sock, queue)
    held = collections.deque()  # (due, id), in arrival order, so in due order too
    arrived = threading.Condition()

    def release():
        while True:
            with arrived:
                while not held:
                    arrived.wait()
                due, last = held[0]
                now = time.monotonic()
                if due > now:
                    arrived.wait(due - now)
                    continue
                while held and held[0][0] <= now:
                    last = held.popleft()[1]
            sock.send(message(NFQNL_MSG_VERDICT_BATCH, queue,
                              [attribute(NFQA_VERDICT_HDR, struct.pack('!II', NF_ACCEPT, last))]))

    threading.Thread(target=release, daemon=True).start()
    print('ready', flush=True)
    while True:
        data = sock.recv(1 << 20)
        now = time.monotonic()
        ids = list(packet_ids(data))
        if ids:
            with arrived:
                held.extend((now + delay, packet) for packet in ids)
                arrived.notify()


if __name__ == '__main__':
    main()
