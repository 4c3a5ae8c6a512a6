package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import java.io.Serial;
import java.time.Duration;
import java.util.List;

/**
 * A {@link Store} wait that ran out of time. The code is always {@link Code#TIMEOUT}; {@link
 * #missingKeys()} lists the keys that were still absent, so a caller waiting for one key per rank
 * can name the ranks that never arrived.
 *
 * <pre>{@code
 * try {
 *     store.waitFor(List.of("rank/0", "rank/1", "rank/2"), Duration.ofSeconds(30));
 * } catch (StoreTimeoutException e) {
 *     log.error("ranks never joined: {}", e.missingKeys()); // e.g. [rank/2]
 * }
 * }</pre>
 */
public final class StoreTimeoutException extends RpcException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final List<String> missingKeys;
    private final Duration timeout;

    /**
     * @param timeout the wait that ran out
     * @param missingKeys the keys still absent at the deadline (not empty)
     */
    public StoreTimeoutException(Duration timeout, List<String> missingKeys) {
        this(timeout, missingKeys, null);
    }

    /**
     * @param timeout the wait that ran out
     * @param missingKeys the keys still absent at the deadline (not empty)
     * @param cause the timeout this one translates (e.g. with the keys a {@link PrefixStore} saw), or null
     */
    public StoreTimeoutException(Duration timeout, List<String> missingKeys, Throwable cause) {
        super(Code.TIMEOUT, "Timed out after " + describe(timeout) + " waiting for store key(s) "
                + missingKeys + " to be set", cause);
        this.timeout = timeout;
        this.missingKeys = List.copyOf(missingKeys);
    }

    /** The keys that were still absent when the wait ran out, in the order they were asked for. */
    public List<String> missingKeys() {
        return missingKeys;
    }

    /** How long the wait lasted. */
    public Duration timeout() {
        return timeout;
    }

    private static String describe(Duration timeout) {
        return timeout.toMillis() + " ms";
    }
}
