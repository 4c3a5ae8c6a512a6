package dev.ferry.rpc.internal.faults;

import dev.ferry.rpc.FaultInjection;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.transport.Responder;
import dev.ferry.rpc.internal.transport.Transport;
import dev.ferry.rpc.internal.transport.TransportListener;
import dev.ferry.rpc.internal.wire.InboundMessage;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;

/**
 * A transport that injects faults ({@link FaultInjection}) into what its agent sends: it wraps the
 * real transport, so the agent sees only {@link FaultyChannel}s (the channels it opens and accepts)
 * and their responders, and every message meets its faults before the real channel chooses its
 * route. The agent puts it around its transport only when the options ask for faults; otherwise
 * nothing of this is on any message's path.
 *
 * <p>Arrivals from a peer whose connections fail close the channel they came on and are dropped,
 * once the peer is known (its handshake passes, so the agent learns who it is).
 *
 * <p>This class is thread-safe.
 */
public final class FaultyTransport implements Transport {
    private final Transport inner;
    private final Faults faults;
    /** The wrapper of each open channel of the real transport: the agent must always see the same one. */
    private final Map<PeerChannel, FaultyChannel> channels = new ConcurrentHashMap<>();

    /**
     * @param threads makes the faults' thread (it sends delayed messages and reports failures):
     *                the transport's event-loop threads' factory, whose threads never block
     */
    public FaultyTransport(Transport inner, FaultInjection injection, MessageClassifier classifier,
                           ThreadFactory threads) {
        this.inner = inner;
        this.faults = new Faults(injection, classifier, threads);
    }

    @Override
    public String start(TransportListener listener) {
        return inner.start(new Listener(listener));
    }

    @Override
    public CompletableFuture<PeerChannel> connect(String address) {
        return inner.connect(address).thenApply(raw -> {
            FaultyChannel channel = wrap(raw);
            if (!raw.isActive()) {
                channels.remove(raw); // closed already: its close was reported before it was wrapped
            }
            return channel;
        });
    }

    /** The agent has initialized: faults apply from now on (the handshakes of the group are done). */
    public void arm() {
        faults.arm();
    }

    private FaultyChannel wrap(PeerChannel channel) {
        return channels.computeIfAbsent(channel, raw -> new FaultyChannel(raw, faults));
    }

    @Override
    public String describe() {
        return inner.describe() + "+faults";
    }

    @Override
    public Map<String, String> debugInfo() {
        Map<String, String> info = new LinkedHashMap<>(inner.debugInfo());
        info.putAll(faults.debugInfo());
        return info;
    }

    /** Graceful: what waits for its delay is sent now, then the real transport closes. */
    @Override
    public void close() {
        channels.values().forEach(FaultyChannel::sendHeld);
        inner.close();
        faults.close();
    }

    @Override
    public void closeNow(Throwable cause) {
        channels.values().forEach(channel -> channel.failHeld(cause));
        inner.closeNow(cause);
        faults.close();
    }

    /** Hands the agent the wrappers, never the real channels; drops what comes from a cut-off peer. */
    private final class Listener implements TransportListener {
        private final TransportListener agent;

        Listener(TransportListener agent) {
            this.agent = agent;
        }

        @Override
        public void onAccepted(PeerChannel channel) {
            agent.onAccepted(wrap(channel));
        }

        @Override
        public void onMessage(PeerChannel channel, InboundMessage message) {
            FaultyChannel faulty = wrap(channel);
            if (!cutOff(faulty)) {
                agent.onMessage(faulty, message);
            }
        }

        @Override
        public void onCall(PeerChannel channel, InboundMessage call, Responder responder) {
            FaultyChannel faulty = wrap(channel);
            if (!cutOff(faulty)) {
                agent.onCall(faulty, call, faulty.responder(responder, faults.answerTypeOf(call)));
            }
        }

        @Override
        public void onClosed(PeerChannel channel, Throwable cause) {
            FaultyChannel faulty = wrap(channel);
            channels.remove(channel);
            faulty.failHeld(cause != null ? cause
                    : new RpcException(RpcException.Code.UNAVAILABLE, "connection to " + channel.remoteAddress() + " closed"));
            agent.onClosed(faulty, cause);
        }

        private boolean cutOff(FaultyChannel channel) {
            RpcException cut = faults.armed() ? faults.cutOff(channel) : null;
            if (cut == null) {
                return false;
            }
            channel.abort(cut);
            return true;
        }
    }
}
