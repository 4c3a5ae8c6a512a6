package dev.ferry.rpc.internal.faults;

import dev.ferry.rpc.FaultInjection;
import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The fault decisions of one channel, without sockets: which messages fail, which wait, and that
 * waiting keeps the {@link Delivery} contract (an ordered message is never overtaken and never
 * overtakes). Message ids stand for kinds: ids below 100 are calls, from 100 fetches, from 200
 * answers.
 */
class FaultyChannelTest {
    private static final Duration DELAY = Duration.ofMillis(150);

    private final Recording inner = new Recording();
    private Faults faults;

    @AfterEach
    void close() {
        if (faults != null) {
            faults.close();
        }
    }

    private FaultyChannel channel(FaultInjection injection, String peer) {
        faults = new Faults(injection, new ById(peer), Thread::new);
        faults.arm();
        return new FaultyChannel(inner, faults);
    }

    private static OutboundMessage message(long id) {
        MessageKind kind = id >= 200 ? MessageKind.REPLY : MessageKind.CALL;
        return new OutboundMessage(kind, id, CallHeaders.empty(), new EncodedPayload(new byte[1], List.of()));
    }

    @Test
    void theFirstSendsOfAKindFailAtOnceAndTheRestPass() {
        FaultyChannel channel = channel(FaultInjection.builder().failSends(2, MessageType.CALL).build(), "worker1");
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (long id = 1; id <= 3; id++) {
            channel.send(message(id), Delivery.UNORDERED, failures::add);
        }
        channel.send(message(100), Delivery.UNORDERED, failures::add); // another kind: not counted
        assertThat(failures).hasSize(2).allSatisfy(failure -> assertThat(((RpcException) failure).code())
                .isEqualTo(RpcException.Code.UNAVAILABLE));
        assertThat(failures.get(1)).hasMessageContaining("failed send 2 of 2").hasMessageContaining("worker1");
        assertThat(inner.sent).containsExactly(3L, 100L);
    }

    @Test
    void anUnorderedMessageMayOvertakeADelayedUnorderedOne() {
        FaultyChannel channel = channel(FaultInjection.builder().delay(DELAY, MessageType.RREF_FETCH_CALL).build(), "w");
        channel.send(message(100), Delivery.UNORDERED, failure -> { });
        channel.send(message(1), Delivery.UNORDERED, failure -> { });
        assertThat(inner.sent).containsExactly(1L);
        await().atMost(Duration.ofSeconds(5)).until(() -> inner.sent.size() == 2);
        assertThat(inner.sent).containsExactly(1L, 100L);
    }

    @Test
    void nothingOvertakesADelayedOrderedMessageAndAnOrderedOneOvertakesNothing() {
        FaultyChannel channel = channel(FaultInjection.builder().delay(DELAY, MessageType.RREF_FETCH_CALL).build(), "w");
        channel.send(message(100), Delivery.ORDERED, failure -> { });
        channel.send(message(1), Delivery.UNORDERED, failure -> { });
        channel.send(message(101), Delivery.UNORDERED, failure -> { });
        channel.send(message(2), Delivery.ORDERED, failure -> { });
        assertThat(inner.sent).isEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> inner.sent.size() == 4);
        assertThat(inner.sent).containsExactly(100L, 1L, 101L, 2L);

        channel.send(message(102), Delivery.UNORDERED, failure -> { });
        channel.send(message(3), Delivery.ORDERED, failure -> { }); // waits for the unordered one before it
        assertThat(inner.sent).hasSize(4);
        await().atMost(Duration.ofSeconds(5)).until(() -> inner.sent.size() == 6);
        assertThat(inner.sent).endsWith(102L, 3L);
    }

    @Test
    void answersMeetTheFaultsOfTheirKind() {
        FaultyChannel channel = channel(FaultInjection.builder().failSends(1, MessageType.RESPONSE).build(), "w");
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        channel.responder(channel, MessageType.RESPONSE).respond(message(200), Delivery.UNORDERED, failures::add);
        channel.responder(channel, MessageType.CONTROL).respond(message(201), Delivery.UNORDERED, failures::add);
        channel.responder(channel, MessageType.RESPONSE).respond(message(202), Delivery.UNORDERED, failures::add);
        assertThat(failures).hasSize(1);
        assertThat(inner.sent).containsExactly(201L, 202L);
    }

    @Test
    void aCutOffPeersChannelClosesOnItsFirstCallButAnswersStillGo() {
        FaultyChannel channel = channel(FaultInjection.builder().failConnectionsTo("worker2").build(), "worker2");
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        channel.responder(channel, MessageType.CONTROL).respond(message(200), Delivery.ORDERED, failures::add);
        channel.send(message(1), Delivery.UNORDERED, failures::add);
        assertThat(inner.sent).containsExactly(200L);
        assertThat(inner.aborted).isInstanceOf(RpcException.class).hasMessageContaining("worker2");
        assertThat(failures).singleElement().isSameAs(inner.aborted);
    }

    @Test
    void whatWaitsIsSentBeforeAGracefulCloseAndFailedByAnAbortiveOne() {
        FaultyChannel channel = channel(FaultInjection.builder().delay(DELAY, MessageType.CALL).build(), "w");
        channel.send(message(1), Delivery.ORDERED, failure -> { });
        channel.close();
        assertThat(inner.closed).isFalse();
        await().atMost(Duration.ofSeconds(5)).until(() -> inner.closed);
        assertThat(inner.sent).containsExactly(1L);

        List<Throwable> failures = new CopyOnWriteArrayList<>();
        channel.send(message(2), Delivery.ORDERED, failures::add);
        RpcException cause = new RpcException(RpcException.Code.UNAVAILABLE, "gone");
        channel.abort(cause);
        await().atMost(Duration.ofSeconds(5)).until(() -> failures.size() == 1);
        assertThat(failures).containsExactly(cause);
        assertThat(inner.sent).containsExactly(1L);
    }

    /** Kinds by id (see the class comment); every channel's peer is {@code peer}. */
    private record ById(String peer) implements MessageClassifier {
        @Override
        public MessageType typeOf(OutboundMessage message) {
            long id = message.id();
            return id >= 200 ? MessageType.RESPONSE : id >= 100 ? MessageType.RREF_FETCH_CALL : MessageType.CALL;
        }

        @Override
        public MessageType answerTypeOf(InboundMessage call) {
            return MessageType.RESPONSE;
        }

        @Override
        public String peerOf(PeerChannel channel) {
            return peer;
        }
    }

    /** Records what reaches the real channel. */
    private static final class Recording implements PeerChannel {
        final List<Long> sent = new CopyOnWriteArrayList<>();
        volatile boolean closed;
        volatile Throwable aborted;

        @Override
        public void send(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure) {
            sent.add(message.id());
        }

        @Override
        public boolean isActive() {
            return !closed && aborted == null;
        }

        @Override
        public void close() {
            closed = true;
        }

        @Override
        public void abort(Throwable cause) {
            aborted = cause;
        }

        @Override
        public String remoteAddress() {
            return "test";
        }

        @Override
        public Object attachment() {
            return null;
        }

        @Override
        public void attach(Object value) {
        }
    }
}
