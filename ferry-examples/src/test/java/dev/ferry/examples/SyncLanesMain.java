package dev.ferry.examples;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcException;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A 3-process scenario for {@link MultiProcessTest}: rank 0 calls ranks 1 and 2 with
 * {@code rpcSync} until the calls run on the callees' synchronous-exchange lanes, then rank 2
 * crashes (halts, as a killed process would) inside a call that came over its lane; rank 0 reports
 * what that call saw and whether its lane to rank 1 still carries calls.
 */
public final class SyncLanesMain {
    private static final CountDownLatch FINISHED = new CountDownLatch(1);

    private SyncLanesMain() {
    }

    public static String threadName() {
        return Thread.currentThread().getName();
    }

    public static int crash() {
        Runtime.getRuntime().halt(0);
        return 0;
    }

    public static Boolean finish() {
        FINISHED.countDown();
        return Boolean.TRUE;
    }

    /** Calls {@code to} until a call runs on a lane's thread (lanes open in the background); bounded. */
    private static boolean onLane(String to) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (Rpc.rpcSync(to, SyncLanesMain::threadName).startsWith("ferry-lane-")) {
                return true;
            }
        }
        return false;
    }

    public static void main(String[] args) throws InterruptedException {
        int rank = Integer.parseInt(System.getenv("RANK"));
        Rpc.initRpc("worker" + rank);
        if (rank == 0) {
            System.out.println("RESULT lanes " + (onLane("worker1") && onLane("worker2") ? "yes" : "no"));
            long start = System.nanoTime();
            try {
                Rpc.to("worker2").withTimeout(Duration.ofSeconds(60)).rpcSync(SyncLanesMain::crash);
                System.out.println("RESULT crash-call returned");
            } catch (RpcException e) {
                System.out.println("RESULT crash-call " + e.code() + " after "
                        + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
            }
            System.out.println("RESULT survivor-on-lane " + (onLane("worker1") ? "yes" : "no"));
            try {
                Rpc.rpcSync("worker1", SyncLanesMain::finish);
            } catch (RpcException e) {
                // worker1 leaves (not gracefully) as soon as finish has run, so its answer may be
                // cut off with the connection: releasing it is all this call is for.
                if (e.code() != RpcException.Code.UNAVAILABLE) {
                    throw e;
                }
            }
        } else {
            FINISHED.await(); // rank 1: until rank 0 is done with it; rank 2 halts inside crash()
        }
        // a graceful shutdown needs every worker, and worker2 is gone
        Rpc.shutdown(false, Duration.ZERO);
    }
}
