package dev.ferry.tensor.autograd;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Compares autograd's gradients with central finite differences, in float64: for a random
 * weighting {@code w} of the output, d(sum(w * f(x)))/dx from backward must match
 * (L(x + eps) - L(x - eps)) / 2eps element by element. {@link #checkSecondOrder} does the same for
 * the gradient itself, computed with {@code createGraph} ({@code torch.autograd.gradgradcheck}).
 */
final class GradCheck {
    private static final double EPS = 1e-6;
    private static final double ATOL = 1e-5;
    private static final double RTOL = 1e-4;

    private GradCheck() {
    }

    static void check(String name, Function<List<Tensor>, Tensor> f, Tensor... inputs) {
        for (Tensor in : inputs) {
            if (in.dtype() != DType.FLOAT64 || !in.requiresGrad()) {
                throw new IllegalArgumentException("gradcheck inputs must be float64 leaves requiring grad");
            }
        }
        List<Tensor> xs = Arrays.asList(inputs);
        Tensor out = f.apply(xs);
        Tensor weight = Tensors.randn(new Generator(42), DType.FLOAT64, out.shape());
        Tensor[] analytic = Autograd.grad(List.of(out), xs, List.of(weight), false, false, true);
        for (int i = 0; i < inputs.length; i++) {
            Tensor x = inputs[i];
            int n = x.numel();
            double[] numeric = new double[n];
            try (var scope = Autograd.noGrad()) {
                Tensor flat = x.detach().reshape(-1);
                for (int k = 0; k < n; k++) {
                    double orig = flat.getDouble(k);
                    set(flat, k, orig + EPS);
                    double plus = f.apply(xs).mul(weight).sum().item();
                    set(flat, k, orig - EPS);
                    double minus = f.apply(xs).mul(weight).sum().item();
                    set(flat, k, orig);
                    numeric[k] = (plus - minus) / (2 * EPS);
                }
            }
            double[] got = analytic[i] == null ? new double[n] : analytic[i].toDoubleArray();
            if (analytic[i] != null && !Arrays.equals(analytic[i].shape(), x.shape())) {
                throw new AssertionError(name + ": gradient " + i + " has shape " + Arrays.toString(analytic[i].shape())
                        + ", input has " + Arrays.toString(x.shape()));
            }
            for (int k = 0; k < n; k++) {
                if (Math.abs(got[k] - numeric[k]) > ATOL + RTOL * Math.abs(numeric[k])) {
                    throw new AssertionError(name + ": d/d(input " + i + ")[" + k + "]: autograd " + got[k]
                            + " vs finite difference " + numeric[k] + "\nautograd: " + Arrays.toString(got)
                            + "\nnumeric:  " + Arrays.toString(numeric));
                }
            }
        }
    }

    /**
     * Checks the gradients of {@code x -> d(sum(w * f(x)))/dx} (all inputs' gradients, flattened
     * and joined) against finite differences: the backward of every op in {@code f} must itself be
     * differentiable, as with {@code createGraph} in PyTorch.
     */
    static void checkSecondOrder(String name, Function<List<Tensor>, Tensor> f, Tensor... inputs) {
        Tensor weight = Tensors.randn(new Generator(43), DType.FLOAT64, f.apply(Arrays.asList(inputs)).shape());
        check(name + " (second order)", xs -> {
            // check() evaluates without grad for its finite differences; the gradient needs a graph.
            try (var scope = Autograd.enableGrad()) {
                Tensor[] grads = Autograd.grad(List.of(f.apply(xs)), xs, List.of(weight), true, true, true);
                Tensor[] flat = new Tensor[grads.length];
                for (int i = 0; i < grads.length; i++) {
                    flat[i] = grads[i] == null ? Tensors.zeros(DType.FLOAT64, xs.get(i).numel()) : grads[i].reshape(-1);
                }
                // A gradient that does not depend on the inputs (a linear op's) has no graph: adding
                // 0 * sum(x) gives it one, so the finite differences must show it is constant.
                Tensor dependence = xs.get(0).sum().mul(0);
                return Tensors.cat(List.of(flat), 0).add(dependence);
            }
        }, inputs);
    }

    private static void set(Tensor flat, int k, double v) {
        flat.storage().setDouble(flat.storageOffset() + k * flat.stride(0), v);
    }
}
