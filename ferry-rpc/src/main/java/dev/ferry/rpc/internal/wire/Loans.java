package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.RpcException;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Received memory lent to the application that can come back before the garbage collector finds
 * it unreachable ({@link dev.ferry.rpc.ReceivedBuffers}).
 *
 * <p>A lent range is viewed through a buffer of its own whose lifetime is a shared {@code Arena}
 * ({@link #closableView}): every view derived from it (slices, duplicates, {@code asFloatBuffer()})
 * shares that arena's scope, which finds the {@link Loan} again ({@link #find}) and, once closed,
 * makes every access through those views throw {@link IllegalStateException}. So a buffer used after
 * its memory went back can neither read nor overwrite the message that reuses the memory, and a
 * stale view released twice finds nothing: the next loan of the same memory has another scope.
 *
 * <p>Ferry's own accesses by address (the socket reading into the range, a send that refers to a
 * received buffer) do not go through the scope; a send therefore {@linkplain Loan#pin pins} the loan
 * while its frame refers to the memory, and the memory returns only when no pin is left.
 *
 * <p>Where the JVM refuses the restricted {@code reinterpret} (no native access), {@link
 * #closableView} answers null and nothing can be released early.
 *
 * <p>This class is thread-safe.
 */
public final class Loans {
    /** One lent range, as the owner of the memory (a receive pool) keeps it. Thread-safe. */
    public interface Loan {
        /** Holds the memory for a send whose frame refers to it; false if it was released already. */
        boolean pin();

        /** The send that {@link #pin pinned} the memory is written (or failed). */
        void unpin();

        /**
         * The application is done with the memory: it returns once no send refers to it. True if
         * this call released it, false if it was released before.
         */
        boolean release();

        /**
         * The memory returns once the next send that refers to it is written (or at once if it is
         * being sent now); true unless it was released before.
         */
        boolean releaseAfterSend();
    }

    /** A view of lent memory: the buffer to hand out, the arena to close, the scope that finds the loan. */
    public record View(ByteBuffer buffer, Arena arena, MemorySegment.Scope scope) {
    }

    private static final Map<MemorySegment.Scope, Loan> LOANS = new ConcurrentHashMap<>();
    /** Whether a closed arena makes its views unusable in this JVM (else nothing is released early). */
    private static final boolean AVAILABLE = probe();

    private Loans() {
    }

    /** Whether lent memory can be viewed through closable views in this JVM. */
    public static boolean available() {
        return AVAILABLE;
    }

    /**
     * Closes a view's arena and checks what releasing relies on: every access through the view
     * then fails, and its scope, found again from the view, is the one that died.
     */
    private static boolean probe() {
        try {
            View probe = newView(ByteBuffer.allocateDirect(16), 4, 8);
            MemorySegment.Scope scope = MemorySegment.ofBuffer(probe.buffer().slice()).scope();
            probe.arena().close();
            try {
                probe.buffer().get(0);
                return false;
            } catch (IllegalStateException expected) {
                return !scope.isAlive() && probe.buffer().capacity() == 8 && scope.equals(probe.scope());
            }
        } catch (RuntimeException e) {
            // Restricted (reinterpret): refused where the JVM does not grant native access.
            LoggerFactory.getLogger(Loans.class).debug("received buffers cannot be released early: {}", e.toString());
            return false;
        }
    }

    /**
     * A view of {@code size} bytes of {@code region} at {@code offset} with an arena of its own (the
     * view is its own root: views derived from it refer to it, not to {@code region}, which it keeps
     * reachable), or null when that is not available.
     */
    public static View closableView(ByteBuffer region, int offset, int size) {
        return AVAILABLE ? newView(region, offset, size) : null;
    }

    private static View newView(ByteBuffer region, int offset, int size) {
        Arena arena = Arena.ofShared();
        // The cleanup keeps the region reachable as long as the arena is: the view itself does not.
        ByteBuffer buffer = MemorySegment.ofBuffer(region).asSlice(offset, size)
                .reinterpret(arena, segment -> Reference.reachabilityFence(region))
                .asByteBuffer();
        return new View(buffer, arena, MemorySegment.ofBuffer(buffer).scope());
    }

    /** From now on {@link #find} answers {@code loan} for every view sharing {@code scope}. */
    public static void register(MemorySegment.Scope scope, Loan loan) {
        LOANS.put(scope, loan);
    }

    /** Forgets the loan of {@code scope} (its memory came back). */
    public static void unregister(MemorySegment.Scope scope) {
        LOANS.remove(scope);
    }

    /** The loan whose memory {@code buffer} views, or null (not lent memory, or returned already). */
    public static Loan find(Buffer buffer) {
        if (!AVAILABLE || !buffer.isDirect() || LOANS.isEmpty()) {
            return null;
        }
        return LOANS.get(MemorySegment.ofBuffer(buffer).scope());
    }

    /**
     * Pins the loan of {@code buffer} for a send that reads it (null when it is not lent memory):
     * while pinned, its memory does not go back even if the application releases it. Throws
     * {@link RpcException} ({@code ILLEGAL_STATE}) for a buffer whose memory was released.
     */
    public static Loan pinForSend(Buffer buffer) {
        if (!AVAILABLE || !buffer.isDirect()) {
            return null;
        }
        MemorySegment.Scope scope = MemorySegment.ofBuffer(buffer).scope();
        Loan loan = LOANS.get(scope);
        if (loan != null && loan.pin()) {
            return loan;
        }
        if (loan != null || !scope.isAlive()) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, "a received buffer cannot be sent after"
                    + " ReceivedBuffers.release gave its memory back");
        }
        return null;
    }

    /** Loans registered now (diagnostics and tests). */
    public static int count() {
        return LOANS.size();
    }

    /** Closes a view's arena: false when that failed (another thread is accessing it right now). */
    public static boolean close(Arena arena) {
        try {
            arena.close();
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }
}
