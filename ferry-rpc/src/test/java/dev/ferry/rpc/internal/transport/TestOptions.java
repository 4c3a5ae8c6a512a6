package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.TransportTuning;

import java.time.Duration;

/**
 * Options of the transports these tests start: loopback TCP, one event loop, nothing spinning, no
 * lanes and no shared memory unless a test asks for them.
 */
final class TestOptions {
    private TestOptions() {
    }

    /** TCP on 127.0.0.1, messages up to {@code maxFrameBytes}. */
    static RpcBackendOptions.Builder tcp(long maxFrameBytes) {
        return RpcBackendOptions.builder().listenHost("127.0.0.1").maxMessageBytes(maxFrameBytes).transport(tuning());
    }

    /** {@link #tcp} with the transport tuned by {@code tuning} (applied to {@link #tuning()}). */
    static RpcBackendOptions.Builder tcp(long maxFrameBytes, java.util.function.UnaryOperator<TransportTuning> tuning) {
        return tcp(maxFrameBytes).transport(tuning.apply(tuning()));
    }

    /** Threads for a transport of these tests: event loops and lane threads from one factory. */
    static TransportThreads threads(java.util.concurrent.ThreadFactory factory) {
        return new TransportThreads(factory, factory);
    }

    /** The tuning of {@link #tcp}. */
    static TransportTuning tuning() {
        return TransportTuning.defaults().withUnixSockets(false).withIoThreads(1).withSpinTime(Duration.ZERO)
                .withSyncLanes(0).withSharedMemoryBytes(0);
    }
}
