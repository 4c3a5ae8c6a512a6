package dev.ferry.rpc;

import java.time.Duration;

/**
 * What every backend's options have: PyTorch's base {@code RpcBackendOptions} ({@code init_method},
 * {@code rpc_timeout}). The built-in backends take {@link RpcBackendOptions} (PyTorch's
 * {@code TensorPipeRpcBackendOptions}); a backend registered with {@link BackendRegistry} may take
 * its own type, usually a record:
 *
 * <pre>{@code
 * record StubOptions(String initMethod, Duration rpcTimeout) implements BackendOptions {
 * }
 * }</pre>
 *
 * <p>Implementations should be immutable: an agent may keep its options for its whole life.
 */
public interface BackendOptions {

    /** How workers rendezvous: {@code env://}, {@code tcp://host:port} or {@code file:///path}. */
    String initMethod();

    /** The default timeout of calls; {@link Duration#ZERO} means none. */
    Duration rpcTimeout();

    /** How long initialization waits for every worker to join; the rpcTimeout unless overridden. */
    default Duration rendezvousTimeout() {
        return rpcTimeout();
    }
}
