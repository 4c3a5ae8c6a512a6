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
