package dev.ferry.examples;

import dev.ferry.rpc.Async;
import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.store.Rendezvous;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The demo: every worker joins the group, worker0 drives a tour of Ferry's calls on the others,
 * and all shut down together. Run it on a local cluster with {@code ./ferry demo}, which is
 * {@code ferry run --nproc 3 dev.ferry.examples.HelloCluster}: the launcher sets {@code RANK},
 * {@code WORLD_SIZE}, {@code MASTER_ADDR} and {@code MASTER_PORT}, read by {@code env://}.
 */
public final class HelloCluster {
    private static final Logger log = LoggerFactory.getLogger(HelloCluster.class);

    private HelloCluster() {
    }

    /** A value type that travels by value. */
    public record Greeting(String from, String to, int hops) {
    }

    public static String greet(String who) {
        return "hello " + who + ", from " + Rpc.getWorkerInfo().name();
    }

    public static long sumOfSquares(int[] values) {
        long sum = 0;
        for (int v : values) {
            sum += (long) v * v;
        }
        return sum;
    }

    /** Runs on one worker and calls another from inside the handler: a nested call. */
    public static Greeting relay(String next, Greeting greeting) {
        Greeting here = new Greeting(greeting.from(), Rpc.getWorkerInfo().name(), greeting.hops() + 1);
        return next == null ? here : Rpc.rpcSync(next, HelloCluster::relay, null, here);
    }

    /** Replies when the nested call completes, without holding a thread meanwhile. */
    @AsyncExecution
    public static RpcFuture<Integer> doubleRemotely(String on, int x) {
        return Rpc.rpcAsync(on, HelloCluster::add, x, x);
    }

    public static int add(int a, int b) {
        return a + b;
    }

    public static int divide(int a, int b) {
        return a / b;
    }

    public static void main(String[] args) {
        // RANK, or the scheduler's own (SLURM_PROCID, JOB_COMPLETION_INDEX): see docs/cluster.md
        String name = "worker" + Rendezvous.environmentRank().orElse(0);
        Rpc.initRpc(name);
        try {
            WorkerInfo me = Rpc.getWorkerInfo();
            log.info("{} is up; the group is {}", me.name(), Rpc.getWorkerInfos());
            if (me.id() == 0) {
                tour();
            }
            Map<String, Object> gathered = Rpc.allGather(me.id() * 10);
            log.info("{} gathered {}", me.name(), gathered);
        } finally {
            Rpc.shutdown();
        }
        log.info("{} shut down", name);
    }

    private static void tour() {
        List<WorkerInfo> others = new ArrayList<>(Rpc.getWorkerInfos());
        others.remove(Rpc.getWorkerInfo());
        for (WorkerInfo other : others) {
            log.info("rpcSync  -> {}: {}", other.name(), Rpc.rpcSync(other.name(), HelloCluster::greet, "worker0"));
        }
        int[] numbers = new int[100_000];
        for (int i = 0; i < numbers.length; i++) {
            numbers[i] = i % 1000;
        }
        List<RpcFuture<Long>> futures = new ArrayList<>();
        for (WorkerInfo other : others) {
            futures.add(Rpc.to(other).rpcAsync(HelloCluster::sumOfSquares, numbers));
        }
        log.info("rpcAsync -> all: sums of squares {}", RpcFuture.waitAll(futures));
        String last = others.get(others.size() - 1).name();
        Greeting relayed = Rpc.rpcSync(others.get(0).name(), HelloCluster::relay, last, new Greeting("worker0", null, 0));
        log.info("nested   -> {}", relayed);
        log.info("async    -> {}", Rpc.rpcSync(others.get(0).name(), Async.value(HelloCluster::doubleRemotely), last, 21));
        try {
            Rpc.rpcSync(last, HelloCluster::divide, 1, 0);
        } catch (RpcException e) {
            log.info("error    -> {} on {}: {}", e.remoteClassName(), e.workerName(), e.remoteMessage());
        }
    }
}
