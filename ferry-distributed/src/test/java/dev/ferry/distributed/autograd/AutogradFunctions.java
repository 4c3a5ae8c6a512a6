package dev.ferry.distributed.autograd;

import dev.ferry.distributed.internal.ContextContainer;
import dev.ferry.rpc.Rpc;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.autograd.Function;
import dev.ferry.tensor.autograd.FunctionContext;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Functions the distributed autograd tests run on other workers. */
public final class AutogradFunctions {
    /** Each worker's own leaf (several workers share this JVM, so by worker name). */
    private static final Map<String, Tensor> WEIGHTS = new ConcurrentHashMap<>();

    private AutogradFunctions() {
    }

    public static Tensor add(Tensor a, Tensor b) {
        return a.add(b);
    }

    public static Tensor sumOf(Tensor t) {
        return t.sum();
    }

    public static String foo() {
        return "foo";
    }

    public static Tensor doubled(Tensor t) {
        return t.mul(2);
    }

    /** Calls {@code next} with {@code t}, then triples what comes back: d/dt = 6 through two hops. */
    public static Tensor chain(String next, Tensor t) {
        Tensor doubled = Rpc.rpcSync(next, AutogradFunctions::doubled, t);
        return doubled.mul(3);
    }

    /**
     * {@link #chain}, once the caller's context has left this worker: a handler that outlives its
     * context (its nested call is then made outside it).
     */
    public static Tensor chainOnceReleased(String next, Tensor t) {
        CountDownLatch released = new CountDownLatch(1);
        DistAutograd.whenReleased(DistAutograd.currentContextId(), released::countDown);
        try {
            if (!released.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the context was not released within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return chain(next, t);
    }

    /** The identity, whose backward fails on the worker that ran it. */
    public static Tensor failingInBackward(Tensor t) {
        return new HookedIdentity(() -> {
            throw new IllegalStateException("backward failed on " + Rpc.getWorkerInfo().name());
        }).apply(t);
    }

    /** The identity, whose backward runs {@code hook} on the worker that ran the forward. */
    static final class HookedIdentity extends Function {
        private final Runnable hook;

        HookedIdentity(Runnable hook) {
            this.hook = hook;
        }

        @Override
        protected Tensor forward(FunctionContext ctx, Tensor... inputs) {
            return inputs[0].clone();
        }

        @Override
        protected Tensor[] backward(FunctionContext ctx, Tensor gradOutput) {
            hook.run();
            return new Tensor[] {gradOutput};
        }
    }

    /** {@code x} times this worker's weight, a leaf that lives here. */
    public static Tensor timesWeight(Tensor x) {
        return x.mul(weight());
    }

    /** The gradient this worker's weight received in context {@code contextId}. */
    public static Tensor weightGradient(long contextId) {
        return DistAutograd.getGradients(contextId).get(weight());
    }

    public static Tensor weight() {
        return WEIGHTS.computeIfAbsent(Rpc.getWorkerInfo().name(),
                name -> Tensors.ones(2, 2).mul(3).requiresGrad_(true));
    }

    /** This worker's distributed autograd debug info, taken inside the handler. */
    public static Map<String, String> debugInfo() {
        return DistAutograd.debugInfo();
    }

    /** The identity, whose backward reports the debug info of the worker running it. */
    public static Tensor reportingInBackward(Tensor t) {
        return new HookedIdentity(() -> SEEN_IN_BACKWARD.put(Rpc.getWorkerInfo().name(), DistAutograd.debugInfo()))
                .apply(t);
    }

    /** What {@link #reportingInBackward}'s backward saw, by worker. */
    public static final Map<String, Map<String, String>> SEEN_IN_BACKWARD = new ConcurrentHashMap<>();

    /** How many autograd contexts this worker holds. */
    public static Integer contextCount() {
        return ContextContainer.of(Rpc.current()).contexts().size();
    }

    /** Whether the handler runs in the caller's context. */
    public static Long contextIdSeenByHandler() {
        return DistAutograd.currentContextId();
    }

    /** Contexts whose release the workers saw, as {@code "workerN:id"}. */
    public static final java.util.Set<String> RELEASED = ConcurrentHashMap.newKeySet();

    /** Notes, on the worker running it, when the caller's context leaves that worker. */
    public static Boolean noteRelease() {
        String worker = Rpc.getWorkerInfo().name();
        long context = DistAutograd.currentContextId();
        DistAutograd.whenReleased(context, () -> RELEASED.add(worker + ":" + context));
        return Boolean.TRUE;
    }
}
