package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RemoteFunction;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;

import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The functions a worker registered by name. A call by name is an ordinary call of one of Ferry's
 * own functions, {@link SystemCalls#callByName}, whose arguments are the name and the values, so
 * nothing of the callee's code crosses the wire and the caller needs none of its classes. What a
 * peer can reach this way is exactly what the program registered.
 *
 * <pre>
 *   caller ──call("scale", [3.0], {factor: 2.0})──▶ callee: registered "scale" → Ops.scale(3.0, 2.0)
 * </pre>
 *
 * <p>This class is thread-safe.
 */
public final class NamedCalls {
    private final String worker;
    private final ConcurrentMap<String, NamedFunction> functions = new ConcurrentHashMap<>();

    NamedCalls(String worker) {
        this.worker = worker;
    }

    /** Registers {@code function} as {@code name}; see {@link NamedFunction#of}. */
    void register(String name, RemoteFunction function, Map<String, ?> defaults) {
        if (name == null || name.isBlank()) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "a registered function needs a name");
        }
        NamedFunction named = NamedFunction.of(name, function, defaults);
        if (functions.putIfAbsent(name, named) != null) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, worker + " already has a function registered"
                    + " as '" + name + "'");
        }
    }

    private NamedFunction lookUp(String name) {
        NamedFunction function = functions.get(name);
        if (function == null) {
            throw new RpcException(RpcException.Code.UNKNOWN_FUNCTION, "no function is registered as '" + name
                    + "' on " + worker + "; registered: " + new TreeSet<>(functions.keySet()));
        }
        return function;
    }

    /** Runs the function registered as {@code name} with the arguments bound by position and by name. */
    RpcFuture<Object> call(String name, List<Object> args, Map<String, Object> kwargs) throws Exception {
        return lookUp(name).call(args, kwargs);
    }
}
