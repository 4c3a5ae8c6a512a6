package dev.ferry.examples;

import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcException;

/**
 * A 2-process scenario for {@link MultiProcessTest}: worker0 makes an RRef on worker1 whose
 * function throws, calls a function on its value at once (as {@code RemoteModule.create} does)
 * and asks for the value three times; the call and each {@code toHere()} fail with the owner's
 * error, which worker1 logged once, when the function ran.
 */
public final class FailedRRefMain {
    private FailedRRefMain() {
    }

    public static int noShard(int shard) {
        throw new IllegalStateException("no shard " + shard);
    }

    public static double half(int value) {
        return value / 2.0;
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv("RANK"));
        Rpc.initRpc("worker" + rank);
        try {
            if (rank == 0) {
                RRef<Integer> rref = Rpc.remote("worker1", FailedRRefMain::noShard, 7);
                try {
                    rref.rpcSync(FailedRRefMain::half);
                } catch (RpcException e) {
                    System.out.println("RESULT call " + e.code() + " " + e.remoteClassName() + ": " + e.remoteMessage());
                }
                for (int i = 0; i < 3; i++) {
                    try {
                        rref.toHere();
                    } catch (RpcException e) {
                        System.out.println("RESULT toHere " + e.code() + " " + e.remoteClassName() + ": "
                                + e.remoteMessage());
                    }
                }
            }
        } finally {
            Rpc.shutdown();
        }
    }
}
