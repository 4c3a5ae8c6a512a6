package dev.ferry.rpc.policy.app;

import dev.ferry.rpc.policy.other.Unmarked;

import java.util.function.Supplier;

/**
 * An interface of the application, called through RRef proxies; it inherits {@code get} from the
 * JDK's {@link Supplier}, and its implementation also implements an interface outside the application.
 */
public interface Greeter extends Supplier<String> {
    String greet(String name);

    /** A value to hold in an RRef on the callee. */
    static Greeter create(String greeting) {
        return new Impl(greeting);
    }

    /** Implements the application's interface, the JDK's it extends, and one of a library's. */
    final class Impl implements Greeter, Unmarked.Api {
        private final String greeting;

        Impl(String greeting) {
            this.greeting = greeting;
        }

        @Override
        public String greet(String name) {
            return greeting + " " + name;
        }

        @Override
        public String get() {
            return greeting;
        }

        @Override
        public int value() {
            return greeting.length();
        }
    }
}
