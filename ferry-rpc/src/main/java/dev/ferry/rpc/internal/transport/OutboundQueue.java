package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.Chunks;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;

import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The messages waiting to be written on one channel, and the order they go out in. Small frames go
 * whole; a large one goes in {@link Chunks}, and the queue takes turns between the messages in
 * progress, so a small call queued behind a 128 MiB tensor waits for at most one chunk of it plus
 * what the channel already buffers, not for the whole tensor.
 *
 * <pre>
 *   send() ─▶ waiting (FIFO) ─admit─▶ active (round robin) ─one piece each─▶ channel (while writable)
 * </pre>
 *
 * <p>An <em>ordered</em> message (one with headers: RRef protocol, system calls, interceptors'
 * context) is a barrier: it starts only when everything before it is written, and nothing after it
 * starts before it is written. Plain calls and replies may overtake a large message in progress.
 *
 * <p>Bounded memory: the queue only writes while the channel is writable (Netty's write-buffer
 * water marks), and callers on ordinary threads wait, up to a limit, in {@link #awaitRoom} while
 * more than {@code limitBytes} are queued. Transport threads never wait; what they send is queued.
 *
 * <p>Thread contract: {@link #enqueue}, {@link #awaitRoom} and {@link #closeWhenDrained} from any
 * thread; the rest runs on the channel's event loop only.
 */
final class OutboundQueue {
    /** Large messages written in turns at once; more wait (bounds the receiver's partial frames). */
    static final int MAX_ACTIVE_LARGE = 8;

    private final Channel channel;
    private final long limitBytes;
    /** Messages flushed together at most when senders keep the event loop's task queue full. */
    static final int MAX_COALESCED = 64;

    private final AtomicLong queuedBytes = new AtomicLong();
    /** Sends by other threads whose task has not run yet: while some are due, a flush waits for them. */
    private final AtomicInteger addsDue = new AtomicInteger();
    private final Object room = new Object();
    private volatile int waiters; // written under room
    // Event loop only.
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private final ArrayDeque<Pending> active = new ArrayDeque<>();
    private boolean orderedActive;
    private int activeLarge;
    private int nextStream;
    private boolean closeRequested;
    private int coalesced;
    private Throwable failure;

    OutboundQueue(Channel channel, long limitBytes) {
        this.channel = channel;
        this.limitBytes = limitBytes;
    }

    /** Bytes accepted and not yet handed to the channel. */
    long queuedBytes() {
        return queuedBytes.get();
    }

    /**
     * Waits while more than the limit is queued and the channel is open; gives up after
     * {@code timeout} with {@link RpcException.Code#TIMEOUT}.
     */
    void awaitRoom(Duration timeout) {
        if (queuedBytes.get() <= limitBytes) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (room) {
            waiters++;
            try {
                while (queuedBytes.get() > limitBytes && channel.isActive()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new RpcException(RpcException.Code.TIMEOUT, "the send queue to "
                                + channel.remoteAddress() + " stayed above " + limitBytes + " bytes for " + timeout
                                + " (the peer reads too slowly)");
                    }
                    room.wait(Math.max(1, left / 1_000_000));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RpcException(RpcException.Code.INTERNAL, "interrupted while waiting to send", e);
            } finally {
                waiters--;
            }
        }
    }

    /** Queues a whole encoded frame (length prefix included); takes ownership of {@code frame}. */
    void enqueue(ByteBuf frame, boolean ordered, Consumer<Throwable> onFailure) {
        Pending message = new Pending(frame, ordered, onFailure);
        queuedBytes.addAndGet(message.remaining());
        if (channel.eventLoop().inEventLoop()) {
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

    /** Closes the channel once everything queued so far is written. */
    void closeWhenDrained() {
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
            Pending message = active.poll();
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
            channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
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
        if (failure != null || !channel.isActive()) {
            fail(message, failure != null ? failure : new ClosedChannelException());
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
        if (failure != null || !channel.isActive()) {
            fail(message, failure != null ? failure : new ClosedChannelException());
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
            channel.write(message.frame).addListener(new Reported(message.onFailure));
        } else {
            if (message.stream < 0) {
                message.stream = nextStream++ & Integer.MAX_VALUE;
            }
            written = (int) Math.min(Chunks.CHUNK_BYTES, message.remaining());
            int total = (int) message.size;
            channel.write(Chunks.header(channel.alloc(), message.stream, total, written), channel.voidPromise());
            ByteBuf data = message.frame.retainedSlice(message.frame.readerIndex() + 4 + (int) message.offset, written);
            message.offset += written;
            if (message.remaining() > 0) {
                channel.write(data, channel.voidPromise());
            } else {
                message.frame.release();
                channel.write(data).addListener(new Reported(message.onFailure));
            }
        }
        queuedBytes.addAndGet(-written);
        signalRoom();
    }

    private void fail(Pending message, Throwable cause) {
        queuedBytes.addAndGet(-message.remaining());
        message.frame.release();
        message.onFailure.accept(cause);
    }

    private void signalRoom() {
        if (waiters > 0 && (queuedBytes.get() <= limitBytes || failure != null)) {
            synchronized (room) {
                room.notifyAll();
            }
        }
    }

    /** One message: its frame and how much of it has gone to the channel. */
    private static final class Pending {
        final ByteBuf frame;
        final boolean ordered;
        final boolean large;
        final Consumer<Throwable> onFailure;
        /** Bytes to hand to the channel: the frame, or for a large one its bytes after the prefix. */
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

    /** Reports the failure of a message's last write to its sender. */
    private record Reported(Consumer<Throwable> onFailure) implements ChannelFutureListener {
        @Override
        public void operationComplete(io.netty.channel.ChannelFuture future) {
            if (!future.isSuccess()) {
                onFailure.accept(future.cause());
            }
        }
    }
}
