package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.MembershipListener;
import dev.ferry.rpc.WorkerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The group's members as this worker knows them, and the one place that changes them: a worker
 * that introduces itself ({@link #admit}, from the {@link Hello} that opens its connection) joins
 * or, as a higher incarnation of a member, replaces it; a member that says it leaves ({@link
 * #leave}) is removed. Each change makes a new {@link WorkerDirectory}, which readers take without
 * locking; the {@link MembershipListener}s hear of it, and of losses the agent reports, on the
 * agent's timer thread in the order they happened.
 *
 * <pre>
 *   Hello(name, rank, incarnation, address):
 *     unknown name, its rank free      JOINED     added
 *     known, same incarnation          ACCEPTED   (a further connection of a member)
 *     known, higher incarnation        REPLACED   the old one is gone: a restarted worker
 *     known, lower incarnation         REFUSED    a superseded process (its messages are dropped)
 *     unknown name, its rank taken     REFUSED
 *     unknown name, a fixed-size world REFUSED    (its members are the ones rendezvous formed it of)
 * </pre>
 *
 * <p>Thread-safe: changes are serialized under a lock; {@link #directory()} is a volatile read.
 */
final class Membership {
    private static final Logger log = LoggerFactory.getLogger(Membership.class);

    /** What {@link #admit} decided. */
    enum Admission { ACCEPTED, JOINED, REPLACED, REFUSED }

    /**
     * The decision on one Hello: the member it is now ({@code entry}, null when refused), the one it
     * replaced (REPLACED only) and why it was refused (REFUSED only).
     */
    record Admitted(Admission kind, WorkerDirectory.Entry entry, WorkerDirectory.Entry replaced, String refusal) {
    }

    private final Object lock = new Object();
    private final List<MembershipListener> listeners = new CopyOnWriteArrayList<>();
    /** Runs an event delivery on the agent's timer thread, after those scheduled before it. */
    private final Consumer<Runnable> onTimer;
    private final String self;
    private volatile WorkerDirectory directory;
    /** Whether the world has no fixed size, so that a worker this one never heard of may join. */
    private volatile boolean open;

    Membership(String self, Consumer<Runnable> onTimer) {
        this.self = self;
        this.onTimer = onTimer;
    }

    /** The members now; null until rendezvous has found them. */
    WorkerDirectory directory() {
        return directory;
    }

    /** The members rendezvous found; {@code open}: the world has no fixed size. */
    void start(WorkerDirectory found, boolean open) {
        synchronized (lock) {
            this.open = open;
            directory = found;
        }
    }

    /** Decides on the worker a Hello introduces, updating the directory (see the class comment). */
    Admitted admit(Hello hello) {
        WorkerDirectory.Entry entry = new WorkerDirectory.Entry(new WorkerInfo(hello.name(), hello.rank()),
                hello.address(), hello.incarnation());
        Admitted admitted;
        synchronized (lock) {
            WorkerDirectory members = directory;
            WorkerDirectory.Entry known = members.entry(hello.name());
            if (known != null && known.incarnation() == hello.incarnation()) {
                return known.info().id() == hello.rank() ? new Admitted(Admission.ACCEPTED, known, null, null)
                        : new Admitted(Admission.REFUSED, null, null, hello.name() + " is rank " + known.info().id()
                        + " here, not " + hello.rank());
            }
            if (known != null && known.incarnation() > hello.incarnation()) {
                return new Admitted(Admission.REFUSED, null, null, "incarnation " + hello.incarnation() + " of "
                        + hello.name() + " was replaced by incarnation " + known.incarnation());
            }
            if (known == null && !open) {
                return new Admitted(Admission.REFUSED, null, null, hello.name() + " is not a member of this world"
                        + " of fixed size (it takes its own members' restarts only)");
            }
            for (WorkerInfo member : members.workers()) {
                if (member.id() == hello.rank() && !member.name().equals(hello.name())) {
                    return new Admitted(Admission.REFUSED, null, null, "rank " + hello.rank() + " is "
                            + member.name() + "'s, not " + hello.name() + "'s");
                }
            }
            directory = members.with(entry);
            admitted = known == null ? new Admitted(Admission.JOINED, entry, null, null)
                    : new Admitted(Admission.REPLACED, entry, known, null);
        }
        if (admitted.kind() == Admission.REPLACED) {
            log.info("{}: {} restarted: incarnation {} replaces {}", self, hello.name(), hello.incarnation(),
                    admitted.replaced().incarnation());
            WorkerInfo old = admitted.replaced().info();
            fire(listener -> listener.onLost(old, "replaced by a new incarnation of it (it restarted)"));
        } else {
            log.info("{}: {} joined the group", self, hello.name());
        }
        fire(listener -> listener.onJoined(entry.info()));
        return admitted;
    }

    /**
     * Removes incarnation {@code incarnation} of {@code name}, which left; returns the entry
     * removed, or null if that incarnation is not a member (already gone, or replaced).
     */
    WorkerDirectory.Entry leave(String name, long incarnation, String why) {
        WorkerDirectory.Entry gone;
        synchronized (lock) {
            gone = directory.entry(name);
            if (gone == null || gone.incarnation() != incarnation) {
                return null;
            }
            directory = directory.without(name, why);
        }
        log.info("{}: {} {}", self, name, why);
        fire(listener -> listener.onLeft(gone.info()));
        return gone;
    }

    /** Drops candidate {@code name} that a joining worker could not reach (a stale registration). */
    void dropUnreachable(String name, String why) {
        synchronized (lock) {
            directory = directory.without(name, why);
        }
    }

    /** {@code worker} was found lost: the listeners hear of it. */
    void lost(WorkerInfo worker, String reason) {
        fire(listener -> listener.onLost(worker, reason));
    }

    /** {@code worker}, lost before, was heard again. */
    void back(WorkerInfo worker) {
        fire(listener -> listener.onJoined(worker));
    }

    AutoCloseable addListener(MembershipListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        return () -> listeners.remove(listener);
    }

    private void fire(Consumer<MembershipListener> event) {
        if (listeners.isEmpty()) {
            return;
        }
        onTimer.accept(() -> {
            for (MembershipListener listener : listeners) {
                try {
                    event.accept(listener);
                } catch (RuntimeException e) {
                    log.warn("{}: membership listener {} failed", self, listener.getClass().getName(), e);
                }
            }
        });
    }
}
