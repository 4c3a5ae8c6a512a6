package dev.ferry.distributed;

import dev.ferry.distributed.internal.StorageSerializer;
import dev.ferry.distributed.internal.TensorSerializer;
import dev.ferry.rpc.spi.SerializationExtension;
import dev.ferry.rpc.spi.TypeRegistry;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Storage;
import dev.ferry.tensor.Tensor;

/**
 * Lets {@link Tensor}s (and {@link Parameter}s) travel as arguments, results and RRef values of
 * Ferry calls, with the semantics of PyTorch's RPC pickler:
 * <ul>
 *   <li>the receiver gets a copy with the same dtype, shape, strides and storage offset (a
 *       non-contiguous view stays non-contiguous);
 *   <li>tensors that share a storage in one message share one storage on the receiver, and the same
 *       tensor sent twice in one message arrives as one tensor;
 *   <li>a view that uses at most half of a storage of 8 KiB or more is sent as a compact copy of
 *       the viewed elements, not the whole storage (PyTorch's {@code cloneSparseTensors});
 *   <li>{@code requiresGrad} travels: the receiver gets a fresh leaf that requires grad (no
 *       history, no {@code grad});
 *   <li>large storages travel out of band, as the transport's binary buffers do.
 * </ul>
 * Decoding checks every layout against its storage (no negative or out-of-range sizes, strides or
 * offsets, dtype matching the elements), so a malformed message fails that call with
 * {@code SERIALIZATION_ERROR} instead of producing a tensor that reads outside its memory.
 *
 * <p>Nothing to configure: having {@code ferry-distributed} on the class path installs it through
 * {@link java.util.ServiceLoader} on every agent. Every worker of a group needs it.
 *
 * <pre>{@code
 * Tensor sum = Rpc.rpcSync("worker1", MyOps::add, Tensors.ones(2, 2), Tensors.ones(2, 2));
 * }</pre>
 */
public final class TensorSerialization implements SerializationExtension {
    /**
     * Wire ids of the tensor types (part of the wire format: never renumber). The next ids are
     * the pipeline's ({@code PipelineTypes}).
     */
    public static final int STORAGE_ID = TypeRegistry.FIRST_MODULE_ID;
    public static final int TENSOR_ID = TypeRegistry.FIRST_MODULE_ID + 1;
    public static final int PARAMETER_ID = TypeRegistry.FIRST_MODULE_ID + 2;

    /** Public for {@link java.util.ServiceLoader}. */
    public TensorSerialization() {
    }

    @Override
    public void register(TypeRegistry registry) {
        registry.register(Storage.class, STORAGE_ID, resolver -> new StorageSerializer(resolver.getConfig()));
        registry.register(Tensor.class, TENSOR_ID,
                resolver -> new TensorSerializer<>(resolver.getConfig(), Tensor.class));
        registry.register(Parameter.class, PARAMETER_ID,
                resolver -> new TensorSerializer<>(resolver.getConfig(), Parameter.class));
    }
}
