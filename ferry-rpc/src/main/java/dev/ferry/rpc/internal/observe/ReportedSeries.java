package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.Metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One agent's {@link Metrics#report reported} series, bounded as {@link Metrics} says: past
 * {@link Metrics#MAX_POINTS} points a series drops every other one, keeping its first and last.
 * Thread-safe (one lock: reports are a few per training step).
 */
public final class ReportedSeries {
    private final Map<String, Series> series = new LinkedHashMap<>();
    /** Points reported so far. */
    private long reports;

    private static final class Series {
        long[] steps = new long[64];
        double[] values = new double[64];
        int size;

        void add(long step, double value) {
            if (size == Metrics.MAX_POINTS) {
                halve();
            }
            if (size == steps.length) {
                steps = java.util.Arrays.copyOf(steps, size * 2);
                values = java.util.Arrays.copyOf(values, size * 2);
            }
            steps[size] = step;
            values[size++] = value;
        }

        /** Keeps every other point (the even ones), so the curve's shape stays over the whole run. */
        private void halve() {
            int kept = 0;
            for (int i = 0; i < size; i += 2) {
                steps[kept] = steps[i];
                values[kept++] = values[i];
            }
            size = kept;
        }
    }

    /** How many points have been reported (a changed count: a report has new points to send). */
    public synchronized long reports() {
        return reports;
    }

    public synchronized void add(String name, long step, double value) {
        reports++;
        Series points = series.get(name);
        if (points == null) {
            if (series.size() >= Metrics.MAX_SERIES) {
                return;
            }
            points = new Series();
            series.put(name, points);
        }
        points.add(step, value);
    }

    /** Name to points ({@code [step, value]}), copied. */
    public synchronized Map<String, List<double[]>> snapshot() {
        Map<String, List<double[]>> copy = new LinkedHashMap<>();
        series.forEach((name, points) -> {
            List<double[]> list = new ArrayList<>(points.size);
            for (int i = 0; i < points.size; i++) {
                list.add(new double[] {points.steps[i], points.values[i]});
            }
            copy.put(name, list);
        });
        return copy;
    }

    /** The series as a JSON object: {@code {"loss":[[0,2.5],[1,2.1]]}}. */
    public synchronized String json() {
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Series> entry : series.entrySet()) {
            out.append(first ? "" : ",").append(JsonText.quote(entry.getKey())).append(":[");
            first = false;
            Series points = entry.getValue();
            for (int i = 0; i < points.size; i++) {
                out.append(i == 0 ? "[" : ",[").append(points.steps[i]).append(',')
                        .append(JsonText.number(points.values[i])).append(']');
            }
            out.append(']');
        }
        return out.append('}').toString();
    }
}
