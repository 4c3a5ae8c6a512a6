package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.Chunks;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.socket.DuplexChannel;

import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The messages waiting to be written on one channel, and the order they go out in. Small frames go
 * whole; a large one goes in {@link Chunks}, the queue takes turns between the large messages in
 * progress, and a small frame goes before any of their next chunks, so a small call queued behind
 * a 128 MiB tensor waits for at most the chunks already handed to the channel, not for the tensor.
 *
 * <pre>
 *   send() ─▶ waiting (FIFO) ─admit─▶ active (round robin) ─one piece each─▶ channel (while writable)
 * </pre>
 *
 * <p>An <em>ordered</em> message (its {@code Delivery} says so: RRef protocol, system calls, interceptors'
 * context) is a barrier: it starts only when everything before it is written, and nothing after it
 * starts before it is written. Plain calls and replies may overtake a large message in progress.
 *
 * <p>Bounded memory: the queue only writes while the channel is writable (Netty's write-buffer
 * water marks), and callers on ordinary threads wait, up to a limit, in {@link #awaitRoom} while
 * more than {@code limitBytes} are queued. Transport threads never wait; what they send is queued.
 *
 * <p>Pacing of chunks: at most {@link #MAX_CHUNKS_IN_CHANNEL} chunks are in the channel (handed to
 * it, not yet written to the socket) at once; the write of one brings the next. That keeps the
 * channel under its high water mark, so a large message of any size goes through the same code as a
 * message of two chunks: it never makes the channel unwritable. (A first 16 MiB message used to do
 * that, and the JIT then compiled the writability path, inlining this queue and Netty's write path,
 * for 60-290 ms on one of the CPUs the transfer needed; W3 over TCP at 16 MiB lost a third of its
 * speed while it lasted.) Small frames are not counted: they go whenever the channel is writable.
 *
 * <p>Sent by a thread other than the event loop, a small frame alone in its exchange ({@link
 * CallBalance}) with nothing queued ahead of it is written by that thread itself ({@link
 * DirectWriter}) and never enters the queue.
 *
 * <p>Thread contract: {@link #enqueue}, {@link #awaitRoom} and {@link #closeWhenDrained} from any
 * thread; the rest runs on the channel's event loop only.
 */
final class OutboundQueue {
    /** Large messages written in turns at once; more wait (bounds the receiver's partial frames). */
    static final int MAX_ACTIVE_LARGE = 8;
    /**
     * Chunks handed to the channel and not yet written, at most: enough to keep the socket busy (the
     * next is queued as soon as one is written, inside Netty's write loop). Netty completes a write
     * before it takes its bytes off the channel's count, so one more chunk than this is counted at
     * that moment: with their headers that stays below the high water mark ({@link
     * NettyTransport#WATER_MARK}, 4 MiB).
     */
    static final int MAX_CHUNKS_IN_CHANNEL = 2;

    private final Channel channel;
    /** Messages flushed together at most when senders keep the event loop's task queue full. */
    static final int MAX_COALESCED = 64;

    private final SendBudget budget;
    /** Sends by other threads whose task has not run yet: while some are due, a flush waits for them. */
    private final AtomicInteger addsDue = new AtomicInteger();
    // Event loop only.
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private final ArrayDeque<Pending> active = new ArrayDeque<>();
    private boolean orderedActive;
    private int activeLarge;
    private int nextStream;
    private boolean closeRequested;
    /** The output was shut down after the last write: nothing more can go. */
    private boolean outputEnded;
    private int coalesced;
    private Throwable failure;
    /** Chunks handed to the channel whose write has not completed. */
    private int chunksInChannel;

    /** Lets senders write small frames themselves when nothing waits here; null for never. */
    private final DirectWriter direct;

    OutboundQueue(Channel channel, long limitBytes, DirectWriter direct) {
        this.channel = channel;
        this.budget = new SendBudget(limitBytes);
        this.direct = direct;
    }

    /** Bytes accepted and not yet handed to the channel. */
    long queuedBytes() {
        return budget.bytes();
    }

    /**
     * Waits while more than the limit is queued and the channel is open; gives up after
     * {@code timeout} with {@link RpcException.Code#TIMEOUT}.
     */
    void awaitRoom(Duration timeout) {
        budget.awaitRoom(timeout, channel::isActive, channel.remoteAddress());
    }

    /** Queues a whole encoded frame (length prefix included); takes ownership of {@code frame}. */
    void enqueue(ByteBuf frame, boolean ordered, Consumer<Throwable> onFailure) {
        enqueue(frame, ordered, false, onFailure);
    }

    /**
     * As {@link #enqueue(ByteBuf, boolean, Consumer)}; a frame {@code alone} in its exchange
     * ({@link CallBalance}), sent by a thread other than the event loop, may be written by that
     * thread at once.
     */
    void enqueue(ByteBuf frame, boolean ordered, boolean alone, Consumer<Throwable> onFailure) {
        boolean inLoop = channel.eventLoop().inEventLoop();
        if (alone && !inLoop && direct != null && direct.tryWrite(frame, budget, onFailure)) {
            return;
        }
        Pending message = new Pending(frame, ordered, onFailure);
        budget.add(message.remaining());
        if (inLoop) {
            add(message);
            return;
        }
        addsDue.incrementAndGet();
        try {
            channel.eventLoop().execute(new Add(message));
        } catch (RejectedExecutionException e) {
            addsDue.decrementAndGet();
            fail(message, new ClosedChannelException());
        }
    }

    /**
     * Ends the output once everything queued so far is written: the channel's output is shut down, so the peer reads all of it and
     * then its end-of-file, and the channel closes when the peer closes its end (see
     * {@link NettyConnection#close}). A channel that cannot half-close, or whose input already
     * ended, closes at once behind the last write.
     */
    void closeWhenDrained() {
        if (direct != null) {
            direct.stop();
        }
        try {
            channel.eventLoop().execute(() -> {
                closeRequested = true;
                drain();
            });
        } catch (RejectedExecutionException e) {
            channel.close();
        }
    }

    /** The channel became writable again (or may have): write more. */
    void drain() {
        boolean wrote = false;
        while (channel.isWritable()) {
            admit();
            Pending message = nextToWrite();
            if (message == null) {
                break;
            }
            writeNext(message);
            wrote = true;
            if (message.remaining() > 0) {
                active.add(message);
            } else {
                if (message.ordered) {
                    orderedActive = false;
                }
                if (message.large) {
                    activeLarge--;
                }
            }
        }
        if (wrote) {
            channel.flush();
        }
        if (closeRequested && waiting.isEmpty() && active.isEmpty()) {
            closeRequested = false;
            // An empty write queues behind everything already written, so the close loses nothing.
            channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener((ChannelFutureListener) this::endOutput);
        }
    }

    /**
     * Everything was written: shut the output down rather than close, so the kernel sends all of it
     * followed by end-of-file, and this side goes on reading until the peer's end-of-file. Closing
     * at once would lose data: a socket closed with bytes of the peer unread (replies, control
     * units) resets the connection, and the peer may then fail before it read what we sent.
     */
    private void endOutput(ChannelFuture written) {
        outputEnded = true;
        if (written.isSuccess() && channel instanceof DuplexChannel duplex && channel.isActive()
                && !duplex.isInputShutdown()) {
            duplex.shutdownOutput();
        } else {
            channel.close();
        }
    }

    /**
     * The next active message to write: the first whole (small) frame, so that small messages
     * pass the chunks of large ones in progress as soon as they are admitted; else, while chunks
     * may be handed to the channel, the large message whose turn it is; else null.
     */
    private Pending nextToWrite() {
        for (Iterator<Pending> it = active.iterator(); it.hasNext(); ) {
            Pending message = it.next();
            if (!message.large) {
                it.remove();
                return message;
            }
        }
        return chunksInChannel < MAX_CHUNKS_IN_CHANNEL ? active.poll() : null;
    }

    /** Chunks handed to the channel and not yet written (event loop only; for tests). */
    int chunksInChannel() {
        return chunksInChannel;
    }

    /** The channel closed: everything still queued fails. */
    void failAll(Throwable cause) {
        failure = cause;
        for (Pending message : active) {
            fail(message, cause);
        }
        for (Pending message : waiting) {
            fail(message, cause);
        }
        active.clear();
        waiting.clear();
        signalRoom();
    }

    private void add(Pending message) {
        if (failure != null || !channel.isActive() || outputEnded) {
            refuse(message);
            return;
        }
        waiting.add(message);
        drain();
    }

    /**
     * Adds a message sent by another thread. When more such messages are already queued as tasks
     * behind this one, the write waits for the last of them (or for {@link #MAX_COALESCED}), so a
     * burst of sends goes out in one flush, one system call, instead of one each.
     */
    private void addFromTask(Pending message) {
        boolean last = addsDue.decrementAndGet() == 0;
        if (failure != null || !channel.isActive() || outputEnded) {
            refuse(message);
            return;
        }
        waiting.add(message);
        if (last || ++coalesced >= MAX_COALESCED) {
            coalesced = 0;
            drain();
        }
    }

    private void admit() {
        while (!waiting.isEmpty() && !orderedActive) {
            Pending next = waiting.peek();
            if (next.ordered) {
                if (active.isEmpty()) {
                    active.add(waiting.poll());
                    orderedActive = true;
                    activeLarge += next.large ? 1 : 0;
                }
                return;
            }
            if (next.large) {
                if (activeLarge >= MAX_ACTIVE_LARGE) {
                    return;
                }
                activeLarge++;
            }
            active.add(waiting.poll());
        }
    }

    private void writeNext(Pending message) {
        int written;
        if (!message.large) {
            written = message.frame.readableBytes();
            message.offset = written;
            channel.write(message.frame).addListener(new Reported(message.onFailure, false));
        } else {
            if (message.stream < 0) {
                message.stream = nextStream++ & Integer.MAX_VALUE;
            }
            written = (int) Math.min(Chunks.CHUNK_BYTES, message.remaining());
            int total = (int) message.size;
            channel.write(Chunks.header(channel.alloc(), message.stream, total, written), channel.voidPromise());
            ByteBuf data = message.frame.retainedSlice(message.frame.readerIndex() + 4 + (int) message.offset, written);
            message.offset += written;
            chunksInChannel++;
            if (message.remaining() > 0) {
                channel.write(data).addListener(new Reported(null, true));
            } else {
                message.frame.release();
                channel.write(data).addListener(new Reported(message.onFailure, true));
            }
        }
        budget.add(-written);
        signalRoom();
    }

    /**
     * Fails a message that came when nothing more can be written, with the connection's failure. A
     * send can reach the loop after the channel closed but before the inactive event that reports
     * why (Netty queues that event when it closes, behind the tasks already queued, this send's
     * among them): its failure then waits for that event, so the caller learns the cause (the peer
     * rejected this worker's token, say) rather than a bare {@link ClosedChannelException}.
     */
    private void refuse(Pending message) {
        if (failure == null && !outputEnded && !channel.isOpen()) {
            try {
                channel.eventLoop().execute(() -> fail(message, failure != null ? failure : new ClosedChannelException()));
                return;
            } catch (RejectedExecutionException e) {
                // The loop is shutting down: nothing will report a cause.
            }
        }
        fail(message, failure != null ? failure : new ClosedChannelException());
    }

    private void fail(Pending message, Throwable cause) {
        budget.add(-message.remaining());
        message.frame.release();
        message.onFailure.accept(cause);
    }

    private void signalRoom() {
        budget.signal(failure != null);
    }

    /** One message: its frame and how much of it has gone to the channel. */
    private static final class Pending {
        final ByteBuf frame;
        final boolean ordered;
        final boolean large;
        final Consumer<Throwable> onFailure;
        /** Bytes to hand to the channel: the frame, or for a large one its bytes after the prefix (or the part's). */
        final long size;
        /** Bytes handed to the channel; for a large frame, counted from after its length prefix. */
        long offset;
        int stream = -1;

        Pending(ByteBuf frame, boolean ordered, Consumer<Throwable> onFailure) {
            this.frame = frame;
            this.ordered = ordered;
            this.large = Chunks.isLarge(frame.readableBytes() - 4L);
            this.onFailure = onFailure;
            this.size = large ? frame.readableBytes() - 4L : frame.readableBytes();
        }

        long remaining() {
            return size - offset;
        }
    }

    /** Adds a message on the event loop. */
    private final class Add implements Runnable {
        private final Pending message;

        Add(Pending message) {
            this.message = message;
        }

        @Override
        public void run() {
            addFromTask(message);
        }
    }

    /**
     * A chunk's write completed (or failed): another may go. Runs inside Netty's write loop, which
     * goes on to write what this queues.
     */
    private void chunkWritten(ChannelFuture future) {
        chunksInChannel--;
        if (future.isSuccess()) {
            drain();
        }
    }

    /**
     * The end of a write: for a chunk, lets the next one go ({@link #chunkWritten}); for a message's
     * last write, reports a failure to its sender: the reason the connection failed when there is
     * one ({@link #failAll} runs before an abortive close), else the write's error. One class for
     * both, so that the listener call in Netty's write path sees one type whatever the sizes sent.
     */
    private final class Reported implements ChannelFutureListener {
        /** Null for a chunk that is not a message's last. */
        private final Consumer<Throwable> onFailure;
        private final boolean chunk;

        Reported(Consumer<Throwable> onFailure, boolean chunk) {
            this.onFailure = onFailure;
            this.chunk = chunk;
        }

        @Override
        public void operationComplete(ChannelFuture future) {
            if (chunk) {
                chunkWritten(future);
            }
            if (onFailure != null && !future.isSuccess()) {
                onFailure.accept(failure != null ? failure : future.cause());
            }
        }
    }
}
