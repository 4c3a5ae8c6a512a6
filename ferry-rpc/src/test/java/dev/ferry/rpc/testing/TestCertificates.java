package dev.ferry.rpc.testing;

import dev.ferry.rpc.TlsContexts;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * Self-signed certificates for TLS tests, made by the JDK's {@code keytool} (no test dependency):
 * a key store holding one EC key and its certificate, which also serves as its own trust store, so
 * every worker given the same store trusts the others, and a worker given another store does not.
 */
public final class TestCertificates {
    /** Password of every store made here. */
    public static final char[] PASSWORD = "changeit".toCharArray();

    private TestCertificates() {
    }

    /** A new PKCS12 key store {@code dir/name.p12} with a self-signed certificate for 127.0.0.1. */
    public static Path keyStore(Path dir, String name) throws IOException, InterruptedException {
        return keyStore(dir, name, "ip:127.0.0.1");
    }

    /**
     * A new PKCS12 key store {@code dir/name.p12} with a self-signed certificate whose subject
     * alternative names are {@code names} (keytool's syntax: {@code ip:127.0.0.1,dns:example.org}).
     */
    public static Path keyStore(Path dir, String name, String names) throws IOException, InterruptedException {
        Path file = dir.resolve(name + ".p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process process = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", name,
                "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name, "-ext", "SAN=" + names,
                "-validity", "2", "-storetype", "PKCS12", "-keystore", file.toString(),
                "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD), "-noprompt"))
                .redirectErrorStream(true).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("keytool did not finish within 60 s");
        }
        if (process.exitValue() != 0) {
            throw new IOException("keytool failed: " + new String(process.getInputStream().readAllBytes(),
                    StandardCharsets.UTF_8));
        }
        return file;
    }

    /** A TLS context presenting {@code store}'s certificate and trusting only that certificate. */
    public static SSLContext context(Path store) {
        return TlsContexts.fromKeyStores(store, PASSWORD, store, PASSWORD);
    }
}
