package dev.ferry.tensor;

/** Result of {@link Tensor#max(int, boolean)} and {@link Tensor#min(int, boolean)}. */
public record ValuesIndices(Tensor values, Tensor indices) {
}
