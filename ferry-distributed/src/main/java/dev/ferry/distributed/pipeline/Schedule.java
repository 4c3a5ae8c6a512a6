package dev.ferry.distributed.pipeline;

/**
 * The order in which each stage of a {@link Pipeline} runs the forward (F) and backward (B) passes
 * of a step's micro-batches. Both give the same gradients; they differ in how many micro-batches'
 * activations a stage holds at once (forwards run, backwards not yet), and so in memory.
 *
 * <pre>
 * 3 stages, 4 micro-batches (time runs to the right; a stage waits where it has nothing to run)
 *
 * GPIPE         stage 0  F0 F1 F2 F3                   B0 B1 B2 B3       holds up to 4 (all)
 *               stage 1     F0 F1 F2 F3             B0 B1 B2 B3
 *               stage 2        F0 F1 F2 F3       B0 B1 B2 B3
 *
 * ONE_F_ONE_B   stage 0  F0 F1 F2       B0 F3    B1    B2    B3         holds up to 3 (stages - 0)
 *               stage 1     F0 F1    B0 F2 B1 F3 B2    B3               holds up to 2
 *               stage 2        F0 B0 F1 B1 F2 B2 F3 B3                  holds 1
 * </pre>
 */
public enum Schedule {
    /**
     * GPipe (Huang et al., 2019): every stage runs the forward passes of all micro-batches, then
     * their backward passes. A stage holds all micro-batches' activations at its peak.
     */
    GPIPE,
    /**
     * One forward, one backward (PipeDream-Flush, Narayanan et al., 2021): stage {@code s} of
     * {@code S} first runs {@code S - s - 1} forward passes, then alternates one forward and one
     * backward, then runs the backward passes left. A stage holds at most {@code S - s} (so at most
     * {@code S}) micro-batches' activations, whatever the micro-batch count.
     */
    ONE_F_ONE_B
}
