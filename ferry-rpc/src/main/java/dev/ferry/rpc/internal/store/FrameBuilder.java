package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Builds one outgoing frame of the {@linkplain StoreProtocol store protocol}: header first, then
 * body fields, then {@link #toByteArray()} fills in the length. Not thread-safe; build, then hand
 * the finished array to the connection's writer.
 */
public final class FrameBuilder {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(64);

    private FrameBuilder(int id, byte type) {
        writeInt(0); // length, patched in toByteArray()
        writeInt(id);
        out.write(type);
    }

    public static FrameBuilder start(int id, byte type) {
        return new FrameBuilder(id, type);
    }

    public FrameBuilder putByte(byte value) {
        out.write(value);
        return this;
    }

    public FrameBuilder putBoolean(boolean value) {
        out.write(value ? 1 : 0);
        return this;
    }

    public FrameBuilder putShort(short value) {
        out.write(value >>> 8);
        out.write(value);
        return this;
    }

    public FrameBuilder putInt(int value) {
        writeInt(value);
        return this;
    }

    public FrameBuilder putLong(long value) {
        writeInt((int) (value >>> 32));
        writeInt((int) value);
        return this;
    }

    public FrameBuilder putBytes(byte[] value) {
        // Check before copying, so an oversized value fails fast instead of doubling the heap use.
        checkFits((long) out.size() + 4 + value.length);
        writeInt(value.length);
        out.writeBytes(value);
        return this;
    }

    public FrameBuilder putString(String value) {
        return putBytes(value.getBytes(StandardCharsets.UTF_8));
    }

    public FrameBuilder putStrings(List<String> values) {
        writeInt(values.size());
        for (String value : values) {
            putString(value);
        }
        return this;
    }

    /**
     * The complete frame, length prefix included.
     *
     * @throws RpcException INVALID_ARGUMENT if the frame exceeds {@link StoreProtocol#MAX_FRAME_BYTES}
     */
    public byte[] toByteArray() {
        checkFits(out.size());
        byte[] frame = out.toByteArray();
        int length = frame.length - 4;
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
        return frame;
    }

    private static void checkFits(long frameBytes) {
        long length = frameBytes - 4;
        if (length > StoreProtocol.MAX_FRAME_BYTES) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Store message of " + length
                    + " bytes exceeds the limit of " + StoreProtocol.MAX_FRAME_BYTES + " bytes");
        }
    }

    private void writeInt(int value) {
        out.write(value >>> 24);
        out.write(value >>> 16);
        out.write(value >>> 8);
        out.write(value);
    }
}
