package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.CallTimeline;

/**
 * The timeline of one call being followed by {@link CallObserver}s, filled in as it goes: by the
 * thread that makes it ({@link #encoded}), then by the one that reads its answer ({@link #answered})
 * and the one that ends it ({@link #ended}). Each happens before the next (the pending-call table
 * hands the call over), so plain fields do; {@code ended} runs once.
 */
public final class ObservedCall {
    private final CallObserver[] observers;
    private final CallInfo info;
    private final CallHeaders headers;
    private final long startNanos;
    private long encodedNanos;
    private long requestBytes;
    private long answeredNanos;
    private long responseBytes;

    ObservedCall(CallObserver[] observers, CallInfo info, CallHeaders headers, long startNanos) {
        this.observers = observers;
        this.info = info;
        this.headers = headers;
        this.startNanos = startNanos;
    }

    /** The request is encoded, {@code bytes} long, and about to be sent. */
    public void encoded(long bytes) {
        encodedNanos = System.nanoTime();
        requestBytes = bytes;
    }

    /** The answer, {@code bytes} long, was read. */
    public void answered(long bytes) {
        answeredNanos = System.nanoTime();
        responseBytes = bytes;
    }

    /** The call ended, {@code failure} null if it returned: tells the observers. */
    public void ended(Throwable failure) {
        long end = System.nanoTime();
        long encoded = encodedNanos == 0 ? end : encodedNanos;
        CallTimeline timeline = new CallTimeline(info, headers, startNanos, encoded,
                answeredNanos == 0 ? end : answeredNanos, end, requestBytes, responseBytes, failure);
        for (CallObserver observer : observers) {
            CallObservers.notify(observer, () -> observer.callEnded(timeline));
        }
    }
}
