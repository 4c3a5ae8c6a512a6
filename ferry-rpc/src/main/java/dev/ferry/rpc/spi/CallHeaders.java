package dev.ferry.rpc.spi;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * The header entries of one call: an immutable map from names to bytes, read and written through
 * typed {@link HeaderKey}s. Interceptors derive new headers with {@link #with}.
 *
 * <p>A call carries a handful of entries at most, so they are kept in two small arrays searched in
 * order: every call builds and reads its headers, and a hash map per call cost more than the search.
 *
 * <p>This class is immutable and thread-safe.
 */
public final class CallHeaders {
    private static final CallHeaders EMPTY = new CallHeaders(new String[0], new byte[0][]);

    private final String[] names;
    private final byte[][] values;

    private CallHeaders(String[] names, byte[][] values) {
        this.names = names;
        this.values = values;
    }

    public static CallHeaders empty() {
        return EMPTY;
    }

    /** Headers holding exactly these raw entries. */
    public static CallHeaders ofRaw(Map<String, byte[]> raw) {
        if (raw.isEmpty()) {
            return EMPTY;
        }
        String[] names = new String[raw.size()];
        byte[][] values = new byte[raw.size()][];
        int i = 0;
        for (Map.Entry<String, byte[]> entry : raw.entrySet()) {
            names[i] = Objects.requireNonNull(entry.getKey(), "name");
            values[i++] = Objects.requireNonNull(entry.getValue(), "value");
        }
        return new CallHeaders(names, values);
    }

    /**
     * Headers holding these entries, in order (used by the wire decoder). The arrays are taken as
     * they are, not copied; a name that repeats keeps its last value.
     */
    public static CallHeaders ofRaw(String[] names, byte[][] values) {
        if (names.length != values.length) {
            throw new IllegalArgumentException(names.length + " names but " + values.length + " values");
        }
        if (names.length == 0) {
            return EMPTY;
        }
        // A peer chooses the count (up to 65,535 entries): the duplicate check must stay linear.
        // A call's few headers are compared pairwise; more go through a hash set.
        java.util.Set<String> seen = names.length > PAIRWISE_LIMIT ? new java.util.HashSet<>() : null;
        for (int i = 0; i < names.length; i++) {
            Objects.requireNonNull(names[i], "name");
            Objects.requireNonNull(values[i], "value");
            if (seen != null) {
                if (!seen.add(names[i])) {
                    return ofRepeated(names, values);
                }
                continue;
            }
            for (int j = 0; j < i; j++) {
                if (names[j].equals(names[i])) {
                    return ofRepeated(names, values);
                }
            }
        }
        return new CallHeaders(names, values);
    }

    /** Entries up to which {@link #ofRaw(String[], byte[][])} looks for repeated names pairwise. */
    private static final int PAIRWISE_LIMIT = 16;

    /** As {@link #withRaw} entry by entry (a repeated name keeps its first place and its last value), in linear time. */
    private static CallHeaders ofRepeated(String[] names, byte[][] values) {
        java.util.LinkedHashMap<String, byte[]> merged = new java.util.LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            merged.put(names[i], values[i]);
        }
        return new CallHeaders(merged.keySet().toArray(String[]::new), merged.values().toArray(byte[][]::new));
    }

    /** The value under {@code key}, or null if absent. */
    public <T> T get(HeaderKey<T> key) {
        int index = indexOf(key.name());
        return index < 0 ? null : key.decode(values[index]);
    }

    public boolean contains(HeaderKey<?> key) {
        return indexOf(key.name()) >= 0;
    }

    /** These headers with {@code key} set to {@code value} (replacing any previous value). */
    public <T> CallHeaders with(HeaderKey<T> key, T value) {
        Objects.requireNonNull(value, "value");
        return withRaw(key.name(), key.encode(value));
    }

    private CallHeaders withRaw(String name, byte[] value) {
        int index = indexOf(name);
        if (index >= 0) {
            byte[][] newValues = values.clone();
            newValues[index] = value;
            return new CallHeaders(names, newValues);
        }
        String[] newNames = Arrays.copyOf(names, names.length + 1);
        byte[][] newValues = Arrays.copyOf(values, values.length + 1);
        newNames[names.length] = name;
        newValues[values.length] = value;
        return new CallHeaders(newNames, newValues);
    }

    /** These headers without {@code key}. */
    public CallHeaders without(HeaderKey<?> key) {
        int index = indexOf(key.name());
        if (index < 0) {
            return this;
        }
        if (names.length == 1) {
            return EMPTY;
        }
        String[] newNames = new String[names.length - 1];
        byte[][] newValues = new byte[values.length - 1][];
        for (int i = 0, j = 0; i < names.length; i++) {
            if (i != index) {
                newNames[j] = names[i];
                newValues[j++] = values[i];
            }
        }
        return new CallHeaders(newNames, newValues);
    }

    /** Visits the raw entries in order, for the wire encoder. Do not modify the arrays. */
    public void forEachRaw(BiConsumer<String, byte[]> visitor) {
        for (int i = 0; i < names.length; i++) {
            visitor.accept(names[i], values[i]);
        }
    }

    /** The raw entries as a map, in order. Do not modify the arrays. */
    public Map<String, byte[]> raw() {
        Map<String, byte[]> map = new LinkedHashMap<>();
        forEachRaw(map::put);
        return Collections.unmodifiableMap(map);
    }

    /** The name of entry {@code index} (0 to {@link #size()} - 1), in insertion order. */
    public String nameAt(int index) {
        return names[index];
    }

    /** The raw value of entry {@code index}. Do not modify the array. */
    public byte[] valueAt(int index) {
        return values[index];
    }

    /** How many entries there are. */
    public int size() {
        return names.length;
    }

    public boolean isEmpty() {
        return names.length == 0;
    }

    private int indexOf(String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public String toString() {
        return "CallHeaders" + Arrays.toString(names);
    }
}
