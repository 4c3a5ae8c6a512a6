package dev.ferry.distributed;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.ClassPolicy;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import dev.ferry.rpc.spi.SerializationExtension;
import dev.ferry.rpc.spi.TypeRegistry;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.memory.MemoryBuffer;
import org.apache.fory.serializer.Serializer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A peer that writes tensors the way the codec does but with layouts that lie: decoding fails with
 * a clear {@code SERIALIZATION_ERROR}, never with a tensor reading outside its memory, and the
 * codec goes on decoding good messages.
 */
class MalformedTensorTest {
    private static final int FLOAT32 = 4;
    private static final int INT64 = 3;

    private final ObjectCodec forger = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(new Forger()), 64 * 1024);
    private final ObjectCodec receiver = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")),
            List.of(new TensorSerialization()), 64 * 1024);

    @Test
    void theForgerWritesWhatItReadsBack() {
        ForgedTensor forged = new ForgedTensor(FLOAT32, new float[] {1, 2}, 1, new int[] {1}, new int[] {1}, true);

        ForgedTensor back = (ForgedTensor) decode(forger, forger.encode(forged));

        assertThat(back.offset()).isEqualTo(1);
        assertThat(back.shape()).containsExactly(1);
        assertThat(back.strides()).containsExactly(1);
        assertThat(back.requiresGrad()).isTrue();
        assertThat((float[]) back.elements()).containsExactly(1, 2);
    }

    @Test
    void aLayoutReachingPastItsStorageIsRefused() {
        assertRefused(new ForgedTensor(FLOAT32, new float[25], 30, new int[] {5, 5}, new int[] {5, 1}, false),
                "storage");
        assertRefused(new ForgedTensor(FLOAT32, new float[25], 0, new int[] {5, 5}, new int[] {6, 1}, false),
                "storage");
    }

    @Test
    void negativeSizesStridesAndOffsetsAreRefused() {
        assertRefused(new ForgedTensor(FLOAT32, new float[25], 0, new int[] {5, 5}, new int[] {-1, 1}, false),
                "Negative strides");
        assertRefused(new ForgedTensor(FLOAT32, new float[25], 0, new int[] {-5}, new int[] {1}, false),
                "size 4294967291");
        assertRefused(new ForgedTensor(FLOAT32, new float[25], -1, new int[] {5}, new int[] {1}, false),
                "storage offset 4294967295");
    }

    @Test
    void absurdShapesAreRefusedBeforeAnythingIsAllocated() {
        assertRefused(new ForgedTensor(FLOAT32, new float[1], 0, new int[65], new int[65], false),
                "65 dimensions (at most 64)");
        assertRefused(new ForgedTensor(FLOAT32, new float[1], 0, new int[] {65536, 65536}, new int[] {0, 0}, false),
                "more than 2147483647 elements");
    }

    @Test
    void dtypeAndElementsMustAgree() {
        assertRefused(new ForgedTensor(9, new float[1], 0, new int[] {1}, new int[] {1}, false),
                "unknown dtype code 9");
        assertRefused(new ForgedTensor(FLOAT32, new long[1], 0, new int[] {1}, new int[] {1}, false),
                "a storage of dtype float32 must hold a float[], the message held long[]");
        assertRefused(new ForgedTensor(INT64, new long[1], 0, new int[] {1}, new int[] {1}, true),
                "a tensor of dtype int64 cannot require grad");
    }

    @Test
    void theReceiverGoesOnDecodingGoodTensors() {
        assertRefused(new ForgedTensor(FLOAT32, new float[4], 9, new int[] {2}, new int[] {1}, false), "storage");
        ObjectCodec sender = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(new TensorSerialization()), 64 * 1024);
        Tensor good = Tensors.rand(3, 4).t();

        Tensor back = (Tensor) decode(receiver, sender.encode(good));

        assertThat(back.equal(good)).isTrue();
        assertThat(back.strides()).containsExactly(1, 4);
    }

    private void assertRefused(ForgedTensor forged, String expected) {
        EncodedPayload payload = forger.encode(forged);
        assertThatThrownBy(() -> decode(receiver, payload))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                .hasMessageContaining("malformed tensor in message")
                .hasMessageContaining(expected);
    }

    private static Object decode(ObjectCodec codec, EncodedPayload payload) {
        assertThat(payload.outOfBand()).isEmpty();
        return codec.decode(ByteBuffer.wrap(payload.inBand()), List.of());
    }

    /** What a lying peer sends in place of a tensor (same ids, same layout of fields). */
    record ForgedTensor(int dtypeCode, Object elements, int offset, int[] shape, int[] strides, boolean requiresGrad) {
    }

    record ForgedStorage(int dtypeCode, Object elements) {
    }

    /** Registers the forgeries under the tensor types' ids; a Ferry package, so it may use them. */
    static final class Forger implements SerializationExtension {
        @Override
        public void register(TypeRegistry registry) {
            registry.register(ForgedStorage.class, TensorSerialization.STORAGE_ID, r -> new Serializer<ForgedStorage>(
                    r.getConfig(), ForgedStorage.class) {
                @Override
                public void write(WriteContext write, ForgedStorage value) {
                    write.getBuffer().writeByte((byte) value.dtypeCode());
                    write.writeRef(value.elements());
                }

                @Override
                public ForgedStorage read(ReadContext read) {
                    int dtypeCode = read.getBuffer().readByte();
                    return new ForgedStorage(dtypeCode, read.readRef());
                }
            });
            registry.register(ForgedTensor.class, TensorSerialization.TENSOR_ID, r -> new Serializer<ForgedTensor>(
                    r.getConfig(), ForgedTensor.class) {
                @Override
                public void write(WriteContext write, ForgedTensor value) {
                    write.writeRef(new ForgedStorage(value.dtypeCode(), value.elements()));
                    MemoryBuffer buffer = write.getBuffer();
                    buffer.writeVarUInt32(value.offset());
                    buffer.writeVarUInt32(value.shape().length);
                    for (int size : value.shape()) {
                        buffer.writeVarUInt32(size);
                    }
                    for (int stride : value.strides()) {
                        buffer.writeVarUInt32(stride);
                    }
                    buffer.writeByte(value.requiresGrad() ? 1 : 0);
                }

                @Override
                public ForgedTensor read(ReadContext read) {
                    ForgedStorage storage = (ForgedStorage) read.readRef();
                    MemoryBuffer buffer = read.getBuffer();
                    int offset = buffer.readVarUInt32();
                    int[] shape = new int[buffer.readVarUInt32()];
                    int[] strides = new int[shape.length];
                    for (int i = 0; i < shape.length; i++) {
                        shape[i] = buffer.readVarUInt32();
                    }
                    for (int i = 0; i < strides.length; i++) {
                        strides[i] = buffer.readVarUInt32();
                    }
                    return new ForgedTensor(storage.dtypeCode(), storage.elements(), offset, shape, strides,
                            buffer.readByte() != 0);
                }
            });
        }
    }
}
