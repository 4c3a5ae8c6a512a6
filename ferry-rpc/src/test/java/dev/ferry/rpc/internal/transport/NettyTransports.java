package dev.ferry.rpc.internal.transport;

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

    /** A transport made with {@code settings}, not started yet. */
    NettyTransport start(NettyTransport.Settings settings) {
        NettyTransport transport = new NettyTransport(settings, threads());
        started.add(transport);
        return transport;
    }

    /** Starts a transport and returns its address. */
    String listen(NettyTransport.Settings settings, TransportListener events) {
        return start(settings).start(events);
    }

    /** Starts a transport and connects it to {@code address} (bounded wait). */
    Connection connect(NettyTransport.Settings settings, TransportListener events, String address) throws Exception {
        NettyTransport transport = start(settings);
        transport.start(events);
        return transport.connect(address).get(10, TimeUnit.SECONDS);
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
