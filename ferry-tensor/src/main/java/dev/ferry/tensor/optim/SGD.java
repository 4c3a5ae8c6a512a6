package dev.ferry.tensor.optim;

import dev.ferry.tensor.Tensor;

import java.util.List;

/**
 * Stochastic gradient descent with optional momentum, dampening, Nesterov momentum and weight
 * decay; the same update as {@code torch.optim.SGD}.
 *
 * <pre>
 * Optimizer opt = new SGD(model.parameters(), SGD.options(0.05).withMomentum(0.9));
 * </pre>
 */
public final class SGD extends Optimizer {
    /** Immutable settings; build with {@link SGD#options(double)} and the withers. */
    public record Options(double lr, double momentum, double dampening, double weightDecay, boolean nesterov) {
        public Options {
            if (lr < 0) {
                throw new IllegalArgumentException("Invalid learning rate: " + lr);
            }
            if (momentum < 0) {
                throw new IllegalArgumentException("Invalid momentum value: " + momentum);
            }
            if (weightDecay < 0) {
                throw new IllegalArgumentException("Invalid weight_decay value: " + weightDecay);
            }
            if (nesterov && (momentum <= 0 || dampening != 0)) {
                throw new IllegalArgumentException("Nesterov momentum requires a momentum and zero dampening");
            }
        }

        public Options withMomentum(double m) {
            return new Options(lr, m, dampening, weightDecay, nesterov);
        }

        public Options withDampening(double d) {
            return new Options(lr, momentum, d, weightDecay, nesterov);
        }

        public Options withWeightDecay(double wd) {
            return new Options(lr, momentum, dampening, wd, nesterov);
        }

        public Options withNesterov(boolean n) {
            return new Options(lr, momentum, dampening, weightDecay, n);
        }
    }

    private final Options options;

    public static Options options(double lr) {
        return new Options(lr, 0, 0, 0, false);
    }

    public SGD(List<? extends Tensor> params, double lr) {
        this(params, options(lr));
    }

    public SGD(List<? extends Tensor> params, Options options) {
        super(params);
        this.options = options;
    }

    public Options options() {
        return options;
    }

    private static final class State {
        Tensor momentumBuffer;
    }

    @Override
    protected void update(Tensor param, Tensor grad) {
        Tensor d = grad;
        if (options.weightDecay() != 0) {
            d = d.add(param, options.weightDecay());
        }
        if (options.momentum() != 0) {
            State s = state(param, State::new);
            if (s.momentumBuffer == null) {
                s.momentumBuffer = d.clone();
            } else {
                s.momentumBuffer.mul_(options.momentum()).add_(d, 1 - options.dampening());
            }
            d = options.nesterov() ? d.add(s.momentumBuffer, options.momentum()) : s.momentumBuffer;
        }
        param.add_(d, -options.lr());
    }
}
