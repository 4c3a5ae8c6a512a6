package dev.ferry.rpc.internal.security;

import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * The deadlines of handshakes one thread drives without blocking, each attached to its channel's
 * key in a {@link Selector} (the lanes' and the rendezvous store's acceptors): how long the
 * selector may sleep, and which handshakes ran out of time. Deadlines are {@link System#nanoTime}
 * values. A scan of the keys is cheap: there are at most a few dozen handshakes at once.
 *
 * <p>Stateless; call it on the selector's thread.
 */
public final class HandshakeDeadlines {
    /** The longest sleep, so that a handshake added without a wakeup is looked at soon enough. */
    private static final long MAX_SLEEP_NANOS = TimeUnit.SECONDS.toNanos(1);

    private HandshakeDeadlines() {
    }

    /** Milliseconds to select for: until just past the earliest deadline of a {@code type} attachment, at most a second. */
    public static <T> long selectMillis(Selector selector, Class<T> type, ToLongFunction<T> deadline) {
        long now = System.nanoTime();
        long next = now + MAX_SLEEP_NANOS;
        for (SelectionKey key : selector.keys()) {
            if (type.isInstance(key.attachment())) {
                long due = deadline.applyAsLong(type.cast(key.attachment()));
                if (due - next < 0) {
                    next = due;
                }
            }
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(next - now) + 1);
    }

    /** Hands every {@code type} attachment of a valid key whose deadline has passed to {@code expired}. */
    public static <T> void expire(Selector selector, Class<T> type, ToLongFunction<T> deadline, Consumer<T> expired) {
        long now = System.nanoTime();
        for (SelectionKey key : selector.keys()) {
            if (key.isValid() && type.isInstance(key.attachment())) {
                T handshake = type.cast(key.attachment());
                if (deadline.applyAsLong(handshake) - now <= 0) {
                    expired.accept(handshake);
                }
            }
        }
    }
}
