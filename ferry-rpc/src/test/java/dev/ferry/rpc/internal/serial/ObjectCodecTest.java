package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.spi.SerializationExtension;
import dev.ferry.rpc.spi.TypeRegistry;
import org.example.ferry.ApplicationExtension;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ObjectCodecTest {
    record Sample(String name, float[] weights, byte[] blob, ByteBuffer direct, int small) {
    }

    record Secret(String value) {
    }

    private static final ObjectCodec CODEC = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(), 64 * 1024);

    private static Object roundTrip(ObjectCodec codec, EncodedPayload payload) {
        List<ByteBuffer> outOfBand = payload.outOfBand().stream().map(b -> {
            ByteBuffer copy = ByteBuffer.allocate(b.totalBytes());
            b.writeTo(org.apache.fory.memory.MemoryBuffer.fromByteBuffer(copy));
            return copy;
        }).toList();
        return codec.decode(ByteBuffer.wrap(payload.inBand()), outOfBand);
    }

    @Test
    void largeBinaryBuffersTravelOutOfBand() {
        float[] weights = new float[1 << 18]; // 1 MiB
        weights[weights.length - 1] = 3.5f;
        byte[] blob = new byte[1 << 20];
        blob[7] = 9;
        ByteBuffer direct = ByteBuffer.allocateDirect(1 << 20);
        direct.put(5, (byte) 4);
        Sample sample = new Sample("s", weights, blob, direct, 42);
        EncodedPayload payload = CODEC.encode(sample);
        assertThat(payload.outOfBand()).hasSize(3);
        assertThat(payload.inBand().length).isLessThan(1024); // the megabytes are not in the stream
        Sample back = (Sample) roundTrip(CODEC, payload);
        assertThat(back.weights()).hasSize(weights.length);
        assertThat(back.weights()[weights.length - 1]).isEqualTo(3.5f);
        assertThat(back.blob()[7]).isEqualTo((byte) 9);
        assertThat(back.direct().get(5)).isEqualTo((byte) 4);
        assertThat(back.small()).isEqualTo(42);
    }

    /** A Ferry module's extension (its class is in a dev.ferry package) registering one type. */
    record ModuleExtension(Class<?> type, int id) implements SerializationExtension {
        @Override
        public void register(TypeRegistry registry) {
            registry.register(type, id);
        }
    }

    @Test
    void idsBelowTheUserRangeArePerRangeAndOwner() {
        ClassPolicy policy = new ClassPolicy(List.of("dev.ferry"));
        assertThatThrownBy(() -> new ObjectCodec(policy, List.of(new ApplicationExtension(Secret.class, 900)), 64 * 1024))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("type id 900 of " + Secret.class.getName() + " is reserved for Ferry")
                .hasMessageContaining("extensions use ids from 1000");
        assertThatThrownBy(() -> new ObjectCodec(policy, List.of(new ModuleExtension(Secret.class, 899)), 64 * 1024))
                .hasMessageContaining("type id 899");

        ObjectCodec module = new ObjectCodec(policy, List.of(new ModuleExtension(Secret.class, 900)), 64 * 1024);
        ObjectCodec application = new ObjectCodec(policy, List.of(new ApplicationExtension(Secret.class, 1000)), 64 * 1024);
        assertThat(roundTrip(module, module.encode(new Secret("m")))).isEqualTo(new Secret("m"));
        assertThat(roundTrip(application, application.encode(new Secret("a")))).isEqualTo(new Secret("a"));
    }

    @Test
    void smallBuffersStayInBand() {
        EncodedPayload payload = CODEC.encode(new int[] {1, 2, 3});
        assertThat(payload.outOfBand()).isEmpty();
        assertThat((int[]) roundTrip(CODEC, payload)).containsExactly(1, 2, 3);
    }

    /**
     * A value without binary buffers goes with Fory's plain header (the out-of-band flag cleared),
     * which Fory reads on its fast path; once a buffer is met, in band or out, the flag stays, since
     * Fory's array serializers then write the buffer layout. Both decode.
     */
    @Test
    void theOutOfBandFlagIsSetOnlyWhenTheStreamHoldsBuffers() {
        EncodedPayload plain = CODEC.encode(List.of("a", 1, 2.5));
        assertThat(plain.inBand()[0] & ObjectCodec.OUT_OF_BAND_FLAG).isZero();
        assertThat(roundTrip(CODEC, plain)).isEqualTo(List.of("a", 1, 2.5));

        EncodedPayload inBandBuffer = CODEC.encode(new Sample("s", new float[] {1.5f}, new byte[] {7}, null, 3));
        assertThat(inBandBuffer.outOfBand()).isEmpty();
        assertThat(inBandBuffer.inBand()[0] & ObjectCodec.OUT_OF_BAND_FLAG).isEqualTo(ObjectCodec.OUT_OF_BAND_FLAG);
        Sample back = (Sample) roundTrip(CODEC, inBandBuffer);
        assertThat(back.weights()).containsExactly(1.5f);
        assertThat(back.blob()).containsExactly((byte) 7);

        EncodedPayload outOfBand = CODEC.encode(new byte[1 << 17]);
        assertThat(outOfBand.outOfBand()).hasSize(1);
        assertThat(outOfBand.inBand()[0] & ObjectCodec.OUT_OF_BAND_FLAG).isEqualTo(ObjectCodec.OUT_OF_BAND_FLAG);
        assertThat((byte[]) roundTrip(CODEC, outOfBand)).hasSize(1 << 17);
    }

    /** The flag is Fory's: a stream written with a callback differs from one without in that bit only. */
    @Test
    void theFlagIsTheBitForyWritesForACallback() {
        org.apache.fory.Fory fory = org.apache.fory.Fory.builder().withXlang(false).requireClassRegistration(false).build();
        byte[] without = fory.serialize("x");
        byte[] with = fory.serialize("x", buffer -> true);
        assertThat(with).hasSameSizeAs(without);
        assertThat(with[0]).isEqualTo((byte) (without[0] | ObjectCodec.OUT_OF_BAND_FLAG));
        assertThat(java.util.Arrays.copyOfRange(with, 1, with.length))
                .isEqualTo(java.util.Arrays.copyOfRange(without, 1, without.length));
    }

    @Test
    void classesOutsideTheAllowListAreRefusedOnDecode() {
        ObjectCodec strict = new ObjectCodec(new ClassPolicy(List.of("com.example.")), List.of(), 64 * 1024);
        EncodedPayload payload = CODEC.encode(new Secret("x"));
        assertThatThrownBy(() -> roundTrip(strict, payload)).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR));
    }

    @Test
    void knownGadgetClassesAreRefused() {
        ClassPolicy policy = new ClassPolicy(List.of("dev.ferry"));
        assertThat(policy.isAllowed("java.lang.ProcessBuilder")).isFalse();
        assertThat(policy.isAllowed("org.apache.commons.collections.functors.InvokerTransformer")).isFalse();
        assertThat(policy.isAllowed("javax.naming.InitialContext")).isFalse();
        assertThat(policy.isAllowed("java.util.ArrayList")).isTrue();
        assertThat(policy.isAllowed("[Ljava.lang.String;")).isTrue();
    }

    @Test
    void garbageBytesAreASerializationError() {
        assertThatThrownBy(() -> CODEC.decode(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5}), List.of()))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR));
    }
}
