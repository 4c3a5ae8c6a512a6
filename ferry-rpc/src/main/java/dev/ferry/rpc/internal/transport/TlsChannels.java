package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;

import java.util.Objects;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

/**
 * TLS on TCP connections, main and bulk: each end presents the certificate of its
 * {@link SSLContext}'s key manager and must trust the other's (mutual TLS), so TLS both encrypts and
 * authenticates. Peers are addressed by IP and host names are not checked: what a peer proves is
 * that its certificate chains to the trust store, which for a cluster is its own CA.
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
    private final SSLContext context;

    private TlsChannels(SSLContext context) {
        this.context = context;
    }

    /** TLS with {@code context}, which must be initialized with this worker's key and the trusted certificates. */
    public static TlsChannels of(SSLContext context) {
        return new TlsChannels(Objects.requireNonNull(context, "context"));
    }

    /** Puts TLS first in {@code channel}'s pipeline; {@code accepted} when this end accepted the connection. */
    void install(Channel channel, boolean accepted) {
        SSLEngine engine = context.createSSLEngine();
        engine.setUseClientMode(!accepted);
        if (accepted) {
            engine.setNeedClientAuth(true);
        }
        channel.pipeline().addFirst("tls-failures", new HandshakeFailures(accepted));
        channel.pipeline().addFirst("tls", new SslHandler(engine));
    }

    @Override
    public String toString() {
        return "TlsChannels[" + context.getProtocol() + ", mutual]";
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
