package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ImmediateEventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * TCP transport on Netty: native epoll where available, NIO otherwise; length-prefixed frames
 * ({@link FrameCodec}); {@code TCP_NODELAY}. One event-loop group serves both accepted and opened
 * connections.
 */
public final class NettyTransport implements Transport {
    private static final Logger log = LoggerFactory.getLogger(NettyTransport.class);
    private static final AttributeKey<NettyConnection> CONNECTION = AttributeKey.valueOf("ferry.connection");

    private final String bindHost;
    private final int bindPort;
    private final long maxFrameBytes;
    private final boolean epoll;
    private final EventLoopGroup group;
    private final ChannelGroup channels;
    private final Class<? extends ServerChannel> serverChannelType;
    private final Class<? extends Channel> channelType;
    private final java.util.Queue<Thread> ioThreadsStarted = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile TransportListener listener;
    private volatile Channel serverChannel;

    public NettyTransport(String bindHost, int bindPort, int ioThreads, long maxFrameBytes, ThreadFactory threads) {
        this.bindHost = bindHost;
        this.bindPort = bindPort;
        this.maxFrameBytes = maxFrameBytes;
        this.epoll = Epoll.isAvailable();
        IoHandlerFactory ioHandler = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.group = new MultiThreadIoEventLoopGroup(ioThreads, runnable -> {
            Thread thread = threads.newThread(runnable);
            ioThreadsStarted.add(thread);
            return thread;
        }, ioHandler);
        this.serverChannelType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        this.channelType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.channels = new DefaultChannelGroup("ferry", ImmediateEventExecutor.INSTANCE);
    }

    @Override
    public String start(TransportListener listener) {
        this.listener = listener;
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(serverChannelType)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new Initializer(true));
        try {
            serverChannel = bootstrap.bind(bindHost, bindPort).sync().channel();
        } catch (Exception e) {
            close();
            throw new RpcException(RpcException.Code.UNAVAILABLE,
                    "cannot listen on " + bindHost + ":" + bindPort + ": " + e.getMessage(), e);
        }
        channels.add(serverChannel);
        InetSocketAddress bound = (InetSocketAddress) serverChannel.localAddress();
        return bindHost + ":" + bound.getPort();
    }

    @Override
    public CompletableFuture<Connection> connect(String address) {
        CompletableFuture<Connection> result = new CompletableFuture<>();
        int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            result.completeExceptionally(new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    "bad worker address '" + address + "'"));
            return result;
        }
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        Bootstrap bootstrap = new Bootstrap()
                .group(group)
                .channel(channelType)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                .handler(new Initializer(false));
        bootstrap.connect(host, port).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                result.complete(f.channel().attr(CONNECTION).get());
            } else {
                result.completeExceptionally(new RpcException(RpcException.Code.UNAVAILABLE,
                        "cannot connect to " + address + ": " + f.cause().getMessage(), f.cause()));
            }
        });
        return result;
    }

    @Override
    public String describe() {
        return epoll ? "netty-epoll" : "netty-nio";
    }

    @Override
    public void close() {
        try {
            // Flush what is queued (replies sent just before shutdown) before closing.
            channels.writeAndFlush(Unpooled.EMPTY_BUFFER).awaitUninterruptibly(5, TimeUnit.SECONDS);
            channels.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
        } finally {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(15, TimeUnit.SECONDS);
            // The group reports termination just before its threads return: wait for them, so a
            // closed transport has no thread left (leak checks count them).
            for (Thread thread : ioThreadsStarted) {
                try {
                    thread.join(5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
    }

    private final class Initializer extends ChannelInitializer<SocketChannel> {
        private final boolean accepted;

        Initializer(boolean accepted) {
            this.accepted = accepted;
        }

        @Override
        protected void initChannel(SocketChannel channel) {
            NettyConnection connection = new NettyConnection(channel);
            channel.attr(CONNECTION).set(connection);
            channels.add(channel);
            channel.pipeline()
                    .addLast("frames", new LengthFieldBasedFrameDecoder(
                            (int) Math.min(Integer.MAX_VALUE, maxFrameBytes + 4), 0, 4, 0, 4))
                    .addLast("messages", new MessageHandler(connection));
            if (accepted) {
                listener.onAccepted(connection);
            }
        }
    }

    /** Decodes frames into messages and reports them; closes the connection on a bad frame. */
    private final class MessageHandler extends SimpleChannelInboundHandler<ByteBuf> {
        private final NettyConnection connection;
        private Throwable failure;

        MessageHandler(NettyConnection connection) {
            this.connection = connection;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            InboundMessage message = FrameCodec.decode(frame);
            listener.onMessage(connection, message);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (failure == null) {
                failure = cause;
            }
            log.warn("closing connection to {}: {}", connection.remoteAddress(), cause.toString());
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            listener.onClosed(connection, failure);
        }
    }

    private final class NettyConnection implements Connection {
        private final Channel channel;
        private volatile Object attachment;

        NettyConnection(Channel channel) {
            this.channel = channel;
        }

        @Override
        public void send(OutboundMessage message, Consumer<Throwable> onFailure) {
            ByteBuf frame = FrameCodec.encode(message, channel.alloc(), maxFrameBytes);
            ChannelFuture write = channel.writeAndFlush(frame);
            if (write.isDone()) {
                if (!write.isSuccess()) {
                    onFailure.accept(write.cause());
                }
            } else {
                write.addListener(f -> {
                    if (!f.isSuccess()) {
                        onFailure.accept(f.cause());
                    }
                });
            }
        }

        @Override
        public boolean isActive() {
            return channel.isActive();
        }

        @Override
        public void close() {
            // An empty write queues behind everything already sent, so the close loses nothing.
            channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }

        @Override
        public String remoteAddress() {
            return String.valueOf(channel.remoteAddress());
        }

        @Override
        public Object attachment() {
            return attachment;
        }

        @Override
        public void attach(Object value) {
            attachment = value;
        }

        @Override
        public String toString() {
            return "Connection[" + channel.localAddress() + " -> " + channel.remoteAddress() + "]";
        }
    }
}
