package dev.ferry.rpc.internal.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.channels.ClosedChannelException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A send that reaches the queue after its channel closed, but before the inactive event that
 * reports why, fails with that cause, not a bare {@link ClosedChannelException} (seen as a rare
 * flake: a token mismatch reported to a racing send that way). Netty queues the inactive event when
 * a channel closes, behind the tasks already queued; a close on the loop followed by a send on the
 * loop is that order, made deterministic.
 */
@Timeout(30)
class OutboundQueueCloseTest {
    private final EventLoopGroup loop = new DefaultEventLoopGroup(1);

    @AfterEach
    void close() {
        loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }

    @Test
    void aSendBetweenTheCloseAndItsInactiveEventFailsWithTheCloseCause() throws Exception {
        IllegalStateException cause = new IllegalStateException("the peer rejected this worker");
        AtomicReference<OutboundQueue> queue = new AtomicReference<>();
        Channel channel = connect(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                queue.get().failAll(cause); // what the connection's handler does with the failure it recorded
                ctx.fireChannelInactive();
            }
        });
        queue.set(new OutboundQueue(channel, 1 << 20, null));

        assertThat(sendRightAfterClose(channel, queue.get()).get(10, TimeUnit.SECONDS)).isSameAs(cause);
    }

    @Test
    void aSendToAChannelClosedWithoutACauseStillFails() throws Exception {
        Channel channel = connect(new ChannelInboundHandlerAdapter());
        OutboundQueue queue = new OutboundQueue(channel, 1 << 20, null);

        assertThat(sendRightAfterClose(channel, queue).get(10, TimeUnit.SECONDS))
                .isInstanceOf(ClosedChannelException.class);
    }

    private static CompletableFuture<Throwable> sendRightAfterClose(Channel channel, OutboundQueue queue) {
        CompletableFuture<Throwable> failed = new CompletableFuture<>();
        channel.eventLoop().execute(() -> {
            channel.unsafe().close(channel.voidPromise());
            queue.enqueue(Unpooled.buffer(8).writeLong(42), false, failed::complete);
        });
        return failed;
    }

    private Channel connect(ChannelInboundHandlerAdapter handler) throws InterruptedException {
        LocalAddress address = new LocalAddress("outbound-queue-close-" + UUID.randomUUID());
        new ServerBootstrap().group(loop).channel(LocalServerChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter()).bind(address).sync();
        return new Bootstrap().group(loop).channel(LocalChannel.class).handler(handler).connect(address).sync().channel();
    }
}
