package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.SplittableRandom;

/** Messages and payloads for transport tests. */
final class TestMessages {
    private TestMessages() {
    }

    /** A call with {@code body} in band, no headers. */
    static OutboundMessage message(long id, byte[] body) {
        return new OutboundMessage(MessageKind.CALL, id, CallHeaders.empty(), new EncodedPayload(body, List.of()));
    }

    /**
     * The small first message every connection starts with (the agent's HELLO): until it has
     * arrived, an accepted connection takes only small frames.
     */
    static OutboundMessage hello() {
        return new OutboundMessage(MessageKind.HELLO, 0, CallHeaders.empty(), new EncodedPayload(new byte[] {1}, List.of()));
    }

    /** {@code size} pseudo-random bytes, the same for the same size. */
    static byte[] randomBytes(int size) {
        byte[] bytes = new byte[size];
        SplittableRandom random = new SplittableRandom(size);
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) random.nextInt();
        }
        return bytes;
    }

    /** The remaining bytes of {@code buffer}, which is left as it was. */
    static byte[] bytesOf(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
