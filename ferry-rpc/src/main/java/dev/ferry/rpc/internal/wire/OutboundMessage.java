package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.spi.CallHeaders;

/**
 * A message ready for the wire: its payload is already encoded. A CALL's {@code deadline} (as
 * {@link System#nanoTime()}; 0: none) travels as the time left when the frame is encoded
 * ({@link FrameCodec#DEADLINE}), since clocks differ between machines.
 */
public record OutboundMessage(MessageKind kind, long id, CallHeaders headers, EncodedPayload payload, long deadline) {
    /** Without a deadline. */
    public OutboundMessage(MessageKind kind, long id, CallHeaders headers, EncodedPayload payload) {
        this(kind, id, headers, payload, 0);
    }
}
