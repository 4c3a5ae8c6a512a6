package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.InboundMessage;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** What a transport reported, in order, for tests; every wait is bounded (30 s). */
final class RecordingListener implements TransportListener {
    final BlockingQueue<Connection> accepted = new LinkedBlockingQueue<>();
    final BlockingQueue<InboundMessage> messages = new LinkedBlockingQueue<>();
    /** Causes of closes; a close without one is recorded as an {@link IllegalStateException}. */
    final BlockingQueue<Throwable> closed = new LinkedBlockingQueue<>();

    @Override
    public void onAccepted(Connection connection) {
        accepted.add(connection);
    }

    @Override
    public void onMessage(Connection connection, InboundMessage message) {
        messages.add(message);
    }

    @Override
    public void onClosed(Connection connection, Throwable cause) {
        closed.add(cause != null ? cause : new IllegalStateException("closed without a cause"));
    }

    Connection accepted() throws InterruptedException {
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
