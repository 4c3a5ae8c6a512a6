package dev.ferry.rpc.internal.security;

import java.time.Duration;
import java.util.Objects;

/**
 * What a connection may cost before and after it has proved itself, the same for the rendezvous
 * store and the transport:
 *
 * <pre>
 * phase                      bound
 * -------------------------  ------------------------------------------------------------------
 * handshake (HELLO, and the  finished within handshakeTimeout of the accept, else closed; at most
 *   token's exchange)        maxPendingHandshakes at once (more wait in the kernel's backlog);
 *                            reads only the handshake's few bytes, allocates nothing a peer sizes
 * afterwards, mid-frame      at least {@value #STALL_PROGRESS_BYTES} bytes, or the frame's end,
 *                            every stallTimeout, else closed (a frame sent half, a byte at a time)
 * afterwards, between frames no bound: an idle member is not a stalled one
 * </pre>
 *
 * <p>Immutable.
 *
 * @param handshakeTimeout     how long a connection may take to finish its handshake
 * @param stallTimeout         how long a frame may make less than {@value #STALL_PROGRESS_BYTES} bytes of progress
 * @param maxPendingHandshakes how many accepted connections may be in their handshake at once
 */
public record ConnectionLimits(Duration handshakeTimeout, Duration stallTimeout, int maxPendingHandshakes) {
    /** Progress a connection in the middle of a frame must make every {@code stallTimeout}. */
    public static final int STALL_PROGRESS_BYTES = 1 << 20;
    /** The default bound of a frame's stall. */
    public static final Duration DEFAULT_STALL_TIMEOUT = Duration.ofSeconds(30);
    /** The default number of connections in their handshake at once. */
    public static final int DEFAULT_MAX_PENDING_HANDSHAKES = 64;
    /** Handshakes within {@link PeerAuthentication#DEFAULT_TIMEOUT}, stalls within 30 s, 64 handshakes at once. */
    public static final ConnectionLimits DEFAULTS = new ConnectionLimits(PeerAuthentication.DEFAULT_TIMEOUT,
            DEFAULT_STALL_TIMEOUT, DEFAULT_MAX_PENDING_HANDSHAKES);

    public ConnectionLimits {
        Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
        Objects.requireNonNull(stallTimeout, "stallTimeout");
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero() || stallTimeout.isNegative()
                || stallTimeout.isZero() || maxPendingHandshakes < 1) {
            throw new IllegalArgumentException("connection limits must be positive: " + handshakeTimeout + ", "
                    + stallTimeout + ", " + maxPendingHandshakes);
        }
    }
}
