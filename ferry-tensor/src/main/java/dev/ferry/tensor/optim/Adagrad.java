package dev.ferry.tensor.optim;

import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.List;

/**
 * Adagrad: each element's step is scaled by the root of the sum of its squared gradients so far;
 * the same update as {@code torch.optim.Adagrad}:
 *
 * <pre>
 * g    = grad + weightDecay * param
 * clr  = lr / (1 + (step - 1) * lrDecay)
 * sum += g * g                       (sum starts at initialAccumulatorValue)
 * param -= clr * g / (sqrt(sum) + eps)
 * </pre>
 *
 * <pre>
 * Optimizer opt = new Adagrad(model.parameters(), Adagrad.defaults().withLr(0.05));
 * </pre>
 */
public final class Adagrad extends Optimizer {
    /** Immutable settings; start from {@link Adagrad#defaults()} (PyTorch's defaults). */
    public record Options(double lr, double lrDecay, double weightDecay, double initialAccumulatorValue,
                          double eps) {
        public Options {
            if (lr < 0) {
                throw new IllegalArgumentException("Invalid learning rate: " + lr);
            }
            if (lrDecay < 0) {
                throw new IllegalArgumentException("Invalid lr_decay value: " + lrDecay);
            }
            if (weightDecay < 0) {
                throw new IllegalArgumentException("Invalid weight_decay value: " + weightDecay);
            }
            if (initialAccumulatorValue < 0) {
                throw new IllegalArgumentException("Invalid initial_accumulator_value value: "
                        + initialAccumulatorValue);
            }
            if (eps < 0) {
                throw new IllegalArgumentException("Invalid epsilon value: " + eps);
            }
        }

        public Options withLr(double v) {
            return new Options(v, lrDecay, weightDecay, initialAccumulatorValue, eps);
        }

        public Options withLrDecay(double v) {
            return new Options(lr, v, weightDecay, initialAccumulatorValue, eps);
        }

        public Options withWeightDecay(double v) {
            return new Options(lr, lrDecay, v, initialAccumulatorValue, eps);
        }

        public Options withInitialAccumulatorValue(double v) {
            return new Options(lr, lrDecay, weightDecay, v, eps);
        }

        public Options withEps(double v) {
            return new Options(lr, lrDecay, weightDecay, initialAccumulatorValue, v);
        }
    }

    /** PyTorch's defaults: lr 1e-2, no lr decay or weight decay, accumulator 0, eps 1e-10. */
    public static Options defaults() {
        return new Options(1e-2, 0, 0, 0, 1e-10);
    }

    private final Options options;

    public Adagrad(List<? extends Tensor> params, Options options) {
        super(params);
        this.options = options;
    }

    public Options options() {
        return options;
    }

    private static final class State {
        long step;
        Tensor sum;
    }

    @Override
    protected void update(Tensor param, Tensor grad) {
        Options o = options;
        State s = state(param, State::new);
        if (s.sum == null) {
            s.sum = Tensors.fullLike(param, o.initialAccumulatorValue());
        }
        s.step++;
        Tensor g = o.weightDecay() != 0 ? grad.add(param, o.weightDecay()) : grad;
        double clr = o.lr() / (1 + (s.step - 1) * o.lrDecay());
        s.sum.addcmul_(g, g, 1);
        param.addcdiv_(g, s.sum.sqrt().add(o.eps()), -clr);
    }
}
