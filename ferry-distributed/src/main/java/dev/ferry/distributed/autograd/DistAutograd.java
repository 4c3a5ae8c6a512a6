package dev.ferry.distributed.autograd;

import dev.ferry.distributed.internal.ContextContainer;
import dev.ferry.distributed.internal.ContextState;
import dev.ferry.distributed.internal.CurrentContext;
import dev.ferry.distributed.internal.GradientCalls;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.tensor.Tensor;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Distributed autograd, PyTorch's {@code torch.distributed.autograd}: a backward pass that follows
 * tensors across the calls that carried them. Inside a {@link #context()}, sending a tensor that
 * requires grad (as an argument or a result) records a send function on the sender and gives the
 * receiver's copy a receive function as history; {@link #backward} starts a pass on this worker and,
 * whenever it reaches a receive function, sends the gradients to the worker that sent the tensor,
 * which carries the pass on there (PyTorch's FAST mode). Gradients of each worker's leaves
 * accumulate in that worker's part of the context ({@link #getGradients}), never in {@code .grad},
 * so concurrent passes in different contexts do not mix.
 *
 * <p>{@code ferry-distributed} on the class path is all it takes: its call interceptor and tensor
 * codec are installed on every agent by {@link java.util.ServiceLoader}. The static methods use the
 * agent {@link Rpc#current()} returns; pass an agent explicitly when several live in one JVM.
 *
 * <pre>{@code
 * try (DistAutogradContext context = DistAutograd.context()) {
 *     Tensor t1 = Tensors.rand(3, 3).requiresGrad_(true);
 *     Tensor loss = Rpc.rpcSync("worker1", MyOps::square, t1).sum();
 *     DistAutograd.backward(context.id(), List.of(loss));
 *     Tensor dt1 = DistAutograd.getGradients(context.id()).get(t1);   // 2 * t1
 * }
 * }</pre>
 *
 * <p>As in PyTorch, a {@link dev.ferry.tensor.Parameter} sent in a call arrives as a leaf (no
 * history); an {@link dev.ferry.rpc.AsyncExecution} handler runs in the context until it returns
 * its future, not in the future's continuations.
 */
public final class DistAutograd {
    private DistAutograd() {
    }

    /** Opens a context on the current agent and makes it this thread's context. */
    public static DistAutogradContext context() {
        return context(Rpc.current());
    }

    /**
     * Opens a context on {@code agent} and makes it this thread's context until closed.
     *
     * @throws IllegalStateException if this thread is already in a context
     */
    public static DistAutogradContext context(RpcAgent agent) {
        Objects.requireNonNull(agent, "agent");
        if (CurrentContext.get() != null) {
            throw new IllegalStateException("Already have an autograd context id for this thread.");
        }
        ContextState state = ContextContainer.of(agent).create();
        return new DistAutogradContext(state, CurrentContext.bind(state));
    }

    /** The id of this thread's context. */
    public static long currentContextId() {
        ContextState state = CurrentContext.get();
        if (state == null) {
            throw new IllegalStateException("Current thread doesn't have a valid autograd context. Please wrap your"
                    + " code using: try (DistAutogradContext context = DistAutograd.context()) to generate a valid"
                    + " context");
        }
        return state.id();
    }

    /** {@link #backward(long, List, boolean)} without retaining the graph. */
    public static void backward(long contextId, List<Tensor> roots) {
        backward(contextId, roots, false);
    }

    /**
     * Runs a backward pass from scalar {@code roots} in context {@code contextId}, across every worker
     * the pass reaches; returns when all of them are done.
     *
     * @throws IllegalArgumentException for an unknown context ("Could not find autograd context with id: N"),
     *                                  or roots that do not require grad or are not scalars
     */
    public static void backward(long contextId, List<Tensor> roots, boolean retainGraph) {
        lookup(null, contextId).backward(roots, retainGraph);
    }

    /** {@link #backward(long, List, boolean)} on {@code agent}'s part of the context. */
    public static void backward(RpcAgent agent, long contextId, List<Tensor> roots, boolean retainGraph) {
        lookup(Objects.requireNonNull(agent, "agent"), contextId).backward(roots, retainGraph);
    }

    /**
     * PyTorch's {@code rref.backward()} without a context: an ordinary (local) backward pass from the
     * value of an RRef this worker owns, into {@code .grad}.
     *
     * @throws IllegalArgumentException for a user RRef ("User RRefs require 'dist_autograd_ctx_id' to be
     *                                  specified"), a value that is not a tensor, or one that cannot start a pass
     */
    public static void backward(RRef<?> rref) {
        if (!rref.isOwner()) {
            throw new IllegalArgumentException("User RRefs require 'dist_autograd_ctx_id' to be specified");
        }
        GradientCalls.rrefTensor(rref.localValue()).backward();
    }

    /**
     * PyTorch's {@code rref.backward(context_id, retain_graph)}: a distributed backward pass from an
     * RRef's value in context {@code contextId}, run on the RRef's owner (here if it is this worker).
     */
    public static void backward(RRef<?> rref, long contextId, boolean retainGraph) {
        backward(null, rref, contextId, retainGraph);
    }

    /** {@link #backward(RRef, long, boolean)} for an RRef of {@code agent} (several agents in one JVM). */
    public static void backward(RpcAgent agent, RRef<?> rref, long contextId, boolean retainGraph) {
        if (rref.isOwner()) {
            lookup(agent, contextId).backward(List.of(GradientCalls.rrefTensor(rref.localValue())), retainGraph);
        } else {
            rref.rpcSync(GradientCalls::backwardFromValue, contextId, retainGraph);
        }
    }

    /**
     * PyTorch's {@code dist_autograd._get_debug_info()} for the current agent:
     * {@code num_autograd_contexts}, {@code num_current_backward_passes} (passes, or parts of passes
     * other workers started, running here), {@code num_send_functions}, {@code num_recv_functions};
     * and Ferry's {@code num_released_contexts_remembered} (other workers' contexts released here
     * lately, whose late messages must not create them again: at most 1,024) and
     * {@code num_releases_undelivered} (releases this worker sent or passed on that were not
     * answered yet: they are sent again while their worker is a member).
     */
    public static Map<String, String> debugInfo() {
        return debugInfo(Rpc.current());
    }

    /** {@link #debugInfo()} of {@code agent}. */
    public static Map<String, String> debugInfo(RpcAgent agent) {
        return ContextContainer.of(Objects.requireNonNull(agent, "agent")).debugInfo();
    }

    /** The gradients this worker's leaves received in context {@code contextId}, by tensor (identity). */
    public static Map<Tensor, Tensor> getGradients(long contextId) {
        return lookup(null, contextId).gradients();
    }

    /** {@link #getGradients(long)} on {@code agent}'s part of the context. */
    public static Map<Tensor, Tensor> getGradients(RpcAgent agent, long contextId) {
        return lookup(Objects.requireNonNull(agent, "agent"), contextId).gradients();
    }

    /**
     * Runs {@code action} once context {@code contextId} has left this worker of the current agent:
     * closed by its creator (whose release reaches every worker the context reached), or released
     * because its creator was lost or restarted. Runs it at once, on this thread, if the context is not here
     * (any more). For what a worker keeps per context, such as a model a parameter server lends to
     * one training step at a time:
     *
     * <pre>{@code
     * long context = DistAutograd.currentContextId();       // in a handler of a call made in a context
     * DistAutograd.whenReleased(context, () -> turns.leave(context));
     * }</pre>
     *
     * <p>The action runs on the thread that releases the context (the one closing it, one handling a
     * release from another worker, or the agent's timer thread): keep it short and never wait there.
     */
    public static void whenReleased(long contextId, Runnable action) {
        whenReleased(Rpc.current(), contextId, action);
    }

    /** {@link #whenReleased(long, Runnable)} on {@code agent}'s part of the context. */
    public static void whenReleased(RpcAgent agent, long contextId, Runnable action) {
        Objects.requireNonNull(action, "action");
        ContextState state = ContextContainer.of(Objects.requireNonNull(agent, "agent")).find(contextId);
        if (state == null) {
            action.run();
        } else {
            state.whenReleased(action);
        }
    }

    /** The context of this thread if it has that id (and belongs to {@code agent}), else the agent's. */
    private static ContextState lookup(RpcAgent agent, long contextId) {
        ContextState current = CurrentContext.get();
        if (current != null && current.id() == contextId && (agent == null || current.container().agent() == agent)) {
            return current;
        }
        return ContextContainer.of(agent != null ? agent : Rpc.current()).get(contextId);
    }

    static void release(ContextState state) {
        state.container().close(state);
    }
}
