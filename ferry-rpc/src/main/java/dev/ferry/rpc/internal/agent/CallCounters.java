package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Running totals of the application's calls, both ways, for debug info and the agent's MBean: what
 * this worker sent and how the calls ended, and what it received and how its handlers ended.
 * Ferry's own calls (RRef protocol, shutdown, gathers) are not counted. A few uncontended adds per
 * call.
 *
 * <p>Thread-safe.
 */
final class CallCounters {
    private final LongAdder sent = new LongAdder();
    private final LongAdder sentBytes = new LongAdder();
    private final LongAdder succeeded = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder received = new LongAdder();
    private final LongAdder receivedBytes = new LongAdder();
    private final LongAdder handled = new LongAdder();
    private final LongAdder handlerFailures = new LongAdder();

    /** A call of {@code bytes} (its request) was sent. */
    void sent(long bytes) {
        sent.increment();
        sentBytes.add(bytes);
    }

    /** A sent call ended: {@code failure} null for an answer, else why it failed. */
    void answered(Throwable failure) {
        if (failure == null) {
            succeeded.increment();
            return;
        }
        failed.increment();
        if (failure instanceof RpcException rpc && rpc.code() == RpcException.Code.TIMEOUT) {
            timedOut.increment();
        }
    }

    /** A request of {@code bytes} arrived. */
    void received(long bytes) {
        received.increment();
        receivedBytes.add(bytes);
    }

    /**
     * A received request's handler ended: returned ({@code ok}; an asynchronous one's future completed),
     * or threw (failed), counted before the answer leaves.
     */
    void handled(boolean ok) {
        (ok ? handled : handlerFailures).increment();
    }

    /** Puts the totals into {@code info} under {@code agent.calls_*} and {@code agent.requests_*}. */
    void putInto(Map<String, String> info) {
        info.put("agent.calls_sent", Long.toString(sent.sum()));
        info.put("agent.calls_succeeded", Long.toString(succeeded.sum()));
        info.put("agent.calls_failed", Long.toString(failed.sum()));
        info.put("agent.calls_timed_out", Long.toString(timedOut.sum()));
        info.put("agent.call_request_bytes_sent", Long.toString(sentBytes.sum()));
        info.put("agent.requests_received", Long.toString(received.sum()));
        info.put("agent.requests_succeeded", Long.toString(handled.sum()));
        info.put("agent.requests_failed", Long.toString(handlerFailures.sum()));
        info.put("agent.request_bytes_received", Long.toString(receivedBytes.sum()));
    }
}
