package dev.ferry.tensor.autograd;

import dev.ferry.tensor.Tensor;

/**
 * Receives the gradient of each leaf reached by a backward pass. The default sink,
 * {@link #ACCUMULATE_INTO_GRAD}, adds it to the leaf's {@code .grad} (PyTorch's behaviour);
 * distributed autograd passes its own sink that accumulates into a per-context map instead, so
 * that concurrent passes do not mix their gradients.
 *
 * <p>The engine calls the sink once per leaf and backward pass (gradients from several paths are
 * summed first), on the thread running the pass. The gradient tensor may be shared with other
 * parts of the graph: a sink must not modify it in place; copy it if it keeps it and may mutate
 * it later. When the pass runs with {@code createGraph}, grad mode is on during the call and the
 * gradient carries its own graph.
 */
@FunctionalInterface
public interface GradientSink {

    /** Called with the leaf and the gradient of the pass's roots with respect to it. */
    void accumulate(Tensor leaf, Tensor gradient);

    /**
     * Adds into {@link Tensor#grad()}, creating it on first use (as a private copy, so that later
     * in-place changes to {@code .grad} cannot reach other tensors).
     */
    GradientSink ACCUMULATE_INTO_GRAD = (leaf, gradient) -> {
        Tensor old = leaf.grad();
        if (old != null) {
            leaf.setGrad(old.add(gradient));
        } else {
            leaf.setGrad(GradMode.isEnabled() ? gradient : gradient.detach().clone());
        }
    };
}
