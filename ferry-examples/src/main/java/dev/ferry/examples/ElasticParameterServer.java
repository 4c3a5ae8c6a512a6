package dev.ferry.examples;

import dev.ferry.rpc.MembershipListener;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.ReLU;
import dev.ferry.tensor.nn.Sequential;
import dev.ferry.tensor.optim.SGD;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A parameter server whose trainers may die and come back while the others train on: worker0
 * owns a small MLP; every other worker is a trainer that works through its own shard of
 * {@code steps} batches, each step sending its gradients to worker0, which applies them at once
 * (asynchronous SGD: no trainer waits for another) and answers with the new parameters.
 *
 * <p>worker0 counts, per trainer, the steps it applied. A trainer that starts asks for that count
 * and the current parameters, and goes on from there: a first start begins at step 0, a trainer
 * that was killed and started again by {@code ferry run --worker-restarts} resumes its shard where
 * worker0 last applied it (the step it was computing when it died is the only work lost), while the
 * other trainers never stop. worker0 hears of the death and the return through a {@link
 * MembershipListener}, and ends the run once every shard is done.
 *
 * <pre>
 * ./ferry run --nproc 4 --worker-restarts 3 dev.ferry.examples.ElasticParameterServer [steps per trainer]
 * </pre>
 *
 * <p>What it prints (the test reads it): worker0 {@code JOINED} / {@code LOST} / {@code RESUME name
 * at step K} lines, {@code EVAL updates loss} on a held-out batch every 100 updates, and {@code
 * RESULT}; each trainer {@code STEP k loss} every 25 steps and its {@link TrainingReport} line.
 */
public final class ElasticParameterServer {
    static final int FEATURES = 16;
    private static final int HIDDEN = 32;
    private static final int BATCH = 64;
    private static final int DEFAULT_STEPS = 1500;
    private static final int EVAL_EVERY = 100;

    private static volatile Server server;

    private ElasticParameterServer() {
    }

    /** How many of {@code trainer}'s steps worker0 has applied: where a (re)started trainer begins. */
    public static Integer appliedSteps(String trainer) {
        return server.applied(trainer);
    }

    /** The model's parameters as they are now (runs on worker0). */
    public static Map<String, Tensor> parameters() {
        return server.snapshot();
    }

    /**
     * Applies {@code trainer}'s gradients of its step {@code step} and returns the new parameters
     * (runs on worker0). A step that is not the trainer's next one (a repeat) changes nothing.
     */
    public static Map<String, Tensor> push(String trainer, Integer step, List<Tensor> gradients) {
        return server.apply(trainer, step, gradients);
    }

    /** The target every shard's data comes from: y = relu(x·a)·b, a fixed random two-layer net. */
    private static final class Target {
        private final Tensor a = Tensors.randn(new Generator(7), FEATURES, HIDDEN).div(Math.sqrt(FEATURES));
        private final Tensor b = Tensors.randn(new Generator(8), HIDDEN, 1).div(Math.sqrt(HIDDEN));

        Tensor of(Tensor x) {
            return Functional.relu(x.matmul(a)).matmul(b);
        }
    }

    private static Sequential newModel() {
        return new Sequential(new Linear(FEATURES, HIDDEN, true, new Generator(0)), new ReLU(),
                new Linear(HIDDEN, 1, true, new Generator(1)));
    }

    /** worker0's state: the model, its optimizer, and how far each trainer's shard is applied. */
    private static final class Server {
        private final Sequential model = newModel();
        private final SGD optimizer = new SGD(model.parameters(), 0.05);
        private final Map<String, Integer> applied = new HashMap<>();
        private final Target target = new Target();
        private final Tensor heldOutX = Tensors.randn(new Generator(99), 512, FEATURES);
        private final Tensor heldOutY = target.of(heldOutX);
        private final int trainers;
        private final int steps;
        private int updates;
        private double firstEval = Double.NaN;
        private double lastEval = Double.NaN;

        Server(int trainers, int steps) {
            this.trainers = trainers;
            this.steps = steps;
        }

