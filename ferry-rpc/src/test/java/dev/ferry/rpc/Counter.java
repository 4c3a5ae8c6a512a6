package dev.ferry.rpc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A mutable object that lives on one worker and is used through RRefs in tests. */
public class Counter implements CounterApi {
    private int value;

    public Counter(int start) {
        this.value = start;
    }

    @Override
    public synchronized int add(int delta) {
        value += delta;
        return value;
    }

    @Override
    public synchronized int value() {
        return value;
    }

    /** A method of four arguments, for calls through an RRef with as many as the top-level calls take. */
    public synchronized int addFour(int a, int b, int c, int d) {
        return add(a + b + c + d);
    }

    public synchronized int addFive(int a, int b, int c, int d, int e) {
        return add(a + b + c + d + e);
    }

    public String where() {
        return Rpc.getWorkerInfo().name();
    }

    /** Adds on another worker's counter, replying when that is done. */
    @AsyncExecution
    public RpcFuture<Integer> addThenForward(RRef<Counter> other, int delta) {
        add(delta);
        return other.rpcAsync(Counter::add, delta);
    }

    @Override
    @AsyncExecution
    public CompletionStage<Integer> addLater(int delta) {
        return CompletableFuture.supplyAsync(() -> add(delta));
    }

    public static int valueOf(RRef<Counter> counter) {
        return counter.toHere().value();
    }

    public static int addThrough(RRef<Counter> counter, int delta) {
        return counter.rpcSync(Counter::add, delta);
    }

    public static boolean isConfirmed(RRef<?> rref) {
        return rref.confirmedByOwner();
    }

    public static RRef<Counter> createOn(String worker, int start) {
        return Rpc.remote(worker, Counter::new, start);
    }

    public static java.util.List<RRef<Counter>> localCounters(int n) {
        java.util.List<RRef<Counter>> out = new java.util.ArrayList<>();
        for (int i = 1; i <= n; i++) {
            out.add(Rpc.rref(new Counter(i)));
        }
        return out;
    }

    public static int sumOfRRefs(java.util.List<RRef<Integer>> refs) {
        int sum = 0;
        for (RRef<Integer> ref : refs) {
            sum += ref.toHere();
        }
        return sum;
    }

    public static Integer addToRRef(RRef<Integer> ref, int x) {
        return ref.toHere() + x;
    }

    public static Boolean drop(RRef<?> ref) {
        ref.close();
        return Boolean.TRUE;
    }
}
