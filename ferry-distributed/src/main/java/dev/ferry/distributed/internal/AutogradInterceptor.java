package dev.ferry.distributed.internal;

import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.spi.MessageKinds;

/**
 * Carries the current distributed autograd context across calls: a request sent by a thread in a
 * context carries its id in the header (with a new autograd message id), the handler on the callee
 * runs in the same context, and its response carries it back. The tensors of those messages are
 * recorded by the tensor codec ({@link AutogradRecording}), which sees the headers. A release of a
 * context is marked {@link MessageType#AUTOGRAD_CLEANUP}, so that fault injection can tell it.
 *
 * <p>Installed on every agent by {@link java.util.ServiceLoader} when {@code ferry-distributed} is
 * on the class path; it does nothing for calls made outside a context.
 */
public final class AutogradInterceptor implements CallInterceptor {

    /** Public for {@link java.util.ServiceLoader}. */
    public AutogradInterceptor() {
    }

    @Override
    public CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
        if (GradientCalls.sendingRelease()) {
            return MessageKinds.mark(headers, MessageType.AUTOGRAD_CLEANUP);
        }
        ContextState context = CurrentContext.get();
        if (context == null || !context.container().agent().getWorkerInfo().equals(call.caller())
                || !context.knows(call.callee().id())) {
            return headers; // no context, another agent's, or one that left this worker: the call goes outside it
        }
        return AutogradHeaders.mark(headers, context.key(), call.caller().id());
    }

    @Override
    public Scope onHandlerStart(CallInfo call, CallHeaders headers) {
        ContextKey key = AutogradHeaders.context(headers);
        ContextState context = key == null ? null : ContextContainer.of(Rpc.current()).getOrCreate(key);
        if (context == null || !context.knows(call.caller().id())) {
            return Scope.NOOP; // none, or a call that came after its context ended: it runs outside it
        }
        return CurrentContext.bind(context);
    }

    @Override
    public CallHeaders beforeSendResponse(CallInfo call, Object result, CallHeaders requestHeaders,
                                          CallHeaders responseHeaders) {
        ContextKey context = AutogradHeaders.context(requestHeaders);
        return context == null ? responseHeaders : AutogradHeaders.mark(responseHeaders, context, call.callee().id());
    }
}
