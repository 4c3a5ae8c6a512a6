package dev.ferry.tensor.internal.kernels;

/**
 * Walks every element of a shape for up to three operands with their own strides and offsets,
 * calling an inner loop once per run of the innermost dimension. Dimensions that are laid out
 * back to back in every operand are merged first, so a dense op becomes one long run.
 *
 * <p>The inner loops are lambdas written per op and dtype; keeping the element loop inside the
 * lambda lets the JIT compile each one with its arithmetic inlined.
 */
public final class StridedLoop {
    private StridedLoop() {
    }

    @FunctionalInterface
    public interface Loop1 {
        void run(int n, int o0, int s0);
    }

    @FunctionalInterface
    public interface Loop2 {
        void run(int n, int o0, int s0, int o1, int s1);
    }

    @FunctionalInterface
    public interface Loop3 {
        void run(int n, int o0, int s0, int o1, int s1, int o2, int s2);
    }

    public static void run(int[] shape, int[] st0, int off0, Loop1 loop) {
        iterate(shape, new int[][] {st0}, new int[] {off0}, loop);
    }

    public static void run(int[] shape, int[] st0, int off0, int[] st1, int off1, Loop2 loop) {
        iterate(shape, new int[][] {st0, st1}, new int[] {off0, off1}, loop);
    }

    public static void run(int[] shape, int[] st0, int off0, int[] st1, int off1, int[] st2, int off2, Loop3 loop) {
        iterate(shape, new int[][] {st0, st1, st2}, new int[] {off0, off1, off2}, loop);
    }

    private static void iterate(int[] shape, int[][] strides, int[] offsets, Object loop) {
        int k = strides.length;
        // Coalesce: drop size-1 dims, merge dim i into i+1 when contiguous for every operand.
        int[] dims = new int[shape.length];
        int[][] st = new int[k][shape.length];
        int m = 0;
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] == 0) {
                return;
            }
            if (shape[i] == 1) {
                continue;
            }
            boolean merge = m > 0;
            for (int j = 0; j < k && merge; j++) {
                merge = st[j][m - 1] == strides[j][i] * shape[i];
            }
            if (merge) {
                dims[m - 1] *= shape[i];
                for (int j = 0; j < k; j++) {
                    st[j][m - 1] = strides[j][i];
                }
            } else {
                dims[m] = shape[i];
                for (int j = 0; j < k; j++) {
                    st[j][m] = strides[j][i];
                }
                m++;
            }
        }
        if (m == 0) {
            call(loop, k, 1, offsets, new int[k]);
            return;
        }
        int inner = dims[m - 1];
        int[] innerStrides = new int[k];
        for (int j = 0; j < k; j++) {
            innerStrides[j] = st[j][m - 1];
        }
        int[] counter = new int[m - 1];
        int[] off = offsets.clone();
        while (true) {
            call(loop, k, inner, off, innerStrides);
            int d = m - 2;
            while (d >= 0) {
                counter[d]++;
                for (int j = 0; j < k; j++) {
                    off[j] += st[j][d];
                }
                if (counter[d] < dims[d]) {
                    break;
                }
                for (int j = 0; j < k; j++) {
                    off[j] -= st[j][d] * dims[d];
                }
                counter[d] = 0;
                d--;
            }
            if (d < 0) {
                return;
            }
        }
    }

    private static void call(Object loop, int k, int n, int[] off, int[] s) {
        switch (k) {
            case 1 -> ((Loop1) loop).run(n, off[0], s[0]);
            case 2 -> ((Loop2) loop).run(n, off[0], s[0], off[1], s[1]);
            default -> ((Loop3) loop).run(n, off[0], s[0], off[1], s[1], off[2], s[2]);
        }
    }
}
