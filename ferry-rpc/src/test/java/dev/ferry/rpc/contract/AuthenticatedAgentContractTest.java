package dev.ferry.rpc.contract;

import dev.ferry.rpc.RpcBackendOptions;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent contract over connections and lanes authenticated with the group token. */
class AuthenticatedAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options.authToken("a-secret-of-the-contract-0123456789");
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assertThat(info).containsEntry("transport.auth", "hmac-sha256").containsEntry("transport.auth.rejected", "0");
    }
}
