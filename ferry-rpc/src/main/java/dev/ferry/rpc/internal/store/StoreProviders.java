package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.spi.StoreProvider;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The {@link StoreProvider}s on the class path, by scheme: looked up once per rendezvous (not
 * cached in a static, so a class loader that adds a provider later is seen).
 */
public final class StoreProviders {
    private final Map<String, StoreProvider> byScheme;

    private StoreProviders(Map<String, StoreProvider> byScheme) {
        this.byScheme = byScheme;
    }

    /** The providers {@link ServiceLoader} finds; two providers of one scheme are refused. */
    public static StoreProviders load() {
        Map<String, StoreProvider> byScheme = new TreeMap<>();
        for (StoreProvider provider : ServiceLoader.load(StoreProvider.class, classLoader())) {
            for (String scheme : provider.schemes()) {
                StoreProvider other = byScheme.putIfAbsent(scheme, provider);
                if (other != null && other.getClass() != provider.getClass()) {
                    throw new RpcException(Code.INVALID_ARGUMENT, "Two store providers claim the init method scheme "
                            + scheme + "://: " + other.getClass().getName() + " and " + provider.getClass().getName());
                }
            }
        }
        return new StoreProviders(byScheme);
    }

    private static ClassLoader classLoader() {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        return context != null ? context : StoreProviders.class.getClassLoader();
    }

    /** The provider of {@code scheme}, or null. */
    public StoreProvider forScheme(String scheme) {
        return byScheme.get(scheme);
    }

    /** The schemes they open, sorted. */
    public java.util.Set<String> schemes() {
        return byScheme.keySet();
    }
}
