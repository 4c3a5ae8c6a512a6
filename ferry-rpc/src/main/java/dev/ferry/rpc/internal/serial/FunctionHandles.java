package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RpcException;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The short handles one worker gave its peers for the functions they bound there
 * ({@code RemoteMethodN}, tensorplay's {@code method_factory}): a call through a bound function
 * carries its handle, a byte or three, where other calls carry the function's identity (class,
 * method and descriptor, some 100 bytes), and decoding it is an array read.
 *
 * <p>A handle names only a function this worker resolved and allowed when a peer bound it (the
 * agent checks before it calls {@link #bind}); every peer binding the same method gets the same
 * handle, and a handle is never reused while the worker lives. So the table is bounded by the
 * functions the program lets peers call, and in any case by {@link #MAX_HANDLES}.
 *
 * <p>This class is thread-safe: handles are given out under a lock (binding is rare), and looked
 * up without one.
 */
final class FunctionHandles {
    /** The most handles one worker gives out; a bind beyond it fails. */
    static final int MAX_HANDLES = 1 << 16;
    private static final int CHUNK_BITS = 10;
    private static final int CHUNK = 1 << CHUNK_BITS;

    /** Handle to identity, in chunks made as handles reach them (a worker binds a few, mostly). */
    private final AtomicReferenceArray<AtomicReferenceArray<FunctionRef.Identity>> chunks =
            new AtomicReferenceArray<>(MAX_HANDLES / CHUNK);
    /** Guarded by {@code this}. */
    private final Map<FunctionRef.MethodKey, Integer> handles = new HashMap<>();

    /** The handle of {@code function}'s method, given out now if it has none yet. */
    synchronized int bind(FunctionRef function) {
        Integer known = handles.get(function.key());
        if (known != null) {
            return known;
        }
        int handle = handles.size();
        if (handle >= MAX_HANDLES) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "cannot bind " + function.displayName()
                    + ": this worker has given out " + MAX_HANDLES + " function handles, its most");
        }
        AtomicReferenceArray<FunctionRef.Identity> chunk = chunks.get(handle >>> CHUNK_BITS);
        if (chunk == null) {
            chunk = new AtomicReferenceArray<>(CHUNK);
            chunks.set(handle >>> CHUNK_BITS, chunk);
        }
        chunk.set(handle & (CHUNK - 1), function.identity());
        handles.put(function.key(), handle);
        return handle;
    }

    /**
     * The function bound as {@code handle}; if this worker gave out no such handle, an error that
     * fails the message's decoding (as a malformed identity does).
     */
    FunctionRef.Identity identity(int handle) {
        AtomicReferenceArray<FunctionRef.Identity> chunk = handle >= 0 && handle < MAX_HANDLES
                ? chunks.get(handle >>> CHUNK_BITS) : null;
        FunctionRef.Identity identity = chunk == null ? null : chunk.get(handle & (CHUNK - 1));
        if (identity == null) {
            throw new IllegalArgumentException("the call names function handle " + handle + ", which this worker"
                    + " never gave out (handles are bound per worker and live as long as its agent)");
        }
        return identity;
    }

    /** How many handles this worker has given out. */
    synchronized int size() {
        return handles.size();
    }
}
