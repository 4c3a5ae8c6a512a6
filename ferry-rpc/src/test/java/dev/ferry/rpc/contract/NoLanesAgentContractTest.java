package dev.ferry.rpc.contract;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.TransportTuning;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent contract over no synchronous-exchange lanes: every call over the connection. */
class NoLanesAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options.transport(TransportTuning.defaults().withSyncLanes(0));
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assertThat(info).containsEntry("transport.lanes", "off (syncLanes 0)");
    }
}
