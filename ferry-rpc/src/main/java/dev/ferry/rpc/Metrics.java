package dev.ferry.rpc;

import dev.ferry.rpc.internal.agent.DefaultRpcAgent;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Values a program reports as it runs, by name and step (a training loop's loss, its accuracy),
 * for the cluster's status page: {@code ferry run} shows each reported series as a live chart.
 *
 * <pre>{@code
 * for (int step = 0; step < steps; step++) {
 *     double loss = train(batch);
 *     Metrics.report("loss", step, loss);
 * }
 * }</pre>
 *
 * <p>Each agent keeps its series (at most {@value #MAX_SERIES} names, each at most
 * {@value #MAX_POINTS} points: past that, every other point is dropped, so a long run keeps its
 * whole curve at half the resolution) and reports them with its state when a status page is set
 * ({@link RpcBackendOptions.Builder#statusUrl}); without one they are kept and read with
 * {@link #series}. Thread-safe.
 */
public final class Metrics {
    /** The most names an agent keeps; reports of more are dropped. */
    public static final int MAX_SERIES = 32;
    /** The most points a series keeps. */
    public static final int MAX_POINTS = 1000;

    private Metrics() {
    }

    /** Reports {@code value} of series {@code name} at {@code step}, on the current agent ({@link Rpc#current()}). */
    public static void report(String name, long step, double value) {
        report(Rpc.current(), name, step, value);
    }

    /** Reports {@code value} of series {@code name} at {@code step}, on {@code agent}. */
    public static void report(RpcAgent agent, String name, long step, double value) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.length() > 100) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "a metric's name must be 1 to 100 characters");
        }
        if (agent instanceof DefaultRpcAgent ferry) {
            ferry.reportedSeries().add(name, step, value);
        }
    }

    /** The series {@code agent} keeps: name to points, each {@code [step, value]}, by step order of report. */
    public static Map<String, List<double[]>> series(RpcAgent agent) {
        return agent instanceof DefaultRpcAgent ferry ? ferry.reportedSeries().snapshot() : Map.of();
    }
}
