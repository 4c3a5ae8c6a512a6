package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.optim.SGD;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Module tree: parameters, children, modes, gradients and state dicts. */
class ModuleTest {

    /** A small version of the model-parallel RNN example: embedding, LSTM, decoder. */
    static final class TinyRnn extends Module {
        final Embedding encoder = registerModule("encoder", new Embedding(10, 4, null, new Generator(0)));
        final LSTM rnn = registerModule("rnn", new LSTM(4, 3, 2, 0.5, false, new Generator(1)));
        final Sequential decoder = registerModule("decoder",
                new Sequential(new Dropout(0.5, new Generator(2)), new Linear(3, 10, true, new Generator(3))));
        final Parameter scale = registerParameter("scale", new Parameter(Tensors.ones(1)));

        @Override
        public Tensor forward(Tensor tokens) {
            return decoder.forward(rnn.forward(encoder.forward(tokens))).mul(scale);
        }
    }

    @Test
    void namedParametersFollowTheTreeInRegistrationOrder() {
        TinyRnn m = new TinyRnn();
        assertThat(m.namedParameters().keySet()).containsExactly("scale", "encoder.weight",
                "rnn.weight_ih_l0", "rnn.weight_hh_l0", "rnn.bias_ih_l0", "rnn.bias_hh_l0",
                "rnn.weight_ih_l1", "rnn.weight_hh_l1", "rnn.bias_ih_l1", "rnn.bias_hh_l1",
                "decoder.1.weight", "decoder.1.bias");
        assertThat(m.parameters()).hasSize(12).allMatch(p -> p instanceof Parameter && p.requiresGrad());
        assertThat(m.children().keySet()).containsExactly("encoder", "rnn", "decoder");
        assertThat(m.children().get("decoder")).isSameAs(m.decoder);
        assertThatThrownBy(() -> m.children().put("x", m)).isInstanceOf(UnsupportedOperationException.class);
        Tensor out = m.forward(Tensors.of(new long[][] {{1, 2}, {3, 4}, {5, 6}}));
        assertThat(out.shape()).containsExactly(3, 2, 10);
    }

    @Test
    void trainAndEvalReachEveryDescendant() {
        TinyRnn m = new TinyRnn();
        assertThat(m.isTraining()).isTrue();
        m.eval();
        assertThat(m.rnn.isTraining()).isFalse();
        assertThat(m.decoder.get(0).isTraining()).isFalse();
        Tensor tokens = Tensors.of(new long[][] {{1, 2}, {3, 4}});
        assertThat(m.forward(tokens).equal(m.forward(tokens))).isTrue(); // no dropout anywhere
        m.train();
        assertThat(m.decoder.get(0).isTraining()).isTrue();
        assertThat(m.forward(tokens).equal(m.forward(tokens))).isFalse();
    }

    @Test
    void zeroGradClearsEveryParameter() {
        TinyRnn m = new TinyRnn();
        m.forward(Tensors.of(new long[][] {{1, 2}})).sum().backward();
        assertThat(m.parameters()).allMatch(p -> p.grad() != null);
        m.zeroGrad();
        assertThat(m.parameters()).allMatch(p -> p.grad() == null);
    }

    @Test
    void stateDictIsADetachedCopyAndLoadChecksKeysAndShapes() {
        TinyRnn a = new TinyRnn();
        Map<String, Tensor> state = a.stateDict();
        assertThat(state.keySet()).isEqualTo(a.namedParameters().keySet());
        assertThat(state.values()).noneMatch(Tensor::requiresGrad);
        state.get("scale").fill_(3); // a copy: the model is unchanged
        assertThat(a.scale.item()).isEqualTo(1);

        TinyRnn b = new TinyRnn();
        try (var scope = dev.ferry.tensor.autograd.Autograd.noGrad()) {
            b.encoder.weight().fill_(0);
        }
        b.loadStateDict(state);
        assertThat(b.scale.item()).isEqualTo(3);
        assertThat(b.encoder.weight().equal(a.encoder.weight())).isTrue();

        state.remove("scale");
        state.put("bogus", Tensors.ones(1));
        assertThatThrownBy(() -> b.loadStateDict(state)).hasMessage("Error(s) in loading state_dict for TinyRnn:"
                + " missing key(s) [scale], unexpected key(s) [bogus]");
        Map<String, Tensor> wrongShape = a.stateDict();
        wrongShape.put("decoder.1.bias", Tensors.zeros(3));
        assertThatThrownBy(() -> b.loadStateDict(wrongShape)).hasMessage("size mismatch for decoder.1.bias: copying"
                + " a param with shape [3], the shape in current model is [10]");
    }

    @Test
    void parameterWrapsWithoutCopyAndPrintsLikeTorch() {
        Tensor data = Tensors.of(1f, 2f);
        Parameter p = new Parameter(data);
        assertThat(p.requiresGrad()).isTrue();
        assertThat(p.isLeaf()).isTrue();
        assertThat(p.storage()).isSameAs(data.storage());
        assertThat(p.toString()).isEqualTo("Parameter containing:\ntensor([1., 2.], requires_grad=True)");
        assertThat(new Parameter(data, false).requiresGrad()).isFalse();
        // A computed tensor becomes a fresh leaf: its history is dropped.
        Parameter fromComputed = new Parameter(p.mul(2));
        assertThat(fromComputed.isLeaf()).isTrue();
        assertThatThrownBy(() -> new Parameter(Tensors.of(1L)))
                .hasMessageContaining("only Tensors of floating point dtype can require gradients");
        // Parameters go straight into optimizers.
        new SGD(new TinyRnn().parameters(), 0.1);
    }

    @Test
    void activationLayersAreModulesWithoutParameters() {
        Sequential m = new Sequential(new ReLU(), new Tanh(), new Sigmoid());
        assertThat(m.parameters()).isEmpty();
        assertThat(m.toString()).isEqualTo("Sequential(\n  (0): ReLU()\n  (1): Tanh()\n  (2): Sigmoid()\n)");
        Tensor x = Tensors.of(-1.0, 0.5);
        assertThat(m.forward(x).allclose(x.relu().tanh().sigmoid())).isTrue();
        assertThat(Activation.relu()).isInstanceOf(ReLU.class);
        assertThat(Activation.gelu()).hasToString("GELU(approximate='none')");
        GELU tanhGelu = new GELU(GELU.Approximation.TANH);
        assertThat(tanhGelu).hasToString("GELU(approximate='tanh')");
        assertThat(tanhGelu.parameters()).isEmpty();
        assertThat(tanhGelu.forward(x).allclose(Functional.gelu(x, GELU.Approximation.TANH))).isTrue();
    }

    @Test
    void sharedParametersAreListedOnceAndNamesAreChecked() {
        Linear shared = new Linear(2, 2, false, new Generator(0));
        Sequential tied = new Sequential(shared, Activation.tanh(), shared);
        assertThat(tied.namedParameters().keySet()).containsExactly("0.weight");
        assertThat(new Linear(2, 2, false, new Generator(0)).namedParameters().keySet()).containsExactly("weight");
        Module m = new Module() {
            {
                registerParameter("w", new Parameter(Tensors.ones(1)));
                assertThatThrownBy(() -> registerParameter("w", new Parameter(Tensors.ones(1))))
                        .hasMessageContaining("already exists");
                assertThatThrownBy(() -> registerModule("a.b", new Linear(1, 1))).hasMessageContaining("'.'");
            }

            @Override
            public Tensor forward(Tensor input) {
                return input;
            }
        };
        assertThat(m.parameters()).hasSize(1);
    }
}
