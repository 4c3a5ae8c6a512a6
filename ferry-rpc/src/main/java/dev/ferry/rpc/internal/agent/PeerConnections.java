package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.transport.Transport;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * One connection per peer, opened on first use. Opening sends {@link Hello} so the peer knows who
 * is calling (and, if it does not know the caller yet, admits it to the group); a connection a peer
 * opened is adopted for calls to that peer once its Hello is admitted ({@link Membership#admit}). A
 * connection that closes is forgotten, so the next call reconnects (and fails promptly if the peer
 * is gone).
 *
 * <p>What arrives on an accepted connection behind its Hello waits while the Hello cannot be
 * decided yet ({@link #deferUntilAccepted}): until this worker has finished rendezvous, and, for a
 * restarted worker's new incarnation, until everything of the old one is gone here (its calls
 * failed, its connections closed, what was kept for it released), so that the new one's messages
 * are never taken for the old one's.
 *
 * <p>This class is thread-safe.
 */
final class PeerConnections {
    private static final Logger log = LoggerFactory.getLogger(PeerConnections.class);

    private final Transport transport;
    private final ObjectCodec codec;
    private final Membership membership;
    /** Ends an old incarnation here once its new one was admitted; complete when done. */
    private final Function<Membership.Admitted, CompletableFuture<Void>> replacing;
    private final Map<String, PeerOpening> byPeer = new ConcurrentHashMap<>();
    /** Every open connection whose peer is known, opened or accepted, by peer name: what losing it closes. */
    private final Map<String, Set<PeerChannel>> attached = new ConcurrentHashMap<>();
    /** Accepted connections whose messages wait, and what waits; guarded by itself. */
    private final Map<PeerChannel, HeldConnection> held = new IdentityHashMap<>();
    private final List<PeerChannel> heldUntilReady = new ArrayList<>(); // guarded by held
    private volatile boolean holding;
    private volatile Hello hello;

    PeerConnections(Transport transport, ObjectCodec codec, Membership membership,
                    Function<Membership.Admitted, CompletableFuture<Void>> replacing) {
        this.transport = transport;
        this.codec = codec;
        this.membership = membership;
        this.replacing = replacing;
    }

    /**
     * Rendezvous is done: this worker introduces itself with {@code self}, and the connections
     * whose Hello came before (faster peers) are admitted now, with what arrived behind them.
     */
    void ready(Hello self) {
        List<PeerChannel> release;
        synchronized (held) {
            hello = self;
            release = new ArrayList<>(heldUntilReady);
            heldUntilReady.clear();
        }
        release.forEach(this::release);
    }

    /** The connection to {@code peer}, opening it if needed. */
    PeerOpening get(WorkerInfo peer) {
        PeerOpening existing = byPeer.get(peer.name());
        if (existing != null && (!existing.isDone() || isUsable(existing))) {
            return existing;
        }
        PeerOpening opening = new PeerOpening();
        PeerOpening raced = existing == null
                ? byPeer.putIfAbsent(peer.name(), opening)
                : (byPeer.replace(peer.name(), existing, opening) ? null : byPeer.get(peer.name()));
        if (raced != null) {
            return raced;
        }
        open(peer, opening);
        return opening;
    }

    private void open(WorkerInfo peer, PeerOpening opening) {
        String address;
        try {
            address = membership.directory().addressOf(peer.name());
        } catch (RpcException gone) {
            byPeer.remove(peer.name(), opening);
            opening.completeExceptionally(gone);
            return;
        }
        transport.connect(address).whenComplete((connection, error) -> {
            if (error != null) {
                byPeer.remove(peer.name(), opening);
                opening.completeExceptionally(new RpcException(RpcException.Code.UNAVAILABLE,
                        "worker " + peer.name() + " at " + address + " is unreachable: " + rootMessage(error), error));
                return;
            }
            attach(connection, peer);
            try {
                connection.send(new OutboundMessage(MessageKind.HELLO, 0, CallHeaders.empty(), codec.encode(hello)),
                        Delivery.ORDERED, failure -> log.debug("hello to {} failed: {}", peer.name(), failure.toString()));
                opening.complete(connection);
            } catch (RuntimeException e) {
                byPeer.remove(peer.name(), opening);
                connection.close();
                opening.completeExceptionally(e);
            }
        });
    }

    /**
     * Identifies an accepted connection by its Hello; closes it if the Hello does not belong to
     * this group or is refused ({@link Membership#admit}). A Hello that arrives before this worker
     * has finished rendezvous (a faster peer) is held, with whatever follows it on that
     * connection, until {@link #ready}.
     */
    void accept(PeerChannel connection, Hello peerHello) {
        Hello self;
        synchronized (held) {
            self = hello;
            if (self == null) {
                hold(connection).actions.add(() -> accept(connection, peerHello));
                heldUntilReady.add(connection);
                return;
            }
        }
        if (!self.groupId().equals(peerHello.groupId())) {
            log.warn("rejecting connection from {}: {} is not of this group", connection.remoteAddress(), peerHello);
            connection.close();
            return;
        }
        Membership.Admitted admitted = membership.admit(peerHello);
        switch (admitted.kind()) {
            case REFUSED -> {
                log.warn("rejecting connection from {} ({}): {}", connection.remoteAddress(), peerHello.name(),
                        admitted.refusal());
                connection.close();
            }
            case REPLACED -> {
                // What the new incarnation sends waits until the old one is gone here.
                synchronized (held) {
                    hold(connection);
                }
                replacing.apply(admitted).whenComplete((done, failure) -> {
                    adopt(connection, admitted.entry().info());
                    release(connection);
                });
            }
            default -> adopt(connection, admitted.entry().info());
        }
    }

    private void adopt(PeerChannel connection, WorkerInfo peer) {
        attach(connection, peer);
        byPeer.putIfAbsent(peer.name(), PeerOpening.opened(connection));
    }

    /** Caller holds {@code held}. One more reason for {@code connection}'s messages to wait. */
    private HeldConnection hold(PeerChannel connection) {
        HeldConnection waiting = held.computeIfAbsent(connection, c -> new HeldConnection());
        waiting.holds++;
        holding = true;
        return waiting;
    }

    /**
     * One reason less for {@code connection}'s messages to wait; when none is left, runs what
     * waited, in arrival order (messages keep arriving behind while it runs), unless one of them
     * holds the connection again.
     */
    private void release(PeerChannel connection) {
        synchronized (held) {
            HeldConnection waiting = held.get(connection);
            if (waiting == null) {
                return;
            }
            waiting.holds--;
        }
        while (true) {
            Runnable next;
            synchronized (held) {
                HeldConnection waiting = held.get(connection);
                if (waiting == null || waiting.holds > 0) {
                    return;
                }
                if (waiting.actions.isEmpty()) {
                    // Only now, after the last one ran: what arrives next may run at once, in order.
                    held.remove(connection);
                    holding = !held.isEmpty();
                    return;
                }
                next = waiting.actions.remove(0);
            }
            next.run();
        }
    }

    /**
     * Queues {@code action} behind a held handshake of {@code connection}; false when the
     * connection has no handshake in progress.
     */
    boolean deferUntilAccepted(PeerChannel connection, Runnable action) {
        if (!holding) {
            return false;
        }
        // Looked up by connection, not read from its attachment: a release runs on another thread
        // and may attach the peer between such a read and this check.
        synchronized (held) {
            HeldConnection waiting = held.get(connection);
            if (waiting != null) {
                waiting.actions.add(action);
                return true;
            }
        }
        return false;
    }

    /** An accepted connection's messages that wait, and how many reasons they still wait for. */
    private static final class HeldConnection {
        final List<Runnable> actions = new ArrayList<>();
        int holds;
    }

    private void attach(PeerChannel connection, WorkerInfo peer) {
        connection.attach(new PeerLink(peer));
        attached.computeIfAbsent(peer.name(), name -> ConcurrentHashMap.newKeySet()).add(connection);
        if (!connection.isActive()) { // closed meanwhile: its close may have run before the add
            closed(connection);
        }
    }

    /** The peers with an open connection, opened or accepted. */
    List<WorkerInfo> connectedPeers() {
        List<WorkerInfo> peers = new ArrayList<>();
        attached.forEach((name, open) -> {
            for (PeerChannel connection : open) {
                if (connection.isActive() && PeerLink.of(connection) instanceof PeerLink link) {
                    peers.add(link.worker);
                    return;
                }
            }
        });
        return peers;
    }

    /**
     * Closes every connection to {@code peer} at once, failing what they had not written with
     * {@code cause}; each close is reported to the transport listener as usual, unless
     * {@code quietly}: then they are forgotten first, so their closes are nobody's concern (an old
     * incarnation's, whose calls the caller failed itself).
     */
    void abort(WorkerInfo peer, Throwable cause, boolean quietly) {
        PeerOpening current = byPeer.get(peer.name());
        if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
            byPeer.remove(peer.name(), current); // the next call opens a new one
        }
        Set<PeerChannel> open = quietly ? attached.remove(peer.name()) : attached.get(peer.name());
        if (open != null) {
            for (PeerChannel connection : open) {
                if (quietly) {
                    connection.attach(null);
                }
                connection.abort(cause);
            }
        }
    }

    /** Forgets a closed connection. */
    void closed(PeerChannel connection) {
        if (PeerLink.of(connection) instanceof PeerLink link) {
            WorkerInfo peer = link.worker;
            Set<PeerChannel> open = attached.get(peer.name());
            if (open != null) {
                open.remove(connection);
            }
            PeerOpening current = byPeer.get(peer.name());
            if (current != null && current.isDone() && !current.isCompletedExceptionally()
                    && current.join() == connection) {
                byPeer.remove(peer.name(), current);
            }
        }
    }

    /** Per peer with an open connection, what carries it ({@link PeerChannel#kind()}), by peer name. */
    Map<String, String> kinds() {
        Map<String, String> kinds = new java.util.TreeMap<>();
        byPeer.forEach((peer, future) -> {
            if (future.isDone() && !future.isCompletedExceptionally() && future.join().isActive()) {
                kinds.put(peer, future.join().kind());
            }
        });
        return kinds;
    }

    private static boolean isUsable(CompletableFuture<PeerChannel> future) {
        return !future.isCompletedExceptionally() && future.join().isActive();
    }

    private static String rootMessage(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return String.valueOf(root.getMessage());
    }
}
