package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RpcProfiler.KeyAverage;
import dev.ferry.rpc.RpcProfiler.Side;
import dev.ferry.rpc.RpcProfiler.Span;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The RPC profiler's per-function table: spans summed by {@link Span#key()}, formatted as PyTorch's
 * {@code key_averages().table()} is (a ruled, fixed-width table, times with their unit, by total).
 * Stateless.
 */
public final class ProfileTable {
    private static final String[] HEADERS = {"Name", "# of Calls", "Failures", "CPU total", "CPU time avg",
        "Serialize", "Queue", "Handler", "Deserialize", "Request bytes", "Response bytes"};

    private ProfileTable() {
    }

    /** One row per key: a call counted on its caller's span, or on its callee's when the caller's is missing. */
    public static List<KeyAverage> keyAverages(List<Span> spans) {
        Map<String, Totals> byKey = new LinkedHashMap<>();
        Set<String> calledFromCaller = new HashSet<>();
        for (Span span : spans) {
            if (span.side() == Side.CALL) {
                calledFromCaller.add(span.caller() + "#" + span.callId());
            }
        }
        for (Span span : spans) {
            Totals totals = byKey.computeIfAbsent(span.key(), Totals::new);
            if (span.side() == Side.CALL) {
                totals.calls++;
                totals.failures += span.outcome().equals("ok") ? 0 : 1;
                totals.total += span.durationNanos();
                totals.serialize += span.phaseNanos("serialize");
                totals.deserialize += span.phaseNanos("deserialize");
                totals.requestBytes += span.requestBytes();
                totals.responseBytes += span.responseBytes();
            } else {
                if (!calledFromCaller.contains(span.caller() + "#" + span.callId())) {
                    // The caller's span is missing (its worker was not reached): count the call here.
                    totals.calls++;
                    totals.failures += span.outcome().equals("ok") ? 0 : 1;
                    totals.total += span.durationNanos();
                    totals.requestBytes += span.requestBytes();
                    totals.responseBytes += span.responseBytes();
                }
                totals.queue += span.phaseNanos("queue");
                totals.handler += span.phaseNanos("handler");
                totals.serialize += span.phaseNanos("serialize");
                totals.deserialize += span.phaseNanos("deserialize");
            }
        }
        List<KeyAverage> rows = new ArrayList<>();
        for (Totals t : byKey.values()) {
            rows.add(new KeyAverage(t.key, t.calls, t.failures, t.total, t.serialize, t.queue, t.handler,
                    t.deserialize, t.requestBytes, t.responseBytes));
        }
        rows.sort(Comparator.comparingLong(KeyAverage::totalNanos).reversed());
        return rows;
    }

    private static final class Totals {
        final String key;
        long calls;
        long failures;
        long total;
        long serialize;
        long queue;
        long handler;
        long deserialize;
        long requestBytes;
        long responseBytes;

        Totals(String key) {
            this.key = key;
        }
    }

    /** The table, then the profiled block's wall time. */
    public static String format(List<KeyAverage> rows, long wallNanos) {
        List<String[]> cells = new ArrayList<>();
        for (KeyAverage row : rows) {
            cells.add(new String[] {row.key(), Long.toString(row.calls()), Long.toString(row.failures()),
                time(row.totalNanos()), time(row.averageNanos()), time(row.serializeNanos()), time(row.queueNanos()),
                time(row.handlerNanos()), time(row.deserializeNanos()), bytes(row.requestBytes()),
                bytes(row.responseBytes())});
        }
        int[] widths = new int[HEADERS.length];
        for (int i = 0; i < HEADERS.length; i++) {
            widths[i] = HEADERS[i].length();
            for (String[] line : cells) {
                widths[i] = Math.max(widths[i], line[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        String rule = rule(widths);
        out.append(rule).append(line(HEADERS, widths)).append(rule);
        for (String[] line : cells) {
            out.append(line(line, widths));
        }
        out.append(rule);
        out.append("Profiled wall time: ").append(time(wallNanos)).append('\n');
        return out.toString();
    }

    private static String rule(int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < widths.length; i++) {
            line.append(i == 0 ? "" : "  ").append("-".repeat(widths[i]));
        }
        return line.append('\n').toString();
    }

    private static String line(String[] cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            String cell = cells[i];
            String pad = " ".repeat(widths[i] - cell.length());
            // Names left-aligned, numbers right-aligned, as PyTorch's table.
            line.append(i == 0 ? "" : "  ").append(i == 0 ? cell + pad : pad + cell);
        }
        return line.append('\n').toString();
    }

    /** PyTorch's format: {@code 12.345ms}, {@code 678.000us}, {@code 1.234s}. */
    static String time(long nanos) {
        if (nanos >= 1_000_000_000L) {
            return String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
        }
        if (nanos >= 1_000_000L) {
            return String.format(Locale.ROOT, "%.3fms", nanos / 1e6);
        }
        return String.format(Locale.ROOT, "%.3fus", nanos / 1e3);
    }

    static String bytes(long bytes) {
        if (bytes >= 1L << 20) {
            return String.format(Locale.ROOT, "%.2f MiB", bytes / (double) (1L << 20));
        }
        if (bytes >= 1L << 10) {
            return String.format(Locale.ROOT, "%.2f KiB", bytes / (double) (1L << 10));
        }
        return bytes + " B";
    }
}
