package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RemoteStackTrace;
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
 * later runs, so a delete is done when the owner answers that message (its result, or an error the
 * owner sent back: it has read it). A message that ends without the owner's answer (it could not
 * be sent, did not reach the owner, timed out or was cancelled) fails its deletes with a failure the
 * RRef protocol sends them again on; since the owner may have read them after all, a delete sent
 * again says so ({@link #AGAIN}), and the owner ignores it quietly if it no longer has that fork.
 *
 * <pre>
 *   close() ─▶ add(owner, rref, fork) ─▶ batch for owner ─┬─ next call to owner: in its header (ordered call)
 *                                                          │                     or sent just before it (unordered)
 *                                                          └─ ~10 ms later: flush as one system call
 *   owner: header "ferry-rref-deletes" = int32 n, then n × (int32 rrefOn, int64 rrefLocal, int32 forkOn, int64 forkLocal)
 *          header "ferry-rref-deletes-again" = "1" when some of them were sent before (may be repeats)
 * </pre>
 *
 * <p>This class is thread-safe.
 */
final class UserDeletes {
    private static final Logger log = LoggerFactory.getLogger(UserDeletes.class);
    /** The header carrying deletes; its value is the packed list of (RRef id, fork id) pairs. */
    static final HeaderKey<byte[]> HEADER = HeaderKey.of("ferry-rref-deletes", bytes -> bytes, bytes -> bytes);
    /** Beside {@link #HEADER}: some of its deletes were sent before, so the owner may have them already. */
    static final HeaderKey<String> AGAIN = HeaderKey.ofString("ferry-rref-deletes-again");
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
     * Queues a delete for {@code owner}; {@code again} if it was sent before. The future completes
     * when the owner has answered the message that carried it; it fails when that message ended
     * without the owner's answer, with {@link RpcException.Code#UNAVAILABLE} (not sent, or did not
     * reach the owner) or {@link RpcException.Code#TIMEOUT} (it may have), so that the caller sends
     * it again.
     */
    RpcFuture<Object> add(WorkerInfo owner, GloballyUniqueId rrefId, GloballyUniqueId forkId, boolean again) {
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
            batch.add(rrefId, forkId, again);
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
        return batch.addTo(headers);
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
            sent = standalone.apply(batch.owner, batch.addTo(CallHeaders.empty()));
        } catch (RuntimeException e) {
            batch.finish(e);
            return;
        }
        sent.addDoneCallback(done -> batch.finish(done.failed() ? done.exceptionNow() : null));
    }

    /** {@code to} with the deletes of {@code from} (the header entries {@link #attach} and a flush add). */
    static CallHeaders copy(CallHeaders from, CallHeaders to) {
        CallHeaders with = to.with(HEADER, from.get(HEADER));
        return from.contains(AGAIN) ? with.with(AGAIN, "1") : with;
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
        /** Whether some of its deletes were sent before. */
        private boolean again;

        Batch(WorkerInfo owner) {
            this.owner = owner;
        }

        void add(GloballyUniqueId rrefId, GloballyUniqueId forkId, boolean sentBefore) {
            ids.add(rrefId);
            ids.add(forkId);
            again |= sentBefore;
        }

        /** {@code headers} with this batch's entries. */
        CallHeaders addTo(CallHeaders headers) {
            CallHeaders with = headers.with(HEADER, encode());
            return again ? with.with(AGAIN, "1") : with;
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
         * Ends the batch with the outcome of the message that carried it: done if the owner
         * answered it; otherwise failed so that its deletes are sent again (UNAVAILABLE as it
         * came, anything else as a TIMEOUT: the owner may or may not have read them).
         */
        void finish(Throwable failure) {
            if (failure == null || answeredByOwner(failure)) {
                done.setResult(Boolean.TRUE);
            } else if (failure instanceof RpcException lost && lost.code() == RpcException.Code.UNAVAILABLE) {
                done.setException(lost);
            } else {
                log.debug("{} RRef deletes to {} are sent again: the message that carried them ended without an"
                        + " answer: {}", size(), owner.name(), failure.toString());
                done.setException(new RpcException(RpcException.Code.TIMEOUT, "the message carrying " + size()
                        + " RRef deletes to " + owner.name() + " ended without an answer: " + failure, failure));
            }
        }

        /** An error the owner sent back carries the owner's own stack ({@link RemoteStackTrace}). */
        private static boolean answeredByOwner(Throwable failure) {
            return failure instanceof RpcException e && e.getCause() instanceof RemoteStackTrace;
        }
    }
}
