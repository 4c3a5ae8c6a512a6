package dev.ferry.distributed.internal;

import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Storage;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.memory.MemoryBuffer;
import org.apache.fory.serializer.Serializer;

/**
 * Writes a {@link Tensor} (or a {@link Parameter}) as a layout over a reference-tracked storage:
 *
 * <pre>
 * | storage (StorageSerializer, by reference) | offset | dims | sizes... | strides... | requires grad |
 * |                                           | varu32 | varu32 | varu32 each | varu32 each |  byte  |
 * </pre>
 *
 * A view that uses at most half of a storage of 8 KiB or more goes as a compact copy of the viewed
 * elements ({@link #wireForm}). On the receiver the tensor is a fresh leaf: no history, no
 * {@code grad}, {@code requiresGrad} as sent; except inside a distributed autograd context, where
 * tensors (not parameters) that require grad are recorded in the message's send and receive
 * functions ({@link AutogradRecording}).
 */
public final class TensorSerializer<T extends Tensor> extends Serializer<T> {
    /** Views of storages smaller than this are sent with their whole storage (PyTorch's threshold). */
    static final int COMPACT_FROM_BYTES = 8 * 1024;
    /** More dimensions than any real tensor has; bounds what a malformed message can make us allocate. */
    static final int MAX_DIMS = 64;

    private final boolean parameter;

    public TensorSerializer(Config config, Class<T> type) {
        super(config, type);
        if (type != Tensor.class && type != Parameter.class) {
            throw new IllegalArgumentException("serializes Tensor and Parameter, not " + type.getName());
        }
        this.parameter = type == Parameter.class;
    }

    @Override
    public void write(WriteContext write, T value) {
        if (!parameter) {
            AutogradRecording.sent(value);
        }
        Tensor wire = wireForm(value);
        write.writeRef(wire.storage());
        MemoryBuffer buffer = write.getBuffer();
        buffer.writeVarUInt32(wire.storageOffset());
        int[] shape = wire.shape();
        int[] strides = wire.strides();
        buffer.writeVarUInt32(shape.length);
        for (int size : shape) {
            buffer.writeVarUInt32(size);
        }
        for (int stride : strides) {
            buffer.writeVarUInt32(stride);
        }
        buffer.writeByte(value.requiresGrad() ? 1 : 0);
    }

    @Override
    @SuppressWarnings("unchecked")
    public T read(ReadContext read) {
        if (!(read.readRef() instanceof Storage storage)) {
            throw new MalformedTensorException("a tensor's storage is missing");
        }
        MemoryBuffer buffer = read.getBuffer();
        int offset = buffer.readVarUInt32();
        int dims = buffer.readVarUInt32();
        if (dims < 0 || dims > MAX_DIMS) {
            throw new MalformedTensorException(Integer.toUnsignedString(dims) + " dimensions (at most " + MAX_DIMS + ")");
        }
        int[] shape = readInts(buffer, dims);
        int[] strides = readInts(buffer, dims);
        boolean requiresGrad = buffer.readByte() != 0;
        Tensor tensor = view(storage, offset, shape, strides);
        if (requiresGrad && !storage.dtype().isFloatingPoint()) {
            throw new MalformedTensorException("a tensor of dtype " + storage.dtype() + " cannot require grad");
        }
        // A parameter stays a leaf; a tensor received in a distributed autograd context gets the
        // message's receive function as history.
        return (T) (parameter ? new Parameter(tensor, requiresGrad)
                : AutogradRecording.received(tensor.requiresGrad_(requiresGrad)));
    }

    /**
     * What goes on the wire for {@code t}: itself (with its whole storage), or a compact copy when it
     * views at most half of a storage of at least {@link #COMPACT_FROM_BYTES}, so that sending a
     * few rows of a large matrix does not send the matrix.
     */
    static Tensor wireForm(Tensor t) {
        Storage storage = t.storage();
        long storageBytes = (long) storage.size() * storage.dtype().byteSize();
        boolean sparseView = storageBytes >= COMPACT_FROM_BYTES && storage.size() >= 2L * t.numel();
        return sparseView ? t.detach().clone() : t;
    }

    private static int[] readInts(MemoryBuffer buffer, int count) {
        int[] values = new int[count];
        for (int i = 0; i < count; i++) {
            values[i] = buffer.readVarUInt32();
        }
        return values;
    }

    /** The tensor the layout describes, after checking that it stays inside its storage. */
    private static Tensor view(Storage storage, int offset, int[] shape, int[] strides) {
        long elements = 1;
        for (int size : shape) {
            if (size < 0) {
                throw new MalformedTensorException("size " + Integer.toUnsignedString(size) + " in shape "
                        + java.util.Arrays.toString(shape));
            }
            elements *= size;
            if (elements > Integer.MAX_VALUE) {
                throw new MalformedTensorException("shape " + java.util.Arrays.toString(shape) + " has more than "
                        + Integer.MAX_VALUE + " elements");
            }
        }
        if (offset < 0) {
            throw new MalformedTensorException("storage offset " + Integer.toUnsignedString(offset));
        }
        try {
            return Tensors.asStrided(storage, shape, strides, offset);
        } catch (IllegalArgumentException e) {
            throw new MalformedTensorException(e.getMessage());
        }
    }
}
