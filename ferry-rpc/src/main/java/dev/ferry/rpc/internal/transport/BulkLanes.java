package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.BulkUnits;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.util.AttributeKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The bulk connections ("lanes") of a {@link NettyTransport}: the port they are accepted on, the
 * event loops they run on, and how a lane is opened, accepted and joined to its main connection's
 * {@link BulkGroup}. The transport owns one when {@code bulkConnections} &gt; 1 and keeps the main
 * connections; what travels over the lanes, and when they are opened, is {@link BulkGroup}'s job.
 *
 * <pre>
 *   acceptor                                          opener
 *   listen(): bulk port on the lane loops
 *   newGroup(main, accepted) + offer(main, group) ─▶  newGroup(main, opener)
 *                                                     (first large message) BulkGroup asks openLane(group, i)
 *   LaneInitializer(null) ◀── lane hello(token, i) ── LaneInitializer(group, i)
 *   acceptLane: offered[token].laneUp(lane)
 * </pre>
 *
 * <p>Lanes carry spread chunks and, on accepted ones, the hello: a whole message on a lane is a
 * protocol error. They are not reported to the transport's listener; their channels join the
 * transport's channel group, so they close with it. A lane starts with reading off when its main
 * connection's reading is paused, so the throttle holds for bytes on the lanes as well.
 *
 * <p>This class is thread-safe.
 */
final class BulkLanes {
    private static final Logger log = LoggerFactory.getLogger(BulkLanes.class);
    private static final AttributeKey<LaneState> LANE = AttributeKey.valueOf("ferry.lane");

    private final NettyTransport.Settings settings;
    private final Runnable rejected;
    private final Class<? extends ServerChannel> serverChannelType;
    private final Class<? extends Channel> channelType;
    private final ChannelGroup channels;
    private final LargeBufferPool receivePool;
    /** Whether a main connection's reading is paused (its throttle); lanes it gets later start paused too. */
    private final Predicate<Channel> readingPaused;
    /** Event loops of bulk connections, one per lane. */
    private final EventLoopGroup loops;
    /** Groups of accepted main connections that offered bulk connections, by the token of their offer. */
    private final Map<Long, BulkGroup> offered = new ConcurrentHashMap<>();
    private volatile int port = -1;

    /**
     * @param threads       makes the lane event loops' threads
     * @param channels      the transport's channels: lanes and the bulk port join them, to close with the transport
     * @param readingPaused whether a main connection's reading is paused, by its channel
     * @param rejected      runs when a lane fails authentication (with {@code settings.authentication()})
     */
    BulkLanes(NettyTransport.Settings settings, IoHandlerFactory ioHandler, ThreadFactory threads,
              Class<? extends ServerChannel> serverChannelType, Class<? extends Channel> channelType,
              ChannelGroup channels, LargeBufferPool receivePool, Predicate<Channel> readingPaused, Runnable rejected) {
        this.settings = settings;
        this.rejected = rejected;
        this.serverChannelType = serverChannelType;
        this.channelType = channelType;
        this.channels = channels;
        this.receivePool = receivePool;
        this.readingPaused = readingPaused;
        this.loops = new IdleEventLoopGroup(settings.bulkConnections() - 1, threads, ioHandler);
    }

