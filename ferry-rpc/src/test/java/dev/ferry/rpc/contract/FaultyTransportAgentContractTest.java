package dev.ferry.rpc.contract;

import dev.ferry.rpc.FaultInjection;
import dev.ferry.rpc.RpcBackendOptions;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The agent contract through the fault-injection decorator with no fault configured: every
 * message, answer and close passes {@code FaultyTransport} and its channels, which must change
 * nothing a program sees (order, routes, errors, timeouts, shutdown).
 */
class FaultyTransportAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options.faultInjection(FaultInjection.builder().build());
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assertThat(info.get("agent.transport")).endsWith("+faults");
        assertThat(info).containsEntry("transport.faults.failed_sends", "0");
    }
}
