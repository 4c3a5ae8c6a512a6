package dev.ferry.examples;

import dev.ferry.rpc.MembershipListener;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.ReLU;
import dev.ferry.tensor.nn.Sequential;
import dev.ferry.tensor.optim.SGD;

import java.time.Duration;
import java.util.ArrayList;
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
 * ./ferry run --nproc 5 --worker-restarts 3 dev.ferry.examples.ElasticParameterServer 1500 replicated
 * </pre>
 *
 * <p>{@code replicated}: the server runs on worker0 (the primary) and worker1 (its replica); the
 * trainers are worker2 and up. The primary applies each step, has the replica apply it too, and
 * only then answers, so the replica holds every step a trainer was told of. When the primary dies,
 * a trainer's call to it fails; the trainer sends the same step to the replica, which takes over
 * as primary once it has lost the old one too (a step it already has changes nothing). A server
 * that comes back (restarted) copies the state of the one that runs and becomes its replica.
 *
 * <p>What it prints (the test reads it): the primary's {@code JOINED} / {@code LOST} / {@code RESUME
 * name at step K} lines and {@code EVAL updates loss} on a held-out batch every 100 updates; {@code
 * PRIMARY} when a replica takes over, {@code REPLICA OF name AT updates} when a restarted server
 * catches up, {@code RESULT} at the end; each trainer {@code STEP k loss} every 25 steps, {@code
 * FAILOVER TO name} when it changes servers, and its {@link TrainingReport} line.
 */
public final class ElasticParameterServer {
    static final int FEATURES = 16;
    private static final int HIDDEN = 32;
    private static final int BATCH = 64;
    private static final int DEFAULT_STEPS = 1500;
    private static final int EVAL_EVERY = 100;
    /** How long a trainer tries the servers in turn before it gives up on a step. */
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(60);

    private static volatile Server server;

    private ElasticParameterServer() {
    }

