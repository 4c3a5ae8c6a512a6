package dev.ferry.rpc.internal.wire;

import org.apache.fory.serializer.BufferObject;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Finds the memory behind an out-of-band buffer so that a frame can refer to it instead of copying
 * it. Fory serializes a {@link ByteBuffer} as a {@link BufferObject.ByteBufferBufferObject}: its
 * bytes, then one byte for the byte order (1 = big endian). That object keeps the buffer in a private
 * field; this class reads it once through a private lookup (Fory lives on the class path, in the
 * unnamed module, so the lookup is allowed), and answers null wherever that does not work, in which
 * case the caller copies as before.
 */
final class BufferSources {
    private static final VarHandle BYTE_BUFFER = find();

    private BufferSources() {
    }

    /**
     * The {@link ByteBuffer} whose remaining bytes {@code buffer} writes before its order byte (the
     * caller must not move its position: take a {@code duplicate()}, after reading its order); null
     * if {@code buffer} is not a {@link ByteBuffer} Fory wrapped.
     */
    static ByteBuffer byteBufferOf(BufferObject buffer) {
        if (BYTE_BUFFER == null || !(buffer instanceof BufferObject.ByteBufferBufferObject)) {
            return null;
        }
        return (ByteBuffer) BYTE_BUFFER.get(buffer);
    }

    /** The byte that follows a {@link ByteBuffer}'s bytes in Fory's out-of-band format. */
    static byte orderByte(ByteBuffer source) {
        return (byte) (source.order() == ByteOrder.BIG_ENDIAN ? 1 : 0);
    }

    private static VarHandle find() {
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(BufferObject.ByteBufferBufferObject.class,
                    MethodHandles.lookup());
            return lookup.findVarHandle(BufferObject.ByteBufferBufferObject.class, "buffer", ByteBuffer.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
