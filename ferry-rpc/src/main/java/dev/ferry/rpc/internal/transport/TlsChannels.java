package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.AttributeKey;

import java.util.Objects;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * TLS on TCP connections: each end presents the certificate of its
 * {@link SSLContext}'s key manager and must trust the other's (mutual TLS), so TLS both encrypts and
 * authenticates. By default host names are not checked: what a peer proves is that its certificate
 * chains to the trust store, which for a cluster is its own CA. With {@link #of(SSLContext, boolean)
 * host names verified}, the end that opens a connection also checks that the certificate names the
 * host it dialed (HTTPS's endpoint identification: a DNS name or IP address among the subject's
 * alternative names), which the dialing code gives as the channel's {@link #PEER_HOST} attribute;
 * the accepting end checks the chain only.
 *
 * <p>Unix-socket connections stay in the clear: they never leave the host, and their socket is in
 * a directory only this user can enter.
 *
 * <p>A handshake that fails (an untrusted certificate, a peer without TLS) closes the connection
 * with {@link RpcException.Code#UNAUTHENTICATED}, naming the peer and the reason.
 *
 * <p>This class is immutable and thread-safe.
 */
public final class TlsChannels {
    /** The host a dialed channel was opened to (as dialed: a name or an IP address), set before it connects. */
    static final AttributeKey<String> PEER_HOST = AttributeKey.valueOf(TlsChannels.class, "peerHost");

    private final SSLContext context;
    private final boolean verifyHostnames;

    private TlsChannels(SSLContext context, boolean verifyHostnames) {
        this.context = context;
        this.verifyHostnames = verifyHostnames;
    }

    /** TLS with {@code context}, which must be initialized with this worker's key and the trusted certificates. */
    public static TlsChannels of(SSLContext context) {
        return of(context, false);
    }

    /** As {@link #of(SSLContext)}; with {@code verifyHostnames}, a dialing end also checks the peer's host name. */
    public static TlsChannels of(SSLContext context, boolean verifyHostnames) {
        return new TlsChannels(Objects.requireNonNull(context, "context"), verifyHostnames);
    }

    /** Whether dialing ends check that the peer's certificate names the host they dialed. */
    public boolean verifiesHostnames() {
        return verifyHostnames;
    }

    /**
     * Puts TLS first in {@code channel}'s pipeline; {@code accepted} when this end accepted the connection.
     *
     * @throws RpcException {@link RpcException.Code#INTERNAL} when host names are verified and a dialed
     *                      channel has no {@link #PEER_HOST}
     */
    void install(Channel channel, boolean accepted) {
        SSLEngine engine;
        if (!accepted && verifyHostnames) {
            String host = channel.attr(PEER_HOST).get();
            if (host == null) {
                throw new RpcException(RpcException.Code.INTERNAL, "a dialed TLS channel without its peer's host name");
            }
            engine = context.createSSLEngine(host, -1);
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
        } else {
            engine = context.createSSLEngine();
        }
        engine.setUseClientMode(!accepted);
        if (accepted) {
            engine.setNeedClientAuth(true);
        }
        channel.pipeline().addFirst("tls-failures", new HandshakeFailures(accepted));
        channel.pipeline().addFirst("tls", new SslHandler(engine));
    }

    @Override
    public String toString() {
        return "TlsChannels[" + context.getProtocol() + ", mutual" + (verifyHostnames ? ", host names verified" : "")
                + "]";
    }

    /** Turns a failed handshake into one {@code UNAUTHENTICATED} failure; leaves once the handshake succeeded. */
    private static final class HandshakeFailures extends ChannelInboundHandlerAdapter {
        private final boolean accepted;
        private boolean reported;

        HandshakeFailures(boolean accepted) {
            this.accepted = accepted;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof SslHandshakeCompletionEvent done) {
                if (done.isSuccess()) {
                    ctx.pipeline().remove(this);
                } else {
                    report(ctx, done.cause());
                }
            }
            ctx.fireUserEventTriggered(event);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof SSLException || cause instanceof DecoderException && cause.getCause() instanceof SSLException) {
                report(ctx, cause);
                return;
            }
            ctx.fireExceptionCaught(cause);
        }

        private void report(ChannelHandlerContext ctx, Throwable cause) {
            if (reported) {
                return;
            }
            reported = true;
            Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
            ctx.fireExceptionCaught(new RpcException(RpcException.Code.UNAUTHENTICATED, "TLS handshake "
                    + (accepted ? "with " : "to ") + ctx.channel().remoteAddress() + " failed: " + root.getMessage(),
                    root));
            ctx.close();
        }
    }
}
