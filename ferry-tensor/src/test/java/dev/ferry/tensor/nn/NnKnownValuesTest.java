package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Literals printed by PyTorch 1.13 (torch.manual_seed(0); nn.Linear(4, 3); ...). */
class NnKnownValuesTest {

    static void assertValues(Tensor actual, double tol, double... expected) {
        assertThat(actual.toDoubleArray()).containsExactly(expected, within(tol));
    }

    @Test
    void linearInitMatchesTorchWithSameSeed() {
        Linear lin = new Linear(4, 3, true, new Generator(0));
        assertValues(lin.weight(), 0,
                -0.003743410110473633, 0.26822179555892944, -0.4115225672721863, -0.3679695129394531,
                -0.19257718324661255, 0.13407868146896362, -0.009906589984893799, 0.39644473791122437,
                -0.04437202215194702, 0.1323062777519226, -0.15110653638839722, -0.09828269481658936);
        assertValues(lin.bias(), 0, -0.4776742458343506, -0.33114105463027954, -0.20611155033111572);
    }

    /** Bound 1/√3 is not a power of two: the uniform draws must be mapped in double, as PyTorch does. */
    @Test
    void linearInitIsBitExactForAnyFanIn() {
        Linear lin = new Linear(3, 5, true, new Generator(0));
        assertValues(lin.weight(), 0,
                -0.004322517663240433, 0.3097158372402191, -0.4751853346824646, -0.4248946011066437,
                -0.2223689705133438, 0.15482072532176971, -0.011439144611358643, 0.45777493715286255,
                -0.05123639851808548, 0.1527741253376007, -0.1744827926158905, -0.11348707973957062,
                -0.55157071352005, -0.3823687434196472, -0.2379971146583557);
        assertValues(lin.bias(), 0, 0.021387115120887756, 0.22824688255786896, 0.34642332792282104,
                -0.3914094567298889, -0.25141456723213196);
    }

    @Test
    void crossEntropyLossAndGradientsMatchTorch() {
        Linear lin = new Linear(4, 3, true, new Generator(0));
        Tensor x = Tensors.of(new float[][] {{0.5f, -1.0f, 2.0f, 0.0f}, {1.5f, 0.25f, -0.75f, 1.0f}});
        Tensor y = Tensors.of(2L, 0L);
        Tensor out = lin.forward(x);
        Tensor loss = new CrossEntropyLoss().apply(out, y);
        loss.backward();
        assertThat(loss.item()).isCloseTo(1.0998121500015259, within(1e-6));
        assertValues(lin.weight().grad(), 1e-6,
                -0.5026198625564575, -0.1715715229511261, 0.43366700410842896, -0.36209577322006226,
                0.3862685263156891, -0.17179632186889648, 0.29738181829452515, 0.1848433017730713,
                0.11635133624076843, 0.34336787462234497, -0.7310488224029541, 0.17725247144699097);
        assertValues(lin.bias().grad(), 1e-6, -0.2810481786727905, 0.4028504490852356, -0.12180227041244507);
        assertThat(new MSELoss().apply(out, Tensors.ones(2, 3)).item()).isCloseTo(2.824997663497925, within(1e-6));
    }

