package dev.ferry.examples;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.distributed.optim.DistributedOptimizer;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.nn.ReLU;
import dev.ferry.tensor.nn.Sequential;
import dev.ferry.tensor.optim.Adam;

import java.util.ArrayList;
import java.util.List;

/**
 * Pipeline parallelism over RPC, after PyTorch's tutorial "Distributed Pipeline Parallelism Using
 * RPC": a model split into two shards, each a {@link RemoteModule} on its own worker (worker1,
 * worker2), driven by worker0. Each batch is split into micro-batches; for each, worker0 asks worker1
 * to run the first shard on it and keep the result there ({@code remote}: an RRef), then asks worker2
 * ({@code rpcAsync}) to run the second shard on that RRef, which worker2 fetches straight from worker1.
 * Worker0 issues every micro-batch without waiting, so while worker2 works on one micro-batch, worker1
 * already works on the next; it waits only for the last shard's outputs, puts them together and runs
 * one distributed backward pass and one {@link DistributedOptimizer} step over both shards.
 *
 * <pre>
 * ./ferry run --nproc 3 dev.ferry.examples.PipelineParallelTraining       # 4 micro-batches
 * ./ferry run --nproc 3 dev.ferry.examples.PipelineParallelTraining 1     # no pipelining
 * </pre>
 *
 * <p>The backward pass here is one pass for the whole batch, as in the tutorial, so every shard
 * holds all micro-batches' activations until it.
 *
 * <p><b>Data.</b> Synthetic, from fixed seeds (nothing can be downloaded; the tutorial itself feeds
 * random images and labels): points in 64 dimensions, each labelled by which of ten fixed random
 * directions it lies furthest along; a perceptron of four layers, two per shard, in place of its
 * ResNet-50; cross entropy and Adam where the tutorial has the squared error of one-hot labels and
 * SGD, which would need hundreds of steps here.
 */
public final class PipelineParallelTraining {
    static final int FEATURES = 64;
    static final int HIDDEN = 256;
    static final int CLASSES = 10;
    static final int BATCH = 128;
    static final int STEPS = 30;
    static final double LR = 0.003;
    private static final Tensor DIRECTIONS = Tensors.randn(new Generator(42), FEATURES, CLASSES);

    private PipelineParallelTraining() {
    }

    /** One shard of the model (the tutorial's {@code ResNetShard1}/{@code 2}); one micro-batch at a time. */
    public static final class Shard extends Module {
        private final Sequential layers;

        Shard(Sequential layers) {
            this.layers = registerModule("layers", layers);
        }

        @Override
        public synchronized Tensor forward(Tensor x) {
            return layers.forward(x);
        }
    }

    /** The first half of the model, built on worker1. */
    public static Shard firstShard() {
        return new Shard(new Sequential(new Linear(FEATURES, HIDDEN, true, new Generator(1)), new ReLU(),
                new Linear(HIDDEN, HIDDEN, true, new Generator(2)), new ReLU()));
    }

    /** The second half, built on worker2. */
    public static Shard secondShard() {
        return new Shard(new Sequential(new Linear(HIDDEN, HIDDEN, true, new Generator(3)), new ReLU(),
                new Linear(HIDDEN, CLASSES, true, new Generator(4))));
    }

    /** Runs {@code shard} on the value of {@code input}, fetched from wherever it lives. */
    public static Tensor forwardFrom(Shard shard, RRef<Tensor> input) {
        return shard.forward(input.toHere());
    }

    /** A batch of the synthetic problem: inputs and class labels. */
    record Batch(Tensor x, Tensor y) {
        static Batch draw(Generator generator, int size) {
            Tensor x = Tensors.randn(generator, size, FEATURES);
            return new Batch(x, x.matmul(DIRECTIONS).argmax(1, false));
        }
    }

    /** The model as worker0 drives it (the tutorial's {@code DistResNet50}). */
    static final class DistributedModel implements AutoCloseable {
        private final RemoteModule<Shard> first = RemoteModule.create("worker1", PipelineParallelTraining::firstShard);
        private final RemoteModule<Shard> second = RemoteModule.create("worker2", PipelineParallelTraining::secondShard);
        private final int microBatches;

        DistributedModel(int microBatches) {
            this.microBatches = microBatches;
        }

        Tensor forward(Tensor x) {
            List<RRef<Tensor>> held = new ArrayList<>();
            List<RpcFuture<Tensor>> outputs = new ArrayList<>();
            try {
                for (Tensor micro : x.chunk(microBatches, 0)) {
                    RRef<Tensor> input = Rpc.rref(micro);
                    RRef<Tensor> hidden = first.moduleRRef().remote(PipelineParallelTraining::forwardFrom, input);
                    held.add(input);
                    held.add(hidden);
                    outputs.add(second.moduleRRef().rpcAsync(PipelineParallelTraining::forwardFrom, hidden));
                }
                return Tensors.cat(RpcFuture.waitAll(outputs), 0);
            } finally {
                held.forEach(RRef::close);
            }
        }

        List<RRef<Tensor>> parameterRRefs() {
            List<RRef<Tensor>> params = new ArrayList<>(first.remoteParameters());
            params.addAll(second.remoteParameters());
            return params;
        }

        @Override
        public void close() {
            first.close();
            second.close();
        }
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv().getOrDefault("RANK", "0"));
        int microBatches = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        Rpc.initRpc("worker" + rank);
        try {
            if (rank == 0) {
                train(microBatches);
            }
        } finally {
            Rpc.shutdown();
        }
    }

    private static void train(int microBatches) {
        TrainingReport report = new TrainingReport("worker0 (" + microBatches + " micro-batches)");
        Generator data = new Generator(0);
        try (DistributedModel model = new DistributedModel(microBatches)) {
            List<RRef<Tensor>> params = model.parameterRRefs();
            try (DistributedOptimizer optimizer = new DistributedOptimizer(p -> new Adam(p, Adam.defaults().withLr(LR)), params)) {
                for (int step = 0; step < STEPS; step++) {
                    Batch batch = Batch.draw(data, BATCH);
                    report.stepStarts();
                    try (DistAutogradContext context = DistAutograd.context()) {
                        Tensor loss = Functional.crossEntropy(model.forward(batch.x()), batch.y());
                        context.backward(List.of(loss));
                        optimizer.step(context.id());
                        report.stepDone(loss.item());
                    }
                }
            } finally {
                params.forEach(RRef::close);
            }
        }
        report.print();
    }
}
