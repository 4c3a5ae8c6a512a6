package dev.ferry.examples;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A 3-process scenario for {@link MultiProcessTest}: rank 2 crashes (halts without any cleanup,
 * as a killed process would) in the middle of a call; rank 0 reports what its calls saw, and the
 * survivors shut down gracefully without it, reporting it missing.
 */
public final class CrashingWorkerMain {
    private CrashingWorkerMain() {
    }

    public static int crash() {
        Runtime.getRuntime().halt(0);
        return 0;
    }

    public static int echo(int x) {
        return x;
    }

    public static void main(String[] args) throws InterruptedException {
        int rank = Integer.parseInt(System.getenv("RANK"));
        Rpc.initRpc("worker" + rank);
        if (rank == 0) {
            long start = System.nanoTime();
            RpcFuture<Integer> crashing = Rpc.to("worker2").withTimeout(Duration.ofSeconds(60))
                    .rpcAsync(CrashingWorkerMain::crash);
            try {
                crashing.await();
                System.out.println("RESULT crash-call returned");
            } catch (RpcException e) {
                System.out.println("RESULT crash-call " + e.code() + " after "
                        + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
            }
            System.out.println("RESULT survivor " + Rpc.rpcSync("worker1", CrashingWorkerMain::echo, 5));
        }
        if (rank == 2) {
            new CountDownLatch(1).await(); // until crash() halts this process
        }
        // Graceful among the survivors: worker2 is known lost, so nobody waits for it.
        RpcAgent agent = Rpc.current();
        Rpc.shutdown();
        System.out.println("RESULT missing " + agent.getDebugInfo().get("agent.shutdown.missing"));
    }
}
