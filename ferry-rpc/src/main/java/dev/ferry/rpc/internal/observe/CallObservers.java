package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * One agent's {@link CallObserver}s, and the one place that asks them about a call: at its start
 * ({@link #call}, {@link #request}), which gives the holder of its timeline or null when no
 * observer follows it. Observers come and go while calls run (copy on write: a call keeps those
 * that followed it).
 *
 * <p>This class is thread-safe.
 */
public final class CallObservers {
    private static final Logger log = LoggerFactory.getLogger(CallObservers.class);
    private static final CallObserver[] NONE = new CallObserver[0];

    private final Object lock = new Object();
    private volatile CallObserver[] all;

    public CallObservers(List<CallObserver> initial) {
        this.all = initial.toArray(NONE);
    }

    /** Adds {@code observer} for calls started from now on; closing the result removes it. */
    public AutoCloseable add(CallObserver observer) {
        Objects.requireNonNull(observer, "observer");
        synchronized (lock) {
            CallObserver[] grown = Arrays.copyOf(all, all.length + 1);
            grown[all.length] = observer;
            all = grown;
        }
        return () -> remove(observer);
    }

    private void remove(CallObserver observer) {
        synchronized (lock) {
            CallObserver[] current = all;
            for (int i = 0; i < current.length; i++) {
                if (current[i] == observer) {
                    CallObserver[] shrunk = new CallObserver[current.length - 1];
                    System.arraycopy(current, 0, shrunk, 0, i);
                    System.arraycopy(current, i + 1, shrunk, i, current.length - i - 1);
                    all = shrunk;
                    return;
                }
            }
        }
    }

    /**
     * The timeline of a call being made, if an observer follows it; else null.
     *
     * @param startNanos when the call was made
     */
    public ObservedCall call(CallInfo info, CallHeaders headers, long startNanos) {
        CallObserver[] following = following(observer -> observer.followsCall(info, headers));
        return following == null ? null : new ObservedCall(following, info, headers, startNanos);
    }

    /** The timeline of a request that just arrived, if an observer follows it; else null. */
    public ObservedRequest request(WorkerInfo caller, CallHeaders headers, long requestBytes) {
        CallObserver[] following = following(observer -> observer.followsRequest(caller, headers));
        return following == null ? null : new ObservedRequest(following, headers, requestBytes, System.nanoTime());
    }

    /** The observers that answer yes (one that throws answers no), or null if none does. */
    private CallObserver[] following(Predicate<CallObserver> follows) {
        CallObserver[] observers = all;
        if (observers.length == 0) {
            return null;
        }
        CallObserver[] following = null;
        int count = 0;
        for (CallObserver observer : observers) {
            boolean yes;
            try {
                yes = follows.test(observer);
            } catch (RuntimeException e) {
                log.warn("call observer {} failed: {}", observer, e.toString());
                yes = false;
            }
            if (yes) {
                following = following == null ? new CallObserver[observers.length] : following;
                following[count++] = observer;
            }
        }
        return following == null ? null : trim(following, count);
    }

    private static CallObserver[] trim(CallObserver[] observers, int count) {
        return count == observers.length ? observers : Arrays.copyOf(observers, count);
    }

    /** Runs {@code action} on an observer, logging what it throws: an observer never fails a call. */
    static void notify(CallObserver observer, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            log.warn("call observer {} failed: {}", observer, e.toString());
        }
    }
}
