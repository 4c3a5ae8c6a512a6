package dev.ferry.rpc.policy.other;

import dev.ferry.rpc.RpcCallable;

/** Outside the application's packages, one method of it marked callable. */
public final class MarkedMethod {
    private MarkedMethod() {
    }

    @RpcCallable
    public static int marked(int x) {
        return x + 100;
    }

    public static int unmarked(int x) {
        return x;
    }
}
