package dev.ferry.examples;

import dev.ferry.rpc.Metrics;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker for the status page's test: rank 0 calls the other ranks in a loop for at most two
 * minutes (one step in 250 fails on its callees), reporting a falling "loss"; the others
 * serve until stopped. A killed callee's calls fail, and rank 0 goes on with the rest.
 */
public final class StatusLoadMain {
    private static final long RUN_NANOS = TimeUnit.MINUTES.toNanos(2);

    private StatusLoadMain() {
    }

    public static long work(long step) {
        return step * 2;
    }

    public static long failing(long step) {
        throw new IllegalStateException("step " + step + " failed on purpose");
    }

    public static void main(String[] args) {
        RpcAgent agent = Rpc.initRpc("worker" + System.getenv("RANK"));
        long deadline = System.nanoTime() + RUN_NANOS;
        if (agent.getWorkerInfo().id() == 0) {
            List<String> peers = agent.getWorkerInfos().stream().map(w -> w.name()).filter(n -> !n.equals("worker0"))
                    .toList();
            for (long step = 0; System.nanoTime() < deadline; step++) {
                for (String peer : peers) {
                    try {
                        if (step % 250 == 249) {
                            agent.rpcSync(peer, StatusLoadMain::failing, step);
                        } else {
                            agent.rpcSync(peer, StatusLoadMain::work, step);
                        }
                    } catch (RpcException e) {
                        // a failing step, or a callee that is gone: the page shows it
                    }
                }
                Metrics.report(agent, "loss", step, 2.0 / (1 + step * 0.01));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // a steady few hundred calls a second
            }
        } else {
            while (System.nanoTime() < deadline) {
                LockSupport.parkNanos(deadline - System.nanoTime());
            }
        }
        System.exit(0); // stopped by the test long before; never a graceful group shutdown with a worker gone
    }
}
