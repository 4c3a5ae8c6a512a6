package dev.ferry.rpc.internal.serial;

import org.apache.fory.serializer.BufferObject;

import java.util.List;

/**
 * A value encoded for the wire: the in-band object stream and the large buffers that travel
 * beside it, out of band, without being copied into the stream.
 */
public record EncodedPayload(byte[] inBand, List<BufferObject> outOfBand) {
    public EncodedPayload {
        outOfBand = List.copyOf(outOfBand);
    }

    /** Total bytes on the wire, in band and out of band. */
    public long totalBytes() {
        long total = inBand.length;
        for (BufferObject buffer : outOfBand) {
            total += buffer.totalBytes();
        }
        return total;
    }
}
