package dev.ferry.distributed.internal.pipeline;

/**
 * What a stage's worker is told at the start of a pipeline step: which stage it runs, what to run
 * in which order ({@link ScheduleOrder}), and where its neighbours are.
 *
 * @param step     the step's id, unique in the group
 * @param stage    this stage's index, from 0
 * @param stages   how many stages the pipeline has
 * @param order    this stage's actions
 * @param previous the worker of stage {@code stage - 1} (input gradients go there); null for stage 0
 * @param next     the worker of stage {@code stage + 1} (outputs go there); for the last stage the
 *                 driver, which computes the loss
 */
public record StagePlan(long step, int stage, int stages, int[] order, String previous, String next) {
    public StagePlan {
        if (stage < 0 || stage >= stages) {
            throw new IllegalArgumentException("stage " + stage + " of " + stages);
        }
        if ((previous == null) != (stage == 0) || next == null) {
            throw new IllegalArgumentException("stage " + stage + " needs its neighbours: " + previous + ", " + next);
        }
        order = order.clone();
    }

    boolean last() {
        return stage == stages - 1;
    }

    @Override
    public int[] order() {
        return order.clone();
    }
}
