package dev.ferry.tensor;

import dev.ferry.tensor.internal.Shapes;
import dev.ferry.tensor.internal.kernels.Gemm;

/** Matrix products (through BLAS) and their derivatives. */
final class Linalg {
    private Linalg() {
    }

    private static DType commonType(Tensor a, Tensor b, String op) {
        if (a.dtype() != b.dtype()) {
            throw new IllegalArgumentException(op + ": expected both operands to have the same dtype, but got "
                    + a.dtype() + " and " + b.dtype());
        }
        if (a.dtype() == DType.BOOL) {
            throw new IllegalArgumentException(op + ": bool tensors cannot be multiplied; convert them with to()");
        }
        return a.dtype();
    }

    static Tensor mm(Tensor a, Tensor b) {
        if (a.dim() != 2 || b.dim() != 2) {
            throw new IllegalArgumentException("mm: expected 2-D tensors, but got " + a.dim() + "-D and " + b.dim()
                    + "-D");
        }
        if (a.size(1) != b.size(0)) {
            throw new IllegalArgumentException("mat1 and mat2 shapes cannot be multiplied (" + a.size(0) + "x"
                    + a.size(1) + " and " + b.size(0) + "x" + b.size(1) + ")");
        }
        DType dt = commonType(a, b, "mm");
        Tensor out = Tensor.allocate(dt, new int[] {a.size(0), b.size(1)});
        Gemm.mm(a, b, out, 0);
        return Grad.of("MmBackward0", a, b).saving(Grad.readFor(b, a), Grad.readFor(a, b)).record(out, g -> new Tensor[] {
                a.requiresGrad() ? g.mm(b.t()) : null,
                b.requiresGrad() ? a.t().mm(g) : null});
    }

    /** {@code x · wᵀ + bias}: nn.Linear's forward with the bias added by BLAS (beta = 1). */
    static Tensor linear(Tensor x, Tensor w, Tensor bias) {
        if (x.dim() == 0 || w.dim() != 2) {
            throw new IllegalArgumentException("linear: expected an input of at least 1 dimension and a 2-D weight"
                    + " [out_features, in_features], but got input of shape " + Shapes.str(x.shapeRef())
                    + " and weight of shape " + Shapes.str(w.shapeRef()));
        }
        if (bias != null && bias.dim() > 1) {
            // A bias of more than one dim broadcasts against the whole output, as in PyTorch: add it
            // afterwards (the fused path below is for nn.Linear's [out_features] bias).
            return linear(x, w, null).add(bias);
        }
        if (x.dim() != 2) {
            Tensor flat = x.reshape(-1, x.size(-1));
            Tensor y = linear(flat, w, bias);
            int[] shape = x.shape();
            shape[shape.length - 1] = w.size(0);
            return y.reshape(shape);
        }
        if (x.size(1) != w.size(1)) {
            throw new IllegalArgumentException("mat1 and mat2 shapes cannot be multiplied (" + x.size(0) + "x"
                    + x.size(1) + " and " + w.size(1) + "x" + w.size(0) + ")");
        }
        DType dt = commonType(x, w, "linear");
        int[] shape = {x.size(0), w.size(0)};
        Tensor out = Tensor.allocate(dt, shape);
        double beta = 0;
        if (bias != null) {
            commonType(x, bias, "linear");
            if (bias.dim() == 1 && bias.size(0) != 1 && bias.size(0) != w.size(0)) {
                // copy() would read past a bias longer or shorter than a row of the output
                throw new IllegalArgumentException("linear: bias of shape " + Shapes.str(bias.shapeRef())
                        + " does not match out_features " + w.size(0) + " of weight " + Shapes.str(w.shapeRef()));
            }
            dev.ferry.tensor.internal.kernels.CopyKernels.copy(bias, out);
            beta = 1;
        }
        Gemm.mm(x, w.detach().t(), out, beta);
        Tensor[] inputs = bias == null ? new Tensor[] {x, w} : new Tensor[] {x, w, bias};
        return Grad.of("AddmmBackward0", inputs).saving(Grad.readFor(w, x), Grad.readFor(x, w)).record(out, g -> {
            Tensor[] grads = new Tensor[inputs.length];
            grads[0] = x.requiresGrad() ? g.mm(w) : null;
            grads[1] = w.requiresGrad() ? g.t().mm(x) : null;
            if (bias != null) {
                grads[2] = bias.requiresGrad() ? Elementwise.reduceTo(g, bias.shapeRef()) : null;
            }
            return grads;
        });
    }

