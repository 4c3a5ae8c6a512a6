package dev.ferry.distributed.internal;

import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.RetriedSends;
import dev.ferry.tensor.Tensor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The calls distributed autograd makes between workers (PyTorch's {@code PropagateGradientsReq}
 * and {@code CleanupAutogradContextReq}), as ordinary Ferry calls: the public static methods run
 * on the receiving worker.
 */
public final class GradientCalls {
    private static final Logger log = LoggerFactory.getLogger(GradientCalls.class);
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
     * Asks every worker {@code context} reached, except {@code except}, to release it too, without
     * waiting. A release whose send fails is sent again ({@link RetriedSends}: up to 5 more times
     * over 1.55 s) while this agent runs and the worker is a member: lost, it would leave the
     * context on that worker for the rest of the job. A worker given a release twice ignores the
     * second. Workers known lost or gone are not asked: they hold nothing any more.
     */
    public static void releaseElsewhere(ContextState context, int except) {
        RpcAgent agent = context.container().agent();
        if (!agent.isRunning()) {
            return;
        }
        int self = context.container().workerId();
        for (int worker : context.knownWorkerIds()) {
            if (worker == except || worker == self || !isMember(agent, worker)) {
                continue;
            }
            String what = "release of autograd context " + context.id() + " on worker " + worker;
            RetriedSends.send(what, () -> sendRelease(agent, worker, context.id(), self),
                            () -> agent.isRunning() && isMember(agent, worker), RetriedSends::onVirtualThread)
                    .addDoneCallback(done -> {
                        if (!done.failed()) {
                            return;
                        }
                        if (agent.isRunning() && isMember(agent, worker)) {
                            log.warn("{} failed: {}", what, done.exceptionNow().toString());
                        } else {
                            log.debug("{} failed, and it ended or left: {}", what, done.exceptionNow().toString());
                        }
                    });
        }
    }

    /** Whether {@code worker} is in {@code agent}'s group and not known to be lost (false once the agent closed). */
    private static boolean isMember(RpcAgent agent, int worker) {
        try {
            for (WorkerInfo member : agent.getWorkerInfos()) {
                if (member.id() == worker) {
                    return true;
                }
            }
        } catch (RpcException closed) {
            // shut down meanwhile
        }
        return false;
    }

    /** One release, marked {@link MessageType#AUTOGRAD_CLEANUP} for fault injection by {@link AutogradInterceptor}. */
    private static RpcFuture<Boolean> sendRelease(RpcAgent agent, int worker, long contextId, int self) {
        return ScopedValue.where(RELEASING, Boolean.TRUE)
                .call(() -> agent.rpcAsync(agent.getWorkerInfo(worker).name(), GradientCalls::release, contextId, self));
    }

    /** Whether this thread is sending a release (read by {@link AutogradInterceptor}). */
    static boolean sendingRelease() {
        return RELEASING.isBound();
    }

    /**
     * Runs on a worker the context reached: releases it there and passes the request on. A repeat
     * (a retried release whose first send arrived after all) finds nothing and does nothing.
     */
    public static Boolean release(long contextId, int from) {
        ContextState state = ContextContainer.of(Rpc.current()).removeReleasedBy(contextId, from);
        if (state != null) {
            releaseElsewhere(state, from);
        }
        return Boolean.TRUE;
    }
}
