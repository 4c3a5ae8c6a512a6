package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.BackendOptions;
import dev.ferry.rpc.BackendValue;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.transport.TransportFactory;
import dev.ferry.rpc.store.Store;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The handlers of Ferry's built-in backends: both are {@link DefaultRpcAgent} with
 * {@link RpcBackendOptions}; they differ only in the transport.
 */
public final class BuiltInBackends {
    private BuiltInBackends() {
    }

    /** TCP through Netty. */
    public static BackendValue netty() {
        return backend("NETTY", TransportFactory.NETTY);
    }

    /** Every worker in this JVM, no sockets. */
    public static BackendValue inProcess() {
        return backend("IN_PROCESS", TransportFactory.LOCAL);
    }

    private static BackendValue backend(String backend, TransportFactory transports) {
        return new BackendValue(BuiltInBackends::constructOptions,
                (store, name, rank, worldSize, options) -> init(backend, transports, store, name, rank, worldSize, options));
    }

    /** PyTorch's TensorPipe options handler: the common settings plus the keys it knows, others ignored. */
    static RpcBackendOptions constructOptions(Duration rpcTimeout, String initMethod, Map<String, ?> extra) {
        RpcBackendOptions.Builder builder = RpcBackendOptions.builder().rpcTimeout(rpcTimeout).initMethod(initMethod);
        Object threads = extra.get("numWorkerThreads");
        if (threads != null) {
            builder.numWorkerThreads(typed("numWorkerThreads", threads, Integer.class));
        }
        Object maps = extra.get("deviceMaps");
        if (maps != null) {
            @SuppressWarnings("unchecked")
            Map<String, Map<String, String>> deviceMaps = typed("deviceMaps", maps, Map.class);
            builder.deviceMaps(deviceMaps);
        }
        Object devices = extra.get("devices");
        if (devices != null) {
            @SuppressWarnings("unchecked")
            List<String> list = typed("devices", devices, List.class);
            builder.setDevices(list);
        }
        return builder.build();
    }

    private static <T> T typed(String key, Object value, Class<T> type) {
        if (!type.isInstance(value)) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, key + " must be a " + type.getSimpleName()
                    + ", got " + value.getClass().getName());
        }
        return type.cast(value);
    }

    private static RpcAgent init(String backend, TransportFactory transports, Store store, String name, int rank,
                                 int worldSize, BackendOptions options) {
        if (!(options instanceof RpcBackendOptions builtIn)) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "`rpcBackendOptions` must be a"
                    + " RpcBackendOptions for BackendType." + backend + ", got "
                    + (options == null ? "null" : options.getClass().getName()));
        }
        DefaultRpcAgent agent = DefaultRpcAgent.start(new WorkerInfo(name, rank), worldSize, builtIn, store, store,
                transports);
        try {
            if (!agent.joinedLate()) { // a joiner's maps were checked one to one when built; devices are the CPU
                DeviceMapCheck.exchangeAndCheck(agent, builtIn);
            }
            return agent;
        } catch (RuntimeException | Error e) {
            agent.shutdown(false, Duration.ZERO);
            throw e;
        }
    }
}
