package dev.ferry.rpc;

import dev.ferry.rpc.RpcBackendOptions.EnvironmentOption;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * The environment variables that configure a worker, read once, when {@link RpcAgents#start}
 * starts its agent: each fills in one option the program did not set itself (the table in
 * {@link RpcBackendOptions}). Nothing else in Ferry reads the environment for its options, so a
 * program that passes every option, and every test, behaves the same whatever the shell holds.
 *
 * <p>Stateless.
 */
final class FerryEnvironment {
    static final String AUTH_TOKEN = "FERRY_AUTH_TOKEN";
    static final String TLS_KEYSTORE = "FERRY_TLS_KEYSTORE";
    static final String TLS_KEYSTORE_PASSWORD = "FERRY_TLS_KEYSTORE_PASSWORD";
    static final String TLS_TRUSTSTORE = "FERRY_TLS_TRUSTSTORE";
    static final String TLS_TRUSTSTORE_PASSWORD = "FERRY_TLS_TRUSTSTORE_PASSWORD";
    static final String TLS_VERIFY_HOSTNAMES = "FERRY_TLS_VERIFY_HOSTNAMES";
    static final String SOCKET_HOST = "FERRY_SOCKET_HOST";
    static final String JMX = "FERRY_JMX";
    static final String STATUS_URL = "FERRY_STATUS_URL";
    /**
     * The application's packages, comma-separated ({@code .}: the unnamed package), added to those
     * the program declared; {@code ferry run} sets it to its main class's package.
     */
    static final String APPLICATION_PACKAGES = "FERRY_APPLICATION_PACKAGES";

    private FerryEnvironment() {
    }

    /**
     * {@code options} with what {@code env} configures filled in where the program set nothing (the
     * application's packages are added to the program's, not replaced).
     */
    static RpcBackendOptions apply(RpcBackendOptions options, Map<String, String> env) {
        RpcBackendOptions.Builder builder = options.toBuilder();
        String token = nonBlank(env.get(AUTH_TOKEN));
        if (token != null && !options.isExplicit(EnvironmentOption.AUTH_TOKEN)) {
            builder.authToken(token);
        }
        String keyStore = nonBlank(env.get(TLS_KEYSTORE));
        if (keyStore != null && !options.isExplicit(EnvironmentOption.TLS)) {
            char[] password = env.getOrDefault(TLS_KEYSTORE_PASSWORD, "").toCharArray();
            String trustStore = nonBlank(env.get(TLS_TRUSTSTORE));
            builder.tls(trustStore == null
                    ? TlsContexts.fromKeyStores(Path.of(keyStore), password, Path.of(keyStore), password)
                    : TlsContexts.fromKeyStores(Path.of(keyStore), password, Path.of(trustStore),
                            env.getOrDefault(TLS_TRUSTSTORE_PASSWORD, "").toCharArray()));
        }
        String verify = env.get(TLS_VERIFY_HOSTNAMES);
        if (verify != null && !options.isExplicit(EnvironmentOption.TLS_VERIFY_HOSTNAMES)) {
            builder.tlsVerifyHostnames(isTrue(verify));
        }
        String host = nonBlank(env.get(SOCKET_HOST));
        if (host != null && !options.isExplicit(EnvironmentOption.LISTEN_HOST)) {
            builder.listenHost(host);
        }
        String packages = nonBlank(env.get(APPLICATION_PACKAGES));
        if (packages != null) {
            for (String name : packages.split(",")) {
                String trimmed = name.strip();
                if (!trimmed.isEmpty() && !options.applicationPackages().contains(trimmed)) {
                    builder.applicationPackage(trimmed);
                }
            }
        }
        String jmx = env.get(JMX);
        if (jmx != null && !options.isExplicit(EnvironmentOption.JMX)) {
            builder.jmx(JmxRegistration.fromEnvironment(jmx));
        }
        String statusUrl = nonBlank(env.get(STATUS_URL));
        if (statusUrl != null && !options.isExplicit(EnvironmentOption.STATUS_URL)) {
            builder.statusUrl(statusUrl);
        }
        return builder.build();
    }

    private static boolean isTrue(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        return v.equals("1") || v.equals("true");
    }

    private static String nonBlank(String value) {
        return value == null || value.isBlank() ? null : value;
    }
}
