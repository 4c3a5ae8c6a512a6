package dev.ferry.distributed.internal;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.MessageContext;
import dev.ferry.tensor.Tensor;

/**
 * What the tensor codec does for distributed autograd, for messages whose header carries an
 * autograd context: each tensor requiring grad that is sent becomes an input of the message's send
 * function, and each one that arrives an output of the message's receive function
 * ({@link RecvRpcBackward}), so gradients can flow back along the messages.
 */
final class AutogradRecording {
    private AutogradRecording() {
    }

    /** Records {@code sent} in its message's send function, if the message is in a context. */
    static void sent(Tensor sent) {
        if (!sent.requiresGrad()) {
            return;
        }
        MessageContext message = MessageContext.current();
        ContextKey key = message == null ? null : AutogradHeaders.context(message.headers());
        ContextState context = key == null ? null : ContextContainer.of(message.agent()).getOrCreate(key);
        if (context != null) {
            context.recordSend(message.headers().get(AutogradHeaders.MESSAGE_ID), sent.gradientEdge());
        }
    }

    /** {@code received}, with its message's receive function as history if the message is in a context. */
    static Tensor received(Tensor received) {
        if (!received.requiresGrad()) {
            return received;
        }
        MessageContext message = MessageContext.current();
        ContextKey key = message == null ? null : AutogradHeaders.context(message.headers());
        if (key == null) {
            return received;
        }
        CallHeaders headers = message.headers();
        ContextState context = ContextContainer.of(message.agent()).getOrCreate(key);
        if (context == null) {
            return received; // its context ended: nothing will run a backward pass through it
        }
        long from = headers.get(AutogradHeaders.FROM_WORKER);
        return context.recvFunction(headers.get(AutogradHeaders.MESSAGE_ID), (int) from).attach(received);
    }
}
