package dev.ferry.examples.hosts;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.store.Rendezvous;
import java.util.concurrent.CountDownLatch;

/** A worker that joins its world, says {@code joined} and then waits until it is stopped. */
public final class WaitForeverMain {
    private WaitForeverMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        Rpc.initRpc("worker" + Rendezvous.environmentRank().orElse(0));
        System.out.println("joined");
        new CountDownLatch(1).await(); // stopped by its launcher
    }
}
