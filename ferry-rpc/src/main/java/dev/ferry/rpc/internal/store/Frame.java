package dev.ferry.rpc.internal.store;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;

/**
 * One received frame of the {@linkplain StoreProtocol store protocol}: its id, its type byte (an
 * opcode or a status) and a reader over its body.
 */
public record Frame(int id, byte type, FrameReader body) {

    /**
     * Reads one frame, rejecting a length outside {@code 5..maxFrameBytes} before reading further.
     * The body's memory grows as its bytes arrive: a peer that claims a long frame and sends little
     * of it costs what it sent, not what it claimed.
     *
     * @throws EOFException if the stream ends cleanly before a new frame starts
     * @throws ProtocolException if the length is out of range
     */
    public static Frame read(DataInputStream in, int maxFrameBytes) throws IOException {
        int first = in.read();
        if (first < 0) {
            throw new EOFException("connection closed by peer");
        }
        int length = (first << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8)
                | in.readUnsignedByte();
        if (length < StoreProtocol.HEADER_BYTES || length > maxFrameBytes) {
            throw new ProtocolException("frame length " + Integer.toUnsignedString(length)
                    + " outside " + StoreProtocol.HEADER_BYTES + ".." + maxFrameBytes);
        }
        int id = in.readInt();
        byte type = in.readByte();
        int bodyBytes = length - StoreProtocol.HEADER_BYTES;
        byte[] body = in.readNBytes(bodyBytes);
        if (body.length < bodyBytes) {
            throw new EOFException("connection closed in the middle of a frame of " + length + " bytes");
        }
        return new Frame(id, type, new FrameReader(body));
    }
}
