package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.BoundFunction;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RemoteFunction;
import dev.ferry.rpc.RpcFunction4;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WaitAllScope;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.serial.FunctionRefs;
import dev.ferry.rpc.spi.CallHeaders;

import java.time.Duration;

/**
 * The caller's side of bound functions ({@link dev.ferry.rpc.RpcAgent#bind}, tensorplay's
 * {@code method_factory}): one of Ferry's own calls asks the callee to resolve the function and give
 * it a handle ({@link SystemCalls#bindFunction}); the calls made through the binding then carry
 * that handle in place of the function's identity, and are otherwise the calls any function makes:
 * the same headers, interceptors, observers, lanes, errors and timeouts.
 *
 * <pre>
 *   caller                                                       callee
 *   bind(Ops::add) ── bindFunction(class, method, descriptor, kind) ─▶ resolves and checks it once,
 *                  ◀───────────────────── handle 7 ───────────────── gives it handle 7
 *   add.rpcSync(3, 4) ── CALL | function: 0, 7 | args 3, 4 ────────▶ handle 7's function, resolved: runs it
 * </pre>
 */
final class BoundFunctions {
    private static final RpcFunction4<String, String, String, Integer, Integer> BIND = SystemCalls::bindFunction;

    private BoundFunctions() {
    }

    /** Asks {@code callee} for a handle to {@code function}: the reference its calls then carry. */
    static FunctionRef bind(DefaultRpcAgent agent, WorkerInfo callee, RemoteFunction function, Duration timeout) {
        FunctionRef ref = FunctionRefs.of(function);
        Object handle = agent.invokeSystem(callee, BIND,
                new Object[] {ref.className(), ref.methodName(), ref.descriptor(), ref.kind()}, timeout).await();
        return ref.withHandle((Integer) handle);
    }

    /** A function bound on {@code worker}. */
    record OnWorker(DefaultRpcAgent agent, WorkerInfo worker, FunctionRef function) implements BoundFunction {
        @Override
        public <R> RpcFuture<R> invoke(Object[] args, Duration timeout) {
            RpcFuture<R> future = agent.invokeWithHeaders(worker, function, args, timeout, CallHeaders.empty());
            WaitAllScope.register(future);
            return future;
        }

        @Override
        public <R> R invokeAndWait(Object[] args, Duration timeout) {
            return agent.invokeWithHeadersAndWait(worker, function, args, timeout, CallHeaders.empty());
        }

        @Override
        public <R> RRef<R> invokeRemote(Object[] args, Duration timeout) {
            return agent.rrefHost().remote(worker, function, args, timeout, false);
        }

        @Override
        public String toString() {
            return function.displayName() + " on " + worker.name() + " (handle " + function.handle() + ")";
        }
    }

    /** A method bound on the owner of {@code rref}, run on its value: each call's receiver is {@code rref}. */
    record OnValue(AgentRRefHost host, RRef<?> rref, FunctionRef method) implements BoundFunction {
        @Override
        public WorkerInfo worker() {
            return rref.owner();
        }

        @Override
        public <R> RpcFuture<R> invoke(Object[] args, Duration timeout) {
            RpcFuture<R> future = host.callOnValue(rref, method, withReceiver(args), timeout);
            WaitAllScope.register(future);
            return future;
        }

        @Override
        public <R> R invokeAndWait(Object[] args, Duration timeout) {
            return host.callOnValueAndWait(rref, method, withReceiver(args), timeout);
        }

        @Override
        public <R> RRef<R> invokeRemote(Object[] args, Duration timeout) {
            return host.remoteOnValue(rref, method, withReceiver(args), timeout);
        }

        private Object[] withReceiver(Object[] args) {
            Object[] all = new Object[args.length + 1];
            all[0] = rref;
            System.arraycopy(args, 0, all, 1, args.length);
            return all;
        }

        @Override
        public String toString() {
            return method.displayName() + " on the value of " + rref + " (handle " + method.handle() + ")";
        }
    }
}
