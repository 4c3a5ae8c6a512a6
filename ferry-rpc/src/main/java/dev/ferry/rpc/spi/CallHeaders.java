package dev.ferry.rpc.spi;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The header entries of one call: an immutable map from names to bytes, read and written through
 * typed {@link HeaderKey}s. Interceptors derive new headers with {@link #with}.
 *
 * <p>This class is immutable and thread-safe.
 */
public final class CallHeaders {
    private static final CallHeaders EMPTY = new CallHeaders(Map.of());

    private final Map<String, byte[]> entries;

    private CallHeaders(Map<String, byte[]> entries) {
        this.entries = entries;
    }

    public static CallHeaders empty() {
        return EMPTY;
    }

    /** Headers holding exactly these raw entries (used by the wire decoder). */
    public static CallHeaders ofRaw(Map<String, byte[]> raw) {
        return raw.isEmpty() ? EMPTY : new CallHeaders(Collections.unmodifiableMap(new LinkedHashMap<>(raw)));
    }

    /** The value under {@code key}, or null if absent. */
    public <T> T get(HeaderKey<T> key) {
        byte[] raw = entries.get(key.name());
        return raw == null ? null : key.decode(raw);
    }

    public boolean contains(HeaderKey<?> key) {
        return entries.containsKey(key.name());
    }

    /** These headers with {@code key} set to {@code value} (replacing any previous value). */
    public <T> CallHeaders with(HeaderKey<T> key, T value) {
        Objects.requireNonNull(value, "value");
        Map<String, byte[]> copy = new LinkedHashMap<>(entries);
        copy.put(key.name(), key.encode(value));
        return new CallHeaders(Collections.unmodifiableMap(copy));
    }

    /** These headers without {@code key}. */
    public CallHeaders without(HeaderKey<?> key) {
        if (!entries.containsKey(key.name())) {
            return this;
        }
        Map<String, byte[]> copy = new LinkedHashMap<>(entries);
        copy.remove(key.name());
        return copy.isEmpty() ? EMPTY : new CallHeaders(Collections.unmodifiableMap(copy));
    }

    /** The raw entries, for the wire encoder. Do not modify the arrays. */
    public Map<String, byte[]> raw() {
        return entries;
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    @Override
    public String toString() {
        return "CallHeaders" + entries.keySet();
    }
}
