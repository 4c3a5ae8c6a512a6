package dev.ferry.tensor.optim;

import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.List;

/**
 * Adam, and AdamW when {@link Options#decoupled()} is set; the same update as
 * {@code torch.optim.Adam} / {@code torch.optim.AdamW} (including amsgrad).
 *
 * <pre>
 * Optimizer opt = new Adam(model.parameters(), Adam.defaults().withLr(1e-3));
 * </pre>
 */
public final class Adam extends Optimizer {
    /** Immutable settings; start from {@link Adam#defaults()} (PyTorch's defaults) or {@link Adam#adamW()}. */
    public record Options(double lr, double beta1, double beta2, double eps, double weightDecay, boolean amsgrad,
                          boolean decoupled) {
        public Options {
            if (lr < 0 || eps < 0 || weightDecay < 0) {
                throw new IllegalArgumentException("Invalid lr/eps/weight_decay: " + lr + "/" + eps + "/" + weightDecay);
            }
            if (beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1) {
                throw new IllegalArgumentException("Invalid beta parameters: (" + beta1 + ", " + beta2 + ")");
            }
        }

        public Options withLr(double v) {
            return new Options(v, beta1, beta2, eps, weightDecay, amsgrad, decoupled);
        }

        public Options withBetas(double b1, double b2) {
            return new Options(lr, b1, b2, eps, weightDecay, amsgrad, decoupled);
        }

        public Options withEps(double v) {
            return new Options(lr, beta1, beta2, v, weightDecay, amsgrad, decoupled);
        }

        public Options withWeightDecay(double v) {
            return new Options(lr, beta1, beta2, eps, v, amsgrad, decoupled);
        }

        public Options withAmsgrad(boolean v) {
            return new Options(lr, beta1, beta2, eps, weightDecay, v, decoupled);
        }
    }

    /** Adam's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay. */
    public static Options defaults() {
        return new Options(1e-3, 0.9, 0.999, 1e-8, 0, false, false);
    }

    /** AdamW's defaults: as Adam but decoupled weight decay 1e-2. */
    public static Options adamW() {
        return new Options(1e-3, 0.9, 0.999, 1e-8, 1e-2, false, true);
    }

    private final Options options;

    public Adam(List<? extends Tensor> params, Options options) {
        super(params);
        this.options = options;
    }

    public Options options() {
        return options;
    }

    private static final class State {
        long step;
        Tensor expAvg;
        Tensor expAvgSq;
        Tensor maxExpAvgSq;
    }

    @Override
    protected void update(Tensor param, Tensor grad) {
        Options o = options;
        State s = state(param, State::new);
        if (s.expAvg == null) {
            s.expAvg = Tensors.zerosLike(param);
            s.expAvgSq = Tensors.zerosLike(param);
            s.maxExpAvgSq = o.amsgrad() ? Tensors.zerosLike(param) : null;
        }
        s.step++;
        Tensor g = grad;
        if (o.decoupled()) {
            param.mul_(1 - o.lr() * o.weightDecay());
        } else if (o.weightDecay() != 0) {
            g = g.add(param, o.weightDecay());
        }
        s.expAvg.mul_(o.beta1()).add_(g, 1 - o.beta1());
        s.expAvgSq.mul_(o.beta2()).addcmul_(g, g, 1 - o.beta2());
        double biasCorrection1 = 1 - Math.pow(o.beta1(), s.step);
        double biasCorrection2 = 1 - Math.pow(o.beta2(), s.step);
        double stepSize = o.lr() / biasCorrection1;
        double bc2Sqrt = Math.sqrt(biasCorrection2);
        Tensor second = s.expAvgSq;
        if (o.amsgrad()) {
            s.maxExpAvgSq.copy_(s.maxExpAvgSq.maximum(s.expAvgSq));
            second = s.maxExpAvgSq;
        }
        Tensor denom = second.sqrt().div(bc2Sqrt).add(o.eps());
        param.addcdiv_(s.expAvg, denom, -stepSize);
    }
}
