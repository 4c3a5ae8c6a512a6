package dev.ferry.rpc.internal.transport;

import java.util.concurrent.ThreadFactory;

/**
 * The threads a transport may start, made by its owner (the agent), which decides what runs on
 * them.
 *
 * @param eventLoops threads that must never block: event loops, which deliver what they read
 *                   ({@code NonBlockingThreads})
 * @param dedicated  threads that read one exchange at a time and may block (a lane's accepting end;
 *                   {@code DedicatedThreads})
 */
public record TransportThreads(ThreadFactory eventLoops, ThreadFactory dedicated) {
}
