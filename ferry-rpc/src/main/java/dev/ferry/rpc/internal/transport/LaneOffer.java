package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

/**
 * What one end of a connection tells the other about the lanes it accepts ({@link LaneServer}):
 * where (a TCP port, and a Unix socket for a peer on this host) and the key that ties a lane to
 * this connection. A lane's first frame, after authentication, is the key: the lane then carries
 * calls of that connection's peer, whose identity the connection established, and closes with it.
 * The key is random and travels only on the connection (which lanes never run beside with TLS).
 *
 * <pre>
 * lane offer, a unit of the connection (in place of a frame):
 * +--------+---------------+-----------+-----------+------------+-------------------------+
 * | length | marker = 0xC9 | u16 port  | key       | u16 n      | n bytes UTF-8 socket    |
 * | int32  |      u8       | TCP lanes | 16 bytes  | (0: none)  | path of the Unix lanes  |
 * +--------+---------------+-----------+-----------+------------+-------------------------+
 * </pre>
 *
 * <p>Immutable.
 */
record LaneOffer(int tcpPort, byte[] key, String socketPath) {
    /** First byte of an offer unit; a frame starts with its version (1), a chunk with 0xC7. */
    static final int MARKER = 0xC9;
    static final int KEY_BYTES = 16;
    /** Longest offer unit (length prefix excluded): a Unix socket path is at most 108 bytes. */
    static final int MAX_BYTES = 1 + 2 + KEY_BYTES + 2 + 256;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A fresh random key. */
    static byte[] newKey() {
        byte[] key = new byte[KEY_BYTES];
        RANDOM.nextBytes(key);
        return key;
    }

    /** The unit, length prefix included. */
    ByteBuf encode(ByteBufAllocator alloc) {
        byte[] path = socketPath == null ? new byte[0] : socketPath.getBytes(StandardCharsets.UTF_8);
        int length = 1 + 2 + KEY_BYTES + 2 + path.length;
        return alloc.buffer(4 + length).writeInt(length).writeByte(MARKER).writeShort(tcpPort).writeBytes(key)
                .writeShort(path.length).writeBytes(path);
    }

    /**
     * Reads an offer unit ({@code unit} positioned after the marker).
     *
     * @throws RpcException PROTOCOL_ERROR for a malformed offer
     */
    static LaneOffer decode(ByteBuf unit) {
        try {
            int port = unit.readUnsignedShort();
            byte[] key = new byte[KEY_BYTES];
            unit.readBytes(key);
            int pathLength = unit.readUnsignedShort();
            String path = pathLength == 0 ? null : unit.readCharSequence(pathLength, StandardCharsets.UTF_8).toString();
            if (unit.isReadable() || port == 0) {
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "malformed lane offer");
            }
            return new LaneOffer(port, key, path);
        } catch (IndexOutOfBoundsException e) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "truncated lane offer");
        }
    }
}
