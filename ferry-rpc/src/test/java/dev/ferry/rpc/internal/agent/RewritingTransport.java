package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.transport.Responder;
import dev.ferry.rpc.internal.transport.Transport;
import dev.ferry.rpc.internal.transport.TransportListener;
import dev.ferry.rpc.internal.wire.InboundMessage;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * A worker's real transport that hands its agent each received message through a rewrite: what a
 * hostile member's bytes would be, for tests of the receiver. {@link #calls} rewrites the calls
 * (user and system), {@link #messages} everything else (answers, errors); both pass messages on
 * unchanged unless a test sets them. {@link #cutConnections} closes every connection open now, as
 * a network reset would: the next message opens a new one.
 */
final class RewritingTransport implements Transport {
    private final Transport inner;
    volatile UnaryOperator<InboundMessage> calls = UnaryOperator.identity();
    volatile UnaryOperator<InboundMessage> messages = UnaryOperator.identity();

    /** The connections open, accepted or opened here. */
    private final Set<PeerChannel> open = ConcurrentHashMap.newKeySet();

    RewritingTransport(Transport inner) {
        this.inner = inner;
    }

    /** Closes every connection open now with {@code cause}; returns how many. */
    int cutConnections(Throwable cause) {
        List<PeerChannel> cut = List.copyOf(open);
        cut.forEach(channel -> channel.abort(cause));
        return cut.size();
    }

    @Override
    public String start(TransportListener listener) {
        return inner.start(new TransportListener() {
            @Override
            public void onAccepted(PeerChannel channel) {
                open.add(channel);
                listener.onAccepted(channel);
            }

            @Override
            public void onMessage(PeerChannel channel, InboundMessage message) {
                listener.onMessage(channel, messages.apply(message));
            }

            @Override
            public void onCall(PeerChannel channel, InboundMessage call, Responder responder) {
                listener.onCall(channel, calls.apply(call), responder);
            }

            @Override
            public void onClosed(PeerChannel channel, Throwable cause) {
                open.remove(channel);
                listener.onClosed(channel, cause);
            }
        });
    }

    @Override
    public CompletableFuture<PeerChannel> connect(String address) {
        return inner.connect(address).thenApply(channel -> {
            open.add(channel);
            return channel;
        });
    }

    @Override
    public String describe() {
        return inner.describe();
    }

    @Override
    public Map<String, String> debugInfo() {
        return inner.debugInfo();
    }

    @Override
    public void close() {
        inner.close();
    }

    @Override
    public void closeNow(Throwable cause) {
        inner.closeNow(cause);
    }
}
