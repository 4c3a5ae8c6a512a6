package dev.ferry.rpc.spi;

import dev.ferry.rpc.MessageType;

import java.util.Objects;
import java.util.Set;

/**
 * Lets a library's call say which {@link MessageType} it is, for {@link dev.ferry.rpc.FaultInjection}:
 * a call is a {@link MessageType#CALL} unless its headers name one of the kinds libraries may
 * claim ({@link MessageType#AUTOGRAD_CLEANUP}, ferry-distributed's release of an autograd context),
 * so that a test can fail or delay those messages alone, as PyTorch's faulty agent can. The entry
 * is read only by the sender's fault injection; a receiver ignores it, so a peer gains nothing by
 * setting it.
 *
 * <pre>{@code
 * headers = MessageKinds.mark(headers, MessageType.AUTOGRAD_CLEANUP);   // in CallInterceptor.beforeSendRequest
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class MessageKinds {
    /** The header entry naming the kind: the {@link MessageType}'s name. */
    static final HeaderKey<String> KIND = HeaderKey.ofString("ferry-message-kind");
    private static final Set<MessageType> CLAIMABLE = Set.of(MessageType.AUTOGRAD_CLEANUP);

    private MessageKinds() {
    }

    /**
     * {@code headers} with the entry saying the call is of kind {@code type}.
     *
     * @throws IllegalArgumentException for a kind a library may not claim (Ferry's own, the RRef protocol's)
     */
    public static CallHeaders mark(CallHeaders headers, MessageType type) {
        if (!CLAIMABLE.contains(Objects.requireNonNull(type, "type"))) {
            throw new IllegalArgumentException("a library's call may be of kind " + CLAIMABLE + ", not " + type);
        }
        return headers.with(KIND, type.name());
    }

    /** The kind of a call that is not one of Ferry's own: the one its headers name, else {@link MessageType#CALL}. */
    public static MessageType of(CallHeaders headers) {
        String kind = headers.get(KIND);
        if (kind != null) {
            for (MessageType type : CLAIMABLE) {
                if (type.name().equals(kind)) {
                    return type;
                }
            }
        }
        return MessageType.CALL;
    }
}
