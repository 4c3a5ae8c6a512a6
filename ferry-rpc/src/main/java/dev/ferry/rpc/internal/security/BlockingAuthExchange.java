package dev.ferry.rpc.internal.security;

import dev.ferry.rpc.RpcException;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/**
 * {@link PeerAuthentication}'s exchange over a blocking stream (the rendezvous store's sockets):
 * nonce out, the other's nonce in, proof out, the other's proof in and checked. The caller bounds
 * it with a socket read timeout.
 *
 * <p>Stateless; each call runs on the calling thread.
 */
public final class BlockingAuthExchange {
    private BlockingAuthExchange() {
    }

    /**
     * Runs the exchange as the end that accepted the connection ({@code accepted}) or opened it.
     *
     * @throws RpcException {@link RpcException.Code#UNAUTHENTICATED} if the other end is not running
     *                      the exchange or its proof is wrong
     * @throws IOException  if the stream fails or ends (a read timeout included)
     */
    public static void run(DataInputStream in, OutputStream out, PeerAuthentication auth, boolean accepted,
                           String peer) throws IOException {
        byte[] ownNonce = PeerAuthentication.newNonce();
        out.write(ByteBuffer.allocate(PeerAuthentication.HELLO_BYTES).putInt(PeerAuthentication.MAGIC)
                .put(PeerAuthentication.VERSION).put(ownNonce).array());
        out.flush();
        if (in.readInt() != PeerAuthentication.MAGIC) {
            throw failed(peer, "it did not start an authentication exchange (no token there?)");
        }
        byte version = in.readByte();
        if (version != PeerAuthentication.VERSION) {
            throw failed(peer, "it uses authentication version " + version + ", this end "
                    + PeerAuthentication.VERSION);
        }
        byte[] otherNonce = new byte[PeerAuthentication.NONCE_BYTES];
        in.readFully(otherNonce);
        out.write(auth.proof(accepted, ownNonce, otherNonce));
        out.flush();
        byte[] proof = new byte[PeerAuthentication.PROOF_BYTES];
        in.readFully(proof);
        if (!auth.verify(accepted, ownNonce, otherNonce, proof)) {
            throw failed(peer, "its proof is wrong (its token differs from this worker's)");
        }
    }

    private static RpcException failed(String peer, String reason) {
        return new RpcException(RpcException.Code.UNAUTHENTICATED, peer + " failed authentication: " + reason);
    }
}
