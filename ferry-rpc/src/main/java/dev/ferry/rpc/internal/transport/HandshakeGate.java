package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The accepted connections still in their handshake (TLS, the token's exchange, then the peer's
 * HELLO): each must finish within {@code handshakeTimeout} or is closed, and at most
 * {@code maxPendingHandshakes} are in it at once: at that many the listeners stop accepting (further
 * connections wait in the kernel's backlog, costing this process nothing) until one ends. A listener
 * may already be in the middle of a batch of accepts when it is told to stop; a connection accepted
 * beyond the bound is refused ({@link #begin} returns null) and closed by the caller at once, so the
 * bound holds exactly. None holds a thread: the deadline runs on the channel's event loop.
 *
 * <p>This class is thread-safe.
 */
final class HandshakeGate {
    private final ConnectionLimits limits;
    private final Collection<Channel> listeners;
    private int pending;
    private boolean accepting = true;

    /** {@code listeners}: the server channels that accept (read when the gate opens or closes). */
    HandshakeGate(ConnectionLimits limits, Collection<Channel> listeners) {
        this.limits = limits;
        this.listeners = listeners;
    }

    /** Accepted connections in their handshake now. */
    synchronized int pending() {
        return pending;
    }

    /**
     * {@code channel}, just accepted, starts its handshake; the result ends it (idempotent, on any
     * thread). Closing the channel ends it too. Null if {@code maxPendingHandshakes} are in their
     * handshake already: the caller closes {@code channel} without serving it.
     */
    Runnable begin(Channel channel) {
        if (!admit()) {
            return null;
        }
        AtomicBoolean over = new AtomicBoolean();
        ScheduledFuture<?> deadline = channel.eventLoop().schedule(() -> {
            // Still authenticating: the token's handshake has the same deadline and closes it, saying why.
            if (!over.get() && channel.pipeline().get(AuthHandshake.class) == null) {
                channel.pipeline().fireExceptionCaught(new RpcException(RpcException.Code.PROTOCOL_ERROR,
                        "no handshake within " + limits.handshakeTimeout().toMillis() + " ms"));
            }
        }, limits.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
        Runnable end = () -> {
            if (over.compareAndSet(false, true)) {
                deadline.cancel(false);
                changed(-1);
            }
        };
        channel.closeFuture().addListener(closed -> end.run());
        return end;
    }

    private synchronized boolean admit() {
        if (pending >= limits.maxPendingHandshakes()) {
            return false;
        }
        changed(1);
        return true;
    }

    /** One serialized place for the count and the listeners' state, so the last change always wins. */
    private synchronized void changed(int delta) {
        pending += delta;
        boolean accept = pending < limits.maxPendingHandshakes();
        if (accept != accepting) {
            accepting = accept;
            for (Channel listener : listeners) {
                listener.config().setAutoRead(accept);
            }
        }
    }
}
