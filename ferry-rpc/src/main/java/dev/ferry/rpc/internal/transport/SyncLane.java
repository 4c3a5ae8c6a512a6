package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * One end of a synchronous-exchange lane ({@link Lanes}): a socket of its own between two
 * workers that carries one request and its answer at a time, read and written by the threads that
 * wait for them, with no event loop in between. A thread waiting for a frame polls the socket
 * ({@link AdaptiveSpin}: while frames come quickly) and then blocks in a selector of its own.
 *
 * <p>Frames are Ferry's ({@link dev.ferry.rpc.internal.wire.FrameCodec}), length prefix included.
 *
 * <p>Threading: at most one thread reads and one writes at a time (the lane's owner guarantees it:
 * one exchange at a time); {@link #close} may come from any thread and wakes a blocked reader.
 */
final class SyncLane implements AutoCloseable {
    /** Initial size of the buffer frames are read into; it grows for a larger frame and stays. */
    private static final int INITIAL_READ_BYTES = 16 << 10;

    private final SocketChannel channel;
    private final String kind;
    private final String peerAddress;
    private final long maxFrameBytes;
    private final AdaptiveSpin spin;
    private final Selector readSelector;
    /** For the rare write the socket cannot take at once; made when first needed. */
    private volatile Selector writeSelector;
    private ByteBuffer readBuffer = ByteBuffer.allocateDirect(INITIAL_READ_BYTES);
    private volatile boolean closed;
    /** On the accepting side, the connection whose calls the lane carries ({@link LaneServer}); else null. */
    volatile NettyConnection owner;

    SyncLane(SocketChannel channel, String kind, String peerAddress, long maxFrameBytes, long spinNanos)
            throws IOException {
        this.channel = channel;
        this.kind = kind;
        this.peerAddress = peerAddress;
        this.maxFrameBytes = maxFrameBytes;
        this.spin = new AdaptiveSpin(spinNanos);
        channel.configureBlocking(false);
        this.readSelector = Selector.open();
        try {
            channel.register(readSelector, SelectionKey.OP_READ);
        } catch (IOException | RuntimeException e) {
            readSelector.close();
            throw e;
        }
    }

    /** {@code "uds"} or {@code "tcp"}. */
    String kind() {
        return kind;
    }

    /** The address of the other end, for messages. */
    String peerAddress() {
        return peerAddress;
    }

    boolean isOpen() {
        return !closed;
    }

    /**
     * Writes {@code frame} whole (its length prefix included) and releases it. Waits while the
     * socket cannot take it, until {@code deadlineNanos} ({@link System#nanoTime()}; 0: no limit).
     *
     * @throws IOException the lane is closed or broken, or the deadline passed (the lane is then
     *                     closed: part of a frame may have gone)
     */
    void write(ByteBuf frame, long deadlineNanos) throws IOException {
        try {
            ByteBuffer[] parts = frame.nioBuffers();
            long remaining = frame.readableBytes();
            while (remaining > 0) {
                long written = channel.write(parts);
                remaining -= written;
                if (written == 0 && remaining > 0) {
                    awaitWritable(deadlineNanos);
                }
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e instanceof IOException io ? io : new IOException(e);
        } finally {
            frame.release();
        }
    }

    private void awaitWritable(long deadlineNanos) throws IOException {
        if (writeSelector == null) {
            Selector selector = Selector.open();
            writeSelector = selector;
            if (closed) {
                selector.close(); // close() may have missed it
                throw new ClosedChannelException();
            }
            channel.register(selector, SelectionKey.OP_WRITE);
        }
        long millis = 50;
        if (deadlineNanos != 0) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                throw new IOException("writing to " + peerAddress + " timed out");
            }
            millis = Math.max(1, Math.min(millis, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        writeSelector.select(millis);
        writeSelector.selectedKeys().clear();
        if (closed) {
            throw new ClosedChannelException();
        }
    }

    /**
     * The next frame (without its length prefix), or null if none came by {@code untilNanos}
     * ({@link System#nanoTime()}) or the thread is interrupted (its flag stays set). The frame is a
     * view of this lane's buffer, valid until the next read: decode it before reading again.
     *
     * @throws IOException the peer closed the lane (an {@link EOFException}), it broke, it was
     *                     closed here, or the frame is over the size limit (the lane is closed)
     */
    ByteBuf read(long untilNanos) throws IOException {
        try {
            return read0(untilNanos);
        } catch (ClosedSelectorException e) {
            throw new ClosedChannelException();
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private ByteBuf read0(long untilNanos) throws IOException {
        compactConsumed();
        long start = System.nanoTime();
        long spinUntil = start + spin.budgetNanos();
        // A virtual thread does not spin: it would hold its carrier.
        boolean spinning = spin.budgetNanos() > 0 && !Thread.currentThread().isVirtual();
        while (true) {
            ByteBuf frame = nextFrame();
            if (frame != null) {
                return frame;
            }
            int n = channel.read(readBuffer);
            if (n < 0) {
                throw new EOFException(peerAddress + " closed the lane");
            }
            if (n > 0) {
                frame = nextFrame();
                if (frame != null) {
                    if (spinning) {
                        spin.hit();
                    }
                    return frame;
                }
                continue;
            }
            long now = System.nanoTime();
            if (spinning && now < spinUntil) {
                if (spin.yieldUncontended()) {
                    continue;
                }
                spinning = false; // the yield counted the miss: other threads need the CPU
            } else if (spinning) {
                spinning = false;
                spin.miss();
            }
            long left = untilNanos - now;
            if (left <= 0) {
                return null;
            }
            long waitStart = now;
            readSelector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999)));
            readSelector.selectedKeys().clear();
            if (closed) {
                throw new ClosedChannelException();
            }
            if (Thread.currentThread().isInterrupted()) {
                return null; // select would return at once from now on: the caller decides
            }
            spin.parkedWaitEnded(System.nanoTime() - waitStart);
        }
    }

    /** Bytes of the frame handed out by the previous read, dropped before reading on. */
    private int consumed;

    private void compactConsumed() {
        if (consumed > 0) {
            readBuffer.flip();
            readBuffer.position(consumed);
            readBuffer.compact();
            consumed = 0;
        }
    }

    /** A whole frame at the start of the buffer, or null; grows the buffer for a larger frame. */
    private ByteBuf nextFrame() throws IOException {
        int filled = readBuffer.position();
        if (filled < 4) {
            return null;
        }
        int length = readBuffer.getInt(0);
        if (length <= 0 || length > maxFrameBytes) {
            throw new IOException(new RpcException(RpcException.Code.PROTOCOL_ERROR, "a frame of " + length
                    + " bytes from " + peerAddress + " (limit " + maxFrameBytes + ")"));
        }
        if (filled < 4 + length) {
            if (readBuffer.capacity() < 4 + length) {
                ByteBuffer larger = ByteBuffer.allocateDirect(4 + length);
                readBuffer.flip();
                larger.put(readBuffer);
                readBuffer = larger;
            }
            return null;
        }
        consumed = 4 + length;
        return Unpooled.wrappedBuffer(readBuffer.duplicate().limit(4 + length).position(4).slice());
    }

    /** Closes the socket; a thread blocked in {@link #read} wakes with an {@link IOException}. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            readSelector.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        Selector writes = writeSelector;
        if (writes != null) {
            try {
                writes.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    @Override
    public String toString() {
        return "SyncLane(" + kind + " " + peerAddress + (closed ? ", closed" : "") + ")";
    }
}
