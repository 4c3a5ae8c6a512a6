/**
 * Launching groups of worker JVMs on one machine, the way {@code torchrun} does for Python.
 *
 * <pre>
 *   WorkerGroupSpec ──build──▶ WorkerGroup.start()
 *                                 │  rank 0..N-1: java JVM_FLAGS JVM_ARGS -cp CP MAIN ARGS
 *                                 │  env: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...
 *                                 ▼
 *                     stdout/stderr ──LinePump──▶ LineSink ("[rank] line")
 *                     exits ──▶ awaitCompletion(timeout) ──▶ GroupResult
 *                                 (first failure or timeout stops the rest)
 * </pre>
 *
 * <p>Public API: {@link dev.ferry.cli.launch.WorkerGroupSpec}, {@link
 * dev.ferry.cli.launch.WorkerGroup}, {@link dev.ferry.cli.launch.GroupResult}, {@link
 * dev.ferry.cli.launch.WorkerResult}, {@link dev.ferry.cli.launch.LineSink}, {@link
 * dev.ferry.cli.launch.ConsoleLineSink}, {@link dev.ferry.cli.launch.OutputMode}, {@link
 * dev.ferry.cli.launch.WorkerStream}, {@link dev.ferry.cli.launch.WorkerEnvironment}, {@link
 * dev.ferry.cli.launch.JvmFlags}, {@link dev.ferry.cli.launch.FreePorts} and {@link
 * dev.ferry.cli.launch.JavaExecutable}. Everything package-private is an implementation detail.
 */
package dev.ferry.cli.launch;
