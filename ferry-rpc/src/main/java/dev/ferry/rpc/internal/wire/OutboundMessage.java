package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.spi.CallHeaders;

/** A message ready for the wire: its payload is already encoded. */
public record OutboundMessage(MessageKind kind, long id, CallHeaders headers, EncodedPayload payload) {
}
