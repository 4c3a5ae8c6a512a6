package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.internal.wire.Delivery;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/** Netty transports a test starts, closed together at its end. Not thread-safe. */
final class NettyTransports implements AutoCloseable {
    private final List<Transport> started = new ArrayList<>();
    private final String threadName;

    NettyTransports(String threadName) {
        this.threadName = threadName;
    }

    /** A transport made with {@code options}, not started yet. */
    NettyTransport start(RpcBackendOptions options) {
        NettyTransport transport = new NettyTransport(options, TestOptions.threads(threads()));
        started.add(transport);
        return transport;
    }

    /** Starts a transport and returns its address. */
    String listen(RpcBackendOptions options, TransportListener events) {
        return start(options).start(events);
    }

    /**
     * Starts a transport and connects it to {@code address} (bounded wait). The connection's first
     * message is a small HELLO, as the agent's are ({@link TestMessages#hello()}), which a {@link
     * RecordingListener} does not record.
     */
    PeerChannel connect(RpcBackendOptions options, TransportListener events, String address) throws Exception {
        NettyTransport transport = start(options);
        transport.start(events);
        PeerChannel connection = transport.connect(address).get(10, TimeUnit.SECONDS);
        connection.send(TestMessages.hello(), Delivery.ORDERED, failure -> { }); // fails with the connection, if it does
        return connection;
    }

    /** Frames written by their senders over every transport started here (debug info). */
    long directWrites() {
        long sum = 0;
        for (Transport transport : started) {
            sum += Long.parseLong(((NettyTransport) transport).debugInfo().get("transport.direct_writes"));
        }
        return sum;
    }

    private ThreadFactory threads() {
        return task -> {
            Thread thread = new Thread(task, threadName);
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public void close() {
        started.forEach(Transport::close);
    }
}
