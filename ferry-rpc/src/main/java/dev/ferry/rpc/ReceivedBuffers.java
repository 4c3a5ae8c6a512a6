package dev.ferry.rpc;

import dev.ferry.rpc.internal.wire.Loans;

import java.nio.Buffer;
import java.util.Objects;

/**
 * Gives the memory of a received {@link java.nio.ByteBuffer} back to Ferry as soon as the application
 * is done with it, instead of when the garbage collector finds it unreachable.
 *
 * <h2>Why</h2>
 * A {@code ByteBuffer} argument or result of more than 1 MiB that arrives over a socket is a view
 * of the transport's receive memory, not a copy (see {@code receiveBufferPoolBytes} on {@link
 * RpcBackendOptions}); one of 256 KiB or more from a worker on the same host is a view of that
 * worker's shared-memory segment. That memory is reused once nothing refers to the view any more,
 * which only a garbage collection can tell: a loop that receives large buffers quickly makes the
 * transport ask for full collections ({@link System#gc()}, tens of milliseconds each; on a thread of
 * its own, never on one that moves messages). A loop that releases what it is done with never needs
 * one: a released range of the receive pool is reused at once, a released shared-memory range goes
 * back to its sender at once.
 *
 * <pre>{@code
 * ByteBuffer reply = null;
 * for (...) {
 *     ByteBuffer next = agent.rpcSync("worker1", Simulation::step, input);
 *     if (reply != null) {
 *         ReceivedBuffers.release(reply);         // done with the previous one
 *     }
 *     reply = next;
 * }
 *
 * // A function that returns what it received, and is done with it once the reply is sent:
 * public static ByteBuffer echo(ByteBuffer t) {
 *     return ReceivedBuffers.releaseAfterSend(t);
 * }
 * }</pre>
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li>The unit released is the <em>whole message</em> the buffer arrived in: every buffer that
 *       arrived with it (the other arguments of the same call, any view of any of them) is released
 *       with it.</li>
 *   <li>After a release, every access to the buffer or any view of it ({@code get}, {@code put},
 *       {@code asFloatBuffer()} views, bulk copies) throws {@link IllegalStateException}, so a use
 *       after release can neither read nor overwrite another message that reuses the memory.
 *       Sending it (as an argument or a result) fails with {@link RpcException.Code#ILLEGAL_STATE}.</li>
 *   <li>Releasing twice, releasing a buffer that is not received memory (one the application
 *       allocated, a heap buffer, a buffer that arrived in a message too small for the pool or for
 *       shared memory) or one whose memory the garbage collector already returned is a no-op that
 *       answers {@code false}; such buffers are freed as usual.</li>
 *   <li>A buffer being sent (returned as a result, or passed as an argument, whose message is not
 *       fully written yet) may be released at any time: Ferry keeps its memory until the message is
 *       written and only then reuses it.</li>
 *   <li>Released memory is reused for later messages only; releasing never frees memory to the
 *       operating system (the pool keeps it, up to {@code receiveBufferPoolBytes}; a shared-memory
 *       range goes back to the sender's segment).</li>
 * </ul>
 * Releasing costs a few microseconds (the JVM makes sure no thread is reading the buffer at that
 * moment). A buffer released while another thread is accessing it is not reused early: the
 * garbage collector returns it as before.
 *
 * <p>This class is thread-safe.
 */
public final class ReceivedBuffers {
    private ReceivedBuffers() {
    }

    /**
     * The application is done with {@code buffer}: its memory (the whole message it arrived in) goes
     * back to Ferry now, or, while a message that refers to it is being written, once that message
     * is written. From now on any access to it throws {@link IllegalStateException}.
     *
     * @return true if this call released received memory; false if {@code buffer} is not received
     * memory or was released before (nothing happens then)
     */
    public static boolean release(Buffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        Loans.Loan loan = Loans.find(buffer);
        return loan != null && loan.release();
    }

    /**
     * Releases {@code buffer} once the next message that carries it has been written: for a
     * function that returns what it received, as its last word ({@code return
     * ReceivedBuffers.releaseAfterSend(t);}). The caller promises not to use the buffer afterwards
     * other than by returning or sending it once; once that message is written, any access throws
     * {@link IllegalStateException}. If it is never sent, nothing is released early (the garbage
     * collector returns it as usual). A buffer that is not received memory is returned unchanged.
     *
     * @return {@code buffer}
     */
    public static <B extends Buffer> B releaseAfterSend(B buffer) {
        Objects.requireNonNull(buffer, "buffer");
        Loans.Loan loan = Loans.find(buffer);
        if (loan != null) {
            loan.releaseAfterSend();
        }
        return buffer;
    }
}
