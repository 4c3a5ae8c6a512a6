package dev.ferry.rpc;

import java.util.List;
import java.util.Map;

/** Functions the tests call remotely. */
public final class Ops {
    private Ops() {
    }

    public static int add(int a, int b) {
        return a + b;
    }

    public static int noop(int x) {
        return x;
    }

    public static String concat(String a, String b) {
        return a + b;
    }

    public static Object identity(Object value) {
        return value;
    }

    public static String whoAmI() {
        return Rpc.current().getWorkerInfo().name();
    }

    /** Which incarnation of its worker runs this (a restarted worker's is new). */
    public static String incarnation() {
        return Rpc.current().getDebugInfo().get("agent.incarnation");
    }

    public static int fail(String message) {
        throw new IllegalArgumentException(message);
    }

    public static int failNested(String message) {
        try {
            throw new IllegalStateException("inner: " + message);
        } catch (IllegalStateException e) {
            throw new RuntimeException("outer: " + message, e);
        }
    }

    public static int relay(String to, int x) {
        return Rpc.rpcSync(to, Ops::noop, x);
    }

    public static int sum(List<Integer> values) {
        return values.stream().mapToInt(Integer::intValue).sum();
    }

    public static Map<String, Integer> lengths(List<String> words) {
        java.util.Map<String, Integer> out = new java.util.TreeMap<>();
        for (String word : words) {
            out.put(word, word.length());
        }
        return out;
    }

    /** Sleeps on the callee: stands for slow user work in timeout tests (nothing waits on it). */
    public static long sleepMillis(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return millis;
    }

    /** Relays to {@code to} without holding a thread while waiting. */
    @AsyncExecution
    public static RpcFuture<Integer> asyncRelay(String to, int x) {
        return Rpc.rpcAsync(to, Ops::noop, x);
    }

    /** Adds through two hops, chaining futures: {@code x + 1 + 2}. */
    @AsyncExecution
    public static RpcFuture<Integer> asyncChained(String to, int x) {
        return Rpc.rpcAsync(to, Ops::add, x, 1).thenCompose(v -> Rpc.rpcAsync(to, Ops::add, v, 2));
    }

    @AsyncExecution
    public static java.util.concurrent.CompletionStage<String> asyncStage(String value) {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> value + "!");
    }

    @AsyncExecution
    public static Object asyncWrongType() {
        return 42;
    }

    @AsyncExecution
    public static RpcFuture<Integer> asyncRaise() {
        throw new IllegalStateException("Expected error");
    }

    @AsyncExecution
    public static RpcFuture<Integer> asyncFailLater(String to) {
        return Rpc.rpcAsync(to, Ops::fail, "failed later");
    }

    /** Nested relay that goes {@code depth} hops around the group before returning. */
    public static int deepRelay(int depth, int x) {
        if (depth == 0) {
            return x;
        }
        java.util.List<WorkerInfo> workers = Rpc.getWorkerInfos();
        WorkerInfo next = workers.get((Rpc.getWorkerInfo().id() + 1) % workers.size());
        return Rpc.to(next).rpcSync(Ops::deepRelay, depth - 1, x);
    }

    /** Passes {@code value} along {@code route} through nested calls and returns it. */
    public static Object forward(java.util.List<String> route, Object value) {
        if (route.isEmpty()) {
            return value;
        }
        return Rpc.rpcSync(route.get(0), Ops::forward, route.subList(1, route.size()), value);
    }
}
