package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.spi.CallHeaders;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * A message read from the wire, its payload still encoded; {@code remainingNanos} is the time its
 * sender had left when it sent it ({@link FrameCodec#DEADLINE}; 0: no deadline). The buffers are the message's own
 * (copied out of the transport's buffers), so it may be decoded on any thread, at any time.
 */
public record InboundMessage(MessageKind kind, long id, CallHeaders headers, ByteBuffer inBand,
                             List<ByteBuffer> outOfBand, int flags, long remainingNanos) {
    /** Without flags. */
    public InboundMessage(MessageKind kind, long id, CallHeaders headers, ByteBuffer inBand, List<ByteBuffer> outOfBand) {
        this(kind, id, headers, inBand, outOfBand, 0, 0);
    }

    /** Without a deadline. */
    public InboundMessage(MessageKind kind, long id, CallHeaders headers, ByteBuffer inBand, List<ByteBuffer> outOfBand,
                          int flags) {
        this(kind, id, headers, inBand, outOfBand, flags, 0);
    }

    /** Whether the sender flagged this message {@link FrameCodec#FLAG_LONE}. */
    public boolean lone() {
        return (flags & FrameCodec.FLAG_LONE) != 0;
    }

    /** Bytes of payload, for metrics and logs. */
    public long payloadBytes() {
        long total = inBand.remaining();
        for (ByteBuffer buffer : outOfBand) {
            total += buffer.remaining();
        }
        return total;
    }
}