    /**
     * Listens for bulk connections on a port of their own, accepting on {@code acceptors}; without it,
     * no bulk connections are offered.
     */
    void listen(EventLoopGroup acceptors) {
        try {
            Channel server = new ServerBootstrap()
                    .group(acceptors, loops)
                    .channel(serverChannelType)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, NettyTransport.WATER_MARK)
                    .childHandler(new LaneInitializer(null, 0))
                    .bind(settings.bindHost(), 0).sync().channel();
            channels.add(server);
            port = ((InetSocketAddress) server.localAddress()).getPort();
        } catch (Exception e) {
            log.warn("cannot listen for bulk connections, large messages use one connection: {}", e.toString());
        }
    }

    /**
     * The bulk connections of the TCP main connection {@code main}, or null when it gets none: an
     * accepted one only if this side listens for lanes (the acceptor offers, the opener opens).
     */
    BulkGroup newGroup(Channel main, boolean accepted) {
        if (accepted && port < 0) {
            return null;
        }
        long token = accepted ? nextToken() : 0;
        return new BulkGroup(main, !accepted, settings.bulkConnections() - 1, token, receivePool, this::openLane);
    }

    /** Offers the peer of the accepted {@code main} lanes for {@code group}, known until {@code main} closes. */
    void offer(Channel main, BulkGroup group) {
        offered.put(group.token(), group);
        main.closeFuture().addListener(f -> offered.remove(group.token()));
        main.eventLoop().execute(() -> main.writeAndFlush(
                BulkUnits.offer(main.alloc(), group.token(), port), main.voidPromise()));
    }

    /** Stops the lane event loops (their channels are closed with the transport's). */
    void close() {
        loops.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(15, TimeUnit.SECONDS);
    }

    private long nextToken() {
        long token;
        do {
            token = ThreadLocalRandom.current().nextLong();
        } while (token == 0 || offered.containsKey(token));
        return token;
    }

    /** Opens lane {@code index} of {@code bulk} (opener side). */
    private CompletableFuture<BulkGroup.Lane> openLane(BulkGroup bulk, int index) {
        CompletableFuture<BulkGroup.Lane> result = new CompletableFuture<>();
        InetSocketAddress main = (InetSocketAddress) bulk.mainChannel().remoteAddress();
        LaneInitializer initializer = new LaneInitializer(bulk, index);
        try {
            new Bootstrap()
                    .group(loops)
                    .channel(channelType)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                    .option(ChannelOption.WRITE_BUFFER_WATER_MARK, NettyTransport.WATER_MARK)
                    // The main connection's host as dialed, so that TLS checks the same name on every lane.
                    .attr(TlsChannels.PEER_HOST, bulk.mainChannel().attr(TlsChannels.PEER_HOST).get())
                    .handler(initializer)
                    .connect(main.getAddress(), bulk.port())
                    .addListener((ChannelFutureListener) f -> {
                        if (!f.isSuccess()) {
                            result.completeExceptionally(f.cause());
                            return;
                        }
                        LaneState state = f.channel().attr(LANE).get();
                        // The hello is the lane's first unit: queued before any part can be.
                        f.channel().writeAndFlush(BulkUnits.laneHello(f.channel().alloc(), bulk.token(), index));
                        if (readingPaused.test(bulk.mainChannel())) {
                            f.channel().config().setAutoRead(false);
                        }
                        result.complete(state.lane);
                    });
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /** An accepted bulk connection named its group: it joins it, or closes when the group is unknown. */
    private void acceptLane(Channel channel, LaneState state, long token, int index) {
        BulkGroup group = offered.get(token);
        if (group == null || state.lane != null) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "bulk connection for an unknown connection");
        }
        BulkGroup.Lane lane = new BulkGroup.Lane(channel, index, settings.bulkConnections() - 1, state.outbound);
        state.lane = lane;
        state.assembler.spreadTo(group.receiver());
        if (!group.laneUp(lane)) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "bulk connection " + index + " not wanted");
        }
        if (readingPaused.test(group.mainChannel())) {
            channel.config().setAutoRead(false);
        }
    }

    /** A bulk connection's own state: its queue, its reader's assembler, and once known its lane. */
    private static final class LaneState {
        final OutboundQueue outbound;
        final FrameAssembler assembler;
        volatile BulkGroup.Lane lane;

        LaneState(OutboundQueue outbound, FrameAssembler assembler) {
            this.outbound = outbound;
            this.assembler = assembler;
        }
    }

    /**
     * Sets up a bulk connection: opened ({@code bulk} given, lane {@code index}) or accepted (null:
     * it names its group in its hello, its first unit). It carries spread chunks only.
     */
    private final class LaneInitializer extends ChannelInitializer<Channel> {
        private final BulkGroup bulk;
        private final int index;

        LaneInitializer(BulkGroup bulk, int index) {
            this.bulk = bulk;
            this.index = index;
        }

        @Override
        protected void initChannel(Channel channel) {
            channels.add(channel);
            OutboundQueue outbound = new OutboundQueue(channel, Long.MAX_VALUE);
            FrameAssembler assembler = new FrameAssembler(settings.maxFrameBytes(), receivePool, null, false);
            LaneState state = new LaneState(outbound, assembler);
            channel.attr(LANE).set(state);
            if (bulk != null) {
                state.lane = new BulkGroup.Lane(channel, index, settings.bulkConnections() - 1, outbound);
                assembler.spreadTo(bulk.receiver());
            }
            BulkControl control = bulk != null ? BulkControl.NONE : new BulkControl() {
                @Override
                public void laneHello(long token, int lane) {
                    acceptLane(channel, state, token, lane);
                }
            };
            UnitReader units = new UnitReader(assembler, NettyTransport.unitLimit(settings.maxFrameBytes()), message -> {
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "a whole message on a bulk connection");
            }, control);
            // TLS first: the token's handshake, which may write at once, must go through it.
            if (settings.tls() != null) {
                settings.tls().install(channel, bulk == null);
            } else {
                channel.config().setRecvByteBufAllocator(new DirectReadAllocator(units));
            }
            if (settings.authentication() != null) {
                channel.pipeline().addLast("auth", new AuthHandshake(settings.authentication(), bulk == null, rejected));
            }
            channel.pipeline()
                    .addLast("units", units)
                    .addLast("lane", new LaneHandler(state));
        }
    }

    /** Writes a lane's queue when it becomes writable; closes it on errors, failing what used it. */
    private static final class LaneHandler extends ChannelInboundHandlerAdapter {
        private final LaneState state;

        LaneHandler(LaneState state) {
            this.state = state;
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                state.outbound.drain();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            BulkGroup.Lane lane = state.lane;
            if (lane != null && lane.failure == null) {
                lane.failure = cause;
            }
            log.warn("closing bulk connection to {}: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            state.assembler.clear();
            BulkGroup.Lane lane = state.lane;
            Throwable cause = lane != null && lane.failure != null ? lane.failure : new ClosedChannelException();
            state.outbound.failAll(cause);
            ctx.fireChannelInactive();
        }
    }
}
