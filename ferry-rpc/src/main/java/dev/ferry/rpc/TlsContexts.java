package dev.ferry.rpc;

import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Builds the {@link SSLContext} that {@link RpcBackendOptions.Builder#tls} takes from key stores on
 * disk: this worker's private key and certificate chain, and the certificates it trusts (usually the
 * cluster's CA). The same is done from the environment by {@code FERRY_TLS_KEYSTORE}, for workers
 * started by {@code ferry run}.
 *
 * <pre>{@code
 * SSLContext tls = TlsContexts.fromKeyStores(Path.of("worker.p12"), password, Path.of("cluster-ca.p12"), caPassword);
 * RpcAgent agent = Rpc.initRpc("worker0", 0, 2, RpcBackendOptions.builder().tls(tls).build());
 * }</pre>
 *
 * <p>This class is stateless and thread-safe.
 */
public final class TlsContexts {
    private TlsContexts() {
    }

    /**
     * A TLS context with the key of {@code keyStore} and the certificates of {@code trustStore}
     * trusted; both files in any format the JDK reads (PKCS12, JKS), found by their content.
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} naming the file if a store cannot
     *                      be read (missing, wrong password, not a key store) or holds no usable key
     */
    public static SSLContext fromKeyStores(Path keyStore, char[] keyStorePassword, Path trustStore,
                                           char[] trustStorePassword) {
        Objects.requireNonNull(keyStore, "keyStore");
        Objects.requireNonNull(trustStore, "trustStore");
        KeyStore keys = load(keyStore, keyStorePassword);
        KeyStore trusted = load(trustStore, trustStorePassword);
        try {
            KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(keys, keyStorePassword);
            TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "cannot use the key in " + keyStore
                    + " with the certificates of " + trustStore + " for TLS: " + e.getMessage(), e);
        }
    }

    private static KeyStore load(Path file, char[] password) {
        try {
            return KeyStore.getInstance(file.toFile(), password);
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "cannot read the key store " + file
                    + " (missing, wrong password, or not a key store): " + e.getMessage(), e);
        }
    }
}
