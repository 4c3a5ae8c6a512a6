package dev.ferry.rpc.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A namespace inside another store: every key is stored as {@code prefix + "/" + key}, as c10d's
 * {@code PrefixStore} does. Prefix stores nest ({@code new PrefixStore("b", new PrefixStore("a", s))}
 * uses keys {@code a/b/key}).
 *
 * <pre>{@code
 * Store names = new PrefixStore("names", store);
 * names.set("0", "worker0".getBytes(UTF_8));   // stored as "names/0"
 * }</pre>
 *
 * <p>A prefix store is a view and shares the lifetime of the store it wraps: {@link #close()}
 * closes the underlying store. Timeouts reported by {@link StoreTimeoutException#missingKeys()} are
 * given without the prefix, as the caller named them. {@link #numKeys()} counts the keys of the
 * whole underlying store, as in c10d.
 *
 * <p>This class is thread-safe if the wrapped store is.
 */
public final class PrefixStore implements Store {
    private final String prefix;
    private final Store base;

    /**
     * @param prefix the namespace; keys become {@code prefix + "/" + key}
     * @param base the store to keep the keys in
     */
    public PrefixStore(String prefix, Store base) {
        this.prefix = Objects.requireNonNull(prefix, "prefix") + "/";
        this.base = Objects.requireNonNull(base, "base");
    }

    /** The prefix without its trailing slash. */
    public String prefix() {
        return prefix.substring(0, prefix.length() - 1);
    }

    /** The wrapped store. */
    public Store underlying() {
        return base;
    }

    private String full(String key) {
        return prefix + Objects.requireNonNull(key, "key");
    }

    private List<String> full(List<String> keys) {
        Objects.requireNonNull(keys, "keys");
        List<String> prefixed = new ArrayList<>(keys.size());
        for (String key : keys) {
            prefixed.add(full(key));
        }
        return prefixed;
    }

    private StoreTimeoutException unprefixed(StoreTimeoutException e) {
        List<String> keys = new ArrayList<>(e.missingKeys().size());
        for (String key : e.missingKeys()) {
            keys.add(key.startsWith(prefix) ? key.substring(prefix.length()) : key);
        }
        return new StoreTimeoutException(e.timeout(), keys, e);
    }

    @Override
    public void set(String key, byte[] value) {
        base.set(full(key), value);
    }

    @Override
    public void setEphemeral(String key, byte[] value) {
        base.setEphemeral(full(key), value);
    }

    @Override
    public boolean hasSessions() {
        return base.hasSessions();
    }

    @Override
    public byte[] get(String key, Duration timeout) {
        try {
            return base.get(full(key), timeout);
        } catch (StoreTimeoutException e) {
            throw unprefixed(e);
        }
    }

    @Override
    public long add(String key, long delta) {
        return base.add(full(key), delta);
    }

    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        return base.compareSet(full(key), expected, desired);
    }

    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        try {
            base.waitFor(full(keys), timeout);
        } catch (StoreTimeoutException e) {
            throw unprefixed(e);
        }
    }

    @Override
    public boolean check(List<String> keys) {
        return base.check(full(keys));
    }

    @Override
    public boolean deleteKey(String key) {
        return base.deleteKey(full(key));
    }

    @Override
    public long numKeys() {
        return base.numKeys();
    }

    @Override
    public Duration timeout() {
        return base.timeout();
    }

    @Override
    public PrefixStore withTimeout(Duration timeout) {
        return new PrefixStore(prefix(), base.withTimeout(timeout));
    }

    @Override
    public void close() {
        base.close();
    }

    @Override
    public String toString() {
        return "PrefixStore[" + prefix() + " in " + base + "]";
    }
}
