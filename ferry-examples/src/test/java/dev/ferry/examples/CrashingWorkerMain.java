package dev.ferry.examples;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;

import java.time.Duration;

/**
 * A 3-process scenario for {@link MultiProcessTest}: rank 2 crashes (halts without any cleanup,
 * as a killed process would) in the middle of a call; rank 0 reports what its calls saw.
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

    private static final java.util.concurrent.CountDownLatch FINISHED = new java.util.concurrent.CountDownLatch(1);

    public static Boolean finish() {
        FINISHED.countDown();
        return Boolean.TRUE;
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
            try {
                Rpc.rpcSync("worker1", CrashingWorkerMain::finish);
            } catch (RpcException e) {
                // worker1 leaves (not gracefully) as soon as finish has run, so its answer may be
                // cut off with the connection: releasing it is all this call is for.
                if (e.code() != RpcException.Code.UNAVAILABLE) {
                    throw e;
                }
            }
        } else if (rank == 1) {
            FINISHED.await(); // until rank 0 is done with us
        }
        // a graceful shutdown needs every worker, and worker2 is gone
        Rpc.shutdown(false, Duration.ZERO);
    }
}
