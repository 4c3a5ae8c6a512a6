package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.internal.faults.MessageClassifier;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.serial.FunctionRefs;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.MessageKinds;

/**
 * Tells fault injection the {@link MessageType} of each message the agent sends, from what the
 * agent put in it: answers are {@link MessageType#RESPONSE}, but those to Ferry's own calls (marked
 * so), which are {@link MessageType#CONTROL}; a call creating an RRef is a
 * {@link MessageType#REMOTE_CALL}; an application's call is a {@link MessageType#CALL}, but a
 * library's call that names its kind ({@link MessageKinds}) is of that kind; among
 * Ferry's own calls the function called (looked up among the pending calls by id) tells the RRef
 * protocol's messages from the rest ({@link MessageType#CONTROL}). A delete riding on another call
 * is that call's kind; one travelling on its own (an acknowledgement carrying deletes) is a
 * {@link MessageType#RREF_USER_DELETE}. Used only with fault injection.
 *
 * <p>Stateless apart from the agent's pending calls; thread-safe.
 */
final class MessageTypes implements MessageClassifier {
    private static final FunctionRef FORK_REQUEST = FunctionRefs.of(AgentRRefHost.FORK_REQUEST);
    private static final FunctionRef CHILD_ACCEPT = FunctionRefs.of(AgentRRefHost.CHILD_ACCEPT);
    private static final FunctionRef FETCH = FunctionRefs.of(AgentRRefHost.FETCH);

    private final PendingCalls pending;

    MessageTypes(PendingCalls pending) {
        this.pending = pending;
    }

    @Override
    public MessageType typeOf(OutboundMessage message) {
        return switch (message.kind()) {
            case HELLO -> null;
            case REPLY, ERROR -> MessageType.RESPONSE;
            case CALL -> ofCall(message);
        };
    }

    private MessageType ofCall(OutboundMessage call) {
        CallHeaders headers = call.headers();
        if (headers.contains(AgentRRefHost.CREATE)) {
            return MessageType.REMOTE_CALL;
        }
        if (!headers.contains(SystemCalls.MARKER)) {
            return MessageKinds.of(headers);
        }
        PendingCall sent = pending.get(call.id());
        if (sent == null) {
            return MessageType.CONTROL; // ended already: it timed out before it left
        }
        FunctionRef function = sent.function;
        if (same(function, FORK_REQUEST)) {
            return MessageType.RREF_FORK_REQUEST;
        }
        if (same(function, CHILD_ACCEPT)) {
            return MessageType.RREF_CHILD_ACCEPT;
        }
        if (same(function, FETCH)) {
            return MessageType.RREF_FETCH_CALL;
        }
        return headers.contains(UserDeletes.HEADER) ? MessageType.RREF_USER_DELETE : MessageType.CONTROL;
    }

    @Override
    public MessageType answerTypeOf(InboundMessage call) {
        return call.headers().contains(SystemCalls.MARKER) ? MessageType.CONTROL : MessageType.RESPONSE;
    }

    /** The same method, however the reference travels (with a handle, with captured values). */
    private static boolean same(FunctionRef a, FunctionRef b) {
        return a.methodName().equals(b.methodName()) && a.className().equals(b.className())
                && a.descriptor().equals(b.descriptor());
    }

    @Override
    public String peerOf(PeerChannel channel) {
        PeerLink link = PeerLink.of(channel);
        return link == null ? null : link.worker.name();
    }
}
