package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.internal.security.PeerAuthentication;

import java.util.concurrent.ThreadFactory;

/**
 * Makes an agent's {@link Transport}; each built-in backend is the agent plus one of these.
 * {@code threads} makes the transport's threads: the agent's, which must never block.
 */
@FunctionalInterface
public interface TransportFactory {
    /**
     * TCP through Netty, listening on the options' listen host and a free port; Unix sockets and
     * shared memory for same-host peers as the options say.
     */
    TransportFactory NETTY = (options, workerName, threads) -> new NettyTransport(new NettyTransport.Settings(
            options.listenHost(), 0, options.ioThreads(), options.maxMessageBytes(), options.sendQueueBytes(),
            options.sendQueueTimeout(), options.unixSockets(),
            options.hostId() != null ? options.hostId() : HostIdentity.local(), options.spinTime().toNanos(),
            options.receiveBufferPoolBytes(), options.closeTimeout(),
            options.authToken() == null ? null : PeerAuthentication.of(options.authToken(), options.authTimeout()),
            options.tls() == null ? null : TlsChannels.of(options.tls(), options.tlsVerifyHostnames()),
            options.syncLanes()),
            SharedMemory.Settings.of(options.sharedMemoryBytes()), threads);
    /** Every worker in this JVM, no sockets. */
    TransportFactory LOCAL = (options, workerName, threads) -> new LocalTransport(workerName, options.ioThreads(),
            options.maxMessageBytes(), options.sendQueueBytes(), options.sendQueueTimeout(), threads);

    Transport create(RpcBackendOptions options, String workerName, ThreadFactory threads);
}
