package dev.ferry.rpc.contract;

import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RpcBackendOptions;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent contract over the in-process backend: no sockets, every message through the codec. */
class InProcessAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected BackendType backend() {
        return BackendType.IN_PROCESS;
    }

    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options;
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assertThat(info).containsEntry("agent.transport", "in-process")
                .containsEntry("agent.peer.worker1.transport", "in-process");
    }
}
