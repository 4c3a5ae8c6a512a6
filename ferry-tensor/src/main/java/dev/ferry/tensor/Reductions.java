package dev.ferry.tensor;

import dev.ferry.tensor.autograd.GradMode;
import dev.ferry.tensor.internal.Shapes;
import dev.ferry.tensor.internal.kernels.ReduceKernels;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Sums, means, extrema, variance, softmax and their derivatives. */
final class Reductions {
    private Reductions() {
    }

    /** Flags the normalized dims; an empty list means "all dims", as in PyTorch. */
    private static boolean[] flags(Tensor t, int[] dims) {
        boolean[] r = new boolean[t.dim()];
        if (dims.length == 0) {
            java.util.Arrays.fill(r, true);
            return r;
        }
        for (int d : dims) {
            int n = Shapes.normalizeDim(d, t.dim());
            if (t.dim() == 0) {
                continue;
            }
            if (r[n]) {
                throw new IllegalArgumentException("dim " + n + " appears multiple times in the list of dims");
            }
            r[n] = true;
        }
        return r;
    }

    private static int[] outShape(Tensor t, boolean[] reduced, boolean keepDim) {
        int[] shape = t.shapeRef();
        int[] out = new int[shape.length];
        int k = 0;
        for (int d = 0; d < shape.length; d++) {
            if (!reduced[d]) {
                out[k++] = shape[d];
            } else if (keepDim) {
                out[k++] = 1;
            }
        }
        return java.util.Arrays.copyOf(out, k);
    }

    private static int[] keptShape(Tensor t, boolean[] reduced) {
        return outShape(t, reduced, true);
    }

    private static Tensor reduce(ReduceKernels.Kind kind, Tensor t, boolean[] reduced, boolean keepDim, DType dtype) {
        Tensor out = Tensor.allocate(dtype, outShape(t, reduced, keepDim));
        ReduceKernels.reduce(kind, t, reduced, out);
        return out;
    }

    static Tensor sum(Tensor t, int[] dims, boolean keepDim) {
        boolean[] reduced = flags(t, dims);
        DType dt = t.dtype().isFloatingPoint() ? t.dtype() : DType.INT64;
        Tensor out = reduce(ReduceKernels.Kind.SUM, t, reduced, keepDim, dt);
        int[] kept = keptShape(t, reduced);
        return Grad.of(dims.length == 0 ? "SumBackward0" : "SumBackward1", t).record(out, g -> new Tensor[] {g.reshape(kept).expand(t.shapeRef())});
    }

    static Tensor mean(Tensor t, int[] dims, boolean keepDim) {
        if (!t.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("mean(): could not infer output dtype. Input dtype must be either a"
                    + " floating point or complex dtype. Got: " + t.dtype());
        }
        boolean[] reduced = flags(t, dims);
        int count = 1;
        for (int d = 0; d < reduced.length; d++) {
            count *= reduced[d] ? t.shapeRef()[d] : 1;
        }
        return sum(t, dims, keepDim).div(count);
    }

    static Tensor var(Tensor t, int[] dims, int correction, boolean keepDim) {
        boolean[] reduced = flags(t, dims);
        int count = 1;
        for (int d = 0; d < reduced.length; d++) {
            count *= reduced[d] ? t.shapeRef()[d] : 1;
        }
        Tensor centered = t.sub(t.mean(dims, true));
        return centered.square().sum(dims, keepDim).div(Math.max(0, count - correction));
    }

    static Tensor std(Tensor t, int[] dims, int correction, boolean keepDim) {
        return sqrtWithZeroGradAtZero("StdBackward0", var(t, dims, correction, keepDim));
    }

    static Tensor norm(Tensor t) {
        return sqrtWithZeroGradAtZero("NormBackward1", t.square().sum());
    }

    /**
     * {@code sqrt(s)} for a sum of squares {@code s}, whose derivative is taken as 0 where
     * {@code s} is 0. Plain {@code sqrt} gives {@code 0 * inf = NaN} there (the gradient of the
     * norm of a zero tensor, of the std of a constant), which PyTorch's norm and std backward mask
     * to 0; one NaN would otherwise poison every parameter an optimizer step touches.
     */
    private static Tensor sqrtWithZeroGradAtZero(String name, Tensor s) {
        Tensor out = s.detach().sqrt();
        return Grad.of(name, s).saving(out).record(out,
                g -> new Tensor[] {g.div(out.mul(2)).maskedFill(out.eq(0), 0)});
    }

    static Tensor prod(Tensor t) {
        boolean[] reduced = flags(t, new int[0]);
        DType dt = t.dtype().isFloatingPoint() ? t.dtype() : DType.INT64;
        Tensor out = reduce(ReduceKernels.Kind.PROD, t, reduced, false, dt);
        // d(prod)/dx_i is the product of the other elements: prod / x_i without zeros; with one
        // zero only that position has a non-zero derivative; with two or more, none has.
        return Grad.of("ProdBackward0", t).saving(t, out).record(out, g -> {
            if (Arrays.stream(t.toDoubleArray()).noneMatch(v -> v == 0)) {
                return new Tensor[] {out.div(t).mul(g)}; // PyTorch's prod_backward, differentiable
            }
            return new Tensor[] {(GradMode.isEnabled() ? productsOfOthers(t) : productsOfOthersValues(t)).mul(g)};
        });
    }

