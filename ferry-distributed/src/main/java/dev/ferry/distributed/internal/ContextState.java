package dev.ferry.distributed.internal;

import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.autograd.Autograd;
import dev.ferry.tensor.autograd.Edge;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One worker's part of a distributed autograd context (PyTorch's {@code DistAutogradContext}): the
 * send functions recorded for the tensors requiring grad that this worker sent in the context
 * (by autograd message id: the gradient edges of those tensors, in the order they were encoded),
 * the receive functions of the tensors it received, the gradients accumulated for its leaves,
 * and the workers it exchanged messages with (so that releasing the context reaches them).
 *
 * <p>Thread-safe: messages of one context may be encoded, decoded and back-propagated on several
 * threads at once.
 */
public final class ContextState {
    private final ContextKey key;
    private final ContextContainer container;
    private final Map<Long, List<Edge>> sendFunctions = new ConcurrentHashMap<>();
    private final Map<Long, RecvRpcBackward> recvFunctions = new ConcurrentHashMap<>();
    private final Map<Tensor, Tensor> gradients = new IdentityHashMap<>();
    private final Set<Integer> knownWorkers = ConcurrentHashMap.newKeySet();
    /** What to run once the context leaves this worker; null once it has. Guarded by this. */
    private List<Runnable> onRelease = new ArrayList<>();
    /** Set once with {@code onRelease = null}; volatile for {@link #left()}'s readers, which take no lock. */
    private volatile boolean left;

    ContextState(ContextKey key, ContextContainer container) {
        this.key = key;
        this.container = container;
    }

    public long id() {
        return key.id();
    }

    /** The id, and the incarnation of the worker that created the context. */
    ContextKey key() {
        return key;
    }

    public ContextContainer container() {
        return container;
    }

    void recordSend(long messageId, Edge edge) {
        sendFunctions.computeIfAbsent(messageId, key -> Collections.synchronizedList(new ArrayList<>())).add(edge);
    }

    RecvRpcBackward recvFunction(long messageId, int fromWorker) {
        knownWorkers.add(fromWorker);
        return recvFunctions.computeIfAbsent(messageId, key -> new RecvRpcBackward(this, key, fromWorker));
    }

    /**
     * Notes that a message of this context goes to, or came from, worker {@code workerId}. False if
     * the context left this worker already: its release has read whom it reached, so a message sent
     * now must go outside the context (the worker would get no release of it).
     */
    synchronized boolean knows(int workerId) {
        if (onRelease == null) {
            return false;
        }
        if (workerId != container.workerId()) {
            knownWorkers.add(workerId);
        }
        return true;
    }

    /**
     * Runs the backward pass from the send function of message {@code messageId} with the
     * gradients its receiver computed (FAST mode: each arrival runs the local engine at once). The
     * graph is kept: other send functions of the context may reach the same nodes.
     */
    void runSendFunction(long messageId, List<Tensor> grads) {
        checkHere();
        List<Edge> edges = sendFunctions.get(messageId);
        if (edges == null) {
            throw new IllegalArgumentException("autograd context " + key.id() + " on worker " + container.workerId()
                    + " has no send function for message " + messageId);
        }
        List<Edge> roots;
        synchronized (edges) {
            roots = List.copyOf(edges);
        }
        if (roots.size() != grads.size()) {
            throw new IllegalArgumentException("message " + messageId + " sent " + roots.size()
                    + " tensors that require grad, but " + grads.size() + " gradients came back");
        }
        container.runPass(() -> Autograd.backward(roots, grads, this::accumulate, true));
    }

    /**
     * Starts a backward pass here from scalar {@code roots}. The local part runs with the graph
     * retained whatever {@code retainGraph} says: while it waits for another worker's part, that
     * part may send gradients back into this graph through a send function of this worker, and the
     * nodes both reach must still have their saved tensors. The graph is freed once all is done.
     */
    public void backward(List<Tensor> roots, boolean retainGraph) {
        Objects.requireNonNull(roots, "roots");
        if (roots.isEmpty()) {
            throw new IllegalArgumentException("No tensors provided for gradient computation.");
        }
        checkHere();
        container.runPass(() -> {
            Autograd.backward(roots, this::accumulate, true);
            if (!retainGraph) {
                Autograd.releaseGraph(roots);
            }
        });
    }

    /**
     * A backward pass from {@code output}, given the gradient of {@code output}, with the graph
     * freed behind it: the gradients of the leaves it reaches are added to this context, except
     * that of {@code input} (a leaf standing for a value another worker computed, may be null),
     * which is returned instead (null if the pass did not reach it). What a pipeline stage runs for
     * one micro-batch.
     *
     * @throws IllegalArgumentException if {@code gradOutput}'s shape is not {@code output}'s
     */
    public Tensor backwardFrom(Tensor output, Tensor gradOutput, Tensor input) {
        if (!java.util.Arrays.equals(output.shape(), gradOutput.shape())) {
            throw new IllegalArgumentException("a gradient of shape " + java.util.Arrays.toString(gradOutput.shape())
                    + " for an output of shape " + java.util.Arrays.toString(output.shape()));
        }
        Tensor[] inputGradient = new Tensor[1];
        container.runPass(() -> Autograd.backward(List.of(output.gradientEdge()), List.of(gradOutput),
                (leaf, gradient) -> {
                    if (leaf == input) {
                        inputGradient[0] = gradient;
                    } else {
                        accumulate(leaf, gradient);
                    }
                }, false));
        return inputGradient[0];
    }

    private void accumulate(Tensor leaf, Tensor gradient) {
        synchronized (gradients) {
            Tensor old = gradients.get(leaf);
            gradients.put(leaf, old == null ? gradient.detach().clone() : old.add(gradient));
        }
    }

    /** The gradients accumulated so far, by leaf tensor (identity). A copy. */
    public Map<Tensor, Tensor> gradients() {
        checkHere();
        synchronized (gradients) {
            return new IdentityHashMap<>(gradients);
        }
    }

    /**
     * Runs {@code action} once this context has left this worker, or at once (on this thread) if
     * it already has.
     */
    public void whenReleased(Runnable action) {
        synchronized (this) {
            if (onRelease != null) {
                onRelease.add(action);
                return;
            }
        }
        action.run();
    }

    /**
     * Fails as an unknown id does once the context left this worker: a handle kept past its
     * {@code close()} (or a handler's, past its release) would otherwise run passes into, and read
     * gradients from, a context no other worker has any more, and succeed wherever the pass stays local.
     */
    private void checkHere() {
        if (left) {
            throw new IllegalArgumentException("Could not find autograd context with id: " + key.id());
        }
    }

    /** Whether this context left this worker (closed, or released): read on every call a bound thread makes. */
    boolean left() {
        return left;
    }

    /** Called once, by the container that removed this context: runs the release actions. */
    void released() {
        List<Runnable> actions;
        synchronized (this) {
            actions = onRelease;
            onRelease = null;
            left = true;
        }
        if (actions != null) {
            actions.forEach(Runnable::run);
        }
    }

    /** The workers this context exchanged messages with. */
    public Set<Integer> knownWorkerIds() {
        return Set.copyOf(knownWorkers);
    }

    /** Ids of the messages this worker sent with tensors requiring grad (PyTorch's {@code _send_functions}). */
    public Set<Long> sendFunctionIds() {
        return Set.copyOf(sendFunctions.keySet());
    }

    /** Ids of the messages this worker received with tensors requiring grad ({@code _recv_functions}). */
    public Set<Long> recvFunctionIds() {
        return Set.copyOf(recvFunctions.keySet());
    }
}
