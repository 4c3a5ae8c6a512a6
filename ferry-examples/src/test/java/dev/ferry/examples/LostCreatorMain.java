package dev.ferry.examples;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.rpc.Rpc;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A 3-process scenario for {@link MultiProcessTest}: rank 0 opens a distributed autograd context,
 * sends a tensor through rank 1 on to rank 2 in it, and halts (as a killed process would) without
 * closing it; ranks 1 and 2 report whether, and how soon, the context left them.
 */
public final class LostCreatorMain {
    private static final CountDownLatch REACHED = new CountDownLatch(1);

    private LostCreatorMain() {
    }

    /** On rank 1: passes {@code t} on to {@code next}, in the caller's context. */
    public static Tensor relay(String next, Tensor t) {
        Tensor back = Rpc.rpcSync(next, LostCreatorMain::reached, t);
        REACHED.countDown();
        return back;
    }

    /** On rank 2. */
    public static Tensor reached(Tensor t) {
        REACHED.countDown();
        return t.mul(2);
    }

    private static int contexts() {
        return Integer.parseInt(DistAutograd.debugInfo().get("num_autograd_contexts"));
    }

    public static void main(String[] args) throws InterruptedException {
        int rank = Integer.parseInt(System.getenv("RANK"));
        Rpc.initRpc("worker" + rank);
        if (rank == 0) {
            DistAutograd.context();
            Rpc.rpcSync("worker1", LostCreatorMain::relay, "worker2", Tensors.ones(3).requiresGrad_(true));
            Runtime.getRuntime().halt(0);
        }
        if (!REACHED.await(60, TimeUnit.SECONDS)) {
            System.out.println("RESULT never reached");
        } else {
            long start = System.nanoTime();
            long deadline = start + Duration.ofSeconds(30).toNanos();
            while (contexts() > 0 && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(1_000_000);
            }
            System.out.println(contexts() == 0
                    ? "RESULT released after " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms"
                    : "RESULT still holds " + contexts());
        }
        // a graceful shutdown needs every worker, and worker0 is gone
        Rpc.shutdown(false, Duration.ZERO);
    }
}
