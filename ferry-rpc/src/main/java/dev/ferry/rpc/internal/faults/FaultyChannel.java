package dev.ferry.rpc.internal.faults;

import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.transport.Responder;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A channel whose messages meet their faults ({@link Faults}) before the channel it wraps chooses
 * their route: every send, exchange and answer of the agent to one peer passes {@link #pass}, so
 * lanes, direct writes, chunks, shared memory and in-process channels see the same faults.
 *
 * <p>Delayed messages wait here, in the order they were sent, and keep the {@link Delivery}
 * contract: a message sent after an ordered one still waiting, or an ordered message sent after any
 * still waiting, waits behind it; an unordered message may go ahead of unordered ones. What waits
 * is written by the faults' thread, in order, under this channel's lock (so nothing sent meanwhile
 * can slip in between), when its time comes.
 *
 * <p>This class is thread-safe.
 */
final class FaultyChannel implements PeerChannel {
    private final PeerChannel inner;
    private final Faults faults;
    private final ArrayDeque<Held> held = new ArrayDeque<>(); // guarded by this
    private int orderedHeld; // guarded by this
    private boolean closeWhenSent; // guarded by this

    FaultyChannel(PeerChannel inner, Faults faults) {
        this.inner = inner;
        this.faults = faults;
    }

    PeerChannel inner() {
        return inner;
    }

    /** The answer to one call that came over {@code route} (this channel's, or a lane's), of kind {@code type}. */
    Responder responder(Responder route, MessageType type) {
        return new Answers(route, type);
    }

    @Override
    public void send(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure) {
        pass(message, delivery, onFailure, faults.typeOf(message), inner::send, inner::send);
    }

    @Override
    public void exchange(OutboundMessage call, Delivery delivery, long deadlineNanos, Consumer<Throwable> onFailure) {
        // Held, it becomes a send (its sender is no longer there to read a lane): the answer then
        // comes over the connection, as the contract allows.
        pass(call, delivery, onFailure, faults.typeOf(call), (m, d, f) -> inner.exchange(m, d, deadlineNanos, f),
                inner::send);
    }

    @Override
    public void respond(OutboundMessage answer, Delivery delivery, Consumer<Throwable> onFailure) {
        pass(answer, delivery, onFailure, faults.typeOf(answer), inner::respond, inner::respond);
    }

    /**
     * The one place a message meets its faults: a cut-off peer's channel closes, a message that is
     * to fail is not sent and its failure is reported on the faults' thread, a delayed one (or one
     * that must not overtake one waiting) waits and later leaves by {@code afterWait}; the rest
     * leaves by {@code now} at once.
     */
    private void pass(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure, MessageType type,
                      Route now, Route afterWait) {
        if (!faults.armed()) {
            now.go(message, delivery, onFailure);
            return;
        }
        // A failure is reported at once, as PyTorch's faulty agent fails the send: the sender
        // learns of it before it returns (a remote() returns an RRef that knows). Answers are
        // not cut: a cut-off peer's calls are dropped as they arrive, so an answer can only be to
        // a call of the group's initialization, which a worker that has initialized first may
        // still be answering.
        RpcException cut = message.kind() == MessageKind.CALL ? faults.cutOff(this) : null;
        if (cut != null) {
            abort(cut);
            onFailure.accept(cut);
            return;
        }
        RpcException failure = type == null ? null : faults.failure(type, message, this);
        if (failure != null) {
            onFailure.accept(failure);
            return;
        }
        long delay = type == null ? 0 : faults.delayNanos(type);
        synchronized (this) {
            if (delay > 0 || (!held.isEmpty() && (delivery.ordered() || orderedHeld > 0))) {
                held.add(new Held(message, delivery, onFailure, afterWait, System.nanoTime() + delay));
                if (delivery.ordered()) {
                    orderedHeld++;
                }
                faults.schedule(this::sendDue, delay);
                return;
            }
        }
        now.go(message, delivery, onFailure);
    }

    /** On the faults' thread: sends, in order, what waited and is due; then closes if asked to. */
    private synchronized void sendDue() {
        while (!held.isEmpty()) {
            long wait = held.peek().due - System.nanoTime();
            if (wait > 0) {
                faults.schedule(this::sendDue, wait);
                return;
            }
            sendHead();
        }
        if (closeWhenSent) {
            inner.close();
        }
    }

    /** Caller holds the lock. */
    private void sendHead() {
        Held next = held.poll();
        if (next.delivery.ordered()) {
            orderedHeld--;
        }
        try {
            next.route.go(next.message, next.delivery, next.onFailure);
        } catch (RuntimeException e) {
            next.onFailure.accept(e); // its sender returned long ago: a failure to send now is a lost message
        }
    }

    /** Sends at once, in order, whatever still waits (the transport closes gracefully). */
    synchronized void sendHeld() {
        while (!held.isEmpty()) {
            sendHead();
        }
    }

    /** Fails whatever still waits with {@code cause} (the channel closed or aborted). */
    void failHeld(Throwable cause) {
        List<Held> dropped;
        synchronized (this) {
            dropped = new ArrayList<>(held);
            held.clear();
            orderedHeld = 0;
        }
        for (Held message : dropped) {
            faults.later(() -> message.onFailure.accept(cause));
        }
    }

    @Override
    public boolean isActive() {
        return inner.isActive();
    }

    @Override
    public void pauseReading(boolean paused) {
        inner.pauseReading(paused);
    }

    @Override
    public String kind() {
        return inner.kind();
    }

    /** Graceful: what waits is sent first, when its time comes, and the channel closes after it. */
    @Override
    public void close() {
        synchronized (this) {
            if (!held.isEmpty()) {
                closeWhenSent = true;
                return;
            }
        }
        inner.close();
    }

    @Override
    public void abort(Throwable cause) {
        failHeld(cause);
        inner.abort(cause);
    }

    @Override
    public String remoteAddress() {
        return inner.remoteAddress();
    }

    @Override
    public Object attachment() {
        return inner.attachment();
    }

    @Override
    public void attach(Object value) {
        inner.attach(value);
    }

    @Override
    public String toString() {
        return "faulty " + inner;
    }

    /** How a message leaves once it passed: the wrapped channel's send, exchange or responder. */
    @FunctionalInterface
    private interface Route {
        void go(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure);
    }

    private record Held(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure, Route route,
                        long due) {
    }

    /** The answer to one call, meeting its faults in order with the rest of the channel's messages. */
    private final class Answers implements Responder {
        private final Responder route;
        private final MessageType type;

        Answers(Responder route, MessageType type) {
            this.route = route;
            this.type = type;
        }

        @Override
        public void respond(OutboundMessage answer, Delivery delivery, Consumer<Throwable> onFailure) {
            pass(answer, delivery, onFailure, type, route::respond, route::respond);
        }

        @Override
        public boolean isActive() {
            return route.isActive();
        }
    }
}
