package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * Coalesces the RRef protocol's user deletes per owner. PyTorch sends one message (and gets one
 * acknowledgement) per deleted fork; here a delete waits for the next call to its owner and goes
 * with it: in that call's header if the call is ordered anyway (a {@code remote()}, one of Ferry's
 * own calls), else in a message of its own sent just before it (deletes are ordered, and riding
 * on a plain call would make that call ordered too: it could then neither overtake a large message
 * in flight nor take a lane). The deletes no call picks up within ~10 ms travel together in one
 * system call. Either way the owner applies them as it reads the message, before anything it reads
 * later runs, so a delete is done when that message is answered (any answer: the owner has read it).
 *
 * <pre>
 *   close() ─▶ add(owner, rref, fork) ─▶ batch for owner ─┬─ next call to owner: in its header (ordered call)
 *                                                          │                     or sent just before it (unordered)
 *                                                          └─ ~10 ms later: flush as one system call
 *   owner: header "ferry-rref-deletes" = int32 n, then n × (int32 rrefOn, int64 rrefLocal, int32 forkOn, int64 forkLocal)
 * </pre>
 *
 * <p>This class is thread-safe.
 */
final class UserDeletes {
    private static final Logger log = LoggerFactory.getLogger(UserDeletes.class);
    /** The header carrying deletes; its value is the packed list of (RRef id, fork id) pairs. */
    static final HeaderKey<byte[]> HEADER = HeaderKey.of("ferry-rref-deletes", bytes -> bytes, bytes -> bytes);
    /** More than this in one message waits for the next one: headers stay small. */
    static final int MAX_PER_MESSAGE = 4096;
    private static final int ENTRY_BYTES = 4 + 8 + 4 + 8;

    private final BiFunction<WorkerInfo, CallHeaders, RpcFuture<Object>> standalone;
    private final Consumer<Runnable> later;
    /** Changed under this object's lock; a concurrent map so every call can check it without the lock. */
    private final Map<Integer, Batch> batches = new ConcurrentHashMap<>();

    /**
     * @param standalone sends a system call to an owner with the given headers (a flush)
     * @param later      runs a task soon on another thread (the agent's timer)
     */
    UserDeletes(BiFunction<WorkerInfo, CallHeaders, RpcFuture<Object>> standalone, Consumer<Runnable> later) {
        this.standalone = standalone;
        this.later = later;
    }

    /**
     * Queues a delete for {@code owner}. The future completes when the owner has read it, or when
     * its message failed otherwise (logged once per message); it fails only when its message did
     * not reach the owner ({@link RpcException.Code#UNAVAILABLE}), so the caller may send it again.
     */
    RpcFuture<Object> add(WorkerInfo owner, GloballyUniqueId rrefId, GloballyUniqueId forkId) {
        Batch batch;
        boolean first;
        boolean full;
        synchronized (this) {
            batch = batches.get(owner.id());
            first = batch == null;
            if (first) {
                batch = new Batch(owner);
                batches.put(owner.id(), batch);
            }
            batch.add(rrefId, forkId);
            full = batch.size() >= MAX_PER_MESSAGE;
            if (full) {
                batches.remove(owner.id());
            }
        }
        if (full) {
            send(batch);
        } else if (first) {
            Batch scheduled = batch;
            later.accept(() -> flush(scheduled));
        }
        return batch.done;
    }

    /**
     * For a call about to be sent to {@code to}: takes the deletes waiting for that worker, into
     * its headers if the call is {@code ordered} ({@code answered}, the call's future, then says
     * when they are done), else into a message sent now, ahead of it.
     */
    CallHeaders attach(WorkerInfo to, CallHeaders headers, RpcFuture<?> answered, boolean ordered) {
        if (headers.contains(HEADER)) {
            return headers; // a flush: it carries its own batch
        }
        if (batches.isEmpty()) {
            return headers; // the common case, on every call: no lock
        }
        Batch batch;
        synchronized (this) {
            batch = batches.remove(to.id());
        }
        if (batch == null) {
            return headers;
        }
        if (!ordered) {
            send(batch);
            return headers;
        }
        answered.addDoneCallback(done -> batch.finish(done.failed() ? done.exceptionNow() : null));
        return headers.with(HEADER, batch.encode());
    }

    /** Sends every waiting batch now (graceful shutdown: nothing waits for the timer). */
    void flushAll() {
        List<Batch> all;
        synchronized (this) {
            all = new ArrayList<>(batches.values());
            batches.clear();
        }
        all.forEach(this::send);
    }

    private void flush(Batch batch) {
        synchronized (this) {
            if (!batches.remove(batch.owner.id(), batch)) {
                return; // a call took it, or it filled up and was sent
            }
        }
        send(batch);
    }

    private void send(Batch batch) {
        RpcFuture<Object> sent;
        try {
            sent = standalone.apply(batch.owner, CallHeaders.empty().with(HEADER, batch.encode()));
        } catch (RuntimeException e) {
            batch.finish(e);
            return;
        }
        sent.addDoneCallback(done -> batch.finish(done.failed() ? done.exceptionNow() : null));
    }

    /** Reads a {@link #HEADER} value: pairs of (RRef id, fork id). */
    static List<GloballyUniqueId[]> decode(byte[] value) {
        ByteBuffer in = ByteBuffer.wrap(value);
        if (value.length < 4) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "malformed RRef delete header: " + value.length
                    + " bytes");
        }
        int count = in.getInt();
        if (count < 0 || (long) count * ENTRY_BYTES != in.remaining()) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "malformed RRef delete header: " + count
                    + " deletes in " + value.length + " bytes");
        }
        List<GloballyUniqueId[]> pairs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            pairs.add(new GloballyUniqueId[] {new GloballyUniqueId(in.getInt(), in.getLong()),
                new GloballyUniqueId(in.getInt(), in.getLong())});
        }
        return pairs;
    }

    /** Deletes for one owner, sent in one message; they share one outcome. */
    private static final class Batch {
        final WorkerInfo owner;
        final RpcFuture<Object> done = new RpcFuture<>();
        private final List<GloballyUniqueId> ids = new ArrayList<>();

        Batch(WorkerInfo owner) {
            this.owner = owner;
        }

        void add(GloballyUniqueId rrefId, GloballyUniqueId forkId) {
            ids.add(rrefId);
            ids.add(forkId);
        }

        int size() {
            return ids.size() / 2;
        }

        byte[] encode() {
            ByteBuffer out = ByteBuffer.allocate(4 + size() * ENTRY_BYTES);
            out.putInt(size());
            for (GloballyUniqueId id : ids) {
                out.putInt(id.createdOn()).putLong(id.localId());
            }
            return out.array();
        }

        /**
         * A message that did not reach the owner fails the batch (its deletes' senders send them
         * again); other failures are logged here, once for the batch, not once per delete it carried.
         */
        void finish(Throwable failure) {
            if (failure instanceof RpcException lost && lost.code() == RpcException.Code.UNAVAILABLE) {
                done.setException(lost);
                return;
            }
            if (failure != null) {
                log.warn("{} RRef deletes sent to {} may be lost: {}", size(), owner.name(), failure.toString());
            }
            done.setResult(Boolean.TRUE);
        }
    }
}
