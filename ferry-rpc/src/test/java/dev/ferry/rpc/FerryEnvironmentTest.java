package dev.ferry.rpc;

import dev.ferry.rpc.testing.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The environment configures what the program left unset, once, when the agent starts; builders
 * never read it, so options a program (or a test) builds are the same in every shell.
 */
class FerryEnvironmentTest {
    private static final String TOKEN = "a-token-from-the-launcher-0123";

    @Test
    void buildersUseTheirConstantDefaults() {
        RpcBackendOptions options = RpcBackendOptions.defaults();
        assertThat(options.authToken()).isNull();
        assertThat(options.tls()).isNull();
        assertThat(options.listenHost()).isEqualTo("127.0.0.1");
        assertThat(options.jmx()).isEqualTo(JmxRegistration.IF_RUNNING);
        assertThat(options.transport()).isSameAs(TransportTuning.defaults());
    }

    @Test
    void theEnvironmentFillsInWhatTheProgramLeftUnset() {
        RpcBackendOptions options = FerryEnvironment.apply(RpcBackendOptions.defaults(), Map.of(
                "FERRY_AUTH_TOKEN", TOKEN, "FERRY_SOCKET_HOST", "10.1.2.3", "FERRY_JMX", "0",
                "FERRY_TLS_VERIFY_HOSTNAMES", "true", "FERRY_UNIX_SOCKETS", "0"));
        assertThat(options.authToken()).isEqualTo(TOKEN);
        assertThat(options.listenHost()).isEqualTo("10.1.2.3");
        assertThat(options.jmx()).isEqualTo(JmxRegistration.NEVER);
        assertThat(options.tlsVerifyHostnames()).isTrue();
        // Transport tuning is the program's alone: no variable changes it.
        assertThat(options.transport().unixSockets()).isTrue();
    }

    @Test
    void whatTheProgramSetWinsEvenWhenItTurnedSomethingOff() {
        RpcBackendOptions set = RpcBackendOptions.builder().authToken(null).listenHost("0.0.0.0")
                .jmx(JmxRegistration.ALWAYS).tls(null).tlsVerifyHostnames(false).build();
        RpcBackendOptions options = FerryEnvironment.apply(set, Map.of("FERRY_AUTH_TOKEN", TOKEN,
                "FERRY_SOCKET_HOST", "10.1.2.3", "FERRY_JMX", "0", "FERRY_TLS_KEYSTORE", "/nowhere.p12",
                "FERRY_TLS_VERIFY_HOSTNAMES", "1"));
        assertThat(options.authToken()).isNull();
        assertThat(options.listenHost()).isEqualTo("0.0.0.0");
        assertThat(options.jmx()).isEqualTo(JmxRegistration.ALWAYS);
        assertThat(options.tls()).isNull();
        assertThat(options.tlsVerifyHostnames()).isFalse();
        // Derived options remember what was set: applying again changes nothing.
        assertThat(FerryEnvironment.apply(options.toBuilder().build(), Map.of("FERRY_AUTH_TOKEN", TOKEN)).authToken())
                .isNull();
    }

    @Test
    void tlsComesFromTheKeyStoreTheEnvironmentNames(@TempDir Path dir) throws Exception {
        Path store = TestCertificates.keyStore(dir, "worker");
        RpcBackendOptions options = FerryEnvironment.apply(RpcBackendOptions.defaults(), Map.of(
                "FERRY_TLS_KEYSTORE", store.toString(),
                "FERRY_TLS_KEYSTORE_PASSWORD", new String(TestCertificates.PASSWORD)));
        assertThat(options.tls()).isNotNull();
        assertThat(options.tls().getProtocol()).startsWith("TLS");
    }
}
