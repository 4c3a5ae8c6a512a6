package dev.ferry.rpc.policy.other;

import dev.ferry.rpc.RpcCallable;
import dev.ferry.rpc.RpcFunction1;

/** Outside the application's packages, marked callable as a whole. */
@RpcCallable
public final class MarkedClass {
    private MarkedClass() {
    }

    public static String greet(String name) {
        return "hello " + name;
    }

    public static RpcFunction1<Integer, Integer> negate() {
        return x -> -x;
    }

    private static int hidden(int x) {
        return x;
    }
}
