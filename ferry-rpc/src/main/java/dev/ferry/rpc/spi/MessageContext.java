package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.internal.serial.ObjectCodec;

/**
 * The message whose values a serializer is encoding or decoding on this thread: which agent, and
 * the message's header entries. This is the hook that lets a {@link SerializationExtension} act on
 * the values a call carries, the way distributed autograd records a send function for each tensor
 * that requires grad in a request sent inside an autograd context (whose id is in the header),
 * and a receive function for each such tensor that arrives.
 *
 * <p>For a request, the headers are those the {@link CallInterceptor}s returned from
 * {@code beforeSendRequest}; for a response, those from {@code beforeSendResponse}; on the receiving
 * side, those that arrived.
 *
 * <pre>{@code
 * public void write(WriteContext write, Tensor value) {
 *     MessageContext message = MessageContext.current();
 *     Long context = message == null ? null : message.headers().get(AUTOGRAD_CONTEXT);
 *     ...
 * }
 * }</pre>
 *
 * @param agent   the agent sending or receiving the message
 * @param headers the message's header entries
 */
public record MessageContext(RpcAgent agent, CallHeaders headers) {

    /**
     * The message being encoded or decoded on this thread, or null outside the encoding and
     * decoding of a call's arguments or result (e.g. in values encoded by the application itself).
     */
    public static MessageContext current() {
        return ObjectCodec.currentMessage();
    }
}
