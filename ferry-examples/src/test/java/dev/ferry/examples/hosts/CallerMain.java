package dev.ferry.examples.hosts;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.store.Rendezvous;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;

/**
 * A world of test-host workers driven by the test through rank 0's standard input, one command a
 * line, one answer a line:
 *
 * <pre>
 *   echo N BYTES     N calls to every other worker echoing BYTES random bytes  -> "echo ok" | "echo failed CODE message"
 *   slow MILLIS      a call to worker1 that sleeps 3 s, with a MILLIS timeout  -> "slow CODE elapsed-ms"
 *   call MILLIS      one call to worker1 with a MILLIS timeout                 -> "call ok" | "call CODE message"
 *   rtt              the median round trip of 21 calls to worker1, in µs       -> "rtt MICROS"
 *   quit             graceful shutdown of the world
 * </pre>
 *
 * Every rank prints {@code ready} once the world formed.
 */
public final class CallerMain {
    static final Duration HEARTBEAT_TIMEOUT = Duration.ofSeconds(2);

    private CallerMain() {
    }

    public static byte[] echo(byte[] bytes) {
        return bytes;
    }

    public static String sleep(long millis) throws InterruptedException {
        Thread.sleep(millis); // the callee's work that outlasts the caller's timeout
        return "slept";
    }

    public static void main(String[] args) throws Exception {
        // A short heartbeat bound: a partitioned peer is declared lost within 2 s, well inside the
        // test's call timeouts.
        RpcAgent agent = Rpc.initRpc("worker" + Rendezvous.environmentRank().orElse(0), -1, -1,
                RpcBackendOptions.builder().heartbeatTimeout(HEARTBEAT_TIMEOUT).build());
        System.out.println("ready");
        try {
            if (agent.getWorkerInfo().id() == 0) {
                serve(agent);
            }
        } finally {
            Rpc.shutdown();
        }
    }

    private static void serve(RpcAgent agent) throws Exception {
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Random random = new Random(42);
        for (String line = commands.readLine(); line != null && !line.equals("quit"); line = commands.readLine()) {
            String[] words = line.split(" ");
            long start = System.nanoTime();
            try {
                switch (words[0]) {
                    case "echo" -> {
                        byte[] payload = new byte[Integer.parseInt(words[2])];
                        for (int i = 0; i < Integer.parseInt(words[1]); i++) {
                            random.nextBytes(payload);
                            for (WorkerInfo peer : agent.getWorkerInfos()) {
                                if (peer.id() != 0 && !Arrays.equals(payload, agent.rpcSync(peer.name(), CallerMain::echo, payload))) {
                                    throw new AssertionError("echo from " + peer.name() + " differs");
                                }
                            }
                        }
                        System.out.println("echo ok");
                    }
                    case "slow" -> {
                        agent.to("worker1").withTimeout(Duration.ofMillis(Long.parseLong(words[1])))
                                .rpcSync(CallerMain::sleep, 3_000L);
                        System.out.println("slow ok");
                    }
                    case "call" -> {
                        agent.to("worker1").withTimeout(Duration.ofMillis(Long.parseLong(words[1])))
                                .rpcSync(HostWorldMain::hostAddress);
                        System.out.println("call ok");
                    }
                    case "rtt" -> {
                        long[] micros = new long[21];
                        for (int i = 0; i < micros.length; i++) {
                            long t = System.nanoTime();
                            agent.rpcSync("worker1", HostWorldMain::hostAddress);
                            micros[i] = (System.nanoTime() - t) / 1_000;
                        }
                        Arrays.sort(micros);
                        System.out.println("rtt " + micros[micros.length / 2]);
                    }
                    default -> System.out.println("unknown command " + line);
                }
            } catch (RpcException e) {
                long millis = (System.nanoTime() - start) / 1_000_000;
                System.out.println(words[0] + " " + e.code() + " " + millis + " " + e.getMessage().replace('\n', ' '));
            }
        }
    }
}
