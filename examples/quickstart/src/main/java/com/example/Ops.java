package com.example;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcFuture;
import java.time.Duration;

/** README's quick start: worker0 calls {@link #add} on worker1 three ways. */
public final class Ops {

    private Ops() {}

    public static int add(int a, int b) {
        return a + b;
    }

    public static void main(String[] args) {
        // ferry run sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (env:// rendezvous)
        Rpc.initRpc("worker" + System.getenv("RANK"));
        try {
            if (Rpc.getWorkerInfo().id() == 0) {
                int seven = Rpc.rpcSync("worker1", Ops::add, 3, 4);            // blocks
                RpcFuture<Integer> later = Rpc.rpcAsync("worker1", Ops::add, 5, 6);
                int eleven = later.await();
                int two = Rpc.to(1).withTimeout(Duration.ofSeconds(2)).rpcSync(Ops::add, 1, 1);
                System.out.println(seven + " " + eleven + " " + two);
            }
        } finally {
            Rpc.shutdown();   // graceful: waits until every worker is done
        }
    }
}
