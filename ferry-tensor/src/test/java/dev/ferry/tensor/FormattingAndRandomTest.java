package dev.ferry.tensor;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Expected strings and values printed by PyTorch 1.13. */
class FormattingAndRandomTest {

    @Test
    void formatsLikePyTorch() {
        assertThat(Tensors.of(new float[][] {{1, 2}, {3, 4}}).toString()).isEqualTo("tensor([[1., 2.],\n        [3., 4.]])");
        assertThat(Tensors.of(1e-5f, 1e5f).toString()).isEqualTo("tensor([1.0000e-05, 1.0000e+05])");
        assertThat(Tensors.of(true, false).toString()).isEqualTo("tensor([ True, False])");
        assertThat(Tensors.scalar(3.5).toString()).isEqualTo("tensor(3.5000)");
        assertThat(Tensors.of(0.5, 1.0).toString()).isEqualTo("tensor([0.5000, 1.0000], dtype=float64)");
        assertThat(Tensors.zeros(0, 3).toString()).isEqualTo("tensor([], size=(0, 3))");
        assertThat(Tensors.arange(2000).toString()).isEqualTo("tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
        assertThat(Tensors.arange(12).reshape(3, 4).toString())
                .isEqualTo("tensor([[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]])");
        assertThat(Tensors.of(-0.00001f, 1f).toString()).isEqualTo("tensor([-1.0000e-05,  1.0000e+00])");
        assertThat(Tensors.of(Float.NaN, Float.POSITIVE_INFINITY, 1.5f).toString())
                .isEqualTo("tensor([   nan,    inf, 1.5000])");
        Tensor w = Tensors.of(1f, 2f).requiresGrad_(true);
        assertThat(w.toString()).isEqualTo("tensor([1., 2.], requires_grad=True)");
        assertThat(w.mul(2).sum().toString()).isEqualTo("tensor(6., grad_fn=<SumBackward0>)");
        assertThat(Tensors.randn(new Generator(1), 2, 3, 4).toString()).isEqualTo(
                "tensor([[[-1.5256, -0.7502, -0.6540, -1.6095],\n"
                        + "         [-0.1002, -0.6092, -0.9798, -1.6091],\n"
                        + "         [ 0.4391,  1.1712,  1.7674, -0.0954]],\n\n"
                        + "        [[ 0.1394, -1.5785, -0.3206, -0.2993],\n"
                        + "         [-0.7984,  0.3357,  0.2753,  1.7163],\n"
                        + "         [-0.0561,  0.9107, -1.3924,  2.6891]]])");
    }

    @Test
    void wrapsLongRows() {
        assertThat(Tensors.arange(0.0, 2.0, 0.1).toString()).isEqualTo(
                "tensor([0.0000, 0.1000, 0.2000, 0.3000, 0.4000, 0.5000, 0.6000, 0.7000, 0.8000,\n"
                        + "        0.9000, 1.0000, 1.1000, 1.2000, 1.3000, 1.4000, 1.5000, 1.6000, 1.7000,\n"
                        + "        1.8000, 1.9000])");
    }

    @Test
    void generatorReproducesTorch() {
        Generator g = new Generator(0);
        assertThat(Tensors.rand(g, 5).toFloatArray())
                .containsExactly(0.49625659f, 0.76822180f, 0.08847743f, 0.13203049f, 0.30742282f);
        g.manualSeed(0);
        assertThat(Tensors.randn(g, 3).toFloatArray()).containsExactly(1.5409961f, -0.2934289f, -2.1787894f);
        g.manualSeed(0);
        float[] n = Tensors.randn(g, 20).toFloatArray();
        assertThat(n[0]).isEqualTo(-1.1258398f);
        assertThat(n[19]).isCloseTo(0.05373690f, org.assertj.core.api.Assertions.within(1e-7f));
        g.manualSeed(0);
        assertThat(Tensors.randint(0, 10, g, 8).toLongArray()).containsExactly(4, 9, 3, 0, 3, 9, 7, 3);
        g.manualSeed(0);
        assertThat(Tensors.rand(g, DType.FLOAT64, 1).item()).isEqualTo(0.9700530018065531);
    }
}