        synchronized int applied(String trainer) {
            int done = applied.getOrDefault(trainer, 0);
            if (done > 0) {
                System.out.println("RESUME " + trainer + " at step " + done);
            }
            return done;
        }

        synchronized Map<String, Tensor> snapshot() {
            return model.stateDict();
        }

        synchronized Map<String, Tensor> apply(String trainer, int step, List<Tensor> gradients) {
            if (step == applied.getOrDefault(trainer, 0)) {
                optimizer.step(gradients);
                applied.put(trainer, step + 1);
                if (++updates % EVAL_EVERY == 0) {
                    evaluate();
                }
                if (done()) {
                    notifyAll();
                }
            }
            return model.stateDict();
        }

        private void evaluate() {
            lastEval = Functional.mseLoss(model.forward(heldOutX), heldOutY).item();
            firstEval = Double.isNaN(firstEval) ? lastEval : firstEval;
            System.out.printf(Locale.ROOT, "EVAL %d %.6f%n", updates, lastEval);
        }

        private boolean done() {
            return applied.size() == trainers && applied.values().stream().allMatch(n -> n == steps);
        }

        synchronized void awaitAllShards() throws InterruptedException {
            while (!done()) {
                wait();
            }
            evaluate();
            System.out.printf(Locale.ROOT, "RESULT %d updates, held-out loss %.6f -> %.6f%n", updates, firstEval,
                    lastEval);
        }
    }

    /** worker0 says who came and went while the run goes on. */
    private static final class Watch implements MembershipListener {
        @Override
        public void onJoined(WorkerInfo worker) {
            System.out.println("JOINED " + worker.name());
        }

        @Override
        public void onLost(WorkerInfo worker, String reason) {
            System.out.println("LOST " + worker.name() + ": " + reason);
        }
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(System.getenv().getOrDefault("RANK", "0"));
        int worldSize = Integer.parseInt(System.getenv().getOrDefault("WORLD_SIZE", "1"));
        int steps = args.length > 0 ? Integer.parseInt(args[0]) : DEFAULT_STEPS;
        if (worldSize < 2) {
            throw new IllegalArgumentException("needs a server and at least one trainer: ferry run --nproc 4"
                    + " --worker-restarts 3 " + ElasticParameterServer.class.getName());
        }
        if (rank == 0) {
            server = new Server(worldSize - 1, steps); // before init: trainers may call as soon as it returns
        }
        Rpc.initRpc("worker" + rank);
        try {
            if (rank == 0) {
                try (AutoCloseable watching = Rpc.current().addMembershipListener(new Watch())) {
                    server.awaitAllShards();
                }
            } else {
                train("worker" + rank, rank, steps);
            }
        } finally {
            Rpc.shutdown(); // graceful: once every shard is done, the whole world (restarted trainers too)
        }
    }

    private static void train(String me, int rank, int steps) {
        Target target = new Target();
        Sequential model = newModel();
        int step = Rpc.rpcSync("worker0", ElasticParameterServer::appliedSteps, me);
        model.loadStateDict(Rpc.rpcSync("worker0", ElasticParameterServer::parameters));
        TrainingReport report = new TrainingReport(me);
        for (; step < steps; step++) {
            // Each step's batch is fixed by the shard and the step: a resumed shard sees the same data.
            Generator data = new Generator(rank * 1_000_003L + step);
            Tensor x = Tensors.randn(data, BATCH, FEATURES);
            Tensor y = target.of(x).add(Tensors.randn(data, BATCH, 1).mul(0.01));
            report.stepStarts();
            Tensor loss = Functional.mseLoss(model.forward(x), y);
            model.zeroGrad();
            loss.backward();
            List<Tensor> gradients = model.parameters().stream().map(Tensor::grad).toList();
            model.loadStateDict(Rpc.rpcSync("worker0", ElasticParameterServer::push, me, step, gradients));
            report.stepDone(loss.item());
            if ((step + 1) % 25 == 0) {
                System.out.printf(Locale.ROOT, "STEP %d loss %.6f%n", step + 1, report.lastLoss());
            }
        }
        report.print();
    }
}
