package dev.ferry.rpc.policy.app;

import dev.ferry.rpc.RpcFunction1;

/** The application's code in the policy tests: its package is the one they declare. */
public final class AppOps {
    private final int base;

    public AppOps(int base) {
        this.base = base;
    }

    private AppOps() {
        this(0);
    }

    public static int add(int a, int b) {
        return a + b;
    }

    static int packagePrivate(int x) {
        return x;
    }

    /** Never callable for peers, although its class is. */
    private static int secret(int x) {
        return -x;
    }

    public int base() {
        return base;
    }

    /** A lambda written here: its body is a private synthetic method of this class. */
    public static RpcFunction1<Integer, Integer> doubler() {
        return x -> x * 2;
    }

    /** What a caller gets when it names {@link #secret} (a method reference names the method itself). */
    public static RpcFunction1<Integer, Integer> secretReference() {
        return AppOps::secret;
    }

    /** Returns what it is given: what arrives is what the receiver's class policy let through. */
    public static RpcFunction1<Object, Object> identity() {
        return value -> value;
    }

    /** Calls the JDK from the application's code: the way to use {@code Math::addExact} remotely. */
    public static RpcFunction1<Integer, Integer> jdkThroughLambda() {
        return x -> Math.addExact(x, 1);
    }
}
