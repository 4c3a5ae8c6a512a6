package dev.ferry.distributed.internal.pipeline;

import dev.ferry.distributed.internal.ContextState;
import dev.ferry.distributed.internal.CurrentContext;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.List;
import java.util.function.BinaryOperator;

/**
 * The driver's part of one pipeline step: as each micro-batch's output arrives from the last stage,
 * its loss (weighted by the micro-batch's share of the batch, so that the step's loss is the whole
 * batch's mean), and at once the gradient of that loss with respect to the output, sent back to the
 * last stage. Micro-batches are handled one at a time, in the order they arrive. Thread-safe.
 */
public final class LossRun {
    private final long step;
    private final int lastStage;
    private final String lastWorker;
    private final BinaryOperator<Tensor> loss;
    private final List<Tensor> targets;
    private final double[] weights;
    private final ContextState context;
    private final StageHost host;
    /** Completes with the step's loss, or with the failure. */
    private final RpcFuture<Double> done = new RpcFuture<>();
    private double total;
    private int seen;
    private boolean over;

    /**
     * @param lastStage  the last stage's index
     * @param lastWorker the last stage's worker
     * @param weights    each micro-batch's share of the batch
     */
    public LossRun(long step, int lastStage, String lastWorker, BinaryOperator<Tensor> loss, List<Tensor> targets,
                   double[] weights, ContextState context, StageHost host) {
        this.step = step;
        this.lastStage = lastStage;
        this.lastWorker = lastWorker;
        this.loss = loss;
        this.targets = targets;
        this.weights = weights.clone();
        this.context = context;
        this.host = host;
    }

    public RpcFuture<Double> done() {
        return done;
    }

    void output(int microBatch, Tensor received) {
        Tensor dOut;
        boolean complete;
        synchronized (this) {
            if (over) {
                return;
            }
            try (CallInterceptor.Scope bound = CurrentContext.bind(context)) {
                Tensor out = received.requiresGrad_(true);
                Tensor value = loss.apply(out, targets.get(microBatch));
                if (value.numel() != 1) {
                    throw new IllegalArgumentException("the loss function must return a scalar, got a tensor of shape "
                            + java.util.Arrays.toString(value.shape()));
                }
                if (!value.requiresGrad()) {
                    // PyTorch's backward() refuses such a loss too; running on would train nothing
                    // (every stage's gradient zero) and say nothing.
                    throw new IllegalArgumentException("the loss does not require grad: compute it from the last"
                            + " stage's output (a detach(), or a value computed apart from it, gives no gradients)");
                }
                Tensor weighted = value.reshape().mul(weights[microBatch]);
                dOut = context.backwardFrom(weighted, Tensors.onesLike(weighted), out);
                total += weighted.item();
            } catch (RuntimeException | Error e) {
                failLocked(new IllegalStateException("the loss of micro-batch " + microBatch + " failed: " + e, e));
                return;
            }
            complete = ++seen == targets.size();
            over = complete;
        }
        // Outside the lock: a last stage on this worker runs its next actions on this thread.
        host.sendOutputGradient(step, lastStage, lastWorker, microBatch, dOut, this::fail);
        if (complete) {
            done.setResult(total);
        }
    }

    synchronized void fail(Throwable failure) {
        failLocked(failure);
    }

    private void failLocked(Throwable failure) {
        if (!over) {
            over = true;
            done.setException(failure);
        }
    }

    long step() {
        return step;
    }
}
