package dev.ferry.examples;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.distributed.optim.DistributedOptimizer;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.optim.SGD;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Model parallelism with distributed autograd, the smallest form of it: worker0 drives a two-layer
 * network whose layers live on worker1 and worker2 ({@link RemoteModule}s). Each
 * step runs the forward pass through both workers inside a distributed autograd context, a backward
 * pass that flows back through them, and a {@link DistributedOptimizer} step on the layers' owners.
 * {@link DistributedRnn} is the same pattern in PyTorch's tutorial. The data is synthetic (a fixed
 * seed; nothing is downloaded).
 *
 * <pre>
 * ./ferry run --nproc 3 dev.ferry.examples.SplitModelTraining
 * </pre>
 */
public final class SplitModelTraining {
    private static final Logger log = LoggerFactory.getLogger(SplitModelTraining.class);
    private static final int STEPS = 80;

    private SplitModelTraining() {
    }

    /** The first layer, built on worker1. */
    public static Linear hidden() {
        return new Linear(4, 16, true, new Generator(1));
    }

    /** The second layer, built on worker2. */
    public static Linear output() {
        return new Linear(16, 1, true, new Generator(2));
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv().getOrDefault("RANK", "0"));
        Rpc.initRpc("worker" + rank);
        try {
            if (rank == 0) {
                train();
            }
        } finally {
            Rpc.shutdown();
        }
    }

    private static void train() {
        Generator data = new Generator(0);
        Tensor x = Tensors.randn(data, 64, 4);
        Tensor y = x.matmul(Tensors.from(new float[] {1, -2, 0.5f, 3}, 4, 1)).tanh();
        try (RemoteModule<Linear> first = RemoteModule.create("worker1", SplitModelTraining::hidden);
             RemoteModule<Linear> second = RemoteModule.create("worker2", SplitModelTraining::output)) {
            List<RRef<Tensor>> params = new ArrayList<>(first.remoteParameters());
            params.addAll(second.remoteParameters());
            TrainingReport report = new TrainingReport("worker0");
            try (DistributedOptimizer optimizer = new DistributedOptimizer(p -> new SGD(p, 0.2), params)) {
                for (int step = 1; step <= STEPS; step++) {
                    report.stepStarts();
                    try (DistAutogradContext context = DistAutograd.context()) {
                        Tensor prediction = second.forward(first.forward(x).relu());
                        Tensor batchLoss = Functional.mseLoss(prediction, y);
                        context.backward(List.of(batchLoss));
                        optimizer.step(context.id());
                        report.stepDone(batchLoss.item());
                    }
                    if (step % 20 == 0) {
                        log.info("step {} loss {}", step, String.format("%.5f", report.lastLoss()));
                    }
                }
            }
            report.print();
        }
    }
}
