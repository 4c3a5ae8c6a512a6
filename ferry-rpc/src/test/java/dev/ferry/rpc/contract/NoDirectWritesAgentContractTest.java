package dev.ferry.rpc.contract;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.TransportTuning;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent contract over no direct writes: the event loops write every frame. */
class NoDirectWritesAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options.transport(TransportTuning.defaults().withDirectWrites(false));
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assertThat(info).containsEntry("transport.direct_writes", "off (directWrites false)");
    }
}
