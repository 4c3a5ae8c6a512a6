package dev.ferry.rpc;

import dev.ferry.rpc.store.Store;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The two handlers behind a {@link BackendType}, as PyTorch's {@code BackendValue}: one makes the
 * backend's options, one starts an agent. Register them with
 * {@link BackendRegistry#registerBackend}. Handlers may be called from several threads at once
 * (several agents of one JVM starting together), so they must be thread-safe.
 *
 * @param constructOptionsHandler makes default options; see {@link ConstructOptionsHandler}
 * @param initBackendHandler      starts an agent; see {@link InitBackendHandler}
 */
public record BackendValue(ConstructOptionsHandler constructOptionsHandler, InitBackendHandler initBackendHandler) {
    public BackendValue {
        Objects.requireNonNull(constructOptionsHandler, "constructOptionsHandler");
        Objects.requireNonNull(initBackendHandler, "initBackendHandler");
    }

    /**
     * Makes a backend's options from the common settings, as PyTorch's
     * {@code construct_rpc_backend_options_handler(rpc_timeout, init_method, **kwargs)}. Settings in
     * {@code extra} that the backend does not know are ignored, as in PyTorch.
     */
    @FunctionalInterface
    public interface ConstructOptionsHandler {
        BackendOptions construct(Duration rpcTimeout, String initMethod, Map<String, ?> extra);
    }

    /**
     * Starts this worker's agent once rendezvous is done, as PyTorch's
     * {@code init_backend_handler(store, name, rank, world_size, rpc_backend_options)}. It returns
     * only when the agent can call every worker of the group.
     *
     * <p>The returned agent owns {@code store}: it closes it at shutdown (the store of rank 0 may
     * host the server the other workers use, so close it after a graceful shutdown). If the
     * handler throws, the caller closes the store.
     *
     * <p>Check the options' type and throw {@link RpcException} with
     * {@link RpcException.Code#INVALID_ARGUMENT} for options of another backend.
     */
    @FunctionalInterface
    public interface InitBackendHandler {
        RpcAgent init(Store store, String name, int rank, int worldSize, BackendOptions options);
    }
}
