package dev.ferry.examples;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.optim.DistributedOptimizer;
import dev.ferry.rpc.Async;
import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.tensor.DType;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.autograd.Autograd;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.optim.SGD;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Locale;

/**
 * A parameter server reached through RRefs, after PyTorch's tutorial "Implementing a Parameter
 * Server Using Distributed RPC Framework": worker0 hosts one model; every other worker is a trainer
 * that holds an RRef to it and, each step, inside a distributed autograd context, runs the forward
 * pass through it on worker0, computes the loss itself, runs the backward pass (which flows back
 * into worker0's parameters) and steps worker0's parameters with a {@link DistributedOptimizer}.
 * All trainers train the one model at the same time. At the end worker0 prints the model's accuracy
 * on data no trainer saw.
 *
 * <pre>
 * ./ferry run --nproc 3 dev.ferry.examples.RRefParameterServer     # worker0 serves, two trainers
 * </pre>
 *
 * <p><b>Trainers take turns on the model.</b> A trainer's backward pass needs the weights its
 * forward pass used; if another trainer's optimizer step changed them in between, the gradient
 * would be wrong, and autograd refuses it ("modified by an inplace operation"). PyTorch's tutorial
 * fails exactly so with two trainers (pytorch/examples issues 780 and 856). Here the server lends
 * the model to one trainer's step at a time, in arrival order: from the step's forward pass until
 * its autograd context is released on the server ({@link DistAutograd#whenReleased}), which the
 * trainer's closing of the context does right after its optimizer step, and which also happens if
 * the trainer dies mid-step. No server thread waits meanwhile: the forward pass is an
 * {@link AsyncExecution} function whose result comes when the turn does. The server does all the
 * model's work in this pattern, so the turns cost little beyond the trainers' own loss computation.
 *
 * <p><b>Data.</b> Synthetic, from fixed seeds (nothing can be downloaded): a 10-class problem of
 * points scattered around ten class centres in 32 dimensions, in place of the tutorial's MNIST; the
 * model is a two-layer perceptron in place of its convolutional network.
 */
public final class RRefParameterServer {
    static final int FEATURES = 32;
    static final int HIDDEN = 64;
    static final int CLASSES = 10;
    static final int BATCH = 32;
    static final int STEPS = 30;
    static final double LR = 0.05;
    private static final Tensor CENTRES = Tensors.randn(new Generator(42), CLASSES, FEATURES);

    private static Server server;

    private RRefParameterServer() {
    }

    /** A labelled batch of the synthetic problem. */
    record Batch(Tensor x, Tensor y) {
        static Batch draw(Generator generator, int size) {
            Tensor y = Tensors.randint(0, CLASSES, generator, size);
            return new Batch(CENTRES.indexSelect(0, y).add(Tensors.randn(generator, size, FEATURES)), y);
        }
    }

    /** The model the server hosts: log-probabilities of the classes. */
    public static final class Net extends Module {
        private final Linear fc1 = registerModule("fc1", new Linear(FEATURES, HIDDEN, true, new Generator(0)));
        private final Linear fc2 = registerModule("fc2", new Linear(HIDDEN, CLASSES, true, new Generator(1)));

        @Override
        public Tensor forward(Tensor x) {
            return fc2.forward(fc1.forward(x).relu()).logSoftmax(1);
        }
    }

    /** worker0's parameter server: the model, and whose step it is. */
    public static final class Server {
        private final Net model = new Net();
        private final Turns turns = new Turns();
    }

    /** The server, made by the first trainer that asks (PyTorch's {@code get_parameter_server}); on worker0. */
    public static synchronized Server server() {
        if (server == null) {
            server = new Server();
        }
        return server;
    }

    /** RRefs to the model's parameters, owned by worker0, for the trainers' optimizers. */
    public static List<RRef<Tensor>> parameterRRefs(Server server) {
        return server.model.parameters().stream().map(RRef::of).toList();
    }

    /** The forward pass of the caller's step, once it is the caller's turn on the model (on worker0). */
    @AsyncExecution
    public static RpcFuture<Tensor> forward(Server server, Tensor x) {
        return server.turns.enter(DistAutograd.currentContextId()).thenApply(turn -> server.model.forward(x));
    }

    /**
     * Lends the model to one training step (one autograd context) at a time, in arrival order, each
     * until its context leaves this worker. Thread-safe.
     */
    private static final class Turns {
        private record Waiting(long context, RpcFuture<Boolean> turn) {
        }

        private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
        private long holder = -1;

        /** Completes when {@code context} holds the model (at once if it does already). */
        RpcFuture<Boolean> enter(long context) {
            RpcFuture<Boolean> turn;
            synchronized (this) {
                if (holder == context) {
                    return RpcFuture.completed(Boolean.TRUE);
                }
                for (Waiting w : waiting) {
                    if (w.context() == context) {
                        return w.turn(); // a second forward pass of a step still in line
                    }
                }
                if (holder == -1) {
                    holder = context;
                    turn = RpcFuture.completed(Boolean.TRUE);
                } else {
                    turn = new RpcFuture<>();
                    waiting.add(new Waiting(context, turn));
                }
            }
            DistAutograd.whenReleased(context, () -> leave(context));
            return turn;
        }

        /** {@code context} is done (or gone): the next one in line gets the model. */
        void leave(long context) {
            Waiting next;
            synchronized (this) {
                if (holder != context) {
                    waiting.removeIf(w -> w.context() == context);
                    return;
                }
                next = waiting.poll();
                holder = next == null ? -1 : next.context();
            }
            if (next != null) {
                next.turn().setResult(Boolean.TRUE);
            }
        }
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv().getOrDefault("RANK", "0"));
        int worldSize = Integer.parseInt(System.getenv().getOrDefault("WORLD_SIZE", "1"));
        if (worldSize < 2) {
            throw new IllegalArgumentException("needs a server and at least one trainer: ferry run --nproc 3 "
                    + RRefParameterServer.class.getName());
        }
        Rpc.initRpc("worker" + rank);
        try {
            if (rank > 0) {
                train(rank);
            }
        } finally {
            Rpc.shutdown(); // graceful: worker0 serves until every trainer is done
        }
        if (rank == 0) {
            Batch test = Batch.draw(new Generator(7), 1000);
            try (var scope = Autograd.noGrad()) {
                Tensor predicted = server().model.forward(test.x()).argmax(1, false);
                double accuracy = predicted.eq(test.y()).to(DType.FLOAT32).mean().item();
                System.out.printf(Locale.ROOT, "RESULT accuracy %.3f%n", accuracy);
            }
        }
    }

    private static void train(int rank) {
        Generator data = new Generator(100 + rank);
        TrainingReport report = new TrainingReport("worker" + rank);
        try (RRef<Server> ps = Rpc.remote("worker0", RRefParameterServer::server)) {
            List<RRef<Tensor>> params = ps.rpcSync(RRefParameterServer::parameterRRefs);
            try (DistributedOptimizer optimizer = new DistributedOptimizer(p -> new SGD(p, LR), params)) {
                for (int step = 0; step < STEPS; step++) {
                    Batch batch = Batch.draw(data, BATCH);
                    report.stepStarts();
                    try (DistAutogradContext context = DistAutograd.context()) {
                        // the @AsyncExecution function's future's value, as PyTorch's rpc_sync gives it
                        Tensor logProbs = ps.rpcSync(Async.value(RRefParameterServer::forward), batch.x());
                        Tensor loss = Functional.nllLoss(logProbs, batch.y());
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
