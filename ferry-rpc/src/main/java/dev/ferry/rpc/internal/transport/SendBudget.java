package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.text.Durations;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Bytes a connection has accepted for sending and not yet handed on, against a limit: senders on
 * ordinary threads wait for room (bounded), so a slow receiver cannot make them buffer without
 * bound. Both transports use one: {@link OutboundQueue} (bytes not yet written to the socket) and
 * {@link LocalConnection} (bytes the peer has not taken in yet).
 *
 * <p>This class is thread-safe.
 */
final class SendBudget {
    private final long limitBytes;
    private final AtomicLong bytes = new AtomicLong();
    private final Object room = new Object();
    private volatile int waiters; // written under room

    SendBudget(long limitBytes) {
        this.limitBytes = limitBytes;
    }

    long limitBytes() {
        return limitBytes;
    }

    long bytes() {
        return bytes.get();
    }

    void add(long delta) {
        bytes.addAndGet(delta);
    }

    /**
     * Waits while more than the limit is used and {@code open} holds; gives up after
     * {@code timeout} with {@link RpcException.Code#TIMEOUT} naming {@code peer}.
     */
    void awaitRoom(Duration timeout, BooleanSupplier open, Object peer) {
        if (bytes.get() <= limitBytes) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (room) {
            waiters++;
            try {
                while (bytes.get() > limitBytes && open.getAsBoolean()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new RpcException(RpcException.Code.TIMEOUT, "the send queue to " + peer
                                + " stayed above " + limitBytes + " bytes for " + Durations.describe(timeout)
                                + " (the peer reads too slowly)");
                    }
                    room.wait(Math.max(1, left / 1_000_000));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RpcException(RpcException.Code.INTERNAL, "interrupted while waiting to send", e);
            } finally {
                waiters--;
            }
        }
    }

    /** Wakes waiting senders if there is room again, or always with {@code force} (the connection failed or closed). */
    void signal(boolean force) {
        if (waiters > 0 && (force || bytes.get() <= limitBytes)) {
            synchronized (room) {
                room.notifyAll();
            }
        }
    }
}
