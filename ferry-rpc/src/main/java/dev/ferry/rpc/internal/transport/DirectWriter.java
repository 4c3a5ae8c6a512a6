package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Chunks;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.UnixChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Lets the thread that sends a small frame write it to the socket itself, when nothing is queued
 * ahead of it, instead of handing it to the channel's event loop. A call then crosses one thread
 * less on each side (the caller writes its request, the request's thread writes its reply): on the
 * 2-vCPU VM a hand-off to a loop and the loop's write took ~2.2–2.5 µs of W1's ~16 µs per direction.
 * Asked only for a message alone in its exchange ({@link CallBalance}): where messages follow each
 * other closely the loop's batches, one system call for many, are worth more than the hand-off.
 *
 * <pre>
 *   sender: FREE ─CAS─▶ DIRECT ─ nothing queued, nothing in Netty's buffer? ─▶ write(2) ─▶ FREE
 *                                                                  └─ partly written ─▶ REMAINDER ─▶ the loop writes the rest first
 *   loop:   a write while a sender holds the socket (DIRECT / REMAINDER) is held in order, and goes
 *           once the sender is done; writes by the loop run as LOOP, so no sender writes meanwhile
 * </pre>
 *
 * <h2>Why it is safe</h2>
 * <ul>
 *   <li><b>One writer at a time.</b> A sender writes only while it holds {@code DIRECT}, and only if
 *       its queue ({@link SendBudget}) and Netty's outbound buffer are both empty. Netty's event loop
 *       writes only bytes counted in that buffer, and everything the loop writes passes the
 *       {@linkplain #guard() guard} at the head of the pipeline, which adds it to the buffer as
 *       {@code LOOP} or, while a sender holds the socket, holds it (counted as pending too).</li>
 *   <li><b>Order.</b> A sender's frame goes out only when nothing sent before it is waiting, so each
 *       sender's frames keep their order, and an ordered message (a barrier) stays one. The rest of
 *       a partial write is written by the loop before anything it held.</li>
 *   <li><b>No stray writes after a close.</b> The sender writes through a {@linkplain
 *       DuplicateDescriptors duplicate} of the socket's descriptor, closed only here, after the channel
 *       closed and no sender is inside: Netty's own number may be reused as soon as Netty closes it.</li>
 * </ul>
 * Only for plain sockets (no TLS: the socket carries ciphertext then), and after authentication;
 * {@code TransportTuning.directWrites} turns it off.
 *
 * <p>Thread-safe: {@link #tryWrite} from any thread; the rest on the channel's event loop.
 */
final class DirectWriter {
    private static final Logger log = LoggerFactory.getLogger(DirectWriter.class);

    /** Whether this JVM can write directly: socket descriptors can be duplicated. */
    static final boolean AVAILABLE = DuplicateDescriptors.available();

    /**
     * Before the channel's activation went through the pipeline (what its handlers write then, a
     * shared-memory announcement, must go first) and, with authentication, before the peer proved
     * itself: senders do not write, the guard passes everything.
     */
    private static final int DISABLED = 0;
    private static final int FREE = 1;
    /** A sender is writing. */
    private static final int DIRECT = 2;
    /** A sender wrote part of a frame: the loop writes the rest before anything else. */
    private static final int REMAINDER = 3;
    /** The loop is adding writes to Netty's buffer. */
    private static final int LOOP = 4;
    /** The channel closed: the duplicate is (being) closed, senders never write again. */
    private static final int CLOSED = 5;

    private final Channel channel;
    private final FileDescriptor descriptor;
    /** Frames senders wrote themselves, whole or in part (all of the transport's connections). */
    private final LongAdder written;
    /** Frames only partly written by a sender, finished by the loop. */
    private final LongAdder partial = new LongAdder();
    private final AtomicInteger state = new AtomicInteger(DISABLED);
    private final Guard guard = new Guard();
    private final Runnable releaseHeld = guard::releaseHeld;
    /** The guard holds writes until a sender is done: the sender must wake the loop. */
    private volatile boolean loopWaiting;
    /** The graceful close began: new frames go through the queue, which orders them before the end. */
    private volatile boolean stopped;
    /** Set by a sender under DIRECT before REMAINDER is published; taken by the loop. */
    private Remainder remainder;
    /** Event loop only: the channel's activation went through the pipeline; the peer authenticated. */
    private boolean activated;
    private boolean authenticated;

    private DirectWriter(Channel channel, FileDescriptor descriptor, LongAdder written, boolean authenticating) {
        this.channel = channel;
        this.descriptor = descriptor;
        this.written = written;
        this.authenticated = !authenticating;
    }

    /**
     * A writer for {@code channel} (its {@linkplain #guard() guard} still to be installed; senders
     * may write once the channel is active and, with authentication, {@link #authenticated}), or null
     * where senders cannot write themselves: not a native socket, or no duplicate descriptor.
     *
     * @param written        counts the frames senders write
     * @param authenticating senders wait for {@link #authenticated} too
     */
    static DirectWriter open(Channel channel, LongAdder written, boolean authenticating) {
        if (!AVAILABLE || !(channel instanceof UnixChannel unix)) {
            return null;
        }
        int duplicate = DuplicateDescriptors.duplicate(unix.fd().intValue());
        if (duplicate < 0) {
            return null;
        }
        DirectWriter writer = new DirectWriter(channel, new FileDescriptor(duplicate), written, authenticating);
        channel.closeFuture().addListener(f -> writer.closed());
        return writer;
    }

    /** The handler to put first in the pipeline (nearest the socket). */
    ChannelHandler guard() {
        return guard;
    }

    /** Loads this class and links what it calls (see {@link DuplicateDescriptors#warmUp}). */
    static void warmUp() {
        if (AVAILABLE) {
            DuplicateDescriptors.warmUp();
        }
    }

    /** The peer proved itself and what the handshake held went on (event loop). */
    void authenticated() {
        authenticated = true;
        enableIfReady();
    }

    private void enableIfReady() {
        if (activated && authenticated) {
            state.compareAndSet(DISABLED, FREE);
        }
    }

    /** The connection is closing gracefully: senders queue again, so nothing passes the end of output. */
    void stop() {
        stopped = true;
    }

    /**
     * Writes {@code frame} (a whole frame, length prefix included) on the calling thread if the
     * socket is free, nothing is queued ahead of it, and it is small; takes ownership of it then.
     * Returns false, with {@code frame} untouched, when the caller must queue it instead. For a
     * message alone in its exchange ({@link CallBalance}): others are better written in batches.
     *
     * @param queued    the connection's queue (bytes accepted and not yet handed to Netty)
     * @param onFailure told if the frame, partly written, cannot be finished (the channel closed)
     */
    boolean tryWrite(ByteBuf frame, SendBudget queued, Consumer<Throwable> onFailure) {
        if (stopped || !frame.isDirect() || frame.nioBufferCount() != 1 || Chunks.isLarge(frame.readableBytes() - 4L)
                || !state.compareAndSet(FREE, DIRECT)) {
            return false;
        }
        int size = frame.readableBytes();
        // The queue first: the loop moves bytes from it to Netty's buffer, counted there before
        // they leave the queue, so reading in this order never misses bytes in transit.
        ChannelOutboundBuffer buffered = channel.unsafe().outboundBuffer();
        if (queued.bytes() != 0 || buffered == null || buffered.totalPendingWriteBytes() != 0 || !channel.isActive()) {
            release();
            return false;
        }
        // Counted before the write: once written, the peer may answer before this line would run.
        this.written.increment();
        int written;
        try {
            if (frame.hasMemoryAddress()) {
                written = descriptor.writeAddress(frame.memoryAddress(), frame.readerIndex(), frame.writerIndex());
            } else {
                ByteBuffer bytes = frame.internalNioBuffer(frame.readerIndex(), size);
                written = descriptor.write(bytes, bytes.position(), bytes.limit());
            }
        } catch (IOException | RuntimeException e) {
            // Nothing of this frame went: the queue sends it, and reports the connection's failure.
            this.written.decrement();
            release();
            return false;
        }
        if (written == 0) {
            this.written.decrement();
            release(); // the socket is full: the queue waits for room
            return false;
        }
        if (written == size) {
            release();
            frame.release();
            return true;
        }
        partial.increment();
        frame.skipBytes(written);
        remainder = new Remainder(frame, onFailure);
        state.set(REMAINDER);
        try {
            channel.eventLoop().execute(releaseHeld);
        } catch (RejectedExecutionException e) {
            // The loop has stopped, so the channel is closed or about to be: nothing writes the rest.
            failRemainder();
        }
        return true;
    }

    /** A sender is done with the socket: if the loop held writes meanwhile, they go now. */
    private void release() {
        state.set(FREE);
        if (loopWaiting) {
            try {
                channel.eventLoop().execute(releaseHeld);
            } catch (RejectedExecutionException e) {
                // The loop has stopped: what it held fails with the channel.
            }
        }
    }

    /** Fails a partly written frame that will not be finished (its connection is going). */
    private void failRemainder() {
        if (state.compareAndSet(REMAINDER, CLOSED)) {
            Remainder rest = remainder;
            remainder = null;
            rest.frame.release();
            rest.onFailure.accept(new ClosedChannelException());
        }
    }

    /** The channel closed (its event loop): no sender writes again, and the duplicate closes. */
    private void closed() {
        int previous;
        while (true) {
            previous = state.get();
            if (previous == DIRECT) {
                // A sender is in its write (a system call on a duplicate that is still open): wait it out.
                Thread.yield();
                continue;
            }
            if (state.compareAndSet(previous, CLOSED)) {
                break;
            }
        }
        if (previous == REMAINDER) {
            Remainder rest = remainder;
            remainder = null;
            rest.frame.release();
            rest.onFailure.accept(new ClosedChannelException());
        }
        guard.failHeld(new ClosedChannelException());
        try {
            descriptor.close();
        } catch (IOException e) {
            log.debug("closing the duplicate descriptor of {}: {}", channel, e.toString());
        }
    }

    /** Frames that senders wrote only in part (tests). */
    long partialWrites() {
        return partial.sum();
    }

    /** Whether the duplicate descriptor is closed (tests). */
    boolean descriptorClosed() {
        return !descriptor.isOpen();
    }

    private record Remainder(ByteBuf frame, Consumer<Throwable> onFailure) {
    }

    /**
     * At the head of the pipeline: every write of the event loop passes here. While a sender holds
     * the socket, writes are held in order; otherwise they go to Netty's buffer as {@code LOOP}.
     */
    private final class Guard extends ChannelDuplexHandler {
        private ChannelHandlerContext context;
        private PendingWriteQueue held;
        /** A flush came while writes were held: flush once they go. */
        private boolean flushHeld;
        /** Nesting of writes as LOOP (a write's listener may write again inside it). */
        private int depth;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            context = ctx;
            held = new PendingWriteQueue(ctx);
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            // First the handlers behind: what they write on activation is then queued before any sender's frame.
            ctx.fireChannelActive();
            activated = true;
            enableIfReady();
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (held.isEmpty() && enter()) {
                try {
                    ctx.write(msg, promise);
                } finally {
                    exit();
                }
                return;
            }
            // Counted in Netty's pending bytes from here: senders keep off until it is written.
            held.add(msg, promise);
            loopWaiting = true;
            int now = state.get();
            if (now == FREE || now == REMAINDER || now == CLOSED) {
                releaseHeld(); // the sender finished before it could see loopWaiting
            }
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            if (held.isEmpty()) {
                ctx.flush();
            } else {
                flushHeld = true;
            }
        }

        /** Takes the socket for the loop's writes; false while a sender holds it. */
        private boolean enter() {
            if (depth > 0) {
                depth++;
                return true;
            }
            int now = state.get();
            if (now == DISABLED || now == CLOSED || now == FREE && state.compareAndSet(FREE, LOOP)) {
                depth = 1;
                return true;
            }
            return false;
        }

        private void exit() {
            if (--depth == 0) {
                state.compareAndSet(LOOP, FREE);
            }
        }

        /** Writes the rest of a partial frame, then what was held, if no sender holds the socket. */
        void releaseHeld() {
            int now = state.get();
            boolean rest = false;
            if (now == REMAINDER) {
                if (!state.compareAndSet(REMAINDER, LOOP)) {
                    return; // closed meanwhile: closed() failed the rest
                }
                rest = true;
            } else if (now == FREE) {
                if (held.isEmpty()) {
                    loopWaiting = false; // nothing held (it went meanwhile): senders need not call again
                    return;
                }
                if (!state.compareAndSet(FREE, LOOP)) {
                    return;
                }
            } else if (now != CLOSED) {
                return; // DIRECT: that sender releases again; LOOP cannot be seen here; DISABLED holds nothing
            }
            loopWaiting = false;
            depth = 1;
            try {
                if (rest) {
                    // Netty's buffer is empty: the sender saw it so, and the loop held its writes since.
                    Remainder partial = remainder;
                    remainder = null;
                    ChannelPromise promise = context.newPromise();
                    promise.addListener(f -> {
                        if (!f.isSuccess()) {
                            partial.onFailure.accept(f.cause());
                        }
                    });
                    context.write(partial.frame, promise);
                }
                held.removeAndWriteAll();
            } finally {
                exit();
            }
            if (rest || flushHeld) {
                flushHeld = false;
                context.flush();
            }
        }

        void failHeld(Throwable cause) {
            if (held != null) {
                held.removeAndFailAll(cause);
            }
        }
    }
}
