package dev.ferry.rpc;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Faults a worker injects into what it sends, for testing a program's fault tolerance (PyTorch's
 * {@code FAULTY_TENSORPIPE} backend: {@code num_fail_sends}, {@code messages_to_fail},
 * {@code messages_to_delay}). Set on {@link RpcBackendOptions.Builder#faultInjection}; works with
 * every built-in backend and every route a message may take (lanes, direct writes, chunks, shared
 * memory, in-process), because the faults are decided before the transport chooses the route.
 * Without it (the default) no message passes through any of this.
 *
 * <pre>{@code
 * RpcBackendOptions options = RpcBackendOptions.builder()
 *         .faultInjection(FaultInjection.builder()
 *                 .failSends(3, MessageType.REMOTE_CALL)                 // the first 3 remote() sends fail
 *                 .delay(Duration.ofMillis(1500), MessageType.CALL)      // every call waits 1.5 s
 *                 .failConnectionsTo("worker2")                          // worker2 is cut off
 *                 .build())
 *         .build();
 * }</pre>
 *
 * <p>What the program sees, by fault:
 * <ul>
 *   <li><b>Failed sends</b> ({@link Builder#failSends}): the first {@code n} messages of each of the
 *       kinds that this worker sends, counted per kind over all peers, are not sent. Ferry does not
 *       retry a send (a send fails only when its connection broke, and a broken connection makes the
 *       peer lost), so each failure is what a message lost with its connection gives: a call
 *       ({@link MessageType#CALL}, {@link MessageType#REMOTE_CALL}, {@link MessageType#RREF_FETCH_CALL})
 *       fails at once with {@link RpcException.Code#UNAVAILABLE}, and the RRef of a failed
 *       {@code remote()} raises that error on every use; a lost {@link MessageType#RESPONSE} leaves its
 *       caller waiting until its timeout ({@link RpcException.Code#TIMEOUT}). The RRef protocol's own
 *       messages ({@link MessageType#RREF_FORK_REQUEST}, {@link MessageType#RREF_CHILD_ACCEPT},
 *       {@link MessageType#RREF_USER_DELETE}) and distributed autograd's releases
 *       ({@link MessageType#AUTOGRAD_CLEANUP}) are the exception: as PyTorch's, they are sent again when
 *       their send fails (each is idempotent), 50 ms after the first failure and twice as long after
 *       each next one, up to every 5 s, until they get through, for as long as their peer is a member
 *       ({@link dev.ferry.rpc.spi.RetriedSends#untilDelivered}); a warning after six sends.</li>
 *   <li><b>Delays</b> ({@link Builder#delay}): each message of the kind waits that long before it is
 *       handed to the transport, on no thread of the program's (the sender returns at once). The
 *       order the protocol relies on is kept: a message that must not be overtaken (the RRef protocol,
 *       {@code remote()}, Ferry's own calls) is not, so messages behind a delayed one of those wait
 *       for it. A call's timeout runs from when it was made, so a delay counts against it.</li>
 *   <li><b>Failed connections</b> ({@link Builder#failConnectionsTo}): a connection between this
 *       worker and one of the named ones closes when a call is sent on it or arrives on it: calls to
 *       them fail with {@link RpcException.Code#UNAVAILABLE}, their calls here do not run, they are lost
 *       peers here (as dead ones are: graceful shutdown completes without them) and the rest of the group
 *       is untouched. Each later call tries again, and fails again.</li>
 * </ul>
 * Faults start when this worker has initialized ({@code initRpc} returned): the messages that form
 * the group are never faulted, so the counts of failed sends count the program's messages. Faulting
 * {@link MessageType#CONTROL} messages (heartbeats, the all-gathers of barriers and shutdown) is
 * allowed, and fails what depends on them as losing them would.
 * Every worker decides its own faults: a group whose workers all share the options behaves as
 * PyTorch's faulty agent, where every worker has them.
 *
 * <p>Immutable and thread-safe.
 */
public final class FaultInjection {
    private final Map<MessageType, Integer> failedSends;
    private final Map<MessageType, Duration> delays;
    private final Set<String> failedPeers;

    private FaultInjection(Builder b) {
        this.failedSends = Collections.unmodifiableMap(new EnumMap<>(b.failedSends));
        this.delays = Collections.unmodifiableMap(new EnumMap<>(b.delays));
        this.failedPeers = Collections.unmodifiableSet(new LinkedHashSet<>(b.failedPeers));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** How many of the first messages of {@code type} fail; 0 for a kind not failed. */
    public int failedSends(MessageType type) {
        return failedSends.getOrDefault(Objects.requireNonNull(type, "type"), 0);
    }

    /** The kinds whose first sends fail (PyTorch's {@code messages_to_fail}). */
    public Set<MessageType> messagesToFail() {
        return failedSends.keySet();
    }

    /** How long each message of {@code type} is held; {@link Duration#ZERO} for a kind not delayed. */
    public Duration delay(MessageType type) {
        return delays.getOrDefault(Objects.requireNonNull(type, "type"), Duration.ZERO);
    }

    /** The delayed kinds and their delays (PyTorch's {@code messages_to_delay}). */
    public Map<MessageType, Duration> messagesToDelay() {
        return delays;
    }

    /** The workers whose connections with this one fail, by name. */
    public Set<String> failedPeers() {
        return failedPeers;
    }

    @Override
    public String toString() {
        return "FaultInjection{failedSends=" + failedSends + ", delays=" + delays + ", failedPeers=" + failedPeers + "}";
    }

    /** Builds {@link FaultInjection}. Not thread-safe. */
    public static final class Builder {
        private final Map<MessageType, Integer> failedSends = new EnumMap<>(MessageType.class);
        private final Map<MessageType, Duration> delays = new EnumMap<>(MessageType.class);
        private final Set<String> failedPeers = new LinkedHashSet<>();

        private Builder() {
        }

        /**
         * The first {@code count} messages of each of {@code types} fail (PyTorch's
         * {@code num_fail_sends} and {@code messages_to_fail}); a later call for a kind replaces its
         * count, 0 removes it.
         */
        public Builder failSends(int count, MessageType... types) {
            if (count < 0) {
                throw invalid("failSends count must not be negative, got " + count);
            }
            for (MessageType type : kinds(types)) {
                if (count == 0) {
                    failedSends.remove(type);
                } else {
                    failedSends.put(type, count);
                }
            }
            return this;
        }

        /**
         * Every message of each of {@code types} waits {@code delay} before it is sent (PyTorch's
         * {@code messages_to_delay}); a later call for a kind replaces its delay, zero removes it.
         */
        public Builder delay(Duration delay, MessageType... types) {
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative()) {
                throw invalid("delay must not be negative, got " + delay);
            }
            for (MessageType type : kinds(types)) {
                if (delay.isZero()) {
                    delays.remove(type);
                } else {
                    delays.put(type, delay);
                }
            }
            return this;
        }

        /** Every connection between this worker and each of these (worker names) fails. */
        public Builder failConnectionsTo(String... workers) {
            for (String worker : Objects.requireNonNull(workers, "workers")) {
                if (worker == null || worker.isEmpty()) {
                    throw invalid("failConnectionsTo needs worker names, got " + Arrays.toString(workers));
                }
                failedPeers.add(worker);
            }
            return this;
        }

        public FaultInjection build() {
            return new FaultInjection(this);
        }

        private static MessageType[] kinds(MessageType[] types) {
            Objects.requireNonNull(types, "types");
            if (types.length == 0) {
                throw invalid("name at least one MessageType");
            }
            for (MessageType type : types) {
                Objects.requireNonNull(type, "types");
            }
            return types;
        }

        private static RpcException invalid(String message) {
            return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
        }
    }
}
