package dev.ferry.examples;

import dev.ferry.rpc.Async;
import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcFuture;
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
import java.util.Map;

/**
 * A batch-updating parameter server, after PyTorch's tutorial "Implementing Batch RPC Processing
 * Using Asynchronous Executions" (its parameter-server part): worker0 owns a linear model; every
 * other worker is a trainer with its own data that, each step, computes gradients locally and sends
 * them to worker0. Worker0 answers nobody until every trainer's
 * gradients of the step are in ({@link AsyncExecution}: no thread waits meanwhile), then averages
 * them, takes one SGD step and answers all trainers with the new parameters. Tensors travel as
 * plain arguments and results ({@code ferry-distributed} on the class path does it). The data is
 * synthetic (drawn from fixed seeds: nothing is downloaded), from a known linear model, so worker0
 * can tell at the end how close the learned one is.
 *
 * <pre>
 * ./ferry run --nproc 3 dev.ferry.examples.ParameterServer
 * </pre>
 */
public final class ParameterServer {
    private static final Logger log = LoggerFactory.getLogger(ParameterServer.class);
    static final int FEATURES = 8;
    static final int STEPS = 40;
    private static final int BATCH = 64;

    /** The model every trainer's data comes from: y = x·w + 0.5, plus a little noise. */
    static final Tensor TRUE_WEIGHT = Tensors.arange(1.0, FEATURES + 1, 1.0).div(FEATURES).view(1, FEATURES);
    static final double TRUE_BIAS = 0.5;

    private static volatile Server server;

    private ParameterServer() {
    }

    /** The model's parameters by name, as they are now (runs on worker0). */
    public static Map<String, Tensor> parameters() {
        return server.model.stateDict();
    }

    /** One trainer's gradients of this step; completes when the step is taken (runs on worker0). */
    @AsyncExecution
    public static RpcFuture<Map<String, Tensor>> updateAndFetch(List<Tensor> gradients) {
        return server.submit(gradients);
    }

    /** worker0's state: the model, its optimizer and the step being collected. */
    private static final class Server {
        private final Linear model = new Linear(FEATURES, 1, true, new Generator(0));
        private final SGD optimizer = new SGD(model.parameters(), 0.2);
        private final int trainers;
        private List<Tensor> sum;
        private int arrived;
        private RpcFuture<Map<String, Tensor>> step = new RpcFuture<>();

        Server(int trainers) {
            this.trainers = trainers;
        }

        synchronized RpcFuture<Map<String, Tensor>> submit(List<Tensor> gradients) {
            sum = sum == null ? new ArrayList<>(gradients) : add(sum, gradients);
            RpcFuture<Map<String, Tensor>> mine = step;
            if (++arrived == trainers) {
                optimizer.step(sum.stream().map(g -> g.div(trainers)).toList());
                sum = null;
                arrived = 0;
                step = new RpcFuture<>();
                mine.setResult(model.stateDict());
            }
            return mine;
        }

        private static List<Tensor> add(List<Tensor> a, List<Tensor> b) {
            List<Tensor> out = new ArrayList<>(a.size());
            for (int i = 0; i < a.size(); i++) {
                out.add(a.get(i).add(b.get(i)));
            }
            return out;
        }
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv().getOrDefault("RANK", "0"));
        int worldSize = Integer.parseInt(System.getenv().getOrDefault("WORLD_SIZE", "1"));
        if (worldSize < 2) {
            throw new IllegalArgumentException("needs a server and at least one trainer: ferry run --nproc 3 " +
                    ParameterServer.class.getName());
        }
        if (rank == 0) {
            server = new Server(worldSize - 1); // before init: trainers may call as soon as it returns
        }
        Rpc.initRpc("worker" + rank);
        try {
            if (rank > 0) {
                train(rank);
            }
        } finally {
            Rpc.shutdown(); // graceful: worker0 stays until every trainer is done
        }
        if (rank == 0) {
            Map<String, Tensor> learned = server.model.stateDict();
            double weightError = learned.get("weight").sub(TRUE_WEIGHT).abs().max().item();
            double biasError = Math.abs(learned.get("bias").item() - TRUE_BIAS);
            log.info("learned weight {} bias {}", learned.get("weight"), learned.get("bias"));
            System.out.printf("RESULT max weight error %.4f, bias error %.4f%n", weightError, biasError);
        }
    }

    private static void train(int rank) {
        Generator data = new Generator(rank);
        Linear model = new Linear(FEATURES, 1);
        model.loadStateDict(Rpc.rpcSync("worker0", ParameterServer::parameters));
        TrainingReport report = new TrainingReport("worker" + rank);
        for (int step = 1; step <= STEPS; step++) {
            Tensor x = Tensors.randn(data, BATCH, FEATURES);
            Tensor y = x.matmul(TRUE_WEIGHT.t()).add(TRUE_BIAS).add(Tensors.randn(data, BATCH, 1).mul(0.01));
            report.stepStarts();
            Tensor batchLoss = Functional.mseLoss(model.forward(x), y);
            model.zeroGrad();
            batchLoss.backward();
            List<Tensor> gradients = model.parameters().stream().map(Tensor::grad).toList();
            // the @AsyncExecution function's future's value, as PyTorch's rpc_sync gives it
            model.loadStateDict(Rpc.rpcSync("worker0", Async.value(ParameterServer::updateAndFetch), gradients));
            report.stepDone(batchLoss.item());
            if (step % 10 == 0) {
                log.info("worker{} step {} loss {}", rank, step, String.format("%.5f", report.lastLoss()));
            }
        }
        report.print();
    }
}
