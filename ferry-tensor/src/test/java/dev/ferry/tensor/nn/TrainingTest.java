package dev.ferry.tensor.nn;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.optim.Adam;
import dev.ferry.tensor.optim.Optimizer;
import dev.ferry.tensor.optim.SGD;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class TrainingTest {

    /** The W5 benchmark model; losses printed by PyTorch 1.13 for the same seeds. */
    @Test
    void w5StepsReproduceTorchLosses() {
        Generator init = new Generator(0);
        Linear l1 = new Linear(256, 256, true, init);
        Linear l2 = new Linear(256, 10, true, init);
        List<Tensor> params = new ArrayList<>(l1.parameters());
        params.addAll(l2.parameters());
        Optimizer opt = new SGD(params, 0.05);
        Tensor x = Tensors.randn(new Generator(0), 64, 256);
        Tensor y = Tensors.randint(0, 10, new Generator(0), 64);
        double[] expected = {2.2777647972106934, 2.2170374393463135, 2.159059762954712, 2.103490114212036,
                2.0499558448791504};
        for (double e : expected) {
            opt.zeroGrad();
            Tensor loss = Functional.crossEntropy(l2.forward(l1.forward(x).relu()), y);
            loss.backward();
            opt.step();
            assertThat(loss.item()).isCloseTo(e, within(2e-5));
        }
        assertThat(l2.bias().toDoubleArray()).containsExactly(new double[] {-0.03184745833277702, 0.021238092333078384,
                -0.014897476881742477, -0.003095438936725259, 0.0529681071639061, 0.03648572042584419,
                0.006828025449067354, -0.04772600904107094, -0.050418589264154434, 0.05455859377980232},
                within(2e-5));
    }

    /** The README's model: the shape of PyTorch's model-parallel RNN example, in one process. */
    static final class RnnModel extends Module {
        final Embedding encoder;
        final LSTM rnn;
        final Linear decoder;

        RnnModel(int ntoken, int ninp, int nhid, int nlayers, Generator g) {
            encoder = registerModule("encoder", new Embedding(ntoken, ninp, null, g));
            rnn = registerModule("rnn", new LSTM(ninp, nhid, nlayers, 0.1, false, g));
            decoder = registerModule("decoder", new Linear(nhid, ntoken, true, g));
        }

        LSTM.Result forward(Tensor tokens, LSTM.State state) {
            LSTM.Result r = rnn.forward(encoder.forward(tokens), state);
            return new LSTM.Result(decoder.forward(r.output()), r.state());
        }

        @Override
        public Tensor forward(Tensor tokens) {
            return forward(tokens, null).output();
        }
    }

    /**
     * Next-token prediction on a cyclic sequence, with the state carried (detached) across
     * batches as the example does: only a recurrent model that remembers can get it right, since
     * the sequence repeats tokens with different successors.
     */
    @Test
    void lstmLanguageModelLearnsACyclicSequence() {
        long[] cycle = {0, 1, 2, 1, 3, 4, 3, 5};      // 1 and 3 are each followed by two different tokens
        int seq = 8;
        int batch = 4;
        Generator g = new Generator(0);
        RnnModel model = new RnnModel(6, 8, 16, 2, g);
        Optimizer opt = new Adam(model.parameters(), Adam.defaults().withLr(0.02));
        LSTM.State state = null;
        double first = Double.NaN;
        double last = Double.NaN;
        for (int step = 0; step < 120; step++) {
            long[] in = new long[seq * batch];
            long[] next = new long[seq * batch];
            for (int t = 0; t < seq; t++) {
                for (int b = 0; b < batch; b++) {
                    int pos = step * seq + t + 2 * b;  // each batch column is a shifted stream
                    in[t * batch + b] = cycle[pos % cycle.length];
                    next[t * batch + b] = cycle[(pos + 1) % cycle.length];
                }
            }
            opt.zeroGrad();
            LSTM.Result r = model.forward(Tensors.from(in, seq, batch), state);
            state = r.state().detach();
            // [seq, batch, ntoken] → the class dim must be 1: [seq*batch, ntoken] against [seq*batch].
            Tensor loss = Functional.crossEntropy(r.output().reshape(-1, 6), Tensors.from(next, seq * batch));
            loss.backward();
            opt.step();
            if (step == 0) {
                first = loss.item();
            }
            last = loss.item();
        }
        assertThat(first).isGreaterThan(1.5);
        // Half the positions follow a 1 or a 3, whose successor depends on the token before: a
        // model without memory cannot get below 0.5 * ln 2 ≈ 0.35.
        assertThat(last).isLessThan(0.1);
    }

    /** Two interleaved spirals: not linearly separable, so the hidden layer has to learn. */
    @Test
    void mlpConvergesOnSpirals() {
        Generator g = new Generator(1);
        int n = 200;
        float[] xs = new float[2 * n * 2];
        long[] ys = new long[2 * n];
        for (int c = 0; c < 2; c++) {
            for (int i = 0; i < n; i++) {
                double r = (double) i / n * 3;
                double t = 1.75 * i / n * 2 * Math.PI + c * Math.PI;
                int k = c * n + i;
                xs[2 * k] = (float) (r * Math.cos(t) + 0.05 * g.nextGaussian());
                xs[2 * k + 1] = (float) (r * Math.sin(t) + 0.05 * g.nextGaussian());
                ys[k] = c;
            }
        }
        Tensor x = Tensors.from(xs, 2 * n, 2);
        Tensor y = Tensors.from(ys, 2 * n);
        Sequential model = new Sequential(new Linear(2, 64, true, g), Activation.tanh(),
                new Linear(64, 64, true, g), Activation.relu(), new Linear(64, 2, true, g));
        Optimizer opt = new Adam(model.parameters(), Adam.defaults().withLr(0.01));
        double first = Double.NaN;
        double last = Double.NaN;
        for (int step = 0; step < 600; step++) {
            opt.zeroGrad();
            Tensor loss = Functional.crossEntropy(model.forward(x), y);
            loss.backward();
            opt.step();
            if (step == 0) {
                first = loss.item();
            }
            last = loss.item();
        }
        double accuracy = model.forward(x).argmax(1, false).eq(y).to(DType.FLOAT32).mean().item();
        assertThat(last).isLessThan(first / 10);
        assertThat(accuracy).isGreaterThan(0.97);
    }
}
