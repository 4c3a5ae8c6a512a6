package dev.ferry.distributed.internal;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The autograd metadata a message carries in its header when it is sent inside a distributed
 * autograd context (PyTorch's {@code AutogradMetadata} plus {@code fromWorkerId}): the context id,
 * the message's own autograd id, and the sending worker; and the incarnation of the context's
 * creator, since a restarted worker's context ids start over.
 */
public final class AutogradHeaders {
    static final HeaderKey<Long> CONTEXT_ID = HeaderKey.ofLong("ferry-autograd-context");
    static final HeaderKey<Long> MESSAGE_ID = HeaderKey.ofLong("ferry-autograd-message");
    static final HeaderKey<Long> FROM_WORKER = HeaderKey.ofLong("ferry-autograd-from");
    static final HeaderKey<Long> CREATOR_INCARNATION = HeaderKey.ofLong("ferry-autograd-incarnation");

    /**
     * Message ids are unique per sending worker (its id in the top 16 bits, as PyTorch lays them
     * out); one counter per process serves every agent in it.
     */
    private static final AtomicLong NEXT_MESSAGE = new AtomicLong();

    private AutogradHeaders() {
    }

    /** {@code headers} marked as a message of {@code context} sent by worker {@code from}. */
    static CallHeaders mark(CallHeaders headers, ContextKey context, int from) {
        long messageId = ((long) from << 48) | (NEXT_MESSAGE.getAndIncrement() & ContextContainer.COUNTER_MASK);
        return headers.with(CONTEXT_ID, context.id()).with(CREATOR_INCARNATION, context.creatorIncarnation())
                .with(MESSAGE_ID, messageId).with(FROM_WORKER, (long) from);
    }

    /** The context a message is of, or null (also when a part of its marks is missing). */
    static ContextKey context(CallHeaders headers) {
        if (headers == null) {
            return null;
        }
        Long id = headers.get(CONTEXT_ID);
        Long incarnation = id == null ? null : headers.get(CREATOR_INCARNATION);
        return incarnation == null ? null : new ContextKey(id, incarnation);
    }
}
