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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One connection per peer, opened on first use. Opening sends {@link Hello} so the peer knows who
 * is calling; a connection a peer opened is adopted for calls to that peer once its Hello
 * arrives. A connection that closes is forgotten, so the next call reconnects (and fails promptly
 * if the peer is gone).
 *
 * <p>This class is thread-safe.
 */
final class PeerConnections {
    private static final Logger log = LoggerFactory.getLogger(PeerConnections.class);

    private final Transport transport;
    private final ObjectCodec codec;
    private final Hello hello;
    private final Map<String, CompletableFuture<PeerChannel>> byPeer = new ConcurrentHashMap<>();
    /** Every open channel whose peer is known, opened or accepted, by peer name: what losing it closes. */
    private final Map<String, Set<PeerChannel>> attached = new ConcurrentHashMap<>();
    private final List<HeldConnection> held = new ArrayList<>();
    private final Map<PeerChannel, HeldConnection> heldByConnection = new java.util.IdentityHashMap<>();
    private volatile boolean holding;
    private volatile WorkerDirectory directory;

    PeerConnections(Transport transport, ObjectCodec codec, Hello hello) {
        this.transport = transport;
        this.codec = codec;
        this.hello = hello;
    }

    void setDirectory(WorkerDirectory directory) {
        List<HeldConnection> release;
        synchronized (held) {
            this.directory = directory;
            release = new ArrayList<>(held);
            held.clear();
        }
        for (HeldConnection connection : release) {
            // Messages keep arriving behind the handshake while it is released: drain until empty.
            while (true) {
                List<Runnable> batch;
                synchronized (held) {
                    if (connection.actions.isEmpty()) {
                        connection.drained = true;
                        heldByConnection.values().remove(connection);
                        holding = !heldByConnection.isEmpty();
                        break;
                    }
                    batch = new ArrayList<>(connection.actions);
                    connection.actions.clear();
                }
                batch.forEach(Runnable::run);
            }
        }
    }

    /** The connection to {@code peer}, opening it if needed. */
    CompletableFuture<PeerChannel> get(WorkerInfo peer) {
        CompletableFuture<PeerChannel> existing = byPeer.get(peer.name());
        if (existing != null && (!existing.isDone() || isUsable(existing))) {
            return existing;
        }
        CompletableFuture<PeerChannel> opening = new CompletableFuture<>();
        CompletableFuture<PeerChannel> raced = existing == null
                ? byPeer.putIfAbsent(peer.name(), opening)
                : (byPeer.replace(peer.name(), existing, opening) ? null : byPeer.get(peer.name()));
        if (raced != null) {
            return raced;
        }
        open(peer, opening);
        return opening;
    }

    private void open(WorkerInfo peer, CompletableFuture<PeerChannel> opening) {
        String address = directory.addressOf(peer.name());
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
     * this group. A Hello that arrives before this worker has finished rendezvous (a faster peer)
     * is held, with whatever follows it on that connection, until {@link #setDirectory}.
     */
    void accept(PeerChannel connection, Hello peerHello) {
        synchronized (held) {
            if (directory == null) {
                HeldConnection waiting = new HeldConnection();
                waiting.actions.add(() -> accept(connection, peerHello));
                heldByConnection.put(connection, waiting);
                held.add(waiting);
                holding = true;
                return;
            }
        }
        WorkerDirectory workers = directory;
        if (!hello.groupId().equals(peerHello.groupId()) || !workers.contains(peerHello.name(), peerHello.rank())) {
            log.warn("rejecting connection from {}: {} is not a member of this group", connection.remoteAddress(), peerHello);
            connection.close();
            return;
        }
        WorkerInfo peer = workers.byName(peerHello.name());
        attach(connection, peer);
        byPeer.putIfAbsent(peer.name(), CompletableFuture.completedFuture(connection));
    }

    /**
     * Queues {@code action} behind a held handshake of {@code connection}; false when the
     * connection has no handshake in progress.
     */
    boolean deferUntilAccepted(PeerChannel connection, Runnable action) {
        if (!holding) {
            return false;
        }
        // The held state is looked up by connection, not read from its attachment: the release
        // runs on another thread and may attach the peer between such a read and this check.
        synchronized (held) {
            HeldConnection waiting = heldByConnection.get(connection);
            if (waiting != null && !waiting.drained) {
                waiting.actions.add(action);
                return true;
            }
        }
        return false;
    }

    /** A connection whose Hello came before rendezvous finished, and what arrived behind it. */
    private static final class HeldConnection {
        final List<Runnable> actions = new ArrayList<>();
        boolean drained; // under held
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
     * {@code cause}; each close is reported to the transport listener as usual.
     */
    void abort(WorkerInfo peer, Throwable cause) {
        CompletableFuture<PeerChannel> current = byPeer.get(peer.name());
        if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
            byPeer.remove(peer.name(), current); // the next call opens a new one
        }
        Set<PeerChannel> open = attached.get(peer.name());
        if (open != null) {
            open.forEach(connection -> connection.abort(cause));
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
            CompletableFuture<PeerChannel> current = byPeer.get(peer.name());
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