    static Tensor bmm(Tensor a, Tensor b) {
        if (a.dim() != 3 || b.dim() != 3) {
            throw new IllegalArgumentException("bmm: expected 3-D tensors, but got " + a.dim() + "-D and " + b.dim()
                    + "-D");
        }
        if (a.size(0) != b.size(0) || a.size(2) != b.size(1)) {
            throw new IllegalArgumentException("Expected size for first two dimensions of batch2 tensor to be: ["
                    + a.size(0) + ", " + a.size(2) + "] but got: [" + b.size(0) + ", " + b.size(1) + "].");
        }
        DType dt = commonType(a, b, "bmm");
        int batch = a.size(0);
        Tensor out = Tensor.allocate(dt, new int[] {batch, a.size(1), b.size(2)});
        Tensor ad = a.detach();
        Tensor bd = b.detach();
        for (int i = 0; i < batch; i++) {
            Gemm.mm(ad.select(0, i), bd.select(0, i), out.detach().select(0, i), 0);
        }
        return Grad.of("BmmBackward0", a, b).saving(Grad.readFor(b, a), Grad.readFor(a, b)).record(out, g -> new Tensor[] {
                a.requiresGrad() ? g.bmm(b.transpose(1, 2)) : null,
                b.requiresGrad() ? a.transpose(1, 2).bmm(g) : null});
    }

    static Tensor dot(Tensor a, Tensor b) {
        if (a.dim() != 1 || b.dim() != 1) {
            throw new IllegalArgumentException("1D tensors expected, but got " + a.dim() + "D and " + b.dim()
                    + "D tensors");
        }
        if (a.size(0) != b.size(0)) {
            throw new IllegalArgumentException("inconsistent tensor size, expected tensor [" + a.size(0)
                    + "] and src [" + b.size(0) + "] to have the same number of elements, but got " + a.size(0)
                    + " and " + b.size(0) + " elements respectively");
        }
        commonType(a, b, "dot");
        return a.mul(b).sum();
    }

    /** torch.matmul: 1-D operands are promoted to matrices, leading dims broadcast as batch dims. */
    static Tensor matmul(Tensor a, Tensor b) {
        int da = a.dim();
        int db = b.dim();
        if (da == 0 || db == 0) {
            throw new IllegalArgumentException("both arguments to matmul need to be at least 1D, but they are " + da
                    + "D and " + db + "D");
        }
        if (da == 1 && db == 1) {
            return dot(a, b);
        }
        if (da == 2 && db == 1) {
            return mm(a, b.unsqueeze(1)).squeeze(1);
        }
        if (da == 1 && db == 2) {
            return mm(a.unsqueeze(0), b).squeeze(0);
        }
        if (da == 2 && db == 2) {
            return mm(a, b);
        }
        // Batched: broadcast the batch dims, fold them into one, bmm, unfold.
        Tensor x = da == 1 ? a.unsqueeze(0) : a;
        Tensor y = db == 1 ? b.unsqueeze(1) : b;
        int n = x.size(-2);
        int k = x.size(-1);
        int m = y.size(-1);
        if (y.size(-2) != k) {
            throw new IllegalArgumentException("mat1 and mat2 shapes cannot be multiplied (" + n + "x" + k + " and "
                    + y.size(-2) + "x" + m + ")");
        }
        int[] batchA = java.util.Arrays.copyOf(x.shapeRef(), x.dim() - 2);
        int[] batchB = java.util.Arrays.copyOf(y.shapeRef(), y.dim() - 2);
        int[] batch = Shapes.broadcast("matmul", batchA, batchB);
        int bn = Shapes.numel(batch);
        Tensor xe = x.expand(concat(batch, n, k)).reshape(bn, n, k);
        Tensor ye = y.expand(concat(batch, k, m)).reshape(bn, k, m);
        Tensor r = xe.bmm(ye).reshape(concat(batch, n, m));
        if (da == 1) {
            r = r.squeeze(-2);
        }
        if (db == 1) {
            r = r.squeeze(-1);
        }
        return r;
    }

    private static int[] concat(int[] prefix, int a, int b) {
        int[] out = java.util.Arrays.copyOf(prefix, prefix.length + 2);
        out[prefix.length] = a;
        out[prefix.length + 1] = b;
        return out;
    }
}