    private static final List<String> SERVERS = List.of("worker0", "worker1");

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
        return server.push(trainer, step, gradients);
    }

    /** The primary's copy of a step it applied (runs on its replica). */
    public static Boolean replicate(String trainer, Integer step, List<Tensor> gradients) {
        server.replicated(trainer, step, gradients);
        return Boolean.TRUE;
    }

    /** Whether this server is the one trainers send their steps to. */
    public static Boolean isPrimary() {
        return server.ready && server.primary;
    }

    /** How many steps this server has applied in all (a server that comes back asks its peer). */
    public static Integer updates() {
        return server.updates();
    }

    /**
     * {@code replica}, a server that came back, takes every later step from this one, which is the
     * primary from now on; the answer is the state to start from: applied steps per trainer, the
     * parameters, and the count of updates.
     */
    public static List<Object> attachReplica(String replica) {
        return server.attach(replica);
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
        /** Where each applied step is copied before its trainer hears of it; null: nowhere. */
        private String replica;
        private volatile boolean primary;
        /** False until a replicated server knows whether it came back (and then caught up). */
        private volatile boolean ready;
        /** False while a server that came back waits for the state it starts from. */
        private boolean caughtUp = true;
        /** Steps copied here before the state arrived; guarded by this. */
        private final List<Runnable> early = new ArrayList<>();
        private int updates;
        private double firstEval = Double.NaN;
        private double lastEval = Double.NaN;

        Server(int trainers, int steps, boolean primary, String replica) {
            this.trainers = trainers;
            this.steps = steps;
            this.primary = primary;
            this.replica = replica;
            this.ready = replica == null && primary; // a lone server; a replicated one decides after init
        }

        void ready() {
            ready = true;
        }

        /** A trainer's step: the primary applies it and copies it to its replica, then answers. */
        synchronized Map<String, Tensor> push(String trainer, int step, List<Tensor> gradients) {
            if (!ready) {
                throw new IllegalStateException("not ready: starting");
            }
            if (!primary) {
                // A trainer comes here once the primary failed it; take over only once it is lost here too.
                String other = peerServer();
                if (Rpc.getWorkerInfos().stream().anyMatch(w -> w.name().equals(other))) {
                    throw new IllegalStateException("not the primary: " + other + " is");
                }
                primary = true;
                System.out.println("PRIMARY after " + other + " was lost, at " + updates + " updates");
            }
            boolean fresh = step == applied.getOrDefault(trainer, 0);
            apply(trainer, step, gradients);
            if (fresh && replica != null) {
                try {
                    Rpc.rpcSync(replica, ElasticParameterServer::replicate, trainer, step, gradients);
                } catch (RpcException e) {
                    System.out.println("REPLICA LOST " + replica + ": " + e.getMessage());
                    replica = null; // it catches up when it comes back (attach)
                }
            }
            return model.stateDict();
        }

        /**
         * A step the primary copies here. One that comes before this server has the state it
         * starts from is kept and applied after it (never waited for: the primary sends it holding
         * its lock, which that state's request needs too).
         */
        synchronized void replicated(String trainer, int step, List<Tensor> gradients) {
            if (caughtUp) {
                apply(trainer, step, gradients);
            } else {
                early.add(() -> apply(trainer, step, gradients));
            }
        }

        synchronized void beginCatchUp() {
            caughtUp = false;
        }

        synchronized int updates() {
            return updates;
        }

        synchronized List<Object> attach(String newReplica) {
            primary = true;
            replica = newReplica;
            return List.of(new HashMap<>(applied), model.stateDict(), updates);
        }

        /** Starts from {@code state} ({@link #attach}'s answer) as the replica of the server that sent it. */
        @SuppressWarnings("unchecked")
        synchronized void catchUp(List<Object> state, String from) {
            applied.putAll((Map<String, Integer>) state.get(0));
            model.loadStateDict((Map<String, Tensor>) state.get(1));
            updates = (Integer) state.get(2);
            primary = false;
            replica = null;
            caughtUp = true;
            early.forEach(Runnable::run); // a step the state had already changes nothing
            early.clear();
            System.out.println("REPLICA OF " + from + " AT " + updates);
            notifyAll();
        }

        private String peerServer() {
            String me = Rpc.getWorkerInfo().name();
            return SERVERS.get(0).equals(me) ? SERVERS.get(1) : SERVERS.get(0);
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

        /** Applies {@code trainer}'s step {@code step} unless it has it already (a repeat changes nothing). */
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
            if (primary) {
                System.out.printf(Locale.ROOT, "EVAL %d %.6f%n", updates, lastEval);
            }
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
        boolean replicated = args.length > 1 && args[1].equals("replicated");
        int servers = replicated ? 2 : 1;
        if (worldSize < servers + 1) {
            throw new IllegalArgumentException("needs " + servers + " server(s) and at least one trainer: ferry run"
                    + " --nproc " + (servers + 2) + " --worker-restarts 3 " + ElasticParameterServer.class.getName());
        }
        if (rank < servers) { // before init: trainers may call as soon as it returns
            server = new Server(worldSize - servers, steps, rank == 0, replicated && rank == 0 ? "worker1" : null);
        }
        try {
            Rpc.initRpc("worker" + rank);
        } catch (RpcException e) {
            if (e.code() == RpcException.Code.RENDEZVOUS_FAILED && e.getMessage().contains("has ended")) {
                // Restarted after every shard was done and the others had left: nothing to do.
                System.out.println("ENDED " + e.getMessage());
                return;
            }
            throw e;
        }
        try {
            if (rank < servers) {
                if (replicated) {
                    rejoinIfRestarted();
                    server.ready();
                }
                try (AutoCloseable watching = Rpc.current().addMembershipListener(new Watch())) {
                    server.awaitAllShards();
                }
            } else {
                train("worker" + rank, rank, steps, SERVERS.subList(0, servers));
            }
        } finally {
            Rpc.shutdown(); // graceful: once every shard is done, the whole world (restarted trainers too)
        }
    }

    /**
     * A server that finds its peer already past step 0 was restarted: it copies the peer's state and
     * becomes its replica (the peer is the primary from then on).
     */
    private static void rejoinIfRestarted() {
        String peer = server.peerServer();
        int peerUpdates;
        try {
            peerUpdates = Rpc.rpcSync(peer, ElasticParameterServer::updates);
        } catch (RpcException e) {
            return; // the peer is gone (or not up): nothing to copy
        }
        if (peerUpdates > 0) {
            server.beginCatchUp(); // the steps the peer copies here from now on wait for the state
            server.catchUp(Rpc.rpcSync(peer, ElasticParameterServer::attachReplica, Rpc.getWorkerInfo().name()), peer);
        }
    }

    /** The server that takes steps now: the first that says it is the primary, trying for a while. */
    private static String primaryOf(List<String> servers) {
        long deadline = System.nanoTime() + FAILOVER_BOUND.toNanos();
        while (true) {
            for (String candidate : servers) {
                try {
                    if (Rpc.rpcSync(candidate, ElasticParameterServer::isPrimary)) {
                        return candidate;
                    }
                } catch (RpcException e) {
                    // lost, or not up yet: ask the next
                }
            }
            if (servers.size() == 1 || System.nanoTime() > deadline) {
                return servers.get(0);
            }
            Thread.onSpinWait();
        }
    }

    private static void train(String me, int rank, int steps, List<String> servers) {
        Target target = new Target();
        Sequential model = newModel();
        String current = primaryOf(servers);
        int step = Rpc.rpcSync(current, ElasticParameterServer::appliedSteps, me);
        model.loadStateDict(Rpc.rpcSync(current, ElasticParameterServer::parameters));
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
            long deadline = System.nanoTime() + FAILOVER_BOUND.toNanos();
            while (true) {
                try {
                    model.loadStateDict(Rpc.rpcSync(current, ElasticParameterServer::push, me, step, gradients));
                    break;
                } catch (RpcException e) {
                    // Lost (UNAVAILABLE), or a replica that has not lost it yet (REMOTE_ERROR): the other one.
                    if (servers.size() == 1 || System.nanoTime() > deadline) {
                        throw e;
                    }
                    String next = servers.get(servers.indexOf(current) == 0 ? 1 : 0);
                    if (e.code() == RpcException.Code.UNAVAILABLE) {
                        System.out.println("FAILOVER TO " + next + " at step " + step + ": " + e.getMessage());
                    }
                    current = next;
                }
            }
            report.stepDone(loss.item());
            if ((step + 1) % 25 == 0) {
                System.out.printf(Locale.ROOT, "STEP %d loss %.6f%n", step + 1, report.lastLoss());
            }
        }
        report.print();
    }
}
