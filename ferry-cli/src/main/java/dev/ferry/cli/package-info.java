/**
 * The {@code ferry} command line ({@link dev.ferry.cli.FerryCli}): {@code ferry run} launches a
 * local group of worker JVMs like {@code torchrun}, {@code ferry bench} runs the benchmark
 * harness. The launching itself is a library in {@link dev.ferry.cli.launch}.
 */
package dev.ferry.cli;
