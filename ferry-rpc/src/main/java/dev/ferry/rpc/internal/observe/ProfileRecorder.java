package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RpcProfiler.Phase;
import dev.ferry.rpc.RpcProfiler.Side;
import dev.ferry.rpc.RpcProfiler.Span;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.CallTimeline;
import dev.ferry.rpc.spi.HeaderKey;
import dev.ferry.rpc.spi.RequestTimeline;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One agent's part of the {@link dev.ferry.rpc.RpcProfiler}: puts the id of the profile open on the
 * calling thread in the header of each call it makes, runs the handlers of requests carrying one
 * inside that profile (so their nested calls carry it on), and keeps the spans of those calls and
 * requests, by profile, until the profiler takes them. A call outside any profile costs a
 * thread-local read on the caller and a header look-up on the callee.
 *
 * <p>Bounded: at most {@value #MAX_SPANS} spans per profile (later ones are dropped) and
 * {@value #MAX_PROFILES} profiles kept at once (a profile whose profiler never came for it, its
 * worker gone, gives way to newer ones). Thread-safe.
 */
public final class ProfileRecorder implements CallInterceptor, CallObserver {
    /** The header naming the profile a call belongs to. */
    static final HeaderKey<String> PROFILE = HeaderKey.ofString("ferry-profile");
    static final int MAX_SPANS = 100_000;
    static final int MAX_PROFILES = 32;
    private static final ThreadLocal<Context> CURRENT = new ThreadLocal<>();
    /** This JVM's wall clock at one {@link System#nanoTime()} reading, to put spans on the epoch. */
    private static final long ANCHOR_NANO_TIME = System.nanoTime();
    private static final long ANCHOR_EPOCH_NANOS = epochNow();

    private final String worker;
    /** Guarded by itself; insertion order is age. */
    private final LinkedHashMap<String, List<Span>> profiles = new LinkedHashMap<>();

    public ProfileRecorder(String worker) {
        this.worker = worker;
    }

    /** The profile open on this thread for one worker, and the one it hides. */
    private record Context(String id, String worker) {
    }

    /** A profile opened on this thread ({@link #open()}, a handler's run): closing it restores the one before. */
    public static final class Opened implements CallInterceptor.Scope {
        private final Context context;
        private final Context previous;
        private final Thread owner = Thread.currentThread();

        private Opened(Context context, Context previous) {
            this.context = context;
            this.previous = previous;
        }

        public String id() {
            return context.id;
        }

        @Override
        public void close() {
            if (Thread.currentThread() != owner) {
                throw new IllegalStateException("an RPC profiler must be closed on the thread that started it");
            }
            if (CURRENT.get() == context) {
                restore(previous);
            }
        }
    }

    /** Opens a new profile of this worker's calls on this thread. */
    public Opened open() {
        String id = worker + "/" + UUID.randomUUID();
        synchronized (profiles) {
            profiles.put(id, new ArrayList<>());
            trim();
        }
        Context previous = CURRENT.get();
        Context context = new Context(id, worker);
        CURRENT.set(context);
        return new Opened(context, previous);
    }

    private static void restore(Context previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
    }

    /** Removes and returns the spans of profile {@code id} recorded on this worker. */
    public List<Span> take(String id) {
        synchronized (profiles) {
            List<Span> spans = profiles.remove(id);
            return spans == null ? List.of() : spans;
        }
    }

    @Override
    public CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
        Context context = CURRENT.get();
        if (context == null || !context.worker.equals(call.caller().name())) {
            return headers;
        }
        return headers.with(PROFILE, context.id);
    }

    @Override
    public CallInterceptor.Scope onHandlerStart(CallInfo call, CallHeaders headers) {
        String id = headers.get(PROFILE);
        if (id == null) {
            return CallInterceptor.Scope.NOOP;
        }
        Context previous = CURRENT.get();
        Context context = new Context(id, worker);
        CURRENT.set(context);
        return new Opened(context, previous);
    }

    @Override
    public boolean followsCall(CallInfo call, CallHeaders headers) {
        return headers.contains(PROFILE);
    }

    @Override
    public void callEnded(CallTimeline call) {
        CallInfo info = call.info();
        record(call.headers().get(PROFILE), new Span(worker, Side.CALL, info.caller().name(), info.callee().name(),
                info.function(), info.callId(), call.outcome(), call.requestBytes(), call.responseBytes(), List.of(
                        phase("serialize", call.startNanos(), call.encodedNanos()),
                        phase("wait", call.encodedNanos(), call.answeredNanos()),
                        phase("deserialize", call.answeredNanos(), call.endNanos()))));
    }

    @Override
    public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
        return headers.contains(PROFILE);
    }

    @Override
    public void requestEnded(RequestTimeline request) {
        CallInfo info = request.info();
        record(request.headers().get(PROFILE), new Span(worker, Side.REQUEST, info.caller().name(),
                info.callee().name(), info.function(), info.callId(), request.outcome(), request.requestBytes(),
                request.responseBytes(), List.of(
                        phase("queue", request.arrivedNanos(), request.startedNanos()),
                        phase("deserialize", request.startedNanos(), request.decodedNanos()),
                        phase("handler", request.decodedNanos(), request.handlerEndNanos()),
                        phase("serialize", request.handlerEndNanos(), request.endNanos()))));
    }

    private void record(String id, Span span) {
        synchronized (profiles) {
            List<Span> spans = profiles.get(id);
            if (spans == null) {
                // A profile opened on another worker, first seen here.
                spans = new ArrayList<>();
                profiles.put(id, spans);
                trim();
            }
            if (spans.size() < MAX_SPANS) {
                spans.add(span);
            }
        }
    }

    private void trim() {
        Iterator<Map.Entry<String, List<Span>>> oldest = profiles.entrySet().iterator();
        while (profiles.size() > MAX_PROFILES && oldest.hasNext()) {
            oldest.next();
            oldest.remove();
        }
    }

    private static Phase phase(String name, long startNanoTime, long endNanoTime) {
        return new Phase(name, epochNanos(startNanoTime), epochNanos(Math.max(startNanoTime, endNanoTime)));
    }

    /** A {@link System#nanoTime()} reading of this JVM as nanoseconds since the epoch. */
    public static long epochNanos(long nanoTime) {
        return ANCHOR_EPOCH_NANOS + (nanoTime - ANCHOR_NANO_TIME);
    }

    private static long epochNow() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /**
     * Spans as plain arrays for the wire (the answer to a profiler gathering them): per span six
     * strings and five numbers, then a name and two times per phase. Only JDK types, so no class
     * needs registering.
     */
    public static Object[] encode(List<Span> spans) {
        List<String> strings = new ArrayList<>();
        List<Long> longs = new ArrayList<>();
        for (Span span : spans) {
            strings.add(span.worker());
            strings.add(span.caller());
            strings.add(span.callee());
            strings.add(span.function());
            strings.add(span.outcome());
            longs.add((long) span.side().ordinal());
            longs.add(span.callId());
            longs.add(span.requestBytes());
            longs.add(span.responseBytes());
            longs.add((long) span.phases().size());
            for (Phase phase : span.phases()) {
                strings.add(phase.name());
                longs.add(phase.startEpochNanos());
                longs.add(phase.endEpochNanos());
            }
        }
        return new Object[] {strings.toArray(String[]::new), longs.stream().mapToLong(Long::longValue).toArray()};
    }

    /** The spans {@link #encode} wrote; a malformed answer fails with {@link IllegalArgumentException}. */
    public static List<Span> decode(Object[] encoded) {
        if (encoded == null || encoded.length != 2 || !(encoded[0] instanceof String[] strings)
                || !(encoded[1] instanceof long[] numbers)) {
            throw new IllegalArgumentException("not a profile's spans");
        }
        List<Span> spans = new ArrayList<>();
        int s = 0;
        int n = 0;
        try {
            while (s < strings.length) {
                String worker = strings[s++];
                String caller = strings[s++];
                String callee = strings[s++];
                String function = strings[s++];
                String outcome = strings[s++];
                Side side = Side.values()[(int) numbers[n++]];
                long callId = numbers[n++];
                long requestBytes = numbers[n++];
                long responseBytes = numbers[n++];
                int count = (int) numbers[n++];
                List<Phase> phases = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    phases.add(new Phase(strings[s++], numbers[n++], numbers[n++]));
                }
                spans.add(new Span(worker, side, caller, callee, function, callId, outcome, requestBytes,
                        responseBytes, phases));
            }
        } catch (ArrayIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("a profile's spans cut short", e);
        }
        return spans;
    }
}
