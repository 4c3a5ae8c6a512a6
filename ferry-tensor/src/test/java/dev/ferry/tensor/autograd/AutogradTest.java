package dev.ferry.tensor.autograd;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.GELU;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class AutogradTest {

    @Test
    void backwardAccumulatesIntoLeaves() {
        Tensor x = Tensors.of(1.0, 2.0, 3.0).requiresGrad_(true);
        Tensor y = x.mul(x).sum();          // dy/dx = 2x
        y.backward();
        assertThat(x.grad().toDoubleArray()).containsExactly(2, 4, 6);
        x.mul(3).sum().backward();          // accumulates
        assertThat(x.grad().toDoubleArray()).containsExactly(5, 7, 9);
        assertThat(y.isLeaf()).isFalse();
        assertThat(y.gradFn().name()).isEqualTo("SumBackward0");
    }

    @Test
    void leafUsedOnSeveralPathsGetsTheSum() {
        Tensor a = Tensors.scalar(2.0, DType.FLOAT64).requiresGrad_(true);
        Tensor b = a.mul(a).add(a.exp()).add(a);   // 2a + e^a + 1
        b.backward();
        assertThat(a.grad().item()).isCloseTo(2 * 2 + Math.exp(2) + 1, within(1e-12));
    }

    @Test
    void storedGradIsPrivateCopy() {
        Tensor a = Tensors.of(1f, 2f).requiresGrad_(true);
        Tensor b = Tensors.of(3f, 4f).requiresGrad_(true);
        a.add(b).sum().backward();
        try (var s = Autograd.noGrad()) {
            a.grad().mul_(10);
        }
        assertThat(b.grad().toFloatArray()).containsExactly(1, 1);
    }

    @Test
    void noGradScopeRecordsNothingAndRestores() {
        Tensor w = Tensors.ones(2).requiresGrad_(true);
        try (var scope = Autograd.noGrad()) {
            assertThat(Autograd.isGradEnabled()).isFalse();
            Tensor y = w.mul(2);
            assertThat(y.requiresGrad()).isFalse();
            assertThat(y.gradFn()).isNull();
            try (var inner = Autograd.enableGrad()) {
                assertThat(w.mul(2).requiresGrad()).isTrue();
            }
            assertThat(Autograd.isGradEnabled()).isFalse();
        }
        assertThat(Autograd.isGradEnabled()).isTrue();
    }

    @Test
    void functionalGradLeavesDotGradAlone() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor w = Tensors.of(3.0, 4.0).requiresGrad_(true);
        Tensor h = x.mul(w);                 // non-leaf input
        Tensor y = h.sum().mul(2);
        Tensor[] g = Autograd.grad(List.of(y), List.of(x, h), null);
        assertThat(g[0].toDoubleArray()).containsExactly(6, 8);
        assertThat(g[1].toDoubleArray()).containsExactly(2, 2);
        assertThat(x.grad()).isNull();
        assertThat(w.grad()).isNull();
    }

    @Test
    void functionalGradWithGradOutputsAndUnusedInputs() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor unused = Tensors.of(1.0).requiresGrad_(true);
        Tensor y = x.mul(3);
        Tensor[] g = Autograd.grad(List.of(y), List.of(x, unused), List.of(Tensors.of(1.0, -1.0)), false, false, true);
        assertThat(g[0].toDoubleArray()).containsExactly(3, -3);
        assertThat(g[1]).isNull();
        Tensor y2 = x.mul(3).sum();
        assertThatThrownBy(() -> Autograd.grad(List.of(y2), List.of(unused), null))
                .hasMessageContaining("appears to not have been used in the graph");
    }

    @Test
    void secondOrderGradientsWithCreateGraph() {
        Tensor x = Tensors.of(2.0).requiresGrad_(true);
        Tensor y = x.pow(3).sum();                                          // y = x^3
        Tensor dy = Autograd.grad(List.of(y), List.of(x), null, false, true, false)[0];   // 3x^2
        assertThat(dy.item()).isEqualTo(12);
        assertThat(dy.requiresGrad()).isTrue();
        Tensor d2y = Autograd.grad(List.of(dy.sum()), List.of(x), null)[0];              // 6x
        assertThat(d2y.item()).isEqualTo(12);
    }

    @Test
    void secondOrderGradientsOfGeluMatchPyTorch() {
        // Values from torch.autograd.grad(..., create_graph=True) twice, in float64, PyTorch 1.13.
        double[][] expected = {
            {-0.08331547058768635, 0.8674951246561629, 1.085231801078197},
            {0.24197072451914337, 0.6161143218375241, -0.10798193302637613},
            {-0.08296408384578252, 0.8673699035346424, 1.0860992566236183},
            {0.24214819798377296, 0.615506895115985, -0.10787507995107845}};
        GELU.Approximation[] forms = {GELU.Approximation.NONE, GELU.Approximation.TANH};
        for (int i = 0; i < forms.length; i++) {
            Tensor x = Tensors.of(-1.0, 0.5, 2.0).requiresGrad_(true);
            Tensor y = Functional.gelu(x, forms[i]).sum();
            Tensor dy = Autograd.grad(List.of(y), List.of(x), null, false, true, false)[0];
            Tensor d2y = Autograd.grad(List.of(dy.sum()), List.of(x), null)[0];
            assertThat(dy.toDoubleArray()).as("%s first", forms[i]).containsExactly(expected[2 * i], within(1e-12));
            assertThat(d2y.toDoubleArray()).as("%s second", forms[i]).containsExactly(expected[2 * i + 1], within(1e-12));
        }
    }

    @Test
    void graphIsFreedAfterBackwardUnlessRetained() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor y = x.exp().sum();
        y.backward(null, true);
        y.backward();
        assertThat(x.grad().toDoubleArray()[0]).isCloseTo(2 * Math.E, within(1e-12));
        assertThatThrownBy(y::backward).hasMessageContaining("backward through the graph a second time");
    }

    @Test
    void releaseGraphFreesWhatARetainedPassKept() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor y = x.exp().sum();
        y.backward(null, true);

        Autograd.releaseGraph(List.of(y, Tensors.of(1.0)));

        assertThatThrownBy(y::backward).hasMessageContaining("backward through the graph a second time");
    }

    @Test
    void detectsSavedTensorModifiedInPlace() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor e = x.exp();
        Tensor y = e.mul(e.detach()).sum();
        try (var scope = Autograd.noGrad()) {
            e.detach().add_(1);
        }
        assertThatThrownBy(y::backward)
                .hasMessageContaining("modified by an inplace operation").hasMessageContaining("MulBackward0");
    }

    @Test
    void aWeightTheBackwardDoesNotReadMayChangeBeforeIt() {
        Tensor w1 = Tensors.ones(2, 3).requiresGrad_(true);
        Tensor w2 = Tensors.ones(1, 2).requiresGrad_(true);
        Tensor x = Tensors.ones(4, 3); // data: needs no gradient, so w1 is not read by the backward
        Tensor loss = Tensors.linear(Tensors.linear(x, w1, null), w2, null).sum();
        try (var scope = Autograd.noGrad()) {
            w1.add_(1); // e.g. another trainer's optimizer step on a shared model
        }
        loss.backward();
        assertThat(w1.grad().equal(Tensors.full(4, 2, 3))).isTrue();

        Tensor again = Tensors.linear(Tensors.linear(x, w1, null), w2, null).sum();
        try (var scope = Autograd.noGrad()) {
            w2.add_(1); // read for the gradient of w2's input
        }
        assertThatThrownBy(again::backward).hasMessageContaining("modified by an inplace operation")
                .hasMessageContaining("AddmmBackward0");
    }

    @Test
    void clearErrors() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        assertThatThrownBy(() -> x.mul(2).backward()).hasMessageContaining("only for scalar outputs");
        assertThatThrownBy(() -> Tensors.of(1.0).backward())
                .hasMessageContaining("does not require grad and does not have a grad_fn");
        assertThatThrownBy(() -> Tensors.of(1L).requiresGrad_(true))
                .hasMessageContaining("only Tensors of floating point dtype can require gradients");
        assertThatThrownBy(() -> x.mul(2).requiresGrad_(false)).hasMessageContaining("leaf variables");
        assertThatThrownBy(() -> x.mul(2).add_(1)).hasMessageContaining("in-place");
        assertThatThrownBy(() -> x.mul(2).backward(Tensors.ones(3)))
                .hasMessageContaining("Mismatch in shape");
    }

    @Test
    void detachCutsTheGraph() {
        Tensor x = Tensors.of(1.0).requiresGrad_(true);
        Tensor y = x.mul(2).detach().mul(x);
        y.sum().backward();
        assertThat(x.grad().item()).isEqualTo(2); // only the direct path
    }

    /** y = x^3 with a hand-written backward. */
    static final class Cube extends Function {
        @Override
        protected Tensor forward(FunctionContext ctx, Tensor... in) {
            assertThat(Autograd.isGradEnabled()).isFalse();
            ctx.saveForBackward(in[0]);
            return in[0].mul(in[0]).mul(in[0]);
        }

        @Override
        protected Tensor[] backward(FunctionContext ctx, Tensor grad) {
            Tensor x = ctx.savedTensors()[0];
            return new Tensor[] {grad.mul(x.square()).mul(3)};
        }
    }

    @Test
    void customFunctionIsOneNode() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor y = new Cube().apply(x);
        assertThat(y.gradFn().name()).isEqualTo("CubeBackward");
        assertThat(y.gradFn().nextEdges()).hasSize(1);
        assertThat(y.gradFn().nextEdges().get(0).node()).isInstanceOf(AccumulateGrad.class);
        GradCheck.check("cube", in -> new Cube().apply(in.get(0)).sum(), x);
        y.sum().backward();
        assertThat(x.grad().toDoubleArray()).containsExactly(3, 12);
    }

    @Test
    void customFunctionGraphIsFreedUnlessRetained() {
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor y = new Cube().apply(x).sum();
        y.backward(null, true);
        y.backward(null, true);
        assertThat(x.grad().toDoubleArray()).containsExactly(6, 24);
        y.backward();
        assertThatThrownBy(y::backward).hasMessageContaining("backward through the graph a second time");
        Tensor z = new Cube().apply(x).sum();
        Autograd.grad(List.of(z), List.of(x), null);
        assertThatThrownBy(() -> Autograd.grad(List.of(z), List.of(x), null))
                .hasMessageContaining("Specify retainGraph=true");
    }

    @Test
    void retainedRecurrentGraphRunsTwiceAndAccumulates() {
        dev.ferry.tensor.nn.LSTM lstm = new dev.ferry.tensor.nn.LSTM(2, 3, 2, 0, false, new dev.ferry.tensor.Generator(0));
        Tensor loss = lstm.forward(Tensors.ones(4, 1, 2)).sum();
        loss.backward(null, true);
        Tensor once = lstm.parameters().get(0).grad().clone();
        loss.backward();
        assertThat(lstm.parameters().get(0).grad().allclose(once.mul(2))).isTrue();
        assertThatThrownBy(loss::backward).hasMessageContaining("backward through the graph a second time");
    }

    @Test
    void gradCheckCatchesAWrongBackward() {
        Function wrong = new Function() {
            @Override
            protected Tensor forward(FunctionContext ctx, Tensor... in) {
                return in[0].exp();
            }

            @Override
            protected Tensor[] backward(FunctionContext ctx, Tensor grad) {
                return new Tensor[] {grad};
            }
        };
        Tensor x = Tensors.of(0.5, 1.0).requiresGrad_(true);
        assertThatThrownBy(() -> GradCheck.check("wrong", in -> wrong.apply(in.get(0)), x))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void customFunctionGradientShapeIsChecked() {
        Function bad = new Function() {
            @Override
            protected Tensor forward(FunctionContext ctx, Tensor... in) {
                return in[0].sum();
            }

            @Override
            protected Tensor[] backward(FunctionContext ctx, Tensor grad) {
                return new Tensor[] {Tensors.ones(DType.FLOAT64, 5)};
            }
        };
        Tensor x = Tensors.of(1.0, 2.0).requiresGrad_(true);
        assertThatThrownBy(() -> bad.apply(x).backward())
                .hasMessageContaining("returned an invalid gradient at index 0 - got [5] but expected shape [2]");
    }

    @Test
    void eachInputOfAPromotingOpGetsItsGradientInItsOwnDtype() {
        // float32 op float64 computes in float64; PyTorch hands each input its gradient in the
        // input's dtype (the float32 one got float64 gradients, and so did every leaf behind it)
        Tensor f32 = Tensors.of(1f, 2f, 3f).requiresGrad_(true);
        Tensor f64 = Tensors.of(4.0, 5.0, 6.0).requiresGrad_(true);
        f32.mul(2).mul(f64).add(f32).sum().backward();

        assertThat(f32.grad().dtype()).isEqualTo(DType.FLOAT32);
        assertThat(f64.grad().dtype()).isEqualTo(DType.FLOAT64);
        assertThat(f32.grad().toDoubleArray()).containsExactly(9, 11, 13);
        assertThat(f64.grad().toDoubleArray()).containsExactly(2, 4, 6);

        Tensor column = Tensors.of(new float[][] {{1}, {2}}).requiresGrad_(true);
        Tensor row = Tensors.of(new double[][] {{1, 2, 4}}).requiresGrad_(true);
        column.sub(row).div(row).sum().backward();                // broadcast [2,1] x [1,3]
        assertThat(column.grad().dtype()).isEqualTo(DType.FLOAT32);
        assertThat(column.grad().shape()).containsExactly(2, 1);
        assertThat(row.grad().dtype()).isEqualTo(DType.FLOAT64);

        Function widen = new Function() {
            @Override
            protected Tensor forward(FunctionContext ctx, Tensor... in) {
                return in[0].to(DType.FLOAT64).sum();
            }

            @Override
            protected Tensor[] backward(FunctionContext ctx, Tensor grad) {
                return new Tensor[] {Tensors.ones(DType.FLOAT64, 2).mul(grad)};
            }
        };
        Tensor x = Tensors.of(1f, 2f).requiresGrad_(true);
        widen.apply(x).backward();
        assertThat(x.grad().dtype()).as("a custom function's float64 gradient for a float32 input")
                .isEqualTo(DType.FLOAT32);
    }

    @Test
    void gradientSinkReceivesLeafGradientsInsteadOfDotGrad() {
        Tensor w1 = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Tensor w2 = Tensors.of(3.0).requiresGrad_(true);
        Tensor loss = w1.mul(w2).sum().add(w1.sum());       // d/dw1 = w2 + 1, d/dw2 = sum(w1)
        Map<Tensor, Tensor> context = new IdentityHashMap<>();
        List<Tensor> seen = new ArrayList<>();
        GradientSink sink = (leaf, g) -> {
            seen.add(leaf);
            context.merge(leaf, g, Tensor::add);
        };
        Autograd.backward(List.of(loss.gradientEdge()), List.of(Tensors.scalar(1, DType.FLOAT64)), sink, false);
        assertThat(seen).hasSize(2); // each leaf once, paths already summed
        assertThat(context.get(w1).toDoubleArray()).containsExactly(4, 4);
        assertThat(context.get(w2).toDoubleArray()).containsExactly(3);
        assertThat(w1.grad()).isNull();
        assertThat(w2.grad()).isNull();
    }

    @Test
    void sinkFormForScalarOutputs() {
        Tensor w = Tensors.of(1.0, 2.0).requiresGrad_(true);
        Map<Tensor, Tensor> grads = new IdentityHashMap<>();
        Autograd.backward(List.of(w.square().sum()), grads::put, false);
        assertThat(grads.get(w).toDoubleArray()).containsExactly(2, 4);
        assertThat(w.grad()).isNull();
    }

    /** A hand-wired node, as distributed autograd's "recv" function would be: backward starts at it. */
    @Test
    void backwardCanStartAtAHandWiredNode() {
        Tensor w = Tensors.of(2.0).requiresGrad_(true);
        Tensor local = w.mul(5);                  // d local/dw = 5
        List<Tensor> forwarded = new ArrayList<>();
        Node send = new Node("SendBackward", new Edge[] {local.gradientEdge()}, null) {
            @Override
            protected Tensor[] apply(Tensor[] gradOutputs) {
                forwarded.add(gradOutputs[0]);
                return gradOutputs;
            }
        };
        Tensor remote = local.detach().withGradFn(send, 0);   // what the remote side sees
        assertThat(remote.requiresGrad()).isTrue();
        Map<Tensor, Tensor> grads = new IdentityHashMap<>();
        Autograd.backward(List.of(new Edge(send, 0)), List.of(Tensors.of(3.0)), grads::put, false);
        assertThat(forwarded).hasSize(1);
        assertThat(grads.get(w).toDoubleArray()).containsExactly(15);
    }

    @Test
    void deepGraphsDoNotOverflowTheStack() {
        Tensor x = Tensors.of(1.0).requiresGrad_(true);
        Tensor y = x;
        for (int i = 0; i < 20_000; i++) {
            y = y.add(1e-3);
        }
        y.sum().backward();
        assertThat(x.grad().item()).isEqualTo(1);
    }
}
