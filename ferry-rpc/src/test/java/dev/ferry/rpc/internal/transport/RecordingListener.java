package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** What a transport reported, in order, for tests; every wait is bounded (30 s). */
final class RecordingListener implements TransportListener {
    final BlockingQueue<PeerChannel> accepted = new LinkedBlockingQueue<>();
    final BlockingQueue<InboundMessage> messages = new LinkedBlockingQueue<>();
    /** Causes of closes; a close without one is recorded as an {@link IllegalStateException}. */
    final BlockingQueue<Throwable> closed = new LinkedBlockingQueue<>();

    @Override
    public void onAccepted(PeerChannel connection) {
        accepted.add(connection);
    }

    /** Records every message but a HELLO, which only introduces a connection ({@link TestMessages#hello()}). */
    @Override
    public void onMessage(PeerChannel connection, InboundMessage message) {
        if (message.kind() != MessageKind.HELLO) {
            messages.add(message);
        }
    }

    /** Calls are recorded with the other messages; tests answer them on the channel. */
    @Override
    public void onCall(PeerChannel connection, InboundMessage message, Responder responder) {
        messages.add(message);
    }

    @Override
    public void onClosed(PeerChannel connection, Throwable cause) {
        closed.add(cause != null ? cause : new IllegalStateException("closed without a cause"));
    }

    PeerChannel accepted() throws InterruptedException {
        return take(accepted, "an accepted connection");
    }

    InboundMessage message() throws InterruptedException {
        return take(messages, "a message");
    }

    Throwable closedCause() throws InterruptedException {
        return take(closed, "a close");
    }

    private static <T> T take(BlockingQueue<T> queue, String what) throws InterruptedException {
        T value = queue.poll(30, TimeUnit.SECONDS);
        assertThat(value).as(what + " within 30 s").isNotNull();
        return value;
    }
}
