package dev.ferry.tensor.nn;

/** How a loss combines its per-element values. */
public enum Reduction {
    NONE, MEAN, SUM
}
