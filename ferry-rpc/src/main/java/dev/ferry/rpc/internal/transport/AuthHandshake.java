package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * The first handler of an authenticated connection: runs {@link PeerAuthentication}'s exchange,
 * holds back everything else in both directions until the peer has proved itself, then hands what
 * it holds on and leaves the pipeline, so an authenticated connection costs nothing per message.
 *
 * <p>Of what the peer sends before it has proved itself, this end takes the exchange's few bytes
 * ({@code HELLO_BYTES + PROOF_BYTES}) and nothing more: bytes after the proof go on only once the
 * proof checked out, so a stranger cannot make it hold more than that.
 *
 * <p>A peer that sends something else first, a wrong proof, or nothing within the timeout gets its
 * connection closed with {@link RpcException.Code#UNAUTHENTICATED}; nothing it sent reaches the
 * handlers behind this one, and nothing queued for it is written. When the peer closes the
 * connection during the exchange (it rejected this end's proof), the close reports the same code.
 *
 * <p>One instance per channel; runs on the channel's event loop only.
 */
final class AuthHandshake extends ChannelDuplexHandler {
    private static final Logger log = LoggerFactory.getLogger(AuthHandshake.class);

    private enum Stage { NOT_STARTED, AWAIT_HELLO, AWAIT_PROOF, DONE, FAILED }

    /** All a peer sends before it has proved itself that this end takes: its hello, then its proof. */
    private static final int EXCHANGE_BYTES = PeerAuthentication.HELLO_BYTES + PeerAuthentication.PROOF_BYTES;

    private final PeerAuthentication auth;
    private final boolean accepted;
    private final Runnable onRejected;
    private final Runnable onAuthenticated;
    private final byte[] ownNonce = PeerAuthentication.newNonce();
    private byte[] otherNonce;
    private Stage stage = Stage.NOT_STARTED;
    private ByteBuf received;
    /** Bytes of the exchange taken so far (at most {@link #EXCHANGE_BYTES}). */
    private int taken;
    private PendingWriteQueue held;
    private ScheduledFuture<?> deadline;

    /**
     * A handler for a new channel; {@code accepted} when this end accepted the connection;
     * {@code onRejected} runs (on the event loop) if the connection fails authentication.
     */
    AuthHandshake(PeerAuthentication auth, boolean accepted, Runnable onRejected) {
        this(auth, accepted, onRejected, () -> {
        });
    }

    /** As above; {@code onAuthenticated} runs (on the event loop) once the peer proved itself and what was held went on. */
    AuthHandshake(PeerAuthentication auth, boolean accepted, Runnable onRejected, Runnable onAuthenticated) {
        this.auth = auth;
        this.accepted = accepted;
        this.onRejected = onRejected;
        this.onAuthenticated = onAuthenticated;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        held = new PendingWriteQueue(ctx);
        if (ctx.channel().isActive()) {
            start(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        start(ctx);
        ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
        if (stage != Stage.NOT_STARTED) {
            return;
        }
        stage = Stage.AWAIT_HELLO;
        ByteBuf hello = ctx.alloc().buffer(PeerAuthentication.HELLO_BYTES);
        hello.writeInt(PeerAuthentication.MAGIC).writeByte(PeerAuthentication.VERSION).writeBytes(ownNonce);
        ctx.writeAndFlush(hello);
        long nanos = auth.timeout().toNanos();
        deadline = ctx.executor().schedule(() -> fail(ctx, "the peer did not authenticate within "
                + auth.timeout().toMillis() + " ms"), nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (stage == Stage.DONE) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (stage == Stage.FAILED || !(msg instanceof ByteBuf in)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (received == null) {
            received = ctx.alloc().buffer(EXCHANGE_BYTES);
        }
        int take = Math.min(in.readableBytes(), EXCHANGE_BYTES - taken);
        received.writeBytes(in, take);
        taken += take;
        if (stage == Stage.AWAIT_HELLO && received.readableBytes() >= Integer.BYTES
                && received.getInt(received.readerIndex()) != PeerAuthentication.MAGIC) {
            in.release();
            notAHandshake(ctx); // at once: something that is not a worker may never send the rest
            return;
        }
        if (stage == Stage.AWAIT_HELLO && received.readableBytes() >= PeerAuthentication.HELLO_BYTES) {
            readHello(ctx);
        }
        if (stage == Stage.AWAIT_PROOF && received.readableBytes() >= PeerAuthentication.PROOF_BYTES) {
            readProof(ctx);
        }
        if (stage != Stage.DONE) {
            in.release();
            return;
        }
        // What followed the proof (the peer's first frames) goes on, then this handler goes.
        if (in.isReadable()) {
            ctx.fireChannelRead(in);
            ctx.fireChannelReadComplete();
        } else {
            in.release();
        }
        ctx.pipeline().remove(this);
    }

    private void readHello(ChannelHandlerContext ctx) {
        received.skipBytes(Integer.BYTES); // the magic, checked already
        byte version = received.readByte();
        if (version != PeerAuthentication.VERSION) {
            fail(ctx, "the peer uses authentication version " + version + ", this worker "
                    + PeerAuthentication.VERSION);
            return;
        }
        otherNonce = new byte[PeerAuthentication.NONCE_BYTES];
        received.readBytes(otherNonce);
        ctx.writeAndFlush(ctx.alloc().buffer(PeerAuthentication.PROOF_BYTES)
                .writeBytes(auth.proof(accepted, ownNonce, otherNonce)));
        stage = Stage.AWAIT_PROOF;
    }

    private void notAHandshake(ChannelHandlerContext ctx) {
        fail(ctx, "the peer's first bytes are not a Ferry authentication handshake"
                + " (a worker without an authentication token, or not a Ferry worker)");
    }

    private void readProof(ChannelHandlerContext ctx) {
        byte[] proof = new byte[PeerAuthentication.PROOF_BYTES];
        received.readBytes(proof);
        if (!auth.verify(accepted, ownNonce, otherNonce, proof)) {
            fail(ctx, "the peer's authentication proof is wrong (its token differs from this worker's)");
            return;
        }
        stage = Stage.DONE;
        deadline.cancel(false);
        log.debug("{}: peer authenticated", ctx.channel());
        held.removeAndWriteAll();
        ctx.flush();
        onAuthenticated.run();
        received.release(); // exactly the exchange's bytes: nothing of the peer's frames is in it
        received = null;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        switch (stage) {
            case DONE -> ctx.write(msg, promise);
            case FAILED -> {
                ReferenceCountUtil.release(msg);
                promise.setFailure(unauthenticated("the connection failed authentication"));
            }
            default -> held.add(msg, promise);
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (stage == Stage.DONE) {
            ctx.flush();
        }
        // Otherwise what is held goes out, flushed, once the peer has proved itself.
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (stage != Stage.DONE && stage != Stage.FAILED) {
            fail(ctx, "the peer closed the connection during authentication (it probably rejected this"
                    + " worker's token)");
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (received != null) {
            received.release();
            received = null;
        }
        if (deadline != null) {
            deadline.cancel(false);
        }
    }

    /** Fails the handshake: what is held fails, the handlers behind learn why, the channel closes. */
    private void fail(ChannelHandlerContext ctx, String reason) {
        if (stage == Stage.DONE || stage == Stage.FAILED) {
            return;
        }
        stage = Stage.FAILED;
        if (deadline != null) {
            deadline.cancel(false);
        }
        if (received != null) {
            received.release();
            received = null;
        }
        RpcException failure = unauthenticated("connection " + (accepted ? "from " : "to ")
                + NettyConnection.describePeer(ctx.channel()) + " failed authentication: " + reason);
        onRejected.run();
        held.removeAndFailAll(failure);
        ctx.fireExceptionCaught(failure);
        ctx.close();
    }

    private static RpcException unauthenticated(String message) {
        return new RpcException(RpcException.Code.UNAUTHENTICATED, message);
    }
}
