package dev.ferry.tensor.optim;

import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.autograd.Autograd;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Updates a fixed list of parameters from their gradients ({@code torch.optim.Optimizer}).
 *
 * <p>Two forms of step: {@link #step()} reads each parameter's {@code .grad}; the functional forms
 * {@link #step(List)} and {@link #step(Map)} take the gradients explicitly and never touch
 * {@code .grad}, which is what distributed autograd needs (its gradients live in a per-context
 * map, like PyTorch's functional optimizers behind {@code DistributedOptimizer}). Parameters whose
 * gradient is null are skipped (their state is not advanced).
 *
 * <p>This class is thread-safe: steps are serialized on the optimizer.
 */
public abstract class Optimizer {
    private final List<Tensor> params;
    private final Map<Tensor, Object> state = new IdentityHashMap<>();

    protected Optimizer(List<? extends Tensor> params) {
        if (params.isEmpty()) {
            throw new IllegalArgumentException("optimizer got an empty parameter list");
        }
        Set<Tensor> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Tensor p : params) {
            if (!p.isLeaf()) {
                throw new IllegalArgumentException("can't optimize a non-leaf Tensor");
            }
            if (!p.dtype().isFloatingPoint()) {
                throw new IllegalArgumentException("can't optimize a tensor of dtype " + p.dtype());
            }
            if (!seen.add(p)) {
                throw new IllegalArgumentException("some parameters appear more than once in the parameter list");
            }
        }
        this.params = List.copyOf(params);
    }

    /** The parameters, in the order the functional {@link #step(List)} expects gradients. */
    public final List<Tensor> parameters() {
        return params;
    }

    /** Updates every parameter that has a {@code .grad}. */
    public final void step() {
        List<Tensor> grads = new ArrayList<>(params.size());
        for (Tensor p : params) {
            grads.add(p.grad());
        }
        step(grads);
    }

    /** Functional step: {@code gradients.get(i)} is the gradient of {@code parameters().get(i)} (or null). */
    public final synchronized void step(List<Tensor> gradients) {
        if (gradients.size() != params.size()) {
            throw new IllegalArgumentException("expected " + params.size() + " gradients (one per parameter) but got "
                    + gradients.size());
        }
        try (var scope = Autograd.noGrad()) {
            for (int i = 0; i < params.size(); i++) {
                Tensor g = gradients.get(i);
                if (g == null) {
                    continue;
                }
                Tensor p = params.get(i);
                if (!java.util.Arrays.equals(g.shape(), p.shape())) {
                    throw new IllegalArgumentException("gradient " + i + " has shape " + java.util.Arrays.toString(g.shape())
                            + " but the parameter has shape " + java.util.Arrays.toString(p.shape()));
                }
                update(p, g.dtype() == p.dtype() ? g.detach() : g.detach().to(p.dtype()));
            }
        }
    }

    /** Functional step with gradients keyed by parameter (identity); missing entries are skipped. */
    public final void step(Map<Tensor, Tensor> gradients) {
        List<Tensor> grads = new ArrayList<>(params.size());
        for (Tensor p : params) {
            grads.add(gradients.get(p));
        }
        step(grads);
    }

    /** Clears every parameter's {@code .grad}. */
    public final void zeroGrad() {
        for (Tensor p : params) {
            p.setGrad(null);
        }
    }

    /** Applies one update to {@code param}; runs with grad mode off. {@code grad} must not be modified. */
    protected abstract void update(Tensor param, Tensor grad);

    /** Per-parameter state, created on first use. */
    @SuppressWarnings("unchecked")
    protected final <S> S state(Tensor param, Supplier<S> init) {
        return (S) state.computeIfAbsent(param, p -> init.get());
    }
}
