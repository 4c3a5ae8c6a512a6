package dev.ferry.rpc.contract;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.TransportTuning;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent contract over loopback TCP (Unix sockets off), with lanes and direct writes. */
class TcpAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options.transport(TransportTuning.defaults().withUnixSockets(false));
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assertThat(info).containsEntry("agent.peer.worker1.transport", "tcp").containsKey("transport.lanes.tcp_port");
    }
}
