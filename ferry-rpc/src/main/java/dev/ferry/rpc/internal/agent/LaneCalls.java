package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.ManagedBlocking;
import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.transport.SyncLane;
import dev.ferry.rpc.internal.transport.SyncLanes;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The agent's use of {@link SyncLanes}: a call its caller waits for alone goes over a lane when
 * one is idle, and the calling thread reads the answer itself; and the preface that names the
 * opener, checked by the accepting agent. Only calls that need no order with the connection's
 * other messages (no headers: no RRefs, no system calls, no interceptor context) and carry no
 * out-of-band buffers take a lane, and never from a thread that must not block.
 *
 * <p>Thread-safe.
 */
final class LaneCalls {
    /** A wait with no deadline, in slices this long (the lane closing ends it sooner). */
    private static final long LONG_WAIT_NANOS = TimeUnit.HOURS.toNanos(1);

    private final SyncLanes lanes;
    private final byte[] preface;
    private final String groupId;
    private final long maxFrameBytes;

    /** With {@code lanes} null, {@link #acquire} always answers null. */
    LaneCalls(SyncLanes lanes, String groupId, String selfName, long maxFrameBytes) {
        this.lanes = lanes;
        this.groupId = groupId;
        this.preface = (groupId + "\n" + selfName).getBytes(StandardCharsets.UTF_8);
        this.maxFrameBytes = maxFrameBytes;
    }

    /** The name of the worker that opened a lane with {@code preface}, or null if not of this group. */
    String openerOf(byte[] preface) {
        String text = new String(preface, StandardCharsets.UTF_8);
        int newline = text.indexOf('\n');
        return newline > 0 && text.substring(0, newline).equals(groupId) ? text.substring(newline + 1) : null;
    }

    /** An idle lane to the worker at {@code address} that may carry {@code message}, or null. */
    SyncLane acquire(String address, OutboundMessage message) {
        if (lanes == null || !unordered(message.headers()) || !message.payload().outOfBand().isEmpty()
                || message.payload().totalBytes() > SyncLanes.MAX_REQUEST_BYTES
                || NonBlockingThreads.currentIsNonBlocking()) {
            return null;
        }
        return lanes.acquire(address, preface);
    }

    /**
     * Headers that need no order among the connection's messages: none, and the receiver mark of a call on an RRef's value sent to its owner. That
     * one carries the RRef, whose fork to its owner needs no order either: an owner that meets an
     * RRef before its creation keeps a place for it and the call waits for the value; the caller
     * keeps its reference until the owner's acceptance comes back, so a delete cannot overtake
     * the fork. Anything else (RRef creations, deletes riding on the call, interceptors' context,
     * system calls) keeps the connection.
     */
    private static boolean unordered(CallHeaders headers) {
        for (int i = 0; i < headers.size(); i++) {
            String name = headers.nameAt(i);
            if (!name.equals(AgentRRefHost.RECEIVER.name())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Writes {@code call}'s request on {@code lane} and reads its answer on this thread, handing it
     * to {@code onAnswer} (which completes the call); a diverted answer comes over the connection.
     * Returns when the answer came, was diverted, or the call ended otherwise (timed out, failed by
     * a shutdown: the lane, with an answer outstanding, is then closed). A broken lane fails the
     * call through {@code onLost}. The lane is released in every case.
     */
    void exchange(SyncLane lane, PendingCall call, OutboundMessage message, Consumer<InboundMessage> onAnswer,
                  Consumer<Throwable> onLost) {
        boolean answered = false;
        // Failed meanwhile (timed out, its connection lost, the agent shut down), the call closes
        // the lane, which wakes this thread: no periodic check (a first version checked every 20
        // ms: 50 wake-ups a second for a caller in a long call).
        call.lane = lane;
        // Waiting on a lane is blocking on a nested call like any other: a request thread gives its
        // permit back meanwhile, so nested calls cannot use the permits up (RequestLimiter).
        ManagedBlocking.Permit permit = ManagedBlocking.beforeBlocking();
        try {
            ByteBuf frame = FrameCodec.encode(message, PooledByteBufAllocator.DEFAULT, maxFrameBytes);
            lane.write(frame, call.deadline);
            while (!call.future.done()) {
                long deadline = call.deadline;
                ByteBuf answerFrame = lane.read(deadline != 0 ? deadline : System.nanoTime() + LONG_WAIT_NANOS);
                if (answerFrame != null) {
                    InboundMessage answer = FrameCodec.decode(answerFrame);
                    if (answer.id() != call.id) {
                        throw new IOException("an answer to call #" + answer.id() + " on the lane of call #" + call.id);
                    }
                    call.lane = null;
                    answered = true;
                    if ((answer.flags() & SyncLanes.FLAG_DIVERTED) == 0) {
                        onAnswer.accept(answer);
                    }
                    return;
                }
                if (deadline != 0 && System.nanoTime() - deadline >= 0) {
                    return; // the timer fails (or failed) it; its answer may still come: not on this lane
                }
                if (Thread.currentThread().isInterrupted()) {
                    // As await() does, the waiting thread gives up (its flag stays set); the answer,
                    // left on a lane that closes, will not come, so the call fails now.
                    onLost.accept(new RpcException(RpcException.Code.INTERNAL,
                            "Interrupted while waiting for the answer to call #" + call.id,
                            new InterruptedException()));
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!call.future.done()) { // else the lane closed because the call had ended
                onLost.accept(e);
            }
        } finally {
            call.lane = null;
            if (!answered) {
                lane.close();
            }
            lanes.release(lane);
            ManagedBlocking.afterBlocking(permit);
        }
    }

    /** Lost lanes, protocol errors and interrupts, as the caller sees them. */
    static RpcException lost(String peer, Throwable cause) {
        if (cause instanceof RpcException rpc) {
            return rpc;
        }
        if (cause instanceof IOException) {
            return new RpcException(RpcException.Code.UNAVAILABLE, "connection to worker " + peer + " was lost: "
                    + cause, cause);
        }
        return new RpcException(RpcException.Code.INTERNAL, "a call to " + peer + " over its lane failed: " + cause,
                cause);
    }
}
