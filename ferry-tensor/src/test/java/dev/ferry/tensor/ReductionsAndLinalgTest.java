package dev.ferry.tensor;

import dev.ferry.tensor.nn.Functional;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class ReductionsAndLinalgTest {

    private final Tensor m = Tensors.of(new float[][] {{1, 5, 3}, {4, 2, 6}});

    @Test
    void sumsAndMeans() {
        assertThat(m.sum().item()).isEqualTo(21);
        assertThat(m.sum(0).toFloatArray()).containsExactly(5, 7, 9);
        assertThat(m.sum(new int[] {-1}, true).shape()).containsExactly(2, 1);
        assertThat(m.mean(1).toFloatArray()).containsExactly(3, 4);
        assertThat(m.t().sum(0).toFloatArray()).containsExactly(9, 12);
        assertThat(Tensors.arange(4).sum().dtype()).isEqualTo(DType.INT64);
        assertThat(Tensors.of(true, true, false).sum().itemLong()).isEqualTo(2);
        assertThat(Tensors.zeros(2, 3, 4).sum(new int[] {0, 2}, false).shape()).containsExactly(3);
        assertThatThrownBy(() -> Tensors.arange(3).mean()).hasMessageContaining("Got: int64");
    }

    @Test
    void extremaVarianceAndSoftmax() {
        assertThat(m.max().item()).isEqualTo(6);
        ValuesIndices r = m.max(1, false);
        assertThat(r.values().toFloatArray()).containsExactly(5, 6);
        assertThat(r.indices().toLongArray()).containsExactly(1, 2);
        assertThat(m.argmin(0, false).toLongArray()).containsExactly(0, 1, 0);
        assertThat(m.argmax().itemLong()).isEqualTo(5);
        assertThat(Tensors.of(1.0, 2.0, 3.0, 4.0).var().item()).isCloseTo(1.6666666666666667, within(1e-12));
        assertThat(Tensors.of(1.0, 2.0, 3.0, 4.0).var(new int[] {0}, 0, false).item()).isCloseTo(1.25, within(1e-12));
        Tensor sm = Tensors.of(1.0, 2.0, 3.0).softmax(0);
        assertThat(sm.sum().item()).isCloseTo(1, within(1e-12));
        assertThat(Tensors.of(1.0, 2.0, 3.0).logSoftmax(0).toDoubleArray())
                .containsExactly(new double[] {-2.4076059644443806, -1.4076059644443804, -0.4076059644443803},
                        within(1e-12));
        assertThat(Tensors.of(1000.0, 1000.0).logsumexp(0, false).item())
                .isCloseTo(1000 + Math.log(2), within(1e-9));
    }

    @Test
    void softmaxOfIntegersIsRefusedAsInPyTorch() {
        // before, an int64 tensor (class indices passed for logits) was converted to float32 quietly
        assertThatThrownBy(() -> Tensors.of(1L, 2L, 3L).softmax(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("softmax() is not implemented for int64 tensors; convert to a floating point dtype first,"
                        + " as in x.to(DType.FLOAT32)");
        assertThatThrownBy(() -> Tensors.of(true, false).logSoftmax(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("logSoftmax() is not implemented for bool tensors");
        assertThatThrownBy(() -> Functional.crossEntropy(Tensors.of(new long[][] {{1, 2}}), Tensors.of(0L)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("logSoftmax() is not implemented");
    }

    @Test
    void matmulMatchesNaiveLoopsForAllLayouts() {
        Generator g = new Generator(3);
        Tensor a = Tensors.randn(g, DType.FLOAT64, 5, 7);
        Tensor b = Tensors.randn(g, DType.FLOAT64, 7, 4);
        double[][] expected = naive(a, b);
        assertClose(a.matmul(b), expected);
        assertClose(a.t().contiguous().t().matmul(b), expected);         // transposed A
        assertClose(a.matmul(b.t().contiguous().t()), expected);         // transposed B
        assertClose(a.slice(1, 0, 7, 1).matmul(b), expected);
        Tensor af = a.to(DType.FLOAT32);
        Tensor bf = b.to(DType.FLOAT32);
        assertThat(af.matmul(bf).allclose(a.matmul(b).to(DType.FLOAT32), 1e-5, 1e-5)).isTrue();
        // Every-other-column view: not BLAS-compatible, copied first.
        Tensor wide = Tensors.randn(g, DType.FLOAT64, 5, 14).slice(1, 0, 14, 2);
        assertClose(wide.matmul(b), naive(wide, b));
    }

    @Test
    void reportsWhichBlasDoesTheProducts() {
        // Native (JNIBLAS) when libblas.so.3 is installed, a pure-Java fallback otherwise.
        System.out.println("BLAS backend: " + Tensors.blasBackend());
        assertThat(Tensors.blasBackend()).isIn("JNIBLAS", "VectorBLAS", "Java11BLAS", "Java8BLAS");
    }

    @Test
    void matmulShapesFollowTorchMatmul() {
        Tensor v = Tensors.of(1f, 2f, 3f);
        Tensor mat = Tensors.ones(2, 3);
        assertThat(v.dot(v).item()).isEqualTo(14);
        assertThat(mat.mv(v).toFloatArray()).containsExactly(6, 6);
        assertThat(Tensors.ones(3, 2).t().matmul(v).shape()).containsExactly(2);
        assertThat(v.matmul(Tensors.ones(3, 4)).shape()).containsExactly(4);
        assertThat(Tensors.ones(5, 2, 3).matmul(Tensors.ones(3, 4)).shape()).containsExactly(5, 2, 4);
        assertThat(Tensors.ones(5, 1, 2, 3).matmul(Tensors.ones(4, 3, 2)).shape()).containsExactly(5, 4, 2, 2);
        assertThat(Tensors.ones(2, 2, 3).bmm(Tensors.ones(2, 3, 1)).toFloatArray()).containsExactly(3, 3, 3, 3);
        assertThat(Tensors.of(new long[][] {{1, 2}, {3, 4}}).matmul(Tensors.of(new long[][] {{1}, {1}})).toLongArray())
                .containsExactly(3, 7);
        assertThatThrownBy(() -> mat.mm(Tensors.ones(4, 5)))
                .hasMessage("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
        assertThatThrownBy(() -> mat.mm(Tensors.ones(DType.FLOAT64, 3, 5)))
                .hasMessageContaining("same dtype");
    }

    @Test
    void linearAddsBias() {
        Tensor x = Tensors.of(new float[][] {{1, 2}});
        Tensor w = Tensors.of(new float[][] {{1, 0}, {0, 1}, {1, 1}});
        Tensor b = Tensors.of(10f, 20f, 30f);
        assertThat(Tensors.linear(x, w, b).toFloatArray()).containsExactly(11, 22, 33);
        assertThat(Tensors.linear(x, w, null).toFloatArray()).containsExactly(1, 2, 3);
    }

    @Test
    void linearRefusesABiasThatIsNotOneRowOfTheOutput() {
        Tensor x = Tensors.zeros(2, 3);
        Tensor w = Tensors.zeros(4, 3);
        // Before, a [5] bias silently lent its first 4 values and a [3] one read past its end.
        assertThatThrownBy(() -> Tensors.linear(x, w, Tensors.zeros(5))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("linear: bias of shape [5] does not match out_features 4 of weight [4, 3]");
        assertThatThrownBy(() -> Tensors.linear(x, w, Tensors.zeros(3))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("linear: bias of shape [3] does not match out_features 4 of weight [4, 3]");
        assertThatThrownBy(() -> Tensors.linear(Tensors.scalar(1), w, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1 dimension");
        assertThatThrownBy(() -> Tensors.linear(x, Tensors.zeros(3), null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2-D weight");
        // F.linear(torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(2, 4)) broadcasts, as a bias of one value does
        assertThat(Tensors.linear(x, w, Tensors.ones(2, 4)).toFloatArray()).containsOnly(1f).hasSize(8);
        assertThat(Tensors.linear(x, w, Tensors.ones(1)).shape()).containsExactly(2, 4);
    }

    @Test
    void gatherScatterIndexSelect() {
        Tensor src = Tensors.of(new float[][] {{1, 2}, {3, 4}});
        Tensor idx = Tensors.of(new long[][] {{0, 0}, {1, 0}});
        assertThat(src.gather(1, idx).toFloatArray()).containsExactly(1, 1, 4, 3);
        assertThat(Tensors.zeros(2, 2).scatterAdd(1, idx, src).toFloatArray()).containsExactly(3, 0, 4, 3);
        assertThat(src.indexSelect(0, Tensors.of(1L, 1L, 0L)).toFloatArray()).containsExactly(3, 4, 3, 4, 1, 2);
        assertThatThrownBy(() -> src.gather(1, Tensors.of(new long[][] {{2, 0}, {0, 0}})))
                .hasMessage("index 2 is out of bounds for dimension 1 with size 2");
    }

    private static double[][] naive(Tensor a, Tensor b) {
        int n = a.size(0);
        int k = a.size(1);
        int m = b.size(1);
        double[][] c = new double[n][m];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                for (int p = 0; p < k; p++) {
                    c[i][j] += a.getDouble(i, p) * b.getDouble(p, j);
                }
            }
        }
        return c;
    }

    private static void assertClose(Tensor actual, double[][] expected) {
        assertThat(actual.allclose(Tensors.of(expected), 1e-10, 1e-10)).as(actual.toString()).isTrue();
    }
}
