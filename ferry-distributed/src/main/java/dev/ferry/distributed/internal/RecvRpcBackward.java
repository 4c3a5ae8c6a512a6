package dev.ferry.distributed.internal;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.autograd.Edge;
import dev.ferry.tensor.autograd.Node;

import java.util.ArrayList;
import java.util.List;

/**
 * The backward function of the tensors requiring grad that one message brought (PyTorch's
 * {@code RecvRpcBackward}): one output per such tensor, no inputs on this worker. Applying it sends
 * the gradients to the worker that sent the message, which runs its matching send function; the
 * call returns when that worker's part of the pass (and everything it started) is done.
 */
final class RecvRpcBackward extends Node {
    private final ContextState context;
    private final long messageId;
    private final int fromWorker;
    private final List<int[]> shapes = new ArrayList<>();
    private final List<DType> dtypes = new ArrayList<>();

    RecvRpcBackward(ContextState context, long messageId, int fromWorker) {
        super("RecvRpcBackward", new Edge[0], null);
        this.context = context;
        this.messageId = messageId;
        this.fromWorker = fromWorker;
    }

    /** {@code received} as an output of this function: a tensor sharing its data, with this history. */
    synchronized Tensor attach(Tensor received) {
        shapes.add(received.shape());
        dtypes.add(received.dtype());
        return received.withGradFn(this, shapes.size() - 1);
    }

    @Override
    public synchronized int numOutputs() {
        return shapes.size();
    }

    @Override
    protected Tensor[] apply(Tensor[] gradOutputs) {
        List<Tensor> grads = new ArrayList<>(gradOutputs.length);
        synchronized (this) {
            for (int i = 0; i < gradOutputs.length; i++) {
                grads.add(gradOutputs[i] != null ? gradOutputs[i] : Tensors.zeros(dtypes.get(i), shapes.get(i)));
            }
        }
        GradientCalls.propagate(context, fromWorker, messageId, grads);
        return new Tensor[0];
    }
}
