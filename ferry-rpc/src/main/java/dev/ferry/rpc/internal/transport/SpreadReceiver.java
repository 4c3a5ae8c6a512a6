package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.BulkUnits;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * The receiving side of messages spread over a main connection and its bulk connections
 * ({@link BulkUnits}): one buffer per message, from the transport's {@link LargeBufferPool}, that
 * the connections' event loops fill at the chunks' offsets, each its own ranges; the thread that
 * brings the last byte decodes the frame and hands it to the main connection, which delivers it.
 *
 * <p>Order: a message with headers (an ordered one) read on the main connection must not overtake a
 * spread message the peer sent before it. The sender writes every part of earlier spread messages
 * before an ordered message, and the first part of each travels on the main connection, so the
 * spread messages an ordered one must wait for are exactly those whose first part was seen on the
 * main connection and that are not delivered yet ({@link #earlier}); a stream stays
 * {@linkplain #isPending pending} from its first chunk until the main connection calls
 * {@link #finished} (delivered or aborted).
 *
 * <p>An aborted message (its sender could not write it whole) is forgotten and its number kept
 * for a while, so that chunks of it still in flight are read and dropped.
 *
 * <p>This class is thread-safe.
 */
final class SpreadReceiver {
    /** Spread messages being received at once in one group, at most (the sender has fewer unacknowledged). */
    static final int MAX_INCOMPLETE = 2 * BulkGroup.MAX_UNACKED;
    /** Aborted stream numbers remembered. */
    private static final int DEAD_REMEMBERED = 1024;

    /** Receives each spread message that arrived whole: its stream and the decoded message. */
    interface Delivery {
        void deliver(int stream, InboundMessage message);
    }

    private final LargeBufferPool pool;
    private final IntConsumer done;
    private volatile Delivery delivery;
    private final Map<Integer, Incoming> incoming = new ConcurrentHashMap<>();
    // Under this.
    private final Set<Integer> dead = new LinkedHashSet<>();
    private final Map<Integer, Boolean> pending = new HashMap<>(); // stream -> seen on main

    /** @param done told the number of each message that arrived whole (to acknowledge it to the sender) */
    SpreadReceiver(LargeBufferPool pool, IntConsumer done) {
        this.pool = pool;
        this.done = done;
    }

    void setDelivery(Delivery delivery) {
        this.delivery = delivery;
    }

    /**
     * A chunk of {@code stream} begins: its message's buffer, created at the first chunk, or null
     * when the message was aborted (read the data and drop it).
     *
     * @param onMain whether the chunk came on the main connection
     */
    Incoming start(int stream, int total, boolean onMain) {
        Incoming message = incoming.get(stream);
        if (message == null || onMain) {
            synchronized (this) {
                if (dead.contains(stream)) {
                    return null;
                }
                message = incoming.get(stream);
                if (message == null) {
                    if (incoming.size() >= MAX_INCOMPLETE) {
                        throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "more than " + MAX_INCOMPLETE
                                + " spread messages in progress from one peer");
                    }
                    message = new Incoming(stream, pool.acquire(total));
                    incoming.put(stream, message);
                    pending.put(stream, onMain);
                } else if (onMain) {
                    pending.replace(stream, true);
                }
            }
        }
        if (message.bytes.capacity() != total) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "chunk of spread stream " + stream + " says "
                    + total + " bytes, an earlier chunk said " + message.bytes.capacity());
        }
        return message;
    }

    /**
     * {@code bytes} more bytes of {@code message} are in place (all of one chunk). When that
     * completes it, decodes it and hands it to the delivery. A malformed frame throws
     * {@link RpcException} (PROTOCOL_ERROR).
     */
    void arrived(Incoming message, int bytes) {
        if (message.left.addAndGet(-bytes) != 0 || !incoming.remove(message.stream, message)) {
            return;
        }
        // The atomic count orders every thread's writes into the buffer before this read of it.
        InboundMessage decoded;
        try {
            decoded = FrameCodec.decodeOwned(message.bytes.duplicate().clear());
        } catch (RuntimeException e) {
            finished(message.stream);
            throw e;
        }
        done.accept(message.stream);
        delivery.deliver(message.stream, decoded);
    }

    /** The sender gave {@code stream} up: drop what arrived, and what still comes of it. */
    synchronized void abort(int stream) {
        dead.add(stream);
        if (dead.size() > DEAD_REMEMBERED) {
            dead.remove(dead.iterator().next());
        }
        incoming.remove(stream);
        pending.remove(stream);
    }

    /** {@code stream} was delivered: it no longer holds ordered messages back. */
    synchronized void finished(int stream) {
        pending.remove(stream);
    }

    /** Whether {@code stream} is started and neither delivered nor aborted. */
    synchronized boolean isPending(int stream) {
        return pending.containsKey(stream);
    }

    /**
     * The pending streams whose first part was seen on the main connection: what an ordered message
     * read now on the main connection must wait for.
     */
    synchronized Set<Integer> earlier() {
        Set<Integer> streams = new HashSet<>();
        pending.forEach((stream, onMain) -> {
            if (onMain) {
                streams.add(stream);
            }
        });
        return streams;
    }

    /** The group closed: drop everything (the buffers return to the pool once unreachable). */
    synchronized void clear() {
        incoming.clear();
        pending.clear();
    }

    /** One spread message being received. */
    static final class Incoming {
        final int stream;
        /** The whole frame, position 0 and limit its size; only ever written through absolute slices. */
        final ByteBuffer bytes;
        final AtomicInteger left;

        Incoming(int stream, ByteBuffer bytes) {
            this.stream = stream;
            this.bytes = bytes;
            this.left = new AtomicInteger(bytes.capacity());
        }
    }
}
