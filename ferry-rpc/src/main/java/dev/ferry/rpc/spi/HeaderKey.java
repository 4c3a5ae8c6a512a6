package dev.ferry.rpc.spi;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Function;

/**
 * A typed key of a per-call header entry (like grpc's {@code Metadata.Key}). Header entries travel
 * in the message header, outside the serialized payload, so layers such as distributed autograd
 * (the autograd context id), deadlines and tracing can attach per-call context without touching
 * the arguments.
 *
 * <pre>{@code
 * static final HeaderKey<Long> AUTOGRAD_CONTEXT = HeaderKey.ofLong("ferry-autograd-context");
 * }</pre>
 *
 * <p>Names are at most 255 bytes of UTF-8; keys are equal when their names are equal.
 *
 * @param <T> the value type
 */
public final class HeaderKey<T> {
    private final String name;
    private final Function<T, byte[]> encoder;
    private final Function<byte[], T> decoder;

    private HeaderKey(String name, Function<T, byte[]> encoder, Function<byte[], T> decoder) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.getBytes(StandardCharsets.UTF_8).length > 255) {
            throw new IllegalArgumentException("header key name must be 1 to 255 UTF-8 bytes: '" + name + "'");
        }
        this.name = name;
        this.encoder = Objects.requireNonNull(encoder, "encoder");
        this.decoder = Objects.requireNonNull(decoder, "decoder");
    }

    /** A key whose values are encoded by the given functions. */
    public static <T> HeaderKey<T> of(String name, Function<T, byte[]> encoder, Function<byte[], T> decoder) {
        return new HeaderKey<>(name, encoder, decoder);
    }

    /** A key holding a {@code long}, 8 bytes big-endian on the wire. */
    public static HeaderKey<Long> ofLong(String name) {
        return new HeaderKey<>(name,
                v -> ByteBuffer.allocate(Long.BYTES).putLong(v).array(),
                b -> {
                    if (b.length != Long.BYTES) {
                        throw new IllegalArgumentException("header '" + name + "' expects 8 bytes, got " + b.length);
                    }
                    return ByteBuffer.wrap(b).getLong();
                });
    }

    /** A key holding a string, UTF-8 on the wire. */
    public static HeaderKey<String> ofString(String name) {
        return new HeaderKey<>(name, v -> v.getBytes(StandardCharsets.UTF_8), b -> new String(b, StandardCharsets.UTF_8));
    }

    public String name() {
        return name;
    }

    byte[] encode(T value) {
        return encoder.apply(value);
    }

    T decode(byte[] bytes) {
        return decoder.apply(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HeaderKey<?> other && other.name.equals(name);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return "HeaderKey(" + name + ")";
    }
}
