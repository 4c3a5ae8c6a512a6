package dev.ferry.rpc.policy.other;

import java.util.function.Supplier;

/** Outside the application's packages and unmarked: a library's class, as far as the policies can tell. */
public final class Unmarked {
    private Unmarked() {
    }

    public static int plain(int x) {
        return x;
    }

    /** An interface outside the application's packages: its methods are refused through RRef proxies too. */
    public interface Api {
        int value();
    }

    /** A record outside the application's packages: refused as data unless allowed. */
    public record Data(String value) {
    }

    /** An interface of the application would extend this: its method is the JDK's. */
    public static Supplier<String> supplier(String value) {
        return () -> value;
    }
}
