package dev.ferry.rpc.contract;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.TransportTuning;
import dev.ferry.rpc.testing.TestCertificates;

import java.nio.file.Files;
import java.util.Map;
import javax.net.ssl.SSLContext;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent contract over mutual TLS on TCP with the token's handshake inside it (no lanes with TLS). */
class TlsAgentContractTest extends AbstractAgentContractTest {
    private static final SSLContext TLS = context();

    private static SSLContext context() {
        try {
            return TestCertificates.context(TestCertificates.keyStore(Files.createTempDirectory("ferry-tls-"), "contract"));
        } catch (Exception e) {
            throw new IllegalStateException("cannot make the test's certificates", e);
        }
    }

    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options.tls(TLS).authToken("a-secret-of-the-contract-0123456789")
                .transport(TransportTuning.defaults().withUnixSockets(false));
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assertThat(info).containsEntry("agent.peer.worker1.transport", "tcp").containsEntry("transport.lanes", "off (TLS)")
                .containsEntry("transport.tls", "mutual (TCP connections)");
    }
}
