package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.WorkerInfo;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Which connected peers are alive: a peer that sends nothing for the heartbeat timeout (the
 * {@code bound}) is declared lost, as is one whose connection closed while the group ran. Any
 * message from a peer is evidence that it lives; a peer silent for a fifth of the bound is sent a
 * heartbeat (a call it answers on its transport thread, however busy its request threads are), so a
 * live peer is never silent for long, while a peer that is stopped (SIGSTOP: the kernel still ACKs
 * its TCP segments, so no keep-alive notices), hung or cut off by the network is. TCP keep-alive
 * would notice only the last of these.
 *
 * <pre>
 *   every bound/5 (timer thread), per connected peer:
 *     heard since the last look?   yes: alive now; a lost one is back (partition healed, SIGCONT)
 *     silent for the bound?        yes: lost (its calls fail UNAVAILABLE, its connections close)
 *     silent for bound/5?          yes: send a heartbeat (unless one is out)
 * </pre>
 *
 * A lost peer stays addressable: a later call reconnects, and once it is heard again it is alive
 * again. Detection takes the bound plus at most a fifth of it.
 *
 * <p>Thread-safe: {@link #heard} runs on transport threads for every message and costs a map
 * lookup and, at most once per look, a volatile write; the looks run on the agent's timer thread.
 */
final class PeerLiveness {
    /**
     * Sends a heartbeat to a peer: any answer (or any other message) counts as evidence it lives.
     * One that fails because the peer cannot be reached reports it {@link #unreachable}.
     */
    interface Heartbeats {
        /** Sends one; calls {@code done} when it was answered or failed. Never blocks the caller. */
        void send(WorkerInfo peer, Duration timeout, Runnable done);
    }

    /** What this worker knows of one connected peer. */
    private static final class Watch {
        /** Set by transport threads when a message arrives, cleared by each look. */
        volatile boolean heard;
        /** When it was last heard ({@link System#nanoTime}), as of the last look; timer thread only. */
        long lastHeard;
        /** Whether a heartbeat to it is out; set by the timer thread, cleared when it is answered. */
        volatile boolean beating;

        Watch(long now) {
            this.lastHeard = now;
        }
    }

    private final String self;
    private final long boundNanos;
    private final Heartbeats heartbeats;
    private final Supplier<Collection<WorkerInfo>> connected;
    private final BiConsumer<WorkerInfo, String> onLost;
    private final Consumer<WorkerInfo> onBack;
    private final BiConsumer<Runnable, Long> schedule;
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();
    /** Peers declared lost and not heard since, with why; by name. */
    private final Map<String, String> lost = new ConcurrentHashMap<>();
    private volatile boolean stopped;

    /**
     * @param bound      the heartbeat timeout; {@link Duration#ZERO}: no heartbeats (only closed
     *                   connections make a peer lost)
     * @param connected  the peers this worker has an open connection to
     * @param onLost     a peer was declared silent for the bound, with why (timer thread)
     * @param onBack     a peer declared lost was heard again (timer thread)
     * @param schedule   runs a task on the agent's timer thread after a delay in nanoseconds
     */
    PeerLiveness(String self, Duration bound, Heartbeats heartbeats, Supplier<Collection<WorkerInfo>> connected,
                 BiConsumer<WorkerInfo, String> onLost, Consumer<WorkerInfo> onBack,
                 BiConsumer<Runnable, Long> schedule) {
        this.self = self;
        this.boundNanos = bound.toNanos();
        this.heartbeats = heartbeats;
        this.connected = connected;
        this.onLost = onLost;
        this.onBack = onBack;
        this.schedule = schedule;
    }

    /** Starts looking, every fifth of the bound; does nothing without a bound. */
    void start() {
        if (boundNanos > 0) {
            schedule.accept(this::look, interval());
        }
    }

    /** Stops looking (at shutdown, once the group no longer needs to know). */
    void stop() {
        stopped = true;
    }

    private long interval() {
        return Math.max(1_000_000, boundNanos / 5);
    }

    /** A message from {@code peer} arrived. */
    void heard(WorkerInfo peer) {
        Watch watch = watches.get(peer.name());
        if (watch != null && !watch.heard) {
            watch.heard = true;
        }
    }

    /**
     * {@code peer}'s connection closed while this worker ran: lost until heard again. Returns
     * whether it was not lost before.
     */
    boolean connectionClosed(WorkerInfo peer, String why) {
        watches.remove(peer.name());
        return lost.putIfAbsent(peer.name(), why) == null;
    }

    /** Forgets {@code peer}: it left, or a new incarnation replaced it. */
    void forget(WorkerInfo peer) {
        watches.remove(peer.name());
        lost.remove(peer.name());
    }

    /**
     * {@code peer} could not be reached (a connection to it failed, or a call to it failed
     * {@code UNAVAILABLE}): lost until heard again. Returns whether it was not lost before.
     */
    boolean unreachable(WorkerInfo peer, String why) {
        watches.remove(peer.name());
        return lost.putIfAbsent(peer.name(), "unreachable: " + why) == null;
    }

    /**
     * Makes sure each of {@code peers} is watched: one without a connection is sent a heartbeat,
     * which opens one (a peer whose connection then fails is {@link #unreachable}); from then on the
     * looks watch it. For a worker that waits for others (a gather's leader) and must learn of their
     * loss although it has not talked to them yet.
     */
    void probe(Collection<WorkerInfo> peers) {
        if (stopped) {
            return;
        }
        Set<String> open = new HashSet<>();
        connected.get().forEach(peer -> open.add(peer.name()));
        for (WorkerInfo peer : peers) {
            if (!open.contains(peer.name()) && !lost.containsKey(peer.name())) {
                heartbeats.send(peer, boundNanos > 0 ? Duration.ofNanos(boundNanos) : Duration.ZERO, () -> { });
            }
        }
    }

    /** Whether {@code name} is lost: declared silent, or its connection closed, and not heard since. */
    boolean isLost(String name) {
        return lost.containsKey(name);
    }

    /** The peers lost and not heard since, with why, by name. */
    Map<String, String> lost() {
        return new TreeMap<>(lost);
    }

    private void look() {
        if (stopped) {
            return;
        }
        long now = System.nanoTime();
        Set<String> seen = new HashSet<>();
        for (WorkerInfo peer : connected.get()) {
            seen.add(peer.name());
            Watch watch = watches.computeIfAbsent(peer.name(), name -> new Watch(now));
            if (watch.heard) {
                watch.heard = false;
                watch.lastHeard = now;
                if (lost.remove(peer.name()) != null) {
                    onBack.accept(peer);
                }
            } else if (now - watch.lastHeard >= boundNanos) {
                watches.remove(peer.name());
                String why = "it sent nothing for " + (now - watch.lastHeard) / 1_000_000
                        + " ms, heartbeats unanswered (heartbeatTimeout " + boundNanos / 1_000_000 + " ms)";
                lost.put(peer.name(), why);
                onLost.accept(peer, why);
                continue;
            }
            if (now - watch.lastHeard >= interval() && !watch.beating) {
                watch.beating = true;
                heartbeats.send(peer, Duration.ofNanos(boundNanos), () -> watch.beating = false);
            }
        }
        watches.keySet().retainAll(seen);
        schedule.accept(this::look, interval());
    }

    @Override
    public String toString() {
        return "PeerLiveness(" + self + ", bound " + boundNanos / 1_000_000 + " ms, lost " + lost.keySet() + ")";
    }
}
