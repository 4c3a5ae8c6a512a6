package dev.ferry.distributed.internal.pipeline;

import dev.ferry.distributed.pipeline.Schedule;

/**
 * What one stage runs in a step, in order: micro-batch {@code m}'s forward pass is {@code m}, its
 * backward pass {@code -(m + 1)} (an encoding that travels as an {@code int[]}).
 */
public final class ScheduleOrder {
    private ScheduleOrder() {
    }

    /** Whether {@code action} is a forward pass. */
    static boolean isForward(int action) {
        return action >= 0;
    }

    /** The micro-batch {@code action} works on. */
    static int microBatch(int action) {
        return action >= 0 ? action : -action - 1;
    }

    static int backward(int microBatch) {
        return -microBatch - 1;
    }

    /** The actions of stage {@code stage} (of {@code stages}) over {@code microBatches} micro-batches. */
    public static int[] of(Schedule schedule, int stage, int stages, int microBatches) {
        int[] order = new int[2 * microBatches];
        int next = 0;
        int warmup = switch (schedule) {
            case GPIPE -> microBatches;
            case ONE_F_ONE_B -> Math.min(stages - stage - 1, microBatches);
        };
        int forwards = 0;
        int backwards = 0;
        while (forwards < warmup) {
            order[next++] = forwards++;
        }
        while (forwards < microBatches) { // steady state: one forward, one backward
            order[next++] = forwards++;
            order[next++] = backward(backwards++);
        }
        while (backwards < microBatches) {
            order[next++] = backward(backwards++);
        }
        return order;
    }

    /** The most micro-batches whose forward pass has run and backward pass has not, along {@code order}. */
    public static int peakHeld(int[] order) {
        int held = 0;
        int peak = 0;
        for (int action : order) {
            held += isForward(action) ? 1 : -1;
            peak = Math.max(peak, held);
        }
        return peak;
    }
}
