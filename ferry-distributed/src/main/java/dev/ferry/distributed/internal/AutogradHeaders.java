package dev.ferry.distributed.internal;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The autograd metadata a message carries in its header when it is sent inside a distributed
 * autograd context (PyTorch's {@code AutogradMetadata} plus {@code fromWorkerId}): the context id,
 * the message's own autograd id, and the sending worker.
 */
public final class AutogradHeaders {
    static final HeaderKey<Long> CONTEXT_ID = HeaderKey.ofLong("ferry-autograd-context");
    static final HeaderKey<Long> MESSAGE_ID = HeaderKey.ofLong("ferry-autograd-message");
    static final HeaderKey<Long> FROM_WORKER = HeaderKey.ofLong("ferry-autograd-from");

    /**
     * Message ids are unique per sending worker (its id in the top 16 bits, as PyTorch lays them
     * out); one counter per process serves every agent in it.
     */
    private static final AtomicLong NEXT_MESSAGE = new AtomicLong();

    private AutogradHeaders() {
    }

    /** {@code headers} marked as a message of {@code contextId} sent by worker {@code from}. */
    static CallHeaders mark(CallHeaders headers, long contextId, int from) {
        long messageId = ((long) from << 48) | (NEXT_MESSAGE.getAndIncrement() & ContextContainer.COUNTER_MASK);
        return headers.with(CONTEXT_ID, contextId).with(MESSAGE_ID, messageId).with(FROM_WORKER, (long) from);
    }

    /** The context id a message carries, or null. */
    static Long contextId(CallHeaders headers) {
        return headers == null ? null : headers.get(CONTEXT_ID);
    }
}
