package dev.ferry.tensor.optim;

import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Three steps from p = [1, -2, 0.5] with fixed gradients; expected values printed by PyTorch 1.13. */
class OptimizerKnownValuesTest {
    private static final float[][] GRADS = {{0.1f, -0.2f, 0.3f}, {-0.5f, 0.4f, 0.0f}, {0.2f, 0.2f, -0.1f}};

    private static Tensor run(Function<List<Tensor>, Optimizer> make) {
        Tensor p = Tensors.of(1.0f, -2.0f, 0.5f).requiresGrad_(true);
        Optimizer opt = make.apply(List.of(p));
        for (float[] g : GRADS) {
            p.setGrad(Tensors.of(g));
            opt.step();
        }
        return p;
    }

    private static void expect(Tensor p, double... values) {
        assertThat(p.toDoubleArray()).containsExactly(values, within(1e-6));
    }

    @Test
    void sgd() {
        expect(run(ps -> new SGD(ps, 0.1)), 1.0199999809265137, -2.0399999618530273, 0.47999998927116394);
        expect(run(ps -> new SGD(ps, SGD.options(0.1).withMomentum(0.9).withDampening(0.1).withWeightDecay(0.01))),
                1.0350779294967651, -2.021604537963867, 0.42514467239379883);
        expect(run(ps -> new SGD(ps, SGD.options(0.1).withMomentum(0.9).withNesterov(true))),
                1.063110113143921, -2.077620029449463, 0.41582998633384705);
    }

    @Test
    void adamAndAdamW() {
        expect(run(ps -> new Adam(ps, Adam.defaults().withLr(0.01))),
                0.9979555010795593, -1.9988534450531006, 0.48040807247161865);
        expect(run(ps -> new Adam(ps, Adam.defaults().withLr(0.01).withWeightDecay(0.1).withAmsgrad(true)
                        .withBetas(0.8, 0.9))),
                0.9927675127983093, -1.9864012002944946, 0.4787251055240631);
        expect(run(ps -> new Adam(ps, Adam.adamW().withLr(0.01))),
                0.9976568818092346, -1.9982551336288452, 0.4802607297897339);
    }

    @Test
    void functionalStepMatchesStepAndLeavesGradAlone() {
        Tensor a = Tensors.of(1.0f, -2.0f, 0.5f).requiresGrad_(true);
        Tensor b = Tensors.of(1.0f, -2.0f, 0.5f).requiresGrad_(true);
        Optimizer viaGrad = new Adam(List.of(a), Adam.defaults().withLr(0.01));
        Optimizer functional = new Adam(List.of(b), Adam.defaults().withLr(0.01));
        for (float[] g : GRADS) {
            a.setGrad(Tensors.of(g));
            viaGrad.step();
            Map<Tensor, Tensor> grads = new IdentityHashMap<>();
            grads.put(b, Tensors.of(g));
            functional.step(grads);
        }
        assertThat(b.equal(a)).isTrue();
        assertThat(b.grad()).isNull();
    }

    @Test
    void nullGradientsAreSkippedAndShapesChecked() {
        Tensor a = Tensors.of(1f).requiresGrad_(true);
        Tensor b = Tensors.of(2f).requiresGrad_(true);
        SGD opt = new SGD(List.of(a, b), 1);
        List<Tensor> grads = new ArrayList<>();
        grads.add(null);
        grads.add(Tensors.of(1f));
        opt.step(grads);
        assertThat(a.item()).isEqualTo(1);
        assertThat(b.item()).isEqualTo(1);
        assertThatThrownBy(() -> opt.step(List.of(Tensors.of(1f))))
                .hasMessage("expected 2 gradients (one per parameter) but got 1");
        assertThatThrownBy(() -> opt.step(List.of(Tensors.of(1f), Tensors.of(1f, 2f))))
                .hasMessageContaining("gradient 1 has shape [2]");
        assertThatThrownBy(() -> new SGD(List.of(a.mul(2)), 0.1)).hasMessageContaining("non-leaf");
        assertThatThrownBy(() -> SGD.options(-1)).hasMessageContaining("Invalid learning rate");
    }
}
