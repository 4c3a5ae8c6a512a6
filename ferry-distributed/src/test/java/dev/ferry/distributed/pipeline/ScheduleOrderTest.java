package dev.ferry.distributed.pipeline;

import dev.ferry.distributed.internal.pipeline.ScheduleOrder;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The orders the schedules give each stage, and what they hold at most. */
class ScheduleOrderTest {
    // micro-batch m's forward is m, its backward -(m + 1)

    @Test
    void gpipeRunsAllForwardsThenAllBackwards() {
        assertThat(ScheduleOrder.of(Schedule.GPIPE, 1, 3, 4)).containsExactly(0, 1, 2, 3, -1, -2, -3, -4);
        assertThat(ScheduleOrder.peakHeld(ScheduleOrder.of(Schedule.GPIPE, 0, 3, 4))).isEqualTo(4);
    }

    @Test
    void oneForwardOneBackwardWarmsUpThenAlternates() {
        assertThat(ScheduleOrder.of(Schedule.ONE_F_ONE_B, 0, 3, 4)).containsExactly(0, 1, 2, -1, 3, -2, -3, -4);
        assertThat(ScheduleOrder.of(Schedule.ONE_F_ONE_B, 1, 3, 4)).containsExactly(0, 1, -1, 2, -2, 3, -3, -4);
        assertThat(ScheduleOrder.of(Schedule.ONE_F_ONE_B, 2, 3, 4)).containsExactly(0, -1, 1, -2, 2, -3, 3, -4);
        // fewer micro-batches than the warm-up wants
        assertThat(ScheduleOrder.of(Schedule.ONE_F_ONE_B, 0, 4, 2)).containsExactly(0, 1, -1, -2);
    }

    @Test
    void oneForwardOneBackwardHoldsAtMostStagesMinusTheStageIndex() {
        for (int stages = 1; stages <= 5; stages++) {
            for (int micro = 1; micro <= 12; micro++) {
                for (int stage = 0; stage < stages; stage++) {
                    assertThat(ScheduleOrder.peakHeld(ScheduleOrder.of(Schedule.ONE_F_ONE_B, stage, stages, micro)))
                            .as("stage %d of %d, %d micro-batches", stage, stages, micro)
                            .isEqualTo(Math.min(stages - stage, micro));
                }
            }
        }
    }
}
