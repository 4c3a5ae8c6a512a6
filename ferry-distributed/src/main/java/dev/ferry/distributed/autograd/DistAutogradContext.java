package dev.ferry.distributed.autograd;

import dev.ferry.distributed.internal.ContextState;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.tensor.Tensor;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A distributed autograd context opened by {@link DistAutograd#context()}: PyTorch's
 * {@code with dist_autograd.context() as context_id:}. While it is open on a thread, the calls that
 * thread makes record, for every tensor requiring grad they send or receive, the functions that let
 * a backward pass cross workers; {@link #backward} runs such a pass and {@link #gradients()} holds
 * what it computed for this worker's leaves ({@code .grad} is left alone). Closing it releases the
 * context here and on every worker it reached.
 *
 * <pre>{@code
 * try (DistAutogradContext context = DistAutograd.context()) {
 *     Tensor t1 = Tensors.rand(3, 3).requiresGrad_(true);
 *     Tensor t2 = Tensors.rand(3, 3).requiresGrad_(true);
 *     Tensor loss = Rpc.rpcSync("worker1", MyOps::add, t1, t2).sum();   // MyOps.add: a.add(b)
 *     context.backward(List.of(loss));
 *     Map<Tensor, Tensor> grads = context.gradients();   // grads.get(t1): ones(3, 3)
 * }
 * }</pre>
 */
public final class DistAutogradContext implements AutoCloseable {
    private final ContextState state;
    private final CallInterceptor.Scope binding;
    private boolean closed;

    DistAutogradContext(ContextState state, CallInterceptor.Scope binding) {
        this.state = state;
        this.binding = binding;
    }

    /** The context id, unique in the group: {@code (workerId << 48) + n}. */
    public long id() {
        return state.id();
    }

    /** {@link DistAutograd#backward(long, List, boolean)} in this context, without retaining the graph. */
    public void backward(List<Tensor> roots) {
        backward(roots, false);
    }

    /**
     * {@link DistAutograd#backward(long, List, boolean)} in this context.
     *
     * @throws IllegalArgumentException once the context is closed ("Could not find autograd context
     *                                  with id: N", as for any id that is not here), or for no roots
     */
    public void backward(List<Tensor> roots, boolean retainGraph) {
        state.backward(roots, retainGraph);
    }

    /**
     * The gradients this worker's leaves received in this context, by tensor (identity); a copy.
     * Read them before closing: afterwards this fails as {@link #backward(List, boolean)} does.
     */
    public Map<Tensor, Tensor> gradients() {
        return state.gradients();
    }

    /** Ids of the workers this context exchanged messages with (PyTorch's {@code _known_worker_ids}). */
    public Set<Integer> knownWorkerIds() {
        return state.knownWorkerIds();
    }

    /** Autograd ids of the messages sent with tensors requiring grad ({@code _send_functions}). */
    public Set<Long> sendFunctionIds() {
        return state.sendFunctionIds();
    }

    /** Autograd ids of the messages received with tensors requiring grad ({@code _recv_functions}). */
    public Set<Long> recvFunctionIds() {
        return state.recvFunctionIds();
    }

    /**
     * Releases the context here and on the workers it reached, and unbinds it from the thread that
     * opened it (which can open a new one then, even when another thread closed this one: a
     * callback, an executor; that thread keeps its own context). Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        binding.close();
        DistAutograd.release(state);
    }

    @Override
    public String toString() {
        return "DistAutogradContext[" + id() + "]";
    }
}
