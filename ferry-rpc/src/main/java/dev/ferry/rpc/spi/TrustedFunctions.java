package dev.ferry.rpc.spi;

import java.util.Collection;

/**
 * The remote entry points of a library built on Ferry: classes whose methods peers may call
 * although they are not the application's code (such as the calls distributed autograd makes
 * between workers). Peers may call only the application's code, what {@link dev.ferry.rpc.RpcCallable}
 * marks and what the options allow; without this, the libraries an application uses could not call
 * each other across workers. Private methods, and the JDK's classes, stay refused whatever a
 * provider lists.
 *
 * <p>Found by {@link java.util.ServiceLoader}; list only classes made to be called by any member of
 * the group, since every method of them that is not private becomes a remote entry point.
 *
 * <pre>{@code
 * public final class MyLibraryEntryPoints implements TrustedFunctions {
 *     public Collection<Class<?>> classes() {
 *         return List.of(RemoteCalls.class);
 *     }
 * }
 * // and its name in META-INF/services/dev.ferry.rpc.spi.TrustedFunctions
 * }</pre>
 */
public interface TrustedFunctions {
    /** The classes whose methods peers may call. */
    Collection<Class<?>> classes();
}
