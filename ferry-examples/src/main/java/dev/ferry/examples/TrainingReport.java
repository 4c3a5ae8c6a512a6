package dev.ferry.examples;

import dev.ferry.rpc.Metrics;
import dev.ferry.rpc.Rpc;

import java.util.Locale;

/**
 * What every training example prints when it is done: the loss of its first and last step and how
 * fast it went, as one line that the examples' tests read:
 *
 * <pre>
 * RESULT worker1 loss 2.30731 -> 0.04120, 40 steps, 212.4 steps/s
 * </pre>
 *
 * Steps per second count from the first step's start to the last step's end. Each step's loss is
 * also reported as the series {@code loss} ({@link Metrics#report}), which {@code ferry run}'s status
 * page draws live. Not thread-safe: one per training loop.
 */
final class TrainingReport {
    private final String who;
    private double first = Double.NaN;
    private double last = Double.NaN;
    private int steps;
    private long start;
    private long end;

    TrainingReport(String who) {
        this.who = who;
    }

    /** Call right before a step starts. */
    void stepStarts() {
        if (steps == 0) {
            start = System.nanoTime();
        }
    }

    /** Call once a step is done, with its loss. */
    void stepDone(double loss) {
        end = System.nanoTime();
        first = steps == 0 ? loss : first;
        last = loss;
        steps++;
        if (Rpc.isInitialized()) {
            Metrics.report("loss", steps, loss);
        }
    }

    int steps() {
        return steps;
    }

    double lastLoss() {
        return last;
    }

    /** The {@code RESULT} line. */
    String line() {
        double seconds = (end - start) / 1e9;
        return String.format(Locale.ROOT, "RESULT %s loss %.5f -> %.5f, %d steps, %.1f steps/s", who, first, last,
                steps, seconds > 0 ? steps / seconds : 0);
    }

    void print() {
        System.out.println(line());
    }
}
