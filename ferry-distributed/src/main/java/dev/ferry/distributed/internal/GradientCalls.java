package dev.ferry.distributed.internal;

import dev.ferry.distributed.internal.ReleaseSender.Release;
import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.tensor.Tensor;

import java.util.List;

/**
 * The calls distributed autograd makes between workers (PyTorch's {@code PropagateGradientsReq}
 * and {@code CleanupAutogradContextReq}), as ordinary Ferry calls: the public static methods run
 * on the receiving worker.
 */
public final class GradientCalls {
    private static final ScopedValue<Boolean> RELEASING = ScopedValue.newInstance();

    private GradientCalls() {
    }

    /** Sends the gradients of message {@code messageId}'s tensors back to {@code to}, and waits for its pass. */
    static void propagate(ContextState context, int to, long messageId, List<Tensor> grads) {
        RpcAgent agent = context.container().agent();
        agent.rpcSync(agent.getWorkerInfo(to).name(), GradientCalls::runSendFunction, context.id(), messageId, grads);
    }

    /** Runs on the worker that sent message {@code messageId} in context {@code contextId}. */
    public static Boolean runSendFunction(long contextId, long messageId, List<Tensor> grads) {
        ContextContainer.of(Rpc.current()).get(contextId).runSendFunction(messageId, grads);
        return Boolean.TRUE;
    }

    /**
     * Runs on an RRef's owner: a distributed backward pass from the RRef's value in context
     * {@code contextId} (PyTorch's {@code RREF_BACKWARD_REQ}).
     */
    public static Boolean backwardFromValue(Object value, long contextId, boolean retainGraph) {
        ContextContainer.of(Rpc.current()).get(contextId).backward(List.of(rrefTensor(value)), retainGraph);
        return Boolean.TRUE;
    }

    /** {@code value} as a tensor, or PyTorch's error for an RRef that holds something else. */
    public static Tensor rrefTensor(Object value) {
        if (value instanceof Tensor tensor) {
            return tensor;
        }
        throw new IllegalArgumentException("RRef should contain a tensor for .backward()");
    }

    /**
     * One message to {@code worker} releasing {@code releases} ({@link ReleaseSender} sends it again
     * until it is answered), marked {@link MessageType#AUTOGRAD_CLEANUP} for fault injection by
     * {@link AutogradInterceptor}.
     */
    static RpcFuture<Boolean> sendReleases(RpcAgent agent, int worker, List<Release> releases) {
        long[] ids = new long[releases.size()];
        long[] incarnations = new long[ids.length];
        long[] closedBelow = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            Release release = releases.get(i);
            ids[i] = release.context().id();
            incarnations[i] = release.context().creatorIncarnation();
            closedBelow[i] = release.closedBelow();
        }
        int self = agent.getWorkerInfo().id();
        return ScopedValue.where(RELEASING, Boolean.TRUE).call(() -> agent.rpcAsync(agent.getWorkerInfo(worker).name(),
                GradientCalls::release, ids, incarnations, closedBelow, self));
    }

    /** Whether this thread is sending a release (read by {@link AutogradInterceptor}). */
    static boolean sendingRelease() {
        return RELEASING.isBound();
    }

    /**
     * Runs on a worker the contexts reached: releases context {@code contextIds[i]} of its
     * creator's incarnation {@code creatorIncarnations[i]} here, whose creator had closed every
     * context it made before count {@code closedBelow[i]}, and passes the release on to the workers
     * it reached from here, but {@code from}. A repeat (a release sent again whose first message
     * arrived after all) finds nothing and does nothing; so does a release of an incarnation of
     * the creator other than the context's here.
     */
    public static Boolean release(long[] contextIds, long[] creatorIncarnations, long[] closedBelow, int from) {
        if (creatorIncarnations.length != contextIds.length || closedBelow.length != contextIds.length) {
            throw new IllegalArgumentException("a release of " + contextIds.length + " contexts with "
                    + creatorIncarnations.length + " incarnations and " + closedBelow.length + " marks");
        }
        ContextContainer container = ContextContainer.of(Rpc.current());
        for (int i = 0; i < contextIds.length; i++) {
            container.released(new ContextKey(contextIds[i], creatorIncarnations[i]), closedBelow[i], from);
        }
        return Boolean.TRUE;
    }
}
