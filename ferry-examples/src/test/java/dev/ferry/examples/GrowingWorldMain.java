package dev.ferry.examples;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.store.Rendezvous;
import java.util.concurrent.CountDownLatch;

/**
 * A worker for {@link ElasticGrowthTest}: it joins its world; alone (world size 1) it says so and
 * waits until it is stopped, in a world of several it calls the last rank and says what it answered.
 */
public final class GrowingWorldMain {
    private GrowingWorldMain() {
    }

    static String whoAmI() {
        return Rpc.getWorkerInfo().name();
    }

    public static void main(String[] args) throws InterruptedException {
        int rank = Rendezvous.environmentRank().orElse(0);
        Rpc.initRpc("worker" + rank);
        int worldSize = Rpc.getWorkerInfos().size();
        if (worldSize == 1) {
            System.out.println("alone");
            new CountDownLatch(1).await(); // until the world restarts with the node that arrives
        }
        String last = "worker" + (worldSize - 1);
        System.out.println("rank " + rank + " of " + worldSize + " calls " + last + ": "
                + Rpc.rpcSync(last, GrowingWorldMain::whoAmI));
        Rpc.shutdown();
    }
}
