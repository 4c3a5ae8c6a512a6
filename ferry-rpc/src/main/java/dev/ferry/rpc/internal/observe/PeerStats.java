package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RemoteStackTrace;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.CallTimeline;
import dev.ferry.rpc.spi.RequestTimeline;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Per peer, what a status page shows of one agent's calls: totals both ways, the latency of the
 * calls made in the current window (a fresh histogram per {@link #json()}), and the last
 * {@value #RECENT_ERRORS} failures with their remote type and worker. Thread-safe.
 */
final class PeerStats implements CallObserver {
    static final int RECENT_ERRORS = 20;

    private final ConcurrentHashMap<String, Peer> peers = new ConcurrentHashMap<>();
    /** Calls and requests ended so far: a report with the same count has nothing new to say of them. */
    private final LongAdder ended = new LongAdder();
    private final ArrayDeque<String> errors = new ArrayDeque<>();

    private static final class Peer {
        final LongAdder sent = new LongAdder();
        final LongAdder failed = new LongAdder();
        final LongAdder received = new LongAdder();
        final LongAdder requestsFailed = new LongAdder();
        final AtomicReference<LatencyHistogram> window = new AtomicReference<>(new LatencyHistogram());
    }

    private Peer peer(String name) {
        return peers.computeIfAbsent(name, n -> new Peer());
    }

    @Override
    public boolean followsCall(CallInfo call, CallHeaders headers) {
        return true;
    }

    @Override
    public void callEnded(CallTimeline call) {
        Peer peer = peer(call.info().callee().name());
        ended.increment();
        peer.sent.increment();
        peer.window.get().record(call.totalNanos());
        if (call.failure() != null) {
            peer.failed.increment();
            Throwable failure = call.failure();
            String type = failure instanceof RpcException rpc && rpc.remoteClassName() != null ? rpc.remoteClassName()
                    : CallEvents.outcome(failure);
            String worker = raisedOn(call.info(), failure);
            String message = failure instanceof RpcException rpc && rpc.remoteMessage() != null ? rpc.remoteMessage()
                    : String.valueOf(failure.getMessage());
            error("call", call.info(), call.info().callee().name(), type, worker, message);
        }
    }

    @Override
    public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
        return true;
    }

    @Override
    public void requestEnded(RequestTimeline request) {
        Peer peer = peer(request.info().caller().name());
        ended.increment();
        peer.received.increment();
        if (request.failure() != null) {
            peer.requestsFailed.increment();
            error("request", request.info(), request.info().caller().name(), request.failure().getClass().getName(),
                    request.info().callee().name(), String.valueOf(request.failure().getMessage()));
        }
    }

    /**
     * Where a failed call's error was raised: the callee for a failure of its code ({@code
     * REMOTE_ERROR}, which names it) or one Ferry detected there (its stack comes along as a {@link
     * RemoteStackTrace}: an unknown function, arguments it could not decode); the caller for one
     * raised here, such as a timeout or a peer that cannot be reached.
     */
    private static String raisedOn(CallInfo info, Throwable failure) {
        if (failure instanceof RpcException rpc && rpc.workerName() != null) {
            return rpc.workerName();
        }
        return failure.getCause() instanceof RemoteStackTrace ? info.callee().name() : info.caller().name();
    }

    /** How many calls and requests have ended. */
    long ended() {
        return ended.sum();
    }

    private void error(String side, CallInfo info, String peer, String type, String worker, String message) {
        String text = message.length() > 500 ? message.substring(0, 500) + "…" : message;
        String json = "{\"timeMs\":" + System.currentTimeMillis() + ",\"side\":\"" + side + "\",\"peer\":"
                + JsonText.quote(peer) + ",\"function\":" + JsonText.quote(info.function()) + ",\"type\":"
                + JsonText.quote(type) + ",\"worker\":" + JsonText.quote(worker) + ",\"message\":"
                + JsonText.quote(text) + "}";
        synchronized (errors) {
            if (errors.size() == RECENT_ERRORS) {
                errors.removeFirst();
            }
            errors.addLast(json);
        }
    }

    /**
     * {@code "peers":{...},"errors":[...]} for a snapshot: per peer the totals and the percentiles
     * of the calls since the previous snapshot, whose window this closes.
     */
    String json() {
        Map<String, Peer> sorted = new TreeMap<>(peers);
        StringBuilder out = new StringBuilder("\"peers\":{");
        boolean first = true;
        for (Map.Entry<String, Peer> entry : sorted.entrySet()) {
            Peer peer = entry.getValue();
            LatencyHistogram window = peer.window.getAndSet(new LatencyHistogram());
            out.append(first ? "" : ",").append(JsonText.quote(entry.getKey())).append(":{")
                    .append("\"sent\":").append(peer.sent.sum())
                    .append(",\"failed\":").append(peer.failed.sum())
                    .append(",\"received\":").append(peer.received.sum())
                    .append(",\"requestsFailed\":").append(peer.requestsFailed.sum())
                    .append(",\"windowCalls\":").append(window.count())
                    .append(",\"p50Us\":").append(window.percentile(0.5) / 1000.0)
                    .append(",\"p90Us\":").append(window.percentile(0.9) / 1000.0)
                    .append(",\"p99Us\":").append(window.percentile(0.99) / 1000.0)
                    .append('}');
            first = false;
        }
        out.append("},\"errors\":[");
        List<String> recent;
        synchronized (errors) {
            recent = new ArrayList<>(errors);
        }
        return out.append(String.join(",", recent)).append(']').toString();
    }
}
