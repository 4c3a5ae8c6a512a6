package dev.ferry.distributed.internal;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Storage;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.serializer.Serializer;

/**
 * {@code | dtype code (byte) | elements (a primitive array, through Fory: out of band when large) |}.
 * Reference-tracked, so the tensors of one message that share a storage share it on the receiver.
 * The version counter does not travel: a received storage is new.
 */
public final class StorageSerializer extends Serializer<Storage> {
    public StorageSerializer(Config config) {
        super(config, Storage.class);
    }

    @Override
    public void write(WriteContext write, Storage value) {
        write.getBuffer().writeByte(WireDType.code(value.dtype()));
        write.writeRef(value.array());
    }

    @Override
    public Storage read(ReadContext read) {
        DType dtype = WireDType.of(read.getBuffer().readByte());
        Object array = read.readRef();
        Class<?> expected = WireDType.arrayClass(dtype);
        if (array == null || array.getClass() != expected) {
            throw new MalformedTensorException("a storage of dtype " + dtype + " must hold a " + expected.getSimpleName()
                    + ", the message held " + (array == null ? "null" : array.getClass().getSimpleName()));
        }
        return Storage.wrap(array);
    }
}
