package dev.ferry.rpc.internal.store;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the fields of a frame body. Every malformed input (short body, negative or oversized
 * length, invalid UTF-8, trailing bytes) becomes a {@link ProtocolException}, never an unchecked
 * exception, so a connection handler can drop the peer with one catch. Not thread-safe.
 */
public final class FrameReader {
    private final ByteBuffer buffer;

    public FrameReader(byte[] body) {
        this.buffer = ByteBuffer.wrap(body);
    }

    public byte readByte() throws ProtocolException {
        try {
            return buffer.get();
        } catch (BufferUnderflowException e) {
            throw truncated("int8");
        }
    }

    public boolean readBoolean() throws ProtocolException {
        byte b = readByte();
        if (b != 0 && b != 1) {
            throw new ProtocolException("boolean byte must be 0 or 1, got " + b);
        }
        return b == 1;
    }

    public short readShort() throws ProtocolException {
        try {
            return buffer.getShort();
        } catch (BufferUnderflowException e) {
            throw truncated("int16");
        }
    }

    public int readInt() throws ProtocolException {
        try {
            return buffer.getInt();
        } catch (BufferUnderflowException e) {
            throw truncated("int32");
        }
    }

    public long readLong() throws ProtocolException {
        try {
            return buffer.getLong();
        } catch (BufferUnderflowException e) {
            throw truncated("int64");
        }
    }

    public byte[] readBytes() throws ProtocolException {
        int length = readInt();
        if (length < 0 || length > buffer.remaining()) {
            throw new ProtocolException("byte string length " + length + " exceeds the "
                    + buffer.remaining() + " bytes left in the frame");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }

    public String readString() throws ProtocolException {
        byte[] utf8 = readBytes();
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(utf8))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new ProtocolException("string is not valid UTF-8");
        }
    }

    public List<String> readStrings() throws ProtocolException {
        int count = readInt();
        // Each string needs at least its 4-byte length, which bounds a hostile count.
        if (count < 0 || count > buffer.remaining() / 4) {
            throw new ProtocolException("key count " + count + " impossible for a frame with "
                    + buffer.remaining() + " bytes left");
        }
        List<String> strings = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            strings.add(readString());
        }
        return List.copyOf(strings);
    }

    /** Fails if unread bytes remain: a frame longer than its fields is as malformed as a short one. */
    public void expectEnd() throws ProtocolException {
        if (buffer.hasRemaining()) {
            throw new ProtocolException(buffer.remaining() + " unexpected trailing bytes in frame");
        }
    }

    private static ProtocolException truncated(String field) {
        return new ProtocolException("frame ends in the middle of an " + field + " field");
    }
}
