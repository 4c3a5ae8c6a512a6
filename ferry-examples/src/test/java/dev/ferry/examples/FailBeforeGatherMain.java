package dev.ferry.examples;

import dev.ferry.rpc.Rpc;

/**
 * A 3-process scenario for {@link MultiProcessTest}: rank 1's program throws before the group's
 * {@code allGather}, the others wait in it. The gather fails on every other rank, naming worker1,
 * instead of waiting out its timeout; the launcher's summary shows rank 1's own error.
 */
public final class FailBeforeGatherMain {
    private FailBeforeGatherMain() {
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv("RANK"));
        Rpc.initRpc("worker" + rank);
        try {
            if (rank == 1) {
                throw new IllegalStateException("worker1 cannot read its shard");
            }
            System.out.println("RESULT gathered " + Rpc.allGather(rank));
        } finally {
            Rpc.shutdown();
        }
    }
}
