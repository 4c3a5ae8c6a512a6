package dev.ferry.tensor;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class ElementwiseTest {

    @Test
    void broadcastingArithmetic() {
        Tensor a = Tensors.of(new float[][] {{1, 2, 3}, {4, 5, 6}});
        Tensor col = Tensors.of(new float[][] {{10}, {20}});
        assertThat(a.add(col).toFloatArray()).containsExactly(11, 12, 13, 24, 25, 26);
        assertThat(a.mul(Tensors.of(1f, 0f, -1f)).toFloatArray()).containsExactly(1, 0, -3, 4, 0, -6);
        assertThat(a.sub(Tensors.of(1f, 1f, 1f), 2).toFloatArray()).containsExactly(-1, 0, 1, 2, 3, 4);
        assertThat(a.t().add(Tensors.of(1f, 1f)).toFloatArray()).containsExactly(2, 5, 3, 6, 4, 7);
        assertThat(a.div(2).toFloatArray()).containsExactly(0.5f, 1, 1.5f, 2, 2.5f, 3);
        assertThat(a.pow(2).toFloatArray()).containsExactly(1, 4, 9, 16, 25, 36);
        assertThatThrownBy(() -> a.add(Tensors.zeros(4)))
                .hasMessage("The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
                        + " (add of shapes [2, 3] and [4])");
        assertThatThrownBy(() -> a.sub(Tensors.zeros(4))).hasMessageEndingWith("(sub of shapes [2, 3] and [4])");
        assertThatThrownBy(() -> a.mul(Tensors.zeros(3, 1, 2)))
                .hasMessageEndingWith("(mul of shapes [2, 3] and [3, 1, 2])");
        assertThatThrownBy(() -> Tensors.where(a.gt(0), a, Tensors.zeros(2)))
                .hasMessageEndingWith("(where of shapes [2, 3] and [2])");
        assertThatThrownBy(() -> Tensors.ones(2, 2, 3).matmul(Tensors.ones(3, 3, 1)))
                .hasMessageEndingWith("(matmul of shapes [2] and [3])");
        assertThatThrownBy(() -> Tensors.of(true).sub(Tensors.of(false))).hasMessageContaining("with two bool tensors");
        assertThatThrownBy(() -> Tensors.of(true).neg()).hasMessageContaining("on a bool tensor is not supported");
    }

    @Test
    void typePromotionFollowsPyTorch() {
        Tensor i = Tensors.of(1L, 2L);
        Tensor f = Tensors.of(0.5f, 0.5f);
        assertThat(i.add(f).dtype()).isEqualTo(DType.FLOAT32);
        assertThat(f.add(Tensors.of(1.0, 1.0)).dtype()).isEqualTo(DType.FLOAT64);
        assertThat(i.add(i).dtype()).isEqualTo(DType.INT64);
        assertThat(i.div(i).dtype()).isEqualTo(DType.FLOAT32);
        assertThat(i.mul(2.5).toFloatArray()).containsExactly(2.5f, 5f);
        assertThat(i.mul(3).dtype()).isEqualTo(DType.INT64);
        assertThat(Tensors.of(1, 2).add(Tensors.of(1L, 1L)).dtype()).isEqualTo(DType.INT64);
    }

    @Test
    void unaryMath() {
        Tensor x = Tensors.of(-1.0, 0.0, 2.0);
        assertThat(x.relu().toDoubleArray()).containsExactly(0, 0, 2);
        assertThat(x.abs().toDoubleArray()).containsExactly(1, 0, 2);
        assertThat(x.exp().toDoubleArray()[2]).isCloseTo(Math.exp(2), within(1e-12));
        assertThat(x.sigmoid().toDoubleArray()[1]).isEqualTo(0.5);
        assertThat(x.tanh().toDoubleArray()[0]).isCloseTo(Math.tanh(-1), within(1e-12));
        assertThat(x.clamp(-0.5, 1).toDoubleArray()).containsExactly(-0.5, 0, 1);
        assertThat(Tensors.of(0.5, 1.5, 2.5, -0.5).round().toDoubleArray()).containsExactly(0, 2, 2, -0.0);
        assertThat(Tensors.of(4L).sqrt().dtype()).isEqualTo(DType.FLOAT32);
        assertThat(Tensors.of(-3L).abs().toLongArray()).containsExactly(3);
    }

    @Test
    void comparisonsAndWhere() {
        Tensor x = Tensors.of(1f, 5f, 3f);
        Tensor y = Tensors.of(2f, 2f, 3f);
        assertThat(x.gt(y).toBooleanArray()).containsExactly(false, true, false);
        assertThat(x.eq(y).toBooleanArray()).containsExactly(false, false, true);
        assertThat(x.le(3).toBooleanArray()).containsExactly(true, false, true);
        assertThat(x.gt(y).logicalNot().toBooleanArray()).containsExactly(true, false, true);
        assertThat(Tensors.where(x.gt(y), x, y).toFloatArray()).containsExactly(2, 5, 3);
        assertThat(x.maskedFill(x.gt(2), 0).toFloatArray()).containsExactly(1, 0, 0);
        assertThat(x.maximum(y).toFloatArray()).containsExactly(2, 5, 3);
        assertThatThrownBy(() -> Tensors.where(Tensors.of(1f), x, y)).hasMessageContaining("boolean");
    }

    @Test
    void inPlaceOpsAndTheirChecks() {
        Tensor x = Tensors.of(1f, 2f, 3f);
        x.add_(Tensors.of(1f, 1f, 1f)).mul_(2);
        assertThat(x.toFloatArray()).containsExactly(4, 6, 8);
        int v = x.version();
        x.add_(1);
        assertThat(x.version()).isGreaterThan(v);
        assertThatThrownBy(() -> Tensors.of(1L).add_(Tensors.of(0.5f)))
                .hasMessage("result type float32 can't be cast to the desired output type int64");
        assertThatThrownBy(() -> x.add_(Tensors.zeros(2, 3)))
                .hasMessageContaining("doesn't match the broadcast shape [2, 3]");
        Tensor w = Tensors.zeros(2).requiresGrad_(true);
        assertThatThrownBy(() -> w.add_(1)).hasMessageContaining("a leaf Variable that requires grad");
        Tensor m = Tensors.zeros(2, 2);
        m.t().copy_(Tensors.of(new float[][] {{1, 2}, {3, 4}}));
        assertThat(m.toFloatArray()).containsExactly(1, 3, 2, 4);
    }

    @Test
    void allcloseAndEqual() {
        assertThat(Tensors.of(1f, 2f).allclose(Tensors.of(1f, 2.000001f), 1e-5, 1e-8)).isTrue();
        assertThat(Tensors.of(1f, 2f).allclose(Tensors.of(1f, 2.1f), 1e-5, 1e-8)).isFalse();
        assertThat(Tensors.of(1f, 2f).equal(Tensors.of(1f, 2f))).isTrue();
    }
}
