package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RpcProfiler.Phase;
import dev.ferry.rpc.RpcProfiler.Side;
import dev.ferry.rpc.RpcProfiler.Span;
import dev.ferry.rpc.WorkerInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Spans as a Chrome trace (the Trace Event Format's JSON object form, read by {@code chrome://tracing}
 * and Perfetto): one process per worker, named after it; complete events ({@code "ph":"X"}) for each
 * span and its phases; and a flow arrow from each call to the request it became. Spans that overlap
 * on a worker (asynchronous calls, requests run at once) go on separate rows ({@code tid}), since a
 * row's events must nest. Times are microseconds since the first span's start, which {@code otherData.startEpochNanos} gives.
 * Stateless.
 */
public final class ChromeTrace {
    private ChromeTrace() {
    }

    public static String json(List<Span> spans, List<WorkerInfo> workers) {
        Map<String, Integer> pids = new HashMap<>();
        List<String> events = new ArrayList<>();
        for (WorkerInfo worker : workers) {
            pids.put(worker.name(), worker.id());
            events.add("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + worker.id() + ",\"args\":{\"name\":"
                    + quote(worker.name()) + "}}");
            events.add("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + worker.id()
                    + ",\"args\":{\"sort_index\":" + worker.id() + "}}");
        }
        Map<String, List<Long>> rowEnds = new HashMap<>();
        long base = spans.stream().mapToLong(Span::startEpochNanos).min().orElse(0);
        for (Span span : spans) {
            int pid = pids.computeIfAbsent(span.worker(), name -> pids.size() + 1_000);
            int tid = row(rowEnds.computeIfAbsent(span.worker(), name -> new ArrayList<>()), span);
            String name = span.side() == Side.CALL ? span.key() : span.function() + " (from " + span.caller() + ")";
            events.add(complete(name, span.side() == Side.CALL ? "call" : "request", pid, tid, span.startEpochNanos() - base,
                    span.endEpochNanos() - base, "{\"callId\":" + span.callId() + ",\"outcome\":" + quote(span.outcome())
                            + ",\"requestBytes\":" + span.requestBytes() + ",\"responseBytes\":" + span.responseBytes()
                            + "}"));
            for (Phase phase : span.phases()) {
                events.add(complete(phase.name(), "phase", pid, tid, phase.startEpochNanos() - base,
                        phase.endEpochNanos() - base, "{}"));
            }
            // The arrow from the call (as its request leaves) to the request (as it arrives).
            String flowId = quote(span.caller() + "#" + span.callId());
            if (span.side() == Side.CALL) {
                events.add("{\"ph\":\"s\",\"name\":\"rpc\",\"cat\":\"flow\",\"id\":" + flowId + ",\"pid\":" + pid
                        + ",\"tid\":" + tid + ",\"ts\":" + micros(span.phases().get(0).endEpochNanos() - base) + "}");
            } else {
                events.add("{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"rpc\",\"cat\":\"flow\",\"id\":" + flowId + ",\"pid\":"
                        + pid + ",\"tid\":" + tid + ",\"ts\":" + micros(span.startEpochNanos() - base) + "}");
            }
        }
        return "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"startEpochNanos\":\"" + base + "\"},\"traceEvents\":[\n" + String.join(",\n", events) + "\n]}\n";
    }

    /** The first row of the worker whose last span ended before {@code span} starts (a new one if none). */
    private static int row(List<Long> ends, Span span) {
        for (int i = 0; i < ends.size(); i++) {
            if (ends.get(i) <= span.startEpochNanos()) {
                ends.set(i, span.endEpochNanos());
                return i;
            }
        }
        ends.add(span.endEpochNanos());
        return ends.size() - 1;
    }

    private static String complete(String name, String category, int pid, int tid, long start, long end, String args) {
        return "{\"ph\":\"X\",\"name\":" + quote(name) + ",\"cat\":\"" + category + "\",\"pid\":" + pid + ",\"tid\":"
                + tid + ",\"ts\":" + micros(start) + ",\"dur\":" + micros(end - start) + ",\"args\":" + args + "}";
    }

    private static String micros(long nanos) {
        return String.format(Locale.ROOT, "%d.%03d", nanos / 1000, Math.abs(nanos % 1000));
    }

    private static String quote(String text) {
        return JsonText.quote(text);
    }
}
