package dev.ferry.tensor.optim;

import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** One and three steps from p = [1, -2, 0.5] with fixed gradients; expected values printed by PyTorch 1.13. */
class OptimizerKnownValuesTest {
    private static final float[][] GRADS = {{0.1f, -0.2f, 0.3f}, {-0.5f, 0.4f, 0.0f}, {0.2f, 0.2f, -0.1f}};

    private static Tensor run(Function<List<Tensor>, Optimizer> make, int steps) {
        Tensor p = Tensors.of(1.0f, -2.0f, 0.5f).requiresGrad_(true);
        Optimizer opt = make.apply(List.of(p));
        for (float[] g : java.util.Arrays.copyOf(GRADS, steps)) {
            p.setGrad(Tensors.of(g));
            opt.step();
        }
        return p;
    }

    private static void expect(Tensor p, double... values) {
        assertThat(p.toDoubleArray()).containsExactly(values, within(1e-6));
    }

    private static Arguments optimizer(String name, Function<List<Tensor>, Optimizer> make, double[] afterOne,
                                       double[] afterThree) {
        return Arguments.of(name, make, afterOne, afterThree);
    }

    private static double[] p(double... v) {
        return v;
    }

    /** torch.optim.X(params, ...) with the same settings; parameters after one and after three steps. */
    static Stream<Arguments> optimizers() {
        return Stream.of(
                optimizer("SGD", ps -> new SGD(ps, 0.1),
                        p(0.9900000095367432, -1.9800000190734863, 0.4699999988079071),
                        p(1.0199999809265137, -2.0399999618530273, 0.47999998927116394)),
                optimizer("SGD momentum", ps -> new SGD(ps, SGD.options(0.1).withMomentum(0.9)),
                        p(0.9900000095367432, -1.9800000190734863, 0.4699999988079071),
                        p(1.0478999614715576, -2.041800022125244, 0.4287000000476837)),
                optimizer("SGD momentum dampening", ps -> new SGD(ps, SGD.options(0.1).withMomentum(0.9)
                                .withDampening(0.5)),
                        p(0.9900000095367432, -1.9800000190734863, 0.4699999988079071),
                        p(1.0104000568389893, -1.9938000440597534, 0.4236999750137329)),
                optimizer("SGD nesterov", ps -> new SGD(ps, SGD.options(0.1).withMomentum(0.9).withNesterov(true)),
                        p(0.9810000061988831, -1.9620000123977661, 0.4429999887943268),
                        p(1.063110113143921, -2.077620029449463, 0.41582998633384705)),
                optimizer("SGD weight decay", ps -> new SGD(ps, SGD.options(0.1).withWeightDecay(0.1)),
                        p(0.9800000190734863, -1.9600000381469727, 0.4650000035762787),
                        p(0.9899979829788208, -1.9805960655212402, 0.4657464921474457)),
                optimizer("SGD momentum dampening weight decay", ps -> new SGD(ps, SGD.options(0.1).withMomentum(0.9)
                                .withDampening(0.1).withWeightDecay(0.01)),
                        null,
                        p(1.0350779294967651, -2.021604537963867, 0.42514467239379883)),
                optimizer("Adagrad", ps -> new Adagrad(ps, Adagrad.defaults().withLr(0.1)),
                        p(0.8999999761581421, -1.899999976158142, 0.4000000059604645),
                        p(0.9615432620048523, -2.0302674770355225, 0.43162277340888977)),
                optimizer("Adagrad lr decay, weight decay, accumulator, eps", ps -> new Adagrad(ps,
                                Adagrad.defaults().withLr(0.1).withLrDecay(0.5).withWeightDecay(0.1)
                                        .withInitialAccumulatorValue(0.2).withEps(1e-6)),
                        p(0.9591752290725708, -1.933333396911621, 0.4383685290813446),
                        p(0.9802290797233582, -1.955398678779602, 0.43818843364715576)),
                optimizer("Adam", ps -> new Adam(ps, Adam.defaults().withLr(0.01)),
                        p(0.9900000095367432, -1.9900000095367432, 0.49000000953674316),
                        p(0.9979555010795593, -1.9988534450531006, 0.48040807247161865)),
                optimizer("Adam weight decay amsgrad betas", ps -> new Adam(ps, Adam.defaults().withLr(0.01)
                                .withWeightDecay(0.1).withAmsgrad(true).withBetas(0.8, 0.9)),
                        p(0.9900000095367432, -1.9900000095367432, 0.49000000953674316),
                        p(0.9927675127983093, -1.9864012002944946, 0.4787251055240631)),
                optimizer("AdamW", ps -> new Adam(ps, Adam.adamW().withLr(0.01)),
                        p(0.9898999929428101, -1.989799976348877, 0.4899500012397766),
                        p(0.9976568818092346, -1.9982551336288452, 0.4802607297897339)),
                optimizer("AdamW weight decay 0.5", ps -> new Adam(ps, Adam.adamW().withLr(0.01).withWeightDecay(0.5)),
                        p(0.9850000143051147, -1.9800000190734863, 0.48750001192092896),
                        p(0.983100175857544, -1.9690847396850586, 0.47307875752449036)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("optimizers")
    void stepsMatchTorch(String name, Function<List<Tensor>, Optimizer> make, double[] afterOne, double[] afterThree) {
        if (afterOne != null) {
            expect(run(make, 1), afterOne);
        }
        expect(run(make, 3), afterThree);
    }

    @Test
    void adagradFunctionalStepMatchesStep() {
        Tensor a = Tensors.of(1.0f, -2.0f, 0.5f).requiresGrad_(true);
        Tensor b = Tensors.of(1.0f, -2.0f, 0.5f).requiresGrad_(true);
        Optimizer viaGrad = new Adagrad(List.of(a), Adagrad.defaults().withLr(0.1).withLrDecay(0.5));
        Optimizer functional = new Adagrad(List.of(b), Adagrad.defaults().withLr(0.1).withLrDecay(0.5));
        for (float[] g : GRADS) {
            a.setGrad(Tensors.of(g));
            viaGrad.step();
            functional.step(List.of(Tensors.of(g)));
        }
        assertThat(b.equal(a)).isTrue();
        assertThat(b.grad()).isNull();
        assertThatThrownBy(() -> Adagrad.defaults().withLrDecay(-1)).hasMessageContaining("Invalid lr_decay");
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
