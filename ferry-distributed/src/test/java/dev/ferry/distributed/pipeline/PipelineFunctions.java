package dev.ferry.distributed.pipeline;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.autograd.Function;
import dev.ferry.tensor.autograd.FunctionContext;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.nn.Sequential;
import dev.ferry.tensor.nn.Tanh;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Stages the pipeline tests build on other workers (the same seeds build the local reference). */
public final class PipelineFunctions {
    static final int WIDTH = 6;

    private PipelineFunctions() {
    }

    /** Layer {@code k} of the reference model: Linear(6, 6) and tanh, from seed k. */
    static Module layer(int k) {
        return new Sequential(new Linear(WIDTH, WIDTH, true, new Generator(100 + k)), new Tanh());
    }

    public static Module stage0() {
        return new Sequential(layer(0), layer(1));
    }

    public static Module stage1() {
        return layer(2);
    }

    public static Module stage2() {
        return new Sequential(layer(3), new Linear(WIDTH, 2, true, new Generator(200)));
    }

    /** The last stage of a two-stage cut: stage 1 and 2 together. */
    public static Module stage1And2() {
        return new Sequential(stage1(), stage2());
    }

    /** The gradients {@code module}'s parameters got in context {@code contextId}, in parameter order. */
    public static List<Tensor> gradients(Module module, long contextId) {
        Map<Tensor, Tensor> grads = DistAutograd.getGradients(contextId);
        List<Tensor> out = new ArrayList<>();
        for (Tensor p : module.parameters()) {
            out.add(grads.get(p));
        }
        return out;
    }

    /** The identity, which fails its forward pass on an input holding NaN and its backward pass on a NaN gradient. */
    public static Module nanGuard() {
        return new Module() {
            @Override
            public Tensor forward(Tensor input) {
                if (hasNan(input)) {
                    throw new IllegalArgumentException("NaN in the input");
                }
                return new NanGradientGuard().apply(input);
            }
        };
    }

    private static final class NanGradientGuard extends Function {
        @Override
        protected Tensor forward(FunctionContext ctx, Tensor... inputs) {
            return inputs[0].clone();
        }

        @Override
        protected Tensor[] backward(FunctionContext ctx, Tensor gradOutput) {
            if (hasNan(gradOutput)) {
                throw new IllegalStateException("NaN in the gradient");
            }
            return new Tensor[] {gradOutput};
        }
    }

    /** How many stage runs this worker holds (none once steps are over, failed or not). */
    public static Integer runningStages() {
        return dev.ferry.distributed.internal.pipeline.StageHost.of(dev.ferry.rpc.Rpc.current()).runs();
    }

    static boolean hasNan(Tensor t) {
        return t.ne(t).to(dev.ferry.tensor.DType.FLOAT32).sum().item() > 0;
    }

    static Tensor rows(int n, long seed) {
        return Tensors.randn(new Generator(seed), n, WIDTH);
    }
}
