package dev.ferry.rpc.internal.faults;

import dev.ferry.rpc.FaultInjection;
import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.OutboundMessage;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One agent's faults: what {@link FaultInjection} asks for, with the state it needs (how many sends
 * of each kind are still to fail), and the one thread that sends delayed messages and reports
 * injected failures. Shared by every channel of the agent's transport, so a kind's count of failed
 * sends is over all peers, as PyTorch's faulty agent counts them.
 *
 * <p>This class is thread-safe.
 */
final class Faults {
    private static final java.time.Duration CLOSE_WAIT = java.time.Duration.ofSeconds(5);
    private final FaultInjection injection;
    private final MessageClassifier classifier;
    private final Map<MessageType, AtomicInteger> sendsToFail = new EnumMap<>(MessageType.class);
    private final Map<MessageType, Long> delayNanos = new EnumMap<>(MessageType.class);
    /** Sends delayed messages and reports failures: a thread of the transport's kind, which never blocks. */
    private final ScheduledThreadPoolExecutor timer;
    private final AtomicLong failedSends = new AtomicLong();
    private final AtomicLong delayed = new AtomicLong();
    private final AtomicLong cutConnections = new AtomicLong();
    private volatile Thread timerThread;
    /** False while the agent initializes: faults start once the group has formed ({@link #arm}). */
    private volatile boolean armed;

    Faults(FaultInjection injection, MessageClassifier classifier, ThreadFactory threads) {
        this.injection = injection;
        this.classifier = classifier;
        injection.messagesToFail().forEach(type -> sendsToFail.put(type, new AtomicInteger(injection.failedSends(type))));
        injection.messagesToDelay().forEach((type, delay) -> delayNanos.put(type, delay.toNanos()));
        this.timer = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = threads.newThread(runnable);
            timerThread = thread;
            return thread;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * Faults apply from now on: initialization (rendezvous, the all-gathers that form the group) is
     * never faulted, so a count of failed sends counts the program's messages.
     */
    void arm() {
        armed = true;
    }

    boolean armed() {
        return armed;
    }

    MessageType typeOf(OutboundMessage message) {
        return classifier.typeOf(message);
    }

    MessageType answerTypeOf(InboundMessage call) {
        return classifier.answerTypeOf(call);
    }

    /**
     * The failure of {@code message} of {@code type} to {@code channel}'s peer if it is one of the
     * first sends of its kind to fail (it counts), else null.
     */
    RpcException failure(MessageType type, OutboundMessage message, PeerChannel channel) {
        AtomicInteger left = sendsToFail.get(type);
        if (left == null) {
            return null;
        }
        int before = left.getAndUpdate(n -> n > 0 ? n - 1 : 0);
        if (before == 0) {
            return null;
        }
        failedSends.incrementAndGet();
        int failed = injection.failedSends(type) - before + 1;
        return new RpcException(RpcException.Code.UNAVAILABLE, "Send attempt failed intentionally: " + type
                + " #" + message.id() + " to " + peerName(channel) + " (fault injection: failed send " + failed + " of "
                + injection.failedSends(type) + " of its kind)");
    }

    /** How long a message of {@code type} waits, in nanoseconds; 0 for none. */
    long delayNanos(MessageType type) {
        Long nanos = delayNanos.get(type);
        if (nanos == null) {
            return 0;
        }
        delayed.incrementAndGet();
        return nanos;
    }

    /** The failure that cuts {@code channel} off, if its peer is known and named to fail; else null. */
    RpcException cutOff(PeerChannel channel) {
        if (injection.failedPeers().isEmpty()) {
            return null;
        }
        String peer = classifier.peerOf(channel);
        if (peer == null || !injection.failedPeers().contains(peer)) {
            return null;
        }
        cutConnections.incrementAndGet();
        return new RpcException(RpcException.Code.UNAVAILABLE, "connection to worker " + peer
                + " failed intentionally (fault injection: its connections fail)");
    }

    /** Runs {@code task} on the faults' thread after {@code nanos}. */
    void schedule(Runnable task, long nanos) {
        try {
            timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // the transport closed: it sent or failed what was held (FaultyTransport.close)
        }
    }

    /** Runs {@code task} on the faults' thread, soon (the failures of messages that waited there). */
    void later(Runnable task) {
        try {
            timer.execute(task);
        } catch (RejectedExecutionException closed) {
            task.run();
        }
    }

    private String peerName(PeerChannel channel) {
        String peer = classifier.peerOf(channel);
        return peer != null ? peer : channel.remoteAddress();
    }

    Map<String, String> debugInfo() {
        return Map.of("transport.faults.failed_sends", Long.toString(failedSends.get()),
                "transport.faults.delayed", Long.toString(delayed.get()),
                "transport.faults.cut_connections", Long.toString(cutConnections.get()));
    }

    /** Stops the faults' thread and waits (bounded) until it ended, as a transport's close waits for its threads. */
    void close() {
        timer.shutdownNow();
        if (Thread.currentThread() != timerThread) {
            try {
                timer.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
