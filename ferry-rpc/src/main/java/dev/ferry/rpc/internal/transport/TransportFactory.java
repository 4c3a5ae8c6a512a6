package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcBackendOptions;

/**
 * Makes an agent's {@link Transport}; each built-in backend is the agent plus one of these.
 * {@code threads} makes the transport's threads ({@link TransportThreads}): the agent's.
 */
@FunctionalInterface
public interface TransportFactory {
    /**
     * TCP through Netty, listening on the options' listen host and a free port; Unix sockets and
     * shared memory for same-host peers as the options say.
     */
    TransportFactory NETTY = (options, workerName, threads) -> new NettyTransport(options, threads);
    /** Every worker in this JVM, no sockets. */
    TransportFactory LOCAL = (options, workerName, threads) -> new LocalTransport(workerName,
            options.transport().ioThreads(), options.maxMessageBytes(), options.transport().sendQueueBytes(),
            options.transport().sendQueueTimeout(), threads.eventLoops());

    Transport create(RpcBackendOptions options, String workerName, TransportThreads threads);
}
