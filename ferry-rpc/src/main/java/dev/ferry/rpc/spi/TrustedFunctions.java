package dev.ferry.rpc.spi;

import java.util.Collection;

/**
 * Classes whose methods peers may call whatever the function allow-list says
 * ({@code RpcBackendOptions.Builder.allowFunctionPrefix}): the remote entry points of a library built
 * on Ferry, such as the calls distributed autograd makes between workers. Without this, an
 * application that narrows its allow-list to its own packages would break the libraries it uses.
 * JDK classes and Ferry's core internals stay refused whatever a provider lists.
 *
 * <p>Found by {@link java.util.ServiceLoader}; list only classes made to be called by peers.
 */
public interface TrustedFunctions {
    /** The classes whose methods peers may call. */
    Collection<Class<?>> classes();
}
