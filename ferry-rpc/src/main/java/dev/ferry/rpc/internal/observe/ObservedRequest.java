package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.RequestTimeline;

/**
 * The timeline of one request being followed by {@link CallObserver}s, filled in as it runs: by the
 * transport thread that read it, the thread that runs it and, for an {@code @AsyncExecution}
 * function, the one that completes its future. Each step happens before the next (a hand-off to a
 * thread, a future's completion), so plain fields do.
 */
public final class ObservedRequest {
    private final CallObserver[] observers;
    private final CallHeaders headers;
    private final long requestBytes;
    private final long arrivedNanos;
    private long startedNanos;
    private long decodedNanos;
    private long handlerEndNanos;
    private CallInfo info;
    private boolean asynchronous;
    private boolean ended;

    ObservedRequest(CallObserver[] observers, CallHeaders headers, long requestBytes, long arrivedNanos) {
        this.observers = observers;
        this.headers = headers;
        this.requestBytes = requestBytes;
        this.arrivedNanos = arrivedNanos;
    }

    /** A thread began to run it, at {@code nanos}. */
    public void started(long nanos) {
        startedNanos = nanos;
    }

    /** Its arguments were decoded: {@code info} names the function. */
    public void decoded(CallInfo info) {
        this.info = info;
        decodedNanos = System.nanoTime();
    }

    /** Its function returned, or threw; {@code asynchronous}: its future completed. */
    public void handlerEnded(boolean asynchronous) {
        this.asynchronous = asynchronous;
        handlerEndNanos = System.nanoTime();
    }

    /**
     * Its answer (or error), {@code responseBytes} long, is encoded and about to leave: tells the
     * observers. {@code info} stands in for a request that could not be decoded. Once only.
     */
    public void ended(CallInfo fallback, long responseBytes, Throwable failure) {
        if (ended) {
            return;
        }
        ended = true;
        long end = System.nanoTime();
        long started = startedNanos == 0 ? arrivedNanos : startedNanos;
        long decoded = decodedNanos == 0 ? end : decodedNanos;
        long handlerEnd = handlerEndNanos == 0 ? end : handlerEndNanos;
        RequestTimeline timeline = new RequestTimeline(info != null ? info : fallback, headers, arrivedNanos, started,
                Math.max(decoded, started), Math.max(handlerEnd, decoded), end, requestBytes, responseBytes,
                asynchronous, failure);
        for (CallObserver observer : observers) {
            CallObservers.notify(observer, () -> observer.requestEnded(timeline));
        }
    }
}
