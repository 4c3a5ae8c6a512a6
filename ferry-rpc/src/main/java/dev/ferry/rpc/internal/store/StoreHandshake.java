package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The server's half of a store connection's handshake, as steps over two fixed buffers and without
 * I/O of its own, so that one thread can drive every pending handshake without blocking
 * ({@link StoreAcceptor}) and a TLS connection's thread can drive it over its streams
 * ({@link ServerConnection}):
 * <pre>
 *  stage        the client sends                          this end answers
 *  FIRST_BYTE   (TLS servers only) 0x16 starts TLS; anything else is a plain client, told it needs TLS
 *  LENGTH       int32 length of its first frame, 5..{@value StoreProtocol#MAX_HELLO_BYTES}
 *  HELLO        id, OP_HELLO, magic, version               OK, version, whether a token follows
 *  AUTH_HELLO   (with a token) the exchange's hello         (sent with the OK) this end's hello
 *  AUTH_PROOF   its proof                                   (sent on its hello) this end's proof
 *  DONE
 * </pre>
 * A driver reads into {@link #input()} until it is full (its {@code remaining()} is exactly what the
 * stage still needs, so no byte of what follows the handshake is taken), calls {@link #advance()},
 * and writes {@link #output()} whenever it has bytes. Nothing here is sized by the client: the input
 * never exceeds {@value #INPUT_BYTES} bytes, the output {@value #OUTPUT_BYTES}.
 *
 * <p>Not thread-safe: one driver at a time.
 */
final class StoreHandshake {
    /** The HELLO frame with its length prefix, the largest thing the client sends (the exchange's hello is 37). */
    static final int INPUT_BYTES = 4 + StoreProtocol.MAX_HELLO_BYTES;
    /** The largest answer: an error frame (the refusals' messages are fixed and short), or the OK and a hello. */
    static final int OUTPUT_BYTES = 256;
    /** First byte of a TLS connection: the content type of a handshake record (RFC 8446, 5.1). */
    static final int TLS_HANDSHAKE_RECORD = 0x16;

    enum Stage { FIRST_BYTE, LENGTH, HELLO, AUTH_HELLO, AUTH_PROOF, TLS, DONE }

    /** The handshake cannot go on; {@link #output()} holds what the client should be told first, if anything. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        private final boolean authentication;

        Refused(String reason, boolean authentication) {
            super(reason, null, false, false);
            this.authentication = authentication;
        }

        /** Whether the client failed to prove the token (rather than not speaking the protocol). */
        boolean authentication() {
            return authentication;
        }
    }

    private final PeerAuthentication auth;
    private final String peer;
    private final ByteBuffer in = ByteBuffer.allocate(INPUT_BYTES);
    private final ByteBuffer out = ByteBuffer.allocate(OUTPUT_BYTES).flip();
    private Stage stage;
    /** A plain client of a server that speaks TLS only: it is answered so, once its HELLO is in. */
    private boolean needsTls;
    private byte[] ownNonce;
    private byte[] otherNonce;

    /**
     * @param auth what the client must prove after its HELLO; null: nothing
     * @param tls  whether the connection is a TLS server's before its first byte (which tells TLS
     *             from a plain client); false once TLS runs, or without TLS
     * @param peer the client, for messages
     */
    StoreHandshake(PeerAuthentication auth, boolean tls, String peer) {
        this.auth = auth;
        this.peer = peer;
        expect(tls ? Stage.FIRST_BYTE : Stage.LENGTH, tls ? 1 : 4);
    }

    /** The buffer the client's next bytes go into (in write mode); full when the stage has all it needs. */
    ByteBuffer input() {
        return in;
    }

    /** Bytes to send the client (in read mode); may be empty. */
    ByteBuffer output() {
        return out;
    }

    Stage stage() {
        return stage;
    }

    /** Whether the handshake is through: nothing more is read here (though {@link #output()} may still hold bytes). */
    boolean done() {
        return stage == Stage.DONE;
    }

    /** Whether the client started TLS: its first byte (taken) was a TLS record's, and TLS takes over. */
    boolean startsTls() {
        return stage == Stage.TLS;
    }

    /** {@link #input()} is full: takes what it holds and moves to the next stage. */
    void advance() throws Refused {
        if (in.hasRemaining() || stage == Stage.DONE || stage == Stage.TLS) {
            throw new IllegalStateException("nothing to take at stage " + stage);
        }
        switch (stage) {
            case FIRST_BYTE -> {
                if ((in.get(0) & 0xFF) == TLS_HANDSHAKE_RECORD) {
                    stage = Stage.TLS;
                } else {
                    needsTls = true;
                    stage = Stage.LENGTH;
                    in.limit(4); // the byte taken is the first of the length
                }
            }
            case LENGTH -> {
                int length = in.getInt(0);
                if (length < StoreProtocol.HEADER_BYTES || length > StoreProtocol.MAX_HELLO_BYTES) {
                    refuseIfPlainClientOfTls();
                    throw new Refused("protocol violation: first frame length " + Integer.toUnsignedString(length)
                            + " outside " + StoreProtocol.HEADER_BYTES + ".." + StoreProtocol.MAX_HELLO_BYTES, false);
                }
                expect(Stage.HELLO, length);
            }
            case HELLO -> hello();
            case AUTH_HELLO -> authHello();
            case AUTH_PROOF -> authProof();
            default -> throw new IllegalStateException("handshake stage " + stage);
        }
    }

    private void expect(Stage next, int bytes) {
        stage = next;
        in.clear().limit(bytes);
    }

    private void hello() throws Refused {
        refuseIfPlainClientOfTls();
        in.flip();
        int id = in.getInt();
        byte type = in.get();
        FrameReader body = new FrameReader(Arrays.copyOfRange(in.array(), in.position(), in.limit()));
        if (type != StoreProtocol.OP_HELLO) {
            throw new Refused("protocol violation: expected HELLO as first frame, got type " + type, false);
        }
        int magic;
        short version;
        try {
            magic = body.readInt();
            version = body.readShort();
            body.expectEnd();
        } catch (ProtocolException e) {
            throw new Refused("protocol violation: " + e.getMessage(), false);
        }
        if (magic != StoreProtocol.MAGIC) {
            throw new Refused("protocol violation: bad magic 0x" + Integer.toHexString(magic)
                    + ", not a Ferry store client", false);
        }
        if (version != StoreProtocol.VERSION) {
            send(FrameBuilder.start(id, StoreProtocol.STATUS_ERROR).putString(Code.PROTOCOL_ERROR.name())
                    .putString("unsupported store protocol version " + version + ", server speaks "
                            + StoreProtocol.VERSION)
                    .toByteArray());
            throw new Refused("protocol violation: unsupported protocol version " + version, false);
        }
        // Then whether the authentication exchange follows, so a client without a token learns why it is refused.
        send(FrameBuilder.start(id, StoreProtocol.STATUS_OK).putShort(StoreProtocol.VERSION)
                .putBoolean(auth != null).toByteArray());
        if (auth == null) {
            stage = Stage.DONE;
            in.clear().limit(0);
            return;
        }
        ownNonce = PeerAuthentication.newNonce();
        send(ByteBuffer.allocate(PeerAuthentication.HELLO_BYTES).putInt(PeerAuthentication.MAGIC)
                .put(PeerAuthentication.VERSION).put(ownNonce).array());
        expect(Stage.AUTH_HELLO, PeerAuthentication.HELLO_BYTES);
    }

    private void authHello() throws Refused {
        in.flip();
        if (in.getInt() != PeerAuthentication.MAGIC) {
            throw unauthenticated("it did not start an authentication exchange (no token there?)");
        }
        byte version = in.get();
        if (version != PeerAuthentication.VERSION) {
            throw unauthenticated("it uses authentication version " + version + ", this end "
                    + PeerAuthentication.VERSION);
        }
        otherNonce = new byte[PeerAuthentication.NONCE_BYTES];
        in.get(otherNonce);
        send(auth.proof(true, ownNonce, otherNonce));
        expect(Stage.AUTH_PROOF, PeerAuthentication.PROOF_BYTES);
    }

    private void authProof() throws Refused {
        byte[] proof = Arrays.copyOf(in.array(), PeerAuthentication.PROOF_BYTES);
        if (!auth.verify(true, ownNonce, otherNonce, proof)) {
            throw unauthenticated("its proof is wrong (its token differs from this worker's)");
        }
        stage = Stage.DONE;
        in.clear().limit(0);
    }

    /**
     * A plain client of a TLS server is told so in the store's own protocol, after its HELLO is read
     * (closing with its bytes unread would reset the connection before it read why), or at once if
     * what it sent is no HELLO at all.
     */
    private void refuseIfPlainClientOfTls() throws Refused {
        if (needsTls) {
            send(FrameBuilder.start(0, StoreProtocol.STATUS_ERROR).putString(Code.UNAUTHENTICATED.name())
                    .putString("this TcpStore server accepts TLS connections only"
                            + " (FERRY_TLS_KEYSTORE / RpcBackendOptions.tls)")
                    .toByteArray());
            throw new Refused("a client without TLS", true);
        }
    }

    private Refused unauthenticated(String reason) {
        return new Refused("store client " + peer + " failed authentication: " + reason, true);
    }

    private void send(byte[] bytes) {
        out.compact().put(bytes).flip();
    }
}
