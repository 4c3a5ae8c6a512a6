package dev.ferry.rpc.internal.faults;

import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.OutboundMessage;

/**
 * What fault injection needs to know of the agent's messages and channels, which the transport
 * below it cannot tell: the kind of a message, and who is at the other end of a channel. The agent
 * implements it. Thread-safe.
 */
public interface MessageClassifier {
    /** The kind of {@code message}, about to be sent; null for a message never faulted (a handshake). */
    MessageType typeOf(OutboundMessage message);

    /**
     * The kind of the answer to {@code call}, which arrived: {@link MessageType#RESPONSE} for the
     * program's calls, {@link MessageType#CONTROL} for Ferry's own.
     */
    MessageType answerTypeOf(InboundMessage call);

    /** The name of the worker at the other end of {@code channel}; null while it is not known. */
    String peerOf(PeerChannel channel);
}
