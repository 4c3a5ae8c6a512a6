package dev.ferry.tensor.internal.kernels;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Tensor;
import dev.ludovic.netlib.blas.BLAS;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Matrix products through netlib BLAS: the system's {@code libblas.so.3} (OpenBLAS when installed)
 * via JNI, else netlib's pure-Java implementation. Integer matrices use a plain loop.
 *
 * <p>BLAS is column-major; a row-major {@code C = A·B} is computed as the column-major
 * {@code Cᵀ = Bᵀ·Aᵀ}, which reads the very same memory. A transposed view (unit stride on its
 * first dim) is passed with the "T" flag instead of being copied.
 */
public final class Gemm {
    private static final BLAS BLAS_INSTANCE = loadBlas();

    private Gemm() {
    }

    private static BLAS loadBlas() {
        // netlib logs a warning with a stack trace when no native BLAS is installed; the Java
        // fallback is expected there, so keep that quiet.
        Logger logger = Logger.getLogger("dev.ludovic.netlib.blas.InstanceBuilder");
        Level old = logger.getLevel();
        logger.setLevel(Level.SEVERE);
        try {
            return BLAS.getInstance();
        } finally {
            logger.setLevel(old);
        }
    }

    /** Which BLAS implementation is in use, e.g. {@code JNIBLAS} (native) or {@code VectorBLAS}. */
    public static String backend() {
        return BLAS_INSTANCE.getClass().getSimpleName();
    }

    /** A matrix operand as BLAS sees it: its row-major layout flag and leading dimension. */
    private record Operand(String trans, int ld, Tensor t) {
        static Operand of(Tensor m) {
            int r = m.size(0);
            int c = m.size(1);
            int s0 = m.stride(0);
            int s1 = m.stride(1);
            if ((c == 1 || s1 == 1) && (r == 1 || s0 >= c)) {
                return new Operand("N", r == 1 ? Math.max(c, 1) : Math.max(s0, 1), m);
            }
            if ((r == 1 || s0 == 1) && (c == 1 || s1 >= r)) {
                return new Operand("T", c == 1 ? Math.max(r, 1) : Math.max(s1, 1), m);
            }
            Tensor copy = m.contiguous();
            return new Operand("N", Math.max(c, 1), copy);
        }
    }

    /**
     * {@code out = beta * out + a · b} for 2-D {@code a} [m,k], {@code b} [k,n] and a contiguous
     * {@code out} [m,n], all of one floating dtype.
     */
    public static void mm(Tensor a, Tensor b, Tensor out, double beta) {
        int m = a.size(0);
        int k = a.size(1);
        int n = b.size(1);
        if (m == 0 || n == 0) {
            return;
        }
        if (k == 0) {
            if (beta == 0) {
                CopyKernels.fill(out, 0);
            }
            return;
        }
        if (!a.dtype().isFloatingPoint()) {
            integerMm(a, b, out, beta);
            return;
        }
        Operand x = Operand.of(a);
        Operand y = Operand.of(b);
        // Column-major: C^T (n x m) = B^T (n x k) * A^T (k x m).
        if (a.dtype() == DType.FLOAT32) {
            BLAS_INSTANCE.sgemm(y.trans, x.trans, n, m, k, 1f,
                    (float[]) y.t.storage().array(), y.t.storageOffset(), y.ld,
                    (float[]) x.t.storage().array(), x.t.storageOffset(), x.ld,
                    (float) beta, (float[]) out.storage().array(), out.storageOffset(), Math.max(n, 1));
        } else {
            BLAS_INSTANCE.dgemm(y.trans, x.trans, n, m, k, 1.0,
                    (double[]) y.t.storage().array(), y.t.storageOffset(), y.ld,
                    (double[]) x.t.storage().array(), x.t.storageOffset(), x.ld,
                    beta, (double[]) out.storage().array(), out.storageOffset(), Math.max(n, 1));
        }
    }

    private static void integerMm(Tensor a, Tensor b, Tensor out, double beta) {
        int m = a.size(0);
        int k = a.size(1);
        int n = b.size(1);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                long s = beta == 0 ? 0 : out.getLong(i, j);
                for (int p = 0; p < k; p++) {
                    s += a.getLong(i, p) * b.getLong(p, j);
                }
                out.storage().setLong(out.storageOffset() + i * out.stride(0) + j * out.stride(1), s);
            }
        }
    }
}
