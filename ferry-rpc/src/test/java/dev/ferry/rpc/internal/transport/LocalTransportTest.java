package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.TransportTuning;

import java.util.concurrent.ThreadFactory;

/** The transport contract in process. */
class LocalTransportTest extends AbstractTransportTest {
    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        TransportTuning tuning = TransportTuning.defaults();
        return new LocalTransport(name, 2, maxFrameBytes, tuning.sendQueueBytes(), tuning.sendQueueTimeout(), threads);
    }

    @Override
    protected String unreachableAddress() {
        return "local:nobody/0";
    }

    @Override
    protected String expectedKind() {
        return "in-process";
    }
}
