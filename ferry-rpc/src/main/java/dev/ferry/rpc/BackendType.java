package dev.ferry.rpc;

import dev.ferry.rpc.internal.agent.BuiltInBackends;

import java.util.List;
import java.util.Objects;

/**
 * Names an RPC backend, as PyTorch's {@code BackendType}: an open set of the built-in backends
 * plus those registered with {@link BackendRegistry#registerBackend}. Each carries its
 * {@link BackendValue} (the handlers that make its options and start its agents). Two backend
 * types are equal when their names are.
 *
 * <table>
 *   <caption>Built-in backends</caption>
 *   <tr><th>backend</th><th>options</th><th>transport</th></tr>
 *   <tr><td>{@link #NETTY} (alias {@link #TENSORPIPE}, the default)</td><td>{@link RpcBackendOptions}</td>
 *       <td>TCP through Netty, native epoll where available</td></tr>
 *   <tr><td>{@link #IN_PROCESS}</td><td>{@link RpcBackendOptions}</td><td>every worker of the group in this
 *       JVM, no sockets; messages are still encoded and decoded, so arguments arrive as copies</td></tr>
 * </table>
 *
 * <pre>{@code
 * RpcAgent agent = RpcAgents.start("worker0", BackendType.IN_PROCESS, 0, 2, options);
 * BackendType stub = BackendRegistry.registerBackend("STUB", optionsHandler, initHandler);
 * assert BackendType.valueOf("STUB").equals(stub);
 * }</pre>
 *
 * <p>Instances are immutable; only {@link BackendRegistry} makes them.
 */
public final class BackendType {
    /** The default backend: Netty over TCP. */
    public static final BackendType NETTY = new BackendType("NETTY", BuiltInBackends.netty());
    /** PyTorch's default backend name; in Ferry the same as {@link #NETTY}. */
    public static final BackendType TENSORPIPE = NETTY;
    /**
     * Every worker of a group inside this JVM, connected without sockets: fast tests and
     * simulations. Workers rendezvous through a store as usual ({@code file://} or
     * {@code tcp://}); a worker of another process cannot join.
     */
    public static final BackendType IN_PROCESS = new BackendType("IN_PROCESS", BuiltInBackends.inProcess());

    private final String name;
    private final BackendValue value;

    BackendType(String name, BackendValue value) {
        this.name = Objects.requireNonNull(name, "name");
        this.value = Objects.requireNonNull(value, "value");
    }

    /** The registered backend called {@code name}; {@link RpcException.Code#INVALID_ARGUMENT} if there is none. */
    public static BackendType valueOf(String name) {
        return BackendRegistry.backend(name);
    }

    /** Every registered backend, built-in ones first. */
    public static List<BackendType> values() {
        return BackendRegistry.backends();
    }

    public String name() {
        return name;
    }

    /** The handlers that make this backend's options and agents. */
    public BackendValue value() {
        return value;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof BackendType that && name.equals(that.name);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return "BackendType." + name;
    }
}
