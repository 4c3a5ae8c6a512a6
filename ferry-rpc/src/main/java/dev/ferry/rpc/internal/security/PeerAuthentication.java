package dev.ferry.rpc.internal.security;

import dev.ferry.rpc.RpcException;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The group's shared authentication token, and the proofs connections exchange with it (the
 * transport's {@code AuthHandshake} on Netty channels, {@link BlockingAuthExchange} on the rendezvous
 * store's sockets): before a
 * connection carries anything else, each end sends a fresh random nonce, then an HMAC-SHA256 over
 * both nonces and its role (opener or acceptor) keyed with the token, and checks the other end's.
 * Neither the token nor anything derived from it alone crosses the wire; a recorded exchange is
 * useless on another connection (new nonces), and an end cannot reflect the other's proof back (the
 * role is in the MAC).
 *
 * <pre>
 *   opener                                   acceptor
 *     ── MAGIC | version | nonce(o) ──▶
 *     ◀── MAGIC | version | nonce(a) ──
 *     ── HMAC(token, "O" | nonce(o) | nonce(a)) ──▶   checked
 *     ◀── HMAC(token, "A" | nonce(a) | nonce(o)) ──   checked
 *     ══ frames, both ways ══
 * </pre>
 *
 * <p>This authenticates; it does not encrypt. What crosses the wire afterwards is readable by
 * whoever can read the network between the workers.
 *
 * <p>This class is immutable and thread-safe (a {@link Mac} is made per proof).
 */
public final class PeerAuthentication {
    /** The fewest characters a token may have: shorter ones are guessable offline from one exchange. */
    public static final int MIN_TOKEN_LENGTH = 16;
    /** Default bound of a handshake: a peer that has not proved itself by then is dropped. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    public static final int MAGIC = 0x46524155; // "FRAU"
    public static final byte VERSION = 1;
    public static final int NONCE_BYTES = 32;
    public static final int PROOF_BYTES = 32;
    /** MAGIC, version, nonce. */
    public static final int HELLO_BYTES = 4 + 1 + NONCE_BYTES;

    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] LABEL = "ferry-connection-auth-v1".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final Duration timeout;

    private PeerAuthentication(byte[] token, Duration timeout) {
        this.key = new SecretKeySpec(token, ALGORITHM);
        this.timeout = timeout;
    }

    /**
     * Authentication with {@code token}, handshakes bounded by {@code timeout}.
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} if the token is shorter than
     *                      {@value #MIN_TOKEN_LENGTH} characters or the timeout is not positive
     */
    public static PeerAuthentication of(String token, Duration timeout) {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(timeout, "timeout");
        if (token.length() < MIN_TOKEN_LENGTH) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "the authentication token has "
                    + token.length() + " characters; it needs at least " + MIN_TOKEN_LENGTH
                    + " (a short token can be guessed from one recorded handshake)");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    "the authentication timeout must be positive, got " + timeout);
        }
        return new PeerAuthentication(token.getBytes(StandardCharsets.UTF_8), timeout);
    }

    /** How long a connection may take to authenticate before it is closed. */
    public Duration timeout() {
        return timeout;
    }

    /** A fresh random nonce ({@value #NONCE_BYTES} bytes from a {@link SecureRandom}). */
    public static byte[] newNonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /** The proof the end in role {@code accepted} sends, over its own nonce then the other's. */
    public byte[] proof(boolean accepted, byte[] ownNonce, byte[] otherNonce) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(LABEL);
            mac.update(accepted ? (byte) 'A' : (byte) 'O');
            mac.update(ownNonce);
            mac.update(otherNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " is missing from this JDK", e);
        }
    }

    /** Whether {@code proof} is what the other end (role {@code !accepted}) must send; constant time. */
    public boolean verify(boolean accepted, byte[] ownNonce, byte[] otherNonce, byte[] proof) {
        return MessageDigest.isEqual(proof(!accepted, otherNonce, ownNonce), proof);
    }

    @Override
    public String toString() {
        return "PeerAuthentication[HMAC-SHA256, timeout " + timeout + "]"; // never the token
    }
}
