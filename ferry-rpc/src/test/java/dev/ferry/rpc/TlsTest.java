package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import dev.ferry.rpc.testing.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A group whose TCP connections use mutual TLS, with the token's handshake inside: calls, large
 * values and calls back all work; key stores that cannot be used fail clearly.
 */
@Timeout(120)
class TlsTest {
    private static final int MIB = 1 << 20;

    @Test
    void aGroupCallsOverTlsWithItsToken(@TempDir Path dir) throws Exception {
        SSLContext tls = TestCertificates.context(TestCertificates.keyStore(dir, "cluster"));
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.tls(tls).authToken("a-secret-of-the-group-0123456789")
                .transport(TransportTuning.defaults().withUnixSockets(false)))) {
            RpcAgent w0 = cluster.agent(0);
            assertThat(w0.rpcSync("worker1", Ops::add, 40, 2)).isEqualTo(42);
            byte[] large = new byte[9 * MIB];
            large[12345] = 5;
            assertThat((byte[]) w0.rpcSync("worker1", Ops::identity, large)).isEqualTo(large);
            assertThat(cluster.agent(1).rpcSync("worker0", Ops::whoAmI)).isEqualTo("worker0");
            assertThat(w0.getDebugInfo()).containsEntry("transport.tls", "mutual (TCP connections)")
                    .containsEntry("transport.auth.rejected", "0");
        }
    }

    @Test
    void keyStoresThatCannotBeUsedFailNamingTheFile(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("missing.p12");
        assertThatThrownBy(() -> TlsContexts.fromKeyStores(missing, TestCertificates.PASSWORD, missing,
                TestCertificates.PASSWORD))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining(missing.toString());
        Path store = TestCertificates.keyStore(dir, "worker");
        assertThatThrownBy(() -> TlsContexts.fromKeyStores(store, "wrong".toCharArray(), store, TestCertificates.PASSWORD))
                .isInstanceOf(RpcException.class).hasMessageContaining(store.toString());
        Path notAStore = Files.writeString(dir.resolve("notes.txt"), "not a key store");
        assertThatThrownBy(() -> TlsContexts.fromKeyStores(store, TestCertificates.PASSWORD, notAStore,
                TestCertificates.PASSWORD))
                .isInstanceOf(RpcException.class).hasMessageContaining(notAStore.toString());
    }

    @Test
    void optionsKeepTheContextAndAnExplicitNullTurnsTlsOff(@TempDir Path dir) throws Exception {
        SSLContext tls = TestCertificates.context(TestCertificates.keyStore(dir, "options"));
        RpcBackendOptions options = RpcBackendOptions.builder().tls(tls).build();
        assertThat(options.tls()).isSameAs(tls);
        assertThat(options.toBuilder().build().tls()).isSameAs(tls);
        assertThat(options.toBuilder().tls(null).build().tls()).isNull();
        assertThat(options.toBuilder().tlsVerifyHostnames(true).build().toBuilder().build().tlsVerifyHostnames()).isTrue();
        assertThat(options.toBuilder().tlsVerifyHostnames(false).build().tlsVerifyHostnames()).isFalse();
    }

    @Test
    void aGroupWithHostNamesVerifiedCallsWhenEachCertificateNamesItsHost(@TempDir Path dir) throws Exception {
        SSLContext tls = TestCertificates.context(TestCertificates.keyStore(dir, "hosts", "ip:127.0.0.1"));
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.tls(tls).tlsVerifyHostnames(true)
                .transport(TransportTuning.defaults().withUnixSockets(false)).listenHost("127.0.0.1"))) {
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 40, 2)).isEqualTo(42);
            assertThat(cluster.agent(1).rpcSync("worker0", Ops::whoAmI)).isEqualTo("worker0");
            assertThat(cluster.agent(0).getDebugInfo())
                    .containsEntry("transport.tls", "mutual, host names verified (TCP connections)");
        }
    }
}
