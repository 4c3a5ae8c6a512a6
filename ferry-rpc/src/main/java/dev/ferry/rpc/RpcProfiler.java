package dev.ferry.rpc;

import dev.ferry.rpc.internal.agent.DefaultRpcAgent;
import dev.ferry.rpc.internal.observe.ChromeTrace;
import dev.ferry.rpc.internal.observe.ProfileRecorder;
import dev.ferry.rpc.internal.observe.ProfileTable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * Profiles the calls a block of code makes, on every worker they reach: PyTorch's
 * {@code torch.autograd.profiler.profile()} around RPCs, as a try-with-resources scope. For each
 * call made on this thread while the profiler is open, and each call those calls make in turn on
 * other workers (nested calls), it records the caller's span (serializing the arguments, waiting,
 * deserializing the answer) and the callee's (queueing for a thread, deserializing, running the
 * function, serializing the answer). When closed it gathers the callees' spans from their workers;
 * then it prints a per-function table, as PyTorch's {@code prof.key_averages().table()}, and writes
 * a Chrome trace ({@code chrome://tracing}, Perfetto) with one track per worker.
 *
 * <pre>{@code
 * try (RpcProfiler profiler = RpcProfiler.start()) {
 *     for (int i = 0; i < 100; i++) {
 *         Rpc.rpcSync("worker1", Ops::step, i);
 *     }
 * } // closed: the spans of worker1 (and of any worker it called) are gathered
 * System.out.println(profiler.table());
 * profiler.exportChromeTrace(Path.of("trace.json"));
 * }</pre>
 *
 * <p>A call carries the profile in its header (so, like any call with header entries, it does not
 * take a synchronous-exchange lane; results and errors are unchanged). Calls made on other threads,
 * or in an {@code @AsyncExecution} function's callbacks, are not recorded; nor are calls still in
 * flight when the profiler closes. Each worker's times are its own wall clock, so workers on
 * different machines line up as well as their clocks do. Calls to a worker that cannot be reached
 * at close are recorded on the caller's side only ({@link #unreachableWorkers()}).
 *
 * <p>A profiler belongs to the thread that started it; close it there. Profilers on one thread
 * nest: calls go to the innermost. Its results are read after {@link #close()}.
 */
public final class RpcProfiler implements AutoCloseable {
    private final RpcAgent agent;
    private final ProfileRecorder recorder;
    private final ProfileRecorder.Opened scope;
    private final long startEpochNanos;
    private long endEpochNanos;
    private List<Span> spans;
    private final List<String> unreachable = new ArrayList<>();

    private RpcProfiler(RpcAgent agent, ProfileRecorder recorder) {
        this.agent = agent;
        this.recorder = recorder;
        this.startEpochNanos = ProfileRecorder.epochNanos(System.nanoTime());
        this.scope = recorder.open();
    }

    /** Starts profiling the calls this thread makes through the current agent ({@link Rpc#current()}). */
    public static RpcProfiler start() {
        return start(Rpc.current());
    }

    /** Starts profiling the calls this thread makes through {@code agent}. */
    public static RpcProfiler start(RpcAgent agent) {
        Objects.requireNonNull(agent, "agent");
        if (!(agent instanceof DefaultRpcAgent ferry)) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    "the RPC profiler needs a Ferry agent, not " + agent.getClass().getName());
        }
        return new RpcProfiler(agent, ferry.profileRecorder());
    }

    /**
     * Stops recording and gathers the spans the profiled calls left on other workers (each asked
     * once, with the agent's timeout; one that fails to answer is listed in
     * {@link #unreachableWorkers()}). Idempotent.
     */
    @Override
    public void close() {
        if (spans != null) {
            return;
        }
        scope.close();
        endEpochNanos = ProfileRecorder.epochNanos(System.nanoTime());
        List<Span> all = new ArrayList<>(recorder.take(scope.id()));
        DefaultRpcAgent ferry = (DefaultRpcAgent) agent;
        List<WorkerInfo> others = agent.getWorkerInfos().stream()
                .filter(worker -> !worker.equals(agent.getWorkerInfo())).toList();
        List<RpcFuture<Object[]>> answers = new ArrayList<>();
        for (WorkerInfo worker : others) {
            answers.add(ferry.collectProfile(worker, scope.id()));
        }
        for (int i = 0; i < others.size(); i++) {
            try {
                all.addAll(ProfileRecorder.decode(answers.get(i).await()));
            } catch (RpcException e) {
                unreachable.add(others.get(i).name());
            }
        }
        all.sort(Comparator.comparingLong(Span::startEpochNanos));
        spans = List.copyOf(all);
    }

    /** Every span recorded, by start time: the calls on their callers, the requests on their callees. */
    public List<Span> spans() {
        return closed();
    }

    /** Per function and pair of workers, the totals of its calls and requests (PyTorch's {@code key_averages()}). */
    public List<KeyAverage> keyAverages() {
        return ProfileTable.keyAverages(closed());
    }

    /** The table of {@link #keyAverages()}, by total time, as PyTorch's {@code key_averages().table()} prints it. */
    public String table() {
        return ProfileTable.format(keyAverages(), endEpochNanos - startEpochNanos);
    }

    /** The spans as a Chrome trace (JSON): one process per worker, one row per overlapping call. */
    public String chromeTrace() {
        return ChromeTrace.json(closed(), agent.getWorkerInfos());
    }

    /** Writes {@link #chromeTrace()} to {@code file}, for {@code chrome://tracing} or ui.perfetto.dev. */
    public void exportChromeTrace(Path file) throws IOException {
        Files.writeString(file, chromeTrace(), StandardCharsets.UTF_8);
    }

    /** Workers whose spans could not be gathered at close (gone, or not answering in time). */
    public List<String> unreachableWorkers() {
        closed();
        return List.copyOf(unreachable);
    }

    private List<Span> closed() {
        if (spans == null) {
            throw new IllegalStateException("the profiler is still recording: close it first");
        }
        return spans;
    }

    /** Which end of a call a span was recorded on. */
    public enum Side {
        /** The caller: from the call to its outcome. */
        CALL,
        /** The callee: from the request's arrival to its encoded answer. */
        REQUEST
    }

    /**
     * One call on one of its ends, in phases: a call's {@code serialize}, {@code wait},
     * {@code deserialize}; a request's {@code queue}, {@code deserialize}, {@code handler},
     * {@code serialize}. Times are nanoseconds since the epoch on {@code worker}'s clock.
     *
     * @param worker        the worker it was recorded on
     * @param side          the caller's or the callee's
     * @param caller        the worker that made the call
     * @param callee        the worker that ran it
     * @param function      {@code Class::method}
     * @param callId        the caller's id of the call (the same on both ends)
     * @param outcome       {@code ok}, else the error code (caller) or the thrown class (callee)
     * @param requestBytes  the encoded request
     * @param responseBytes the encoded answer
     * @param phases        consecutive phases, from the first's start to the last's end
     */
    public record Span(String worker, Side side, String caller, String callee, String function, long callId,
                       String outcome, long requestBytes, long responseBytes, List<Phase> phases) {
        public Span {
            phases = List.copyOf(phases);
        }

        public long startEpochNanos() {
            return phases.get(0).startEpochNanos();
        }

        public long endEpochNanos() {
            return phases.get(phases.size() - 1).endEpochNanos();
        }

        public long durationNanos() {
            return endEpochNanos() - startEpochNanos();
        }

        /** The duration of phase {@code name}, 0 if it has none. */
        public long phaseNanos(String name) {
            return phases.stream().filter(phase -> phase.name().equals(name)).mapToLong(Phase::durationNanos).sum();
        }

        /** PyTorch's key of the call: {@code rpc#Ops::add(worker0 -> worker1)}. */
        public String key() {
            return "rpc#" + function + "(" + caller + " -> " + callee + ")";
        }
    }

    /** A phase of a {@link Span}. */
    public record Phase(String name, long startEpochNanos, long endEpochNanos) {
        public long durationNanos() {
            return endEpochNanos - startEpochNanos;
        }
    }

    /**
     * The totals of one function's calls between two workers: from its callers' spans the count,
     * time, failures, serialization and bytes; from its callees' the queueing and handler time
     * (PyTorch's "CPU total" of the remote op: the function's run on the callee's thread) and their
     * part of the (de)serialization.
     *
     * @param key              {@link Span#key()}
     * @param calls            calls made (callers' spans; callees' where the caller's is missing)
     * @param failures         those that did not return a value
     * @param totalNanos       the callers' time, call to outcome
     * @param serializeNanos   encoding: requests on the callers, answers on the callees
     * @param queueNanos       waiting for a thread on the callees
     * @param handlerNanos     running the function on the callees
     * @param deserializeNanos decoding: requests on the callees, answers on the callers
     * @param requestBytes     encoded requests
     * @param responseBytes    encoded answers
     */
    public record KeyAverage(String key, long calls, long failures, long totalNanos, long serializeNanos,
                             long queueNanos, long handlerNanos, long deserializeNanos, long requestBytes,
                             long responseBytes) {
        /** The mean time of a call. */
        public long averageNanos() {
            return calls == 0 ? 0 : totalNanos / calls;
        }
    }
}