    /**
     * For each element, the product of all the others, from tensor ops so that it is itself
     * differentiable ({@code createGraph} through a prod of a tensor holding zeros): n products
     * of n - 1 elements, paid only in that case.
     */
    private static Tensor productsOfOthers(Tensor t) {
        Tensor flat = t.reshape(-1);
        int n = flat.numel();
        List<Tensor> others = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            others.add(Tensors.cat(List.of(flat.narrow(0, 0, i), flat.narrow(0, i + 1, n - i - 1)), 0).prod());
        }
        return Tensors.stack(others, 0).reshape(t.shapeRef());
    }

    /** {@link #productsOfOthers}' values in one pass, for a backward that records nothing. */
    private static Tensor productsOfOthersValues(Tensor t) {
        double[] x = t.toDoubleArray();
        int zeros = 0;
        int zeroAt = -1;
        double nonZeroProduct = 1;
        for (int i = 0; i < x.length; i++) {
            if (x[i] == 0) {
                zeros++;
                zeroAt = i;
            } else {
                nonZeroProduct *= x[i];
            }
        }
        double[] d = new double[x.length];
        if (zeros == 1) {
            d[zeroAt] = nonZeroProduct;
        }
        return Tensors.from(d, t.shapeRef()).to(t.dtype());
    }

    /** amax/amin. Gradient split evenly among ties. */
    static Tensor amax(Tensor t, int[] dims, boolean keepDim, boolean max) {
        return extremum(max ? "AmaxBackward0" : "AminBackward0", t, dims, keepDim, max, false);
    }

    /**
     * The 0-dim max()/min(). When the result is NaN its gradient goes to the NaN elements, as
     * PyTorch's evenly_distribute_backward does (amax's mask {@code t == result} matches no
     * element there and gave NaN everywhere).
     */
    static Tensor extremumOfAll(Tensor t, boolean max) {
        return extremum(max ? "MaxBackward1" : "MinBackward1", t, new int[0], false, max, true);
    }

    private static Tensor extremum(String name, Tensor t, int[] dims, boolean keepDim, boolean max, boolean nanWins) {
        if (t.numel() == 0) {
            throw new IllegalArgumentException((max ? "max" : "min") + "(): Expected reduction dim to be specified for"
                    + " input.numel() == 0.");
        }
        boolean[] reduced = flags(t, dims);
        Tensor out = reduce(max ? ReduceKernels.Kind.MAX : ReduceKernels.Kind.MIN, t, reduced, keepDim, t.dtype());
        int[] kept = keptShape(t, reduced);
        return Grad.of(name, t).saving(t, out).record(out, g -> {
            Tensor value = out.detach().reshape(kept);
            boolean nan = nanWins && Double.isNaN(value.item());
            Tensor hit = (nan ? t.ne(t) : t.eq(value)).to(g.dtype());
            Tensor count = hit.sum(dims, true);
            return new Tensor[] {hit.div(count).mul(g.reshape(kept))};
        });
    }

    static ValuesIndices maxWithIndices(Tensor t, int dim, boolean keepDim, boolean max) {
        int d = Shapes.normalizeDim(dim, t.dim());
        if (t.dim() == 0) {
            return new ValuesIndices(t.clone(), Tensors.zeros(DType.INT64));
        }
        if (t.size(d) == 0) {
            throw new IllegalArgumentException("cannot perform reduction function " + (max ? "max" : "min")
                    + " on a tensor with no elements because the operation does not have an identity");
        }
        boolean[] reduced = new boolean[t.dim()];
        reduced[d] = true;
        Tensor values = Tensor.allocate(t.dtype(), outShape(t, reduced, false));
        Tensor indices = Tensor.allocate(DType.INT64, outShape(t, reduced, false));
        ReduceKernels.argReduce(t, d, max, values, indices);
        if (keepDim) {
            values = values.unsqueeze(d);
            indices = indices.unsqueeze(d);
        }
        Tensor idx = keepDim ? indices : indices.unsqueeze(d);
        int[] shape = t.shapeRef();
        values = Grad.of(max ? "MaxBackward0" : "MinBackward0", t).record(values, g -> {
            Tensor gk = keepDim ? g : g.unsqueeze(d);
            return new Tensor[] {Tensors.zeros(g.dtype(), shape).scatterAdd(d, idx, gk)};
        });
        return new ValuesIndices(values, indices);
    }

    static Tensor logsumexp(Tensor t, int dim, boolean keepDim) {
        Tensor m = t.detach().amax(new int[] {dim}, true);
        m = m.where(m.abs().lt(Double.POSITIVE_INFINITY), Tensors.zerosLike(m));
        Tensor r = t.sub(m).exp().sum(new int[] {dim}, true).log().add(m);
        return keepDim ? r : r.squeeze(dim);
    }

    static Tensor softmax(Tensor t, int dim, boolean log) {
        if (!t.dtype().isFloatingPoint()) {
            // PyTorch refuses too ("softmax_lastdim_kernel_impl" not implemented for 'Long'): class
            // indices handed over for logits are a mistake that a quiet conversion would train on.
            throw new IllegalArgumentException((log ? "logSoftmax" : "softmax") + "() is not implemented for "
                    + t.dtype() + " tensors; convert to a floating point dtype first, as in x.to(DType.FLOAT32)");
        }
        int d = Shapes.normalizeDim(dim, t.dim());
        Tensor x = t;
        if (x.dim() == 0) {
            x = x.reshape(1);
        }
        Tensor out = Tensor.allocate(x.dtype(), x.shapeRef());
        ReduceKernels.softmax(x, x.dim() == t.dim() ? d : 0, log, out);
        if (t.dim() == 0) {
            out = out.reshape();
        }
        Tensor y = out;
        int[] dims = {d};
        if (log) {
            return Grad.of("LogSoftmaxBackward0", t).saving(y).record(out, g ->
                    new Tensor[] {g.sub(y.exp().mul(g.sum(dims, true)))});
        }
        return Grad.of("SoftmaxBackward0", t).saving(y).record(out,
                g -> new Tensor[] {y.mul(g.sub(g.mul(y).sum(dims, true)))});
    }
}
