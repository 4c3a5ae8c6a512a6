package dev.ferry.status;

import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

/**
 * The cluster as the page sees it: the launcher's view of each process, and each worker's latest
 * report, kept as the text it arrived as (the page parses it; a malformed one spoils only its own
 * worker's row). Thread-safe.
 */
final class ClusterState {
    /** A report this much older than now no longer vouches for a live worker ("unresponsive"). */
    static final long STALE_MILLIS = 5_000;

    private final Supplier<List<WorkerProcess>> processes;
    private final AtomicReferenceArray<Report> reports;

    /**
     * One worker's latest report, with the launcher's incarnation of the rank when it came: a report
     * of a process the launcher has since replaced says nothing about the new one.
     */
    record Report(String json, long receivedMillis, long sequence, int incarnation) {
    }

    ClusterState(int size, Supplier<List<WorkerProcess>> processes) {
        this.processes = processes;
        this.reports = new AtomicReferenceArray<>(size);
    }

    int size() {
        return reports.length();
    }

    /** Keeps {@code json} as {@code rank}'s latest report. */
    void report(int rank, String json) {
        int incarnation = incarnation(processes.get(), rank);
        reports.getAndUpdate(rank, previous -> new Report(json, System.currentTimeMillis(),
                previous == null ? 1 : previous.sequence + 1, incarnation));
    }

    private static int incarnation(List<WorkerProcess> all, int rank) {
        return rank < all.size() ? all.get(rank).incarnation() : 0;
    }

    Report report(int rank) {
        return reports.get(rank);
    }

    /**
     * The launcher's view as JSON: per rank the process, its state for the page, the age of its
     * latest report. Only numbers and fixed words, so nothing to escape.
     */
    String json() {
        long now = System.currentTimeMillis();
        StringBuilder out = new StringBuilder("{\"timeMs\":").append(now).append(",\"workers\":[");
        List<WorkerProcess> all = processes.get();
        for (int rank = 0; rank < size(); rank++) {
            WorkerProcess process = rank < all.size() ? all.get(rank) : null;
            Report report = reports.get(rank);
            if (report != null && process != null && report.incarnation != process.incarnation()) {
                report = null; // the rank was started again: its new process has not reported yet
            }
            long age = report == null ? -1 : now - report.receivedMillis;
            out.append(rank == 0 ? "" : ",").append("{\"rank\":").append(rank)
                    .append(",\"pid\":").append(process == null ? -1 : process.pid())
                    .append(",\"incarnation\":").append(process == null ? 0 : process.incarnation())
                    .append(",\"exitCode\":").append(process == null ? -1 : process.exitCode())
                    .append(",\"reportAgeMs\":").append(age)
                    .append(",\"state\":\"").append(state(process, report, age)).append("\"}");
        }
        return out.append("]}").toString();
    }

    /**
     * gone (the process exited), starting (no report yet from this process: a rank started again is
     * starting until its new process reports), unresponsive (reports stopped), else reporting.
     */
    private static String state(WorkerProcess process, Report report, long age) {
        if (process != null && !process.alive()) {
            return "gone";
        }
        if (report == null) {
            return "starting";
        }
        return age > STALE_MILLIS ? "unresponsive" : "reporting";
    }
}
