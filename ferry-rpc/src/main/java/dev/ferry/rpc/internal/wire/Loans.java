package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.RpcException;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

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
 * <p>The Foreign Memory API is looked up at run time (final only from Java 22; Ferry compiles for
 * 21); where it is missing, {@link #closableView} answers null and nothing can be released early.
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
    public record View(ByteBuffer buffer, AutoCloseable arena, Object scope) {
    }

    private static final Map<Object, Loan> LOANS = new ConcurrentHashMap<>();
    /** (Buffer) -> MemorySegment.ofBuffer(buffer).scope(), as Object. */
    private static final MethodHandle SCOPE_OF;
    /** (Object scope) -> scope.isAlive(). */
    private static final MethodHandle IS_ALIVE;
    /** () -> Arena.ofShared(), as Object. */
    private static final MethodHandle NEW_ARENA;
    /**
     * (Buffer region, long offset, long size, Object arena, Consumer cleanup) ->
     * ofBuffer(region).asSlice(offset, size).reinterpret(arena, cleanup).asByteBuffer().
     */
    private static final MethodHandle VIEW;

    static {
        MethodHandle scopeOf = null;
        MethodHandle isAlive = null;
        MethodHandle newArena = null;
        MethodHandle view = null;
        try {
            Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
            Class<?> arena = Class.forName("java.lang.foreign.Arena");
            Class<?> scope = Class.forName("java.lang.foreign.MemorySegment$Scope");
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            MethodHandle ofBuffer = lookup.findStatic(segment, "ofBuffer", MethodType.methodType(segment, Buffer.class));
            MethodHandle scopeMethod = lookup.findVirtual(segment, "scope", MethodType.methodType(scope));
            scopeOf = MethodHandles.filterReturnValue(ofBuffer, scopeMethod)
                    .asType(MethodType.methodType(Object.class, Buffer.class));
            isAlive = lookup.findVirtual(scope, "isAlive", MethodType.methodType(boolean.class))
                    .asType(MethodType.methodType(boolean.class, Object.class));
            newArena = lookup.findStatic(arena, "ofShared", MethodType.methodType(arena))
                    .asType(MethodType.methodType(Object.class));
            MethodHandle asSlice = lookup.findVirtual(segment, "asSlice",
                    MethodType.methodType(segment, long.class, long.class));
            // Restricted and caller-sensitive: looked up as this class (needs native access, which
            // Ferry's JVM flags grant; without it the JVM warns once, later JDKs refuse).
            MethodHandle reinterpret = MethodHandles.lookup().findVirtual(segment, "reinterpret",
                    MethodType.methodType(segment, arena, Consumer.class));
            MethodHandle asByteBuffer = lookup.findVirtual(segment, "asByteBuffer",
                    MethodType.methodType(ByteBuffer.class));
            // (region, offset, size) -> slice; then (slice, arena, cleanup) -> reinterpreted; then -> buffer
            MethodHandle slice = MethodHandles.collectArguments(asSlice, 0, ofBuffer);
            MethodHandle reinterpreted = MethodHandles.collectArguments(reinterpret, 0, slice);
            view = MethodHandles.filterReturnValue(reinterpreted, asByteBuffer)
                    .asType(MethodType.methodType(ByteBuffer.class, Buffer.class, long.class, long.class,
                            Object.class, Consumer.class));
            // Probe: a closed arena must make its views unusable, or releasing would not be safe.
            ByteBuffer region = ByteBuffer.allocateDirect(16);
            Object probeArena = newArena.invoke();
            ByteBuffer probe = (ByteBuffer) view.invoke((Buffer) region, 4L, 8L, probeArena, (Consumer<Object>) s -> {
            });
            Object probeScope = scopeOf.invoke((Buffer) probe.slice());
            ((AutoCloseable) probeArena).close();
            boolean closedRefuses;
            try {
                probe.get(0);
                closedRefuses = false;
            } catch (IllegalStateException expected) {
                closedRefuses = true;
            }
            if (!closedRefuses || (boolean) isAlive.invoke(probeScope) || probe.capacity() != 8 || !probeScope.equals(scopeOf.invoke((Buffer) probe))) {
                view = null;
            }
        } catch (Throwable e) {
            LoggerFactory.getLogger(Loans.class).debug("received buffers cannot be released early: {}", e.toString());
            view = null;
        }
        SCOPE_OF = view == null ? null : scopeOf;
        NEW_ARENA = view == null ? null : newArena;
        IS_ALIVE = view == null ? null : isAlive;
        VIEW = view;
    }

    private Loans() {
    }

    /** Whether lent memory can be viewed through closable views in this JVM. */
    public static boolean available() {
        return VIEW != null;
    }

    /**
     * A view of {@code size} bytes of {@code region} at {@code offset} with an arena of its own (the
     * view is its own root: views derived from it refer to it, not to {@code region}, which it keeps
     * reachable), or null when that is not available.
     */
    public static View closableView(ByteBuffer region, int offset, int size) {
        if (VIEW == null) {
            return null;
        }
        try {
            Object arena = NEW_ARENA.invokeExact();
            // The cleanup keeps the region reachable as long as the arena is: the view itself does not.
            Consumer<Object> keepRegion = segment -> java.lang.ref.Reference.reachabilityFence(region);
            ByteBuffer buffer = (ByteBuffer) VIEW.invokeExact((Buffer) region, (long) offset, (long) size, arena,
                    (Consumer) keepRegion);
            return new View(buffer, (AutoCloseable) arena, scopeOf(buffer));
        } catch (Throwable e) {
            throw new IllegalStateException("cannot view a pooled range", e);
        }
    }

    /** From now on {@link #find} answers {@code loan} for every view sharing {@code scope}. */
    public static void register(Object scope, Loan loan) {
        LOANS.put(scope, loan);
    }

    /** Forgets the loan of {@code scope} (its memory came back). */
    public static void unregister(Object scope) {
        LOANS.remove(scope);
    }

    /** The loan whose memory {@code buffer} views, or null (not lent memory, or returned already). */
    public static Loan find(Buffer buffer) {
        if (SCOPE_OF == null || !buffer.isDirect() || LOANS.isEmpty()) {
            return null;
        }
        return LOANS.get(scopeOf(buffer));
    }

    /**
     * Pins the loan of {@code buffer} for a send that reads it (null when it is not lent memory):
     * while pinned, its memory does not go back even if the application releases it. Throws
     * {@link RpcException} ({@code ILLEGAL_STATE}) for a buffer whose memory was released.
     */
    public static Loan pinForSend(Buffer buffer) {
        if (SCOPE_OF == null || !buffer.isDirect()) {
            return null;
        }
        Object scope = scopeOf(buffer);
        Loan loan = LOANS.get(scope);
        if (loan != null && loan.pin()) {
            return loan;
        }
        if (loan != null || !isAlive(scope)) {
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
    public static boolean close(AutoCloseable arena) {
        try {
            arena.close();
            return true;
        } catch (IllegalStateException e) {
            return false;
        } catch (Exception e) {
            throw new IllegalStateException("cannot close a lent range's arena", e);
        }
    }

    private static boolean isAlive(Object scope) {
        try {
            return (boolean) IS_ALIVE.invokeExact(scope);
        } catch (Throwable e) {
            throw new IllegalStateException("cannot tell whether a buffer's scope is alive", e);
        }
    }

    private static Object scopeOf(Buffer buffer) {
        try {
            return SCOPE_OF.invokeExact(buffer);
        } catch (Throwable e) {
            throw new IllegalStateException("cannot find the scope of a buffer", e);
        }
    }
}
