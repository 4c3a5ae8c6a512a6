package dev.ferry.status;

/**
 * What the launcher knows of one worker's process, independent of its reports: a worker killed
 * before it could say anything still shows as gone.
 *
 * @param rank        the worker's rank
 * @param pid         its process id
 * @param incarnation how many processes the launcher has started for this rank (1 for the first)
 * @param alive       whether the process is running
 * @param exitCode    its exit code once it exited ({@code 137}: killed by SIGKILL), else -1
 */
public record WorkerProcess(int rank, long pid, int incarnation, boolean alive, int exitCode) {
}
