package dev.ferry.rpc.spi;

import dev.ferry.rpc.internal.store.InitMethodUrl;
import dev.ferry.rpc.internal.store.StoreProviders;
import dev.ferry.rpc.store.Store;
import java.time.Duration;
import java.util.Set;

/**
 * Opens the stores of init method URL schemes that ferry-rpc does not know itself, such as
 * {@code etcd://} and {@code zookeeper://}, so that a store on an external service is a jar on the
 * class path and not a dependency of the core. Found by {@link java.util.ServiceLoader} (a
 * {@code META-INF/services/dev.ferry.rpc.spi.StoreProvider} file naming the implementation).
 *
 * <p>{@link dev.ferry.rpc.store.Rendezvous} resolves the rank and world size (arguments, the
 * URL's {@code ?rank=R&world_size=N}, else {@code RANK} / {@code WORLD_SIZE}) and then calls {@link
 * #open} with the URL parsed into a {@link StoreAddress}; a provider reads only the rest (endpoints,
 * path, its own query parameters).
 *
 * <pre>{@code
 * public final class ConsulStoreProvider implements StoreProvider {
 *     public Set<String> schemes() { return Set.of("consul"); }
 *     public Store open(StoreAddress address, Duration timeout) {
 *         return new BackedStore(ConsulBackend.connect(address.endpoints(), address.path()), timeout);
 *     }
 * }
 * }</pre>
 */
public interface StoreProvider {
    /** The URL schemes this provider opens, without {@code ://}, e.g. {@code etcd}. */
    Set<String> schemes();

    /**
     * Connects to the store {@code address} names, waiting at most {@code timeout} (ZERO: forever)
     * for the service to answer.
     *
     * @param address the init method URL, parsed
     * @param timeout the store's default timeout and the connect timeout
     * @throws dev.ferry.rpc.RpcException INVALID_ARGUMENT for a malformed URL, RENDEZVOUS_FAILED if
     *     the service cannot be reached in time
     */
    Store open(StoreAddress address, Duration timeout);

    /**
     * The store a provider's URL names, opened by the provider of its scheme on the class path: for
     * tools that need a store without a rank, such as a launcher meeting its peers on etcd.
     *
     * @throws dev.ferry.rpc.RpcException INVALID_ARGUMENT if no provider opens that scheme or the URL
     *     is malformed; RENDEZVOUS_FAILED if the service does not answer in time
     */
    static Store openUrl(String url, Duration timeout) {
        StoreProviders providers = StoreProviders.load();
        InitMethodUrl parsed = InitMethodUrl.parse(url, providers.schemes());
        StoreProvider provider = providers.forScheme(parsed.scheme());
        if (provider == null) {
            throw new dev.ferry.rpc.RpcException(dev.ferry.rpc.RpcException.Code.INVALID_ARGUMENT,
                    "'" + url + "' is not the URL of a store provider's scheme (" + providers.schemes() + ")");
        }
        return provider.open(StoreAddress.parse(url), timeout);
    }
}