    @Test
    void layerNormNamesAShapeThatDoesNotFit() {
        Tensor x = Tensors.zeros(2, 3);
        // PyTorch 1.13's messages for F.layer_norm(torch.zeros(2, 3), ...) with these arguments; a
        // normalized shape longer than the input used to fail with an ArrayIndexOutOfBoundsException,
        // and a weight of another shape to broadcast or fail with a mul error
        assertThatThrownBy(() -> Functional.layerNorm(x, new int[] {1, 2, 3}, null, null, 1e-5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Given normalized_shape=[1, 2, 3], expected input with shape [*, 1, 2, 3], but got input of"
                        + " size[2, 3]");
        assertThatThrownBy(() -> Functional.layerNorm(x, new int[] {3}, Tensors.ones(1), null, 1e-5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Expected weight to be of same shape as normalized_shape, but got weight of shape [1] and"
                        + " normalized_shape = [3]");
        assertThatThrownBy(() -> Functional.layerNorm(x, new int[] {3}, null, Tensors.ones(4), 1e-5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Expected bias to be of same shape as normalized_shape, but got bias of shape [4] and"
                        + " normalized_shape = [3]");
        assertThatThrownBy(() -> Functional.layerNorm(x, new int[0], null, null, 1e-5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1-dimensional");
    }

    @Test
    void classLossOptionsFollowPyTorch() {
        Tensor logits = Tensors.of(new float[][] {{1f, -0.5f, 2f}, {0.3f, 0.2f, -1f}}).requiresGrad_(true);
        // Every target ignored: the mean divides 0 by 0, NaN as in PyTorch; the sum is 0.
        Tensor ignored = Tensors.of(-100L, -100L);
        assertThat(Functional.crossEntropy(logits, ignored).item()).isNaN();
        assertThat(Functional.crossEntropy(logits, ignored, CrossEntropyLoss.defaults().withLabelSmoothing(0.1))
                .item()).isNaN();
        assertThat(Functional.nllLoss(logits, ignored, Reduction.SUM).item()).isZero();
        // An ignored element gets no gradient, even where its log-probability is -inf.
        Tensor logProbs = Tensors.of(new float[][] {{Float.NEGATIVE_INFINITY, -1f}, {-0.5f, -2f}}).requiresGrad_(true);
        Tensor loss = Functional.nllLoss(logProbs, Tensors.of(-100L, 1L), NLLLoss.defaults().withReduction(Reduction.SUM));
        assertThat(loss.item()).isEqualTo(2.0);
        loss.backward();
        assertThat(logProbs.grad().toDoubleArray()).containsExactly(0, 0, 0, -1);
        // The weight gets no gradient (PyTorch refuses one that requires it); the logits do.
        Tensor weight = Tensors.of(1f, 2f, 3f).requiresGrad_(true);
        Functional.crossEntropy(logits, Tensors.of(0L, 2L), CrossEntropyLoss.defaults().withWeight(weight)).backward();
        assertThat(weight.grad()).isNull();
        assertThat(logits.grad()).isNotNull();
        // The loss objects carry their options.
        CrossEntropyLoss.Options options = CrossEntropyLoss.defaults().withIgnoreIndex(0).withLabelSmoothing(0.25);
        assertThat(new CrossEntropyLoss(options).apply(logits, Tensors.of(0L, 2L)).item())
                .isEqualTo(Functional.crossEntropy(logits, Tensors.of(0L, 2L), options).item());
        assertThat(new CrossEntropyLoss().options()).isEqualTo(CrossEntropyLoss.defaults());
        assertThat(new NLLLoss().options().ignoreIndex()).isEqualTo(-100);
    }

    @Test
    void classLossOptionsValidateTheirInputs() {
        Tensor logits = Tensors.zeros(2, 4);
        Tensor target = Tensors.of(0L, 3L);
        assertThatThrownBy(() -> Functional.crossEntropy(logits, target,
                CrossEntropyLoss.defaults().withWeight(Tensors.ones(3))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("weight tensor should be defined either for all 4 classes or no classes but got weight"
                        + " tensor of shape: [3]");
        assertThatThrownBy(() -> Functional.nllLoss(logits, target, NLLLoss.defaults().withWeight(Tensors.ones(1, 4))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shape: [1, 4]");
        assertThatThrownBy(() -> CrossEntropyLoss.defaults().withLabelSmoothing(1.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("label_smoothing must be between 0.0 and 1.0. Got: 1.5");
        assertThatThrownBy(() -> CrossEntropyLoss.defaults().withLabelSmoothing(Double.NaN))
                .isInstanceOf(IllegalArgumentException.class);
        // Class probabilities: a floating target of the logits' shape, without an ignore index.
        Tensor probabilities = Tensors.full(0.25, 2, 4);
        assertThat(Functional.crossEntropy(logits, probabilities).item()).isCloseTo(Math.log(4), within(1e-6));
        assertThatThrownBy(() -> Functional.crossEntropy(logits, Tensors.zeros(dev.ferry.tensor.DType.INT64, 2, 4)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Expected floating point type for target with class probabilities, got int64");
        assertThatThrownBy(() -> Functional.crossEntropy(logits, probabilities,
                CrossEntropyLoss.defaults().withIgnoreIndex(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ignore_index is not supported for floating point target");
        assertThatThrownBy(() -> Functional.crossEntropy(logits, probabilities,
                CrossEntropyLoss.defaults().withWeight(Tensors.ones(3))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cross_entropy: weight tensor should be defined either for all 4 classes or no classes but"
                        + " got weight tensor of shape: [3]");
        // The ignore index may lie outside the classes; any other target there is still refused.
        assertThat(Functional.crossEntropy(logits, Tensors.of(-100L, 3L)).item()).isCloseTo(Math.log(4), within(1e-6));
        assertThatThrownBy(() -> Functional.crossEntropy(logits, Tensors.of(-1L, 3L)))
                .hasMessage("Target -1 is out of bounds for 4 classes.");
        assertThatThrownBy(() -> Functional.crossEntropy(logits, Tensors.of(0L, 4L),
                CrossEntropyLoss.defaults().withIgnoreIndex(0)))
                .hasMessage("Target 4 is out of bounds for 4 classes.");
    }

    @Test
    void lossesValidateTheirInputs() {
        Tensor logits = Tensors.zeros(2, 3);
        assertThatThrownBy(() -> Functional.crossEntropy(logits, Tensors.of(0L, 3L)))
                .hasMessage("Target 3 is out of bounds for 3 classes.");
        assertThatThrownBy(() -> Functional.crossEntropy(logits, Tensors.of(0f, 1f)))
                .hasMessageContaining("int64");
        assertThatThrownBy(() -> Functional.crossEntropy(logits, Tensors.of(0L)))
                .hasMessage("Expected input batch_size (2) to match target batch_size (1).");
        // The model-parallel RNN example's shapes: [seq, batch, ntoken] logits against [seq, ntoken] targets
        // put the classes in dim 1 (size batch); a mismatch names both shapes.
        assertThat(Functional.crossEntropy(Tensors.zeros(5, 3, 10), Tensors.zeros(dev.ferry.tensor.DType.INT64, 5, 10))
                .item()).isCloseTo(Math.log(3), within(1e-6));
        assertThatThrownBy(() -> Functional.crossEntropy(Tensors.zeros(5, 3, 10),
                Tensors.zeros(dev.ferry.tensor.DType.INT64, 5, 3)))
                .hasMessage("nll_loss: expected target size [5, 10], got [5, 3]");
        // PyTorch's binary_cross_entropy refuses a target of another shape; it used to broadcast
        // [4] against [4, 1] and average sixteen terms, twelve of them pairing rows with others' labels
        assertThatThrownBy(() -> Functional.binaryCrossEntropy(Tensors.full(0.5, 4, 1), Tensors.ones(4)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Using a target size ([4]) that is different to the input size ([4, 1]) is deprecated."
                        + " Please ensure they have the same size.");
        // PyTorch's mse_loss only warns (in a loop nobody reads) and averages the [4, 4] grid; Ferry
        // broadcast so silently
        assertThatThrownBy(() -> Functional.mseLoss(Tensors.full(0.5, 4, 1), Tensors.full(0.5, 4)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Using a target size ([4]) that is different to the input size ([4, 1]) would broadcast"
                        + " them and likely give incorrect results; please ensure they have the same size");
        assertThatThrownBy(() -> new MSELoss().apply(Tensors.zeros(2, 3), Tensors.zeros(3)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("target size ([3])");
    }

    @Test
    void moduleTreeParametersAndStateDict() {
        Sequential model = new Sequential(new Linear(4, 8, true, new Generator(1)), Activation.relu(),
                new Linear(8, 2, false, new Generator(2)));
        assertThat(model.namedParameters().keySet()).containsExactly("0.weight", "0.bias", "2.weight");
        assertThat(model.parameters()).allMatch(Tensor::requiresGrad);
        assertThat(model.toString()).isEqualTo("Sequential(\n"
                + "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
                + "  (1): ReLU()\n"
                + "  (2): Linear(in_features=8, out_features=2, bias=False)\n)");
        var state = model.stateDict();
        Sequential other = new Sequential(new Linear(4, 8, true, new Generator(5)), Activation.relu(),
                new Linear(8, 2, false, new Generator(6)));
        other.loadStateDict(state);
        Tensor x = Tensors.randn(new Generator(3), 5, 4);
        assertThat(other.forward(x).equal(model.forward(x))).isTrue();
        assertThatThrownBy(() -> new Linear(3, 2).forward(Tensors.zeros(2, 4)))
                .hasMessageContaining("got input with last dimension 4");
    }

    @Test
    void dropoutOnlyInTraining() {
        Dropout d = new Dropout(0.5, new Generator(0));
        Tensor x = Tensors.ones(1000);
        Tensor y = d.forward(x);
        double kept = y.gt(0).sum().item();
        assertThat(kept).isBetween(400.0, 600.0);
        assertThat(y.max().item()).isEqualTo(2);
        d.eval();
        assertThat(d.forward(x)).isSameAs(x);
    }

    @Test
    void layerNormNormalizes() {
        LayerNorm ln = new LayerNorm(4);
        Tensor y = ln.forward(Tensors.of(new float[][] {{1, 2, 3, 4}, {2, 2, 2, 6}}));
        assertThat(y.mean(1).toFloatArray()).containsExactly(new float[] {0, 0}, within(1e-6f));
        assertThat(y.var(new int[] {1}, 0, false).toFloatArray()).containsExactly(new float[] {1, 1}, within(1e-4f));
    }
}
