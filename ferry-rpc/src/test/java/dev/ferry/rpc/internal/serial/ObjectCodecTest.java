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

    /**
     * Every string a program can hold travels in its own bytes (Latin-1, else UTF-16) and comes back
     * equal: one with an unpaired surrogate in mostly-ASCII text too, which Fory's compressed string
     * writer refuses ("malformed input"), so the codec does not use that writer.
     */
    @Test
    void everyStringTravelsInItsOwnBytes() {
        for (String text : List.of("", "latin1", "\u00e9t\u00e9", "\u4e2d\u6587", "\ud83d\ude00", "price: 3 \u20ac",
                "truncated \ud83d", "x".repeat(200) + "\u20ac\udc00")) {
            EncodedPayload payload = CODEC.encode(text);
            assertThat(indexOf(payload.inBand(), ownBytes(text))).as(text).isNotNegative();
            assertThat(roundTrip(CODEC, payload)).isEqualTo(text);
        }
    }

    /**
     * A string header with coder 3, which no encoder writes, fails the decoding: Fory 1.6's plain
     * reader made of it a String whose length() disagrees with its characters.
     */
    @Test
    void aStringHeaderWithCoderThreeIsASerializationError() {
        byte[] bytes = CODEC.encode(new java.util.ArrayList<>(List.of("ok", "forged"))).inBand();
        int header = indexOf(bytes, ownBytes("forged")) - 1;
        assertThat(bytes[header]).as("6 bytes, coder 0 (Latin-1)").isEqualTo((byte) (6 << 2));

        bytes[header] |= 0b11;

        assertThatThrownBy(() -> CODEC.decode(ByteBuffer.wrap(bytes), List.of()))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                .hasMessageContaining("coder type 3");
        bytes[header] = (byte) ((6 << 2) | 1); // the same bytes as UTF-16 are three characters
        assertThat(CODEC.decode(ByteBuffer.wrap(bytes), List.of())).isEqualTo(List.of("ok", "\u6f66\u6772\u6465"));
    }

    /** A string's bytes as the JDK holds it: Latin-1 if every character is, else UTF-16 (little-endian). */
    private static byte[] ownBytes(String text) {
        if (text.chars().allMatch(c -> c <= 0xff)) {
            return text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        }
        byte[] bytes = new byte[text.length() * 2];
        for (int i = 0; i < text.length(); i++) {
            bytes[2 * i] = (byte) text.charAt(i);
            bytes[2 * i + 1] = (byte) (text.charAt(i) >> 8);
        }
        return bytes;
    }

    private static int indexOf(byte[] bytes, byte[] part) {
        for (int i = 0; i + part.length <= bytes.length; i++) {
            if (java.util.Arrays.equals(bytes, i, i + part.length, part, 0, part.length)) {
                return i;
            }
        }
        return -1;
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
    void aRefusedClassIsNamedInTheError() {
        // Fory's own list of dangerous classes words its refusal differently from the policy's.
        assertThatThrownBy(() -> CODEC.encode(List.of(new Thread(() -> { }))))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                .hasMessageContaining("the class policy refuses java.lang.Thread:")
                .hasMessageContaining("(RpcBackendOptions.Builder.applicationPackage or FERRY_APPLICATION_PACKAGES)");
        assertThatThrownBy(() -> CODEC.encode(List.of(new ProcessBuilder("true"))))
                .hasMessageContaining("the class policy refuses java.lang.ProcessBuilder:");
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
