package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.transport.Lanes;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;
import org.apache.fory.serializer.BufferObject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which route each kind of message takes, from the two places that decide: the agent's delivery
 * contract ({@link Deliveries}: ordered or not) and the transport's rules for lanes
 * ({@link Lanes}); a frame over {@link Chunks#CHUNK_BYTES} travels in chunks, interleaved with
 * smaller messages. An {@code rpcSync} whose request a lane may carry takes an idle lane; every
 * other message takes the connection.
 */
class RoutesTest {
    private static final CallHeaders NONE = CallHeaders.empty();
    private static final HeaderKey<String> TRACE = HeaderKey.ofString("test-trace");

    private static OutboundMessage call(int bytes, CallHeaders headers) {
        return new OutboundMessage(MessageKind.CALL, 1, headers, new EncodedPayload(new byte[bytes], List.of()));
    }

    private static OutboundMessage withBuffer(int bytes) {
        BufferObject buffer = new org.apache.fory.serializer.BufferObject() {
            @Override
            public int totalBytes() {
                return bytes;
            }

            @Override
            public void writeTo(org.apache.fory.memory.MemoryBuffer target) {
            }

            @Override
            public org.apache.fory.memory.MemoryBuffer toBuffer() {
                return org.apache.fory.memory.MemoryBuffer.newHeapBuffer(bytes);
            }
        };
        return new OutboundMessage(MessageKind.CALL, 1, NONE, new EncodedPayload(new byte[10], List.of(buffer)));
    }

    /** The route of an {@code rpcSync}'s request, decided as the agent and the transport decide it. */
    private static String syncCall(OutboundMessage call, boolean system, boolean interceptorContext) {
        Delivery delivery = Deliveries.ofCall(system, interceptorContext, call.headers(), true);
        return (delivery.ordered() ? "ordered" : "unordered") + ", "
                + (Lanes.carriesRequest(call, delivery) ? "lane" : "connection");
    }

    private static String answer(OutboundMessage answer) {
        Delivery delivery = Deliveries.ofAnswer(answer.headers(), true);
        return (delivery.ordered() ? "ordered" : "unordered") + ", "
                + (Lanes.carriesAnswer(answer, delivery) ? "lane" : "connection");
    }

    @Test
    void callsWaitedForAlone() {
        assertThat(syncCall(call(100, NONE), false, false)).as("a plain call").isEqualTo("unordered, lane");
        assertThat(syncCall(call(100, NONE.with(AgentRRefHost.RECEIVER, "1")), false, false))
                .as("a call on an RRef's value").isEqualTo("unordered, lane");
        assertThat(syncCall(call(100, NONE.with(AgentRRefHost.CREATE, new byte[24])), false, false))
                .as("remote(): it creates an RRef").isEqualTo("ordered, connection");
        assertThat(syncCall(call(100, NONE.with(UserDeletes.HEADER, new byte[8])), false, false))
                .as("a call RRef deletes ride on").isEqualTo("ordered, connection");
        assertThat(syncCall(call(100, NONE.with(TRACE, "span")), false, true))
                .as("a call with interceptors' context").isEqualTo("ordered, connection");
        assertThat(syncCall(call(100, NONE.with(SystemCalls.MARKER, "1")), true, false))
                .as("one of Ferry's own calls").isEqualTo("ordered, connection");
        assertThat(syncCall(call(Lanes.MAX_REQUEST_BYTES + 1, NONE), false, false))
                .as("a request over 16 KiB").isEqualTo("unordered, connection");
        assertThat(syncCall(withBuffer(1 << 20), false, false))
                .as("a request with an out-of-band buffer").isEqualTo("unordered, connection");
    }

    @Test
    void aTransportThreadNeverWaitsOnALane() throws Exception {
        CompletableFuture<String> route = new CompletableFuture<>();
        NonBlockingThreads.factory("routes-test").newThread(() -> route.complete(syncCall(call(100, NONE), false, false)))
                .start();
        assertThat(route.get()).isEqualTo("unordered, connection");
    }

    @Test
    void answers() {
        OutboundMessage small = new OutboundMessage(MessageKind.REPLY, 1, NONE, new EncodedPayload(new byte[100], List.of()));
        assertThat(answer(small)).as("a plain answer").isEqualTo("unordered, lane");
        OutboundMessage large = new OutboundMessage(MessageKind.REPLY, 1, NONE,
                new EncodedPayload(new byte[Lanes.MAX_ANSWER_BYTES + 1], List.of()));
        assertThat(answer(large)).as("over 256 KiB: diverted").isEqualTo("unordered, connection");
        OutboundMessage traced = new OutboundMessage(MessageKind.REPLY, 1, NONE.with(TRACE, "span"),
                new EncodedPayload(new byte[100], List.of()));
        assertThat(answer(traced)).as("with interceptors' context: diverted").isEqualTo("ordered, connection");
        OutboundMessage error = new OutboundMessage(MessageKind.ERROR, 1, NONE, new EncodedPayload(new byte[100], List.of()));
        assertThat(answer(error)).as("an error").isEqualTo("unordered, lane");
    }

    @Test
    void largeFramesTravelInChunksEverythingElseWhole() {
        assertThat(Chunks.isLarge(Chunks.CHUNK_BYTES)).isFalse();
        assertThat(Chunks.isLarge(Chunks.CHUNK_BYTES + 1L)).isTrue();
    }
}
