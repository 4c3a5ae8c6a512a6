package dev.ferry.examples;

import dev.ferry.rpc.Rpc;

/**
 * A 3-process scenario for {@link MultiProcessTest}: after a gather, worker1's main returns
 * without {@code Rpc.shutdown()} (it should be told why it left its group so abruptly), worker2
 * calls {@code System.exit(0)} with its agent running (an exit it asked for: no warning), and
 * worker0 shuts down gracefully.
 */
public final class ForgottenShutdownMain {
    private ForgottenShutdownMain() {
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv("RANK"));
        Rpc.initRpc("worker" + rank);
        Rpc.allGather(rank);
        switch (rank) {
            case 0 -> Rpc.shutdown();
            case 2 -> System.exit(0);
            default -> System.out.println("RESULT worker1 returns from main");
        }
    }
}
