package dev.ferry.examples;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.distributed.optim.DistributedOptimizer;
import dev.ferry.distributed.pipeline.Pipeline;
import dev.ferry.distributed.pipeline.Schedule;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
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
 * ./ferry run --nproc 3 dev.ferry.examples.PipelineParallelTraining            # 4 micro-batches
 * ./ferry run --nproc 3 dev.ferry.examples.PipelineParallelTraining 1          # no pipelining
 * ./ferry run --nproc 3 dev.ferry.examples.PipelineParallelTraining 4 1f1b     # a Pipeline, 1F1B
 * ./ferry run --nproc 3 dev.ferry.examples.PipelineParallelTraining 4 gpipe    # a Pipeline, GPipe
 * </pre>
 *
 * <p>The backward pass in the tutorial's way is one pass for the whole batch, so every shard holds
 * all micro-batches' activations until it, and the second shard's backward work waits for the
 * first's forward work to end. With a mode argument, the same model trains through a
 * {@link Pipeline}, which runs each micro-batch's backward pass as its schedule says ({@code gpipe}:
 * all forwards then all backwards; {@code 1f1b}: one forward one backward, at most two micro-batches
 * held per shard here), with activations and gradients going straight from shard to shard.
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
    public static final int BATCH = 128;
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
    public record Batch(Tensor x, Tensor y) {
        public static Batch draw(Generator generator, int size) {
            Tensor x = Tensors.randn(generator, size, FEATURES);
            return new Batch(x, x.matmul(DIRECTIONS).argmax(1, false));
        }
    }

    /** How worker0 runs a training step. */
    public enum Mode {
        /** As the tutorial: micro-batches through {@code remote}/{@code rpcAsync}, one backward pass for the batch. */
        TUTORIAL,
        /** With a {@link Pipeline} and {@link Schedule#GPIPE}. */
        GPIPE,
        /** With a {@link Pipeline} and {@link Schedule#ONE_F_ONE_B}. */
        ONE_F_ONE_B;

        /** {@code tutorial}, {@code gpipe} or {@code 1f1b}. */
        public static Mode parse(String name) {
            return switch (name) {
                case "tutorial" -> TUTORIAL;
                case "gpipe" -> GPIPE;
                case "1f1b" -> ONE_F_ONE_B;
                default -> throw new IllegalArgumentException("mode must be tutorial, gpipe or 1f1b, got " + name);
            };
        }
    }

    /**
     * The model as worker0 drives it (the tutorial's {@code DistResNet50}), with its optimizer: one
     * {@link #step} is one training step in the given mode. Not thread-safe.
     */
    public static final class Trainer implements AutoCloseable {
        private final RpcAgent agent;
        private final RemoteModule<Shard> first;
        private final RemoteModule<Shard> second;
        private final int microBatches;
        private final Pipeline pipeline;
        private final List<RRef<Tensor>> params;
        private final DistributedOptimizer optimizer;
        private List<Integer> peaks = List.of();

        /** On worker0, whose agent is {@code agent}; the shards are built on worker1 and worker2. */
        public Trainer(RpcAgent agent, Mode mode, int microBatches) {
            this.agent = agent;
            this.first = RemoteModule.create(agent, "worker1", PipelineParallelTraining::firstShard);
            this.second = RemoteModule.create(agent, "worker2", PipelineParallelTraining::secondShard);
            this.microBatches = microBatches;
            this.pipeline = mode == Mode.TUTORIAL ? null : Pipeline.builder().agent(agent).stage(first).stage(second)
                    .microBatches(microBatches).schedule(mode == Mode.GPIPE ? Schedule.GPIPE : Schedule.ONE_F_ONE_B)
                    .loss(Functional::crossEntropy).build();
            this.params = new ArrayList<>(first.remoteParameters());
            params.addAll(second.remoteParameters());
            this.optimizer = new DistributedOptimizer(agent, p -> new Adam(p, Adam.defaults().withLr(LR)), params);
        }

        /** One training step on the batch; returns its loss. */
        public double step(Tensor x, Tensor y) {
            try (DistAutogradContext context = DistAutograd.context(agent)) {
                double loss;
                if (pipeline == null) {
                    Tensor batchLoss = Functional.crossEntropy(forward(x), y);
                    context.backward(List.of(batchLoss));
                    loss = batchLoss.item();
                    peaks = List.of(microBatches, microBatches); // every micro-batch until the one backward pass
                } else {
                    Pipeline.StepResult result = pipeline.step(x, y);
                    loss = result.loss();
                    peaks = result.peakActivations();
                }
                optimizer.step(context.id());
                return loss;
            }
        }

        /** How many micro-batches' activations each shard held at most in the last step. */
        public List<Integer> peakActivations() {
            return peaks;
        }

        /** The tutorial's forward pass: every micro-batch issued at once, the first shard's output left on its worker. */
        private Tensor forward(Tensor x) {
            List<RRef<Tensor>> held = new ArrayList<>();
            List<RpcFuture<Tensor>> outputs = new ArrayList<>();
            try {
                for (Tensor micro : x.chunk(microBatches, 0)) {
                    RRef<Tensor> input = agent.rref(micro);
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

        @Override
        public void close() {
            optimizer.close();
            params.forEach(RRef::close);
            first.close();
            second.close();
        }
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv().getOrDefault("RANK", "0"));
        int microBatches = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        Mode mode = args.length > 1 ? Mode.parse(args[1]) : Mode.TUTORIAL;
        RpcAgent agent = Rpc.initRpc("worker" + rank);
        try {
            if (rank == 0) {
                train(agent, mode, microBatches);
            }
        } finally {
            Rpc.shutdown();
        }
    }

    private static void train(RpcAgent agent, Mode mode, int microBatches) {
        TrainingReport report = new TrainingReport("worker0 (" + mode.name().toLowerCase(java.util.Locale.ROOT) + ", "
                + microBatches + " micro-batches)");
        Generator data = new Generator(0);
        try (Trainer trainer = new Trainer(agent, mode, microBatches)) {
            for (int step = 0; step < STEPS; step++) {
                Batch batch = Batch.draw(data, BATCH);
                report.stepStarts();
                report.stepDone(trainer.step(batch.x(), batch.y()));
            }
            System.out.println("RESULT peak activations per shard " + trainer.peakActivations());
        }
        report.print();
    }
}
