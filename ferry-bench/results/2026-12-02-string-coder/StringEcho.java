package stringecho;

import com.sun.management.ThreadMXBean;
import dev.ferry.rpc.BackendRegistry;
import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcFunction1;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Issue 23's string check, what it costs: two workers in this JVM (loopback TCP, as LocalCluster
 * starts them), worker0 making W1-like {@code rpcSync} echoes of strings. Per workload: 20,000
 * warm-up calls, then 50,000 timed ones, each timed on its own; prints the median and mean
 * round trip in ns and the bytes the whole JVM allocated per call (both workers). Also how long
 * the two workers took to start and what they allocated, and the first echo of a record (whose
 * serializers Fory generates then). Run with
 * ferry-rpc's jar and its runtime class path; see measure.sh.
 */
public final class StringEcho {
    private static final int WARMUP = 20_000;
    private static final int CALLS = 50_000;
    private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

    private StringEcho() {
    }

    /** A value Fory generates a serializer for, on first use. */
    public record Note(int id, String text) {
    }

    public static Object echo(Object value) {
        return value;
    }

    public static void main(String[] args) throws Exception {
        long initStart = System.nanoTime();
        long initAllocated = THREADS.getTotalThreadAllocatedBytes();
        TcpStoreServer server = TcpStoreServer.start("127.0.0.1", 0);
        int port = server.address().getPort();
        RpcBackendOptions options = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:" + port)
                .rendezvousTimeout(Duration.ofSeconds(60)).applicationPackage("stringecho").build();
        CompletableFuture<RpcAgent> one = CompletableFuture.supplyAsync(() -> BackendRegistry.initBackend(
                BackendType.NETTY, TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60)), "worker1", 1, 2, options));
        RpcAgent caller = BackendRegistry.initBackend(BackendType.NETTY,
                TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60)), "worker0", 0, 2, options);
        RpcAgent callee = one.get();
        long initNanos = System.nanoTime() - initStart;
        initAllocated = THREADS.getTotalThreadAllocatedBytes() - initAllocated;
        String side = args.length > 0 ? args[0] : "?";
        long first = System.nanoTime();
        check(new Note(1, "first"), caller.rpcSync("worker1", (RpcFunction1<Object, Object>) StringEcho::echo, new Note(1, "first")));
        System.out.printf("%s init_ms=%.1f init_bytes=%d first_record_ms=%.1f%n", side, initNanos / 1e6, initAllocated,
                (System.nanoTime() - first) / 1e6);
        List<String> words = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            words.add("word-" + i);
        }
        measure(side, "short", caller, "hello, world");
        measure(side, "list32", caller, words);
        measure(side, "mixed", caller, "caf\u00e9 costs 3 \u20ac, said the menu of the caf\u00e9 on the corner, 2026");
        caller.shutdown(false, Duration.ZERO);
        callee.shutdown(false, Duration.ZERO);
        server.close();
    }

    private static void measure(String side, String name, RpcAgent caller, Object value) {
        RpcFunction1<Object, Object> echo = StringEcho::echo;
        for (int i = 0; i < WARMUP; i++) {
            check(value, caller.rpcSync("worker1", echo, value));
        }
        long[] ns = new long[CALLS];
        long allocated = THREADS.getTotalThreadAllocatedBytes();
        long start = System.nanoTime();
        for (int i = 0; i < CALLS; i++) {
            long t = System.nanoTime();
            Object back = caller.rpcSync("worker1", echo, value);
            ns[i] = System.nanoTime() - t;
            if (back == null) {
                throw new IllegalStateException("no echo");
            }
        }
        long loop = System.nanoTime() - start;
        allocated = THREADS.getTotalThreadAllocatedBytes() - allocated;
        Arrays.sort(ns);
        System.out.printf("%s %s median_ns=%d mean_ns=%d bytes_per_call=%d%n", side, name, ns[CALLS / 2],
                loop / CALLS, allocated / CALLS);
    }

    private static void check(Object sent, Object back) {
        if (!sent.equals(back)) {
            throw new IllegalStateException("sent " + sent + ", got " + back);
        }
    }
}
