package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.observe.LatencyHistogram;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Running totals of the application's calls, both ways, for debug info and the agent's MBean: what
 * this worker sent and how the calls ended, and what it received and how its handlers ended.
 * Ferry's own calls (RRef protocol, shutdown, gathers) are not counted. A few uncontended adds per
 * call, and how long each took into a histogram.
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
    /** From a call's send to its end (answer, error, timeout), as its caller sees it. */
    private final LatencyHistogram callTimes = new LatencyHistogram();
    /** From a request's start on this worker to its handler's end (an asynchronous one's future). */
    private final LatencyHistogram handlerTimes = new LatencyHistogram();

    /** A call of {@code bytes} (its request) was sent. */
    void sent(long bytes) {
        sent.increment();
        sentBytes.add(bytes);
    }

    /** A sent call ended after {@code nanos}: {@code failure} null for an answer, else why it failed. */
    void answered(Throwable failure, long nanos) {
        callTimes.record(nanos);
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
     * A received request's handler ended, {@code nanos} after the request started: returned
     * ({@code ok}; an asynchronous one's future completed), or threw (failed), counted before the
     * answer leaves.
     */
    void handled(boolean ok, long nanos) {
        handlerTimes.record(nanos);
        (ok ? handled : handlerFailures).increment();
    }

    /**
     * Puts the totals into {@code info} under {@code agent.calls_*} and {@code agent.requests_*}, and
     * percentiles of how long calls and handlers took under {@code agent.call_time_us_*} and
     * {@code agent.request_time_us_*} ({@code p50}, {@code p90}, {@code p99}, {@code max}).
     */
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
        putPercentiles(info, "agent.call_time_us_", callTimes);
        putPercentiles(info, "agent.request_time_us_", handlerTimes);
    }

    private static void putPercentiles(Map<String, String> info, String prefix, LatencyHistogram times) {
        info.put(prefix + "p50", micros(times.percentile(0.5)));
        info.put(prefix + "p90", micros(times.percentile(0.9)));
        info.put(prefix + "p99", micros(times.percentile(0.99)));
        info.put(prefix + "max", micros(times.max()));
    }

    /** Microseconds with one decimal (the buckets are within 6.25 % anyway). */
    private static String micros(long nanos) {
        return BigDecimal.valueOf(nanos, 3).setScale(1, RoundingMode.HALF_UP).toPlainString();
    }
}
