package dev.ferry.rpc.contract;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.TransportTuning;
import io.netty.channel.epoll.Epoll;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The agent contract over a Unix socket between workers on this host, shared memory off. */
class UdsAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options.transport(TransportTuning.defaults().withSharedMemoryBytes(0));
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assumeTrue(Epoll.isAvailable(), "Unix sockets need the native transport");
        assertThat(info).containsEntry("agent.peer.worker1.transport", "uds");
    }
}
