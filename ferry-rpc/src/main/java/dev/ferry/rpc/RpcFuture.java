package dev.ferry.rpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import dev.ferry.rpc.internal.concurrent.CallContext;
import dev.ferry.rpc.internal.concurrent.CallbackQueue;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import dev.ferry.rpc.internal.concurrent.ManagedBlocking;
import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.text.Durations;

/**
 * The result of an asynchronous call: PyTorch's {@code torch.futures.Future} for the JVM. Returned
 * by {@code rpcAsync}; also created directly by user code, for example by an
 * {@code @AsyncExecution} function that completes it later.
 *
 * <pre>{@code
 * RpcFuture<Tensor> sum = agent.rpcAsync("worker1", Ops::add, a, b);
 * RpcFuture<Tensor> plusOne = sum.then(f -> f.value().add(1));   // f is `sum`, already complete
 * Tensor t = plusOne.await();                                     // blocks; rethrows a failure
 * }</pre>
 *
 * <h2>Methods and their PyTorch names</h2>
 * <pre>
 *  PyTorch                      Ferry
 *  ---------------------------  -------------------------------------------------------------
 *  fut.done()                   done()            (true after a value or a failure)
 *  fut.wait()                   await(), await(Duration)   (Object.wait() is final in Java)
 *  fut.value()                  value()           (non-blocking; throws if not done)
 *  fut.then(cb)                 then(cb)          (cb receives this future)
 *  fut.add_done_callback(cb)    addDoneCallback(cb)
 *  fut.set_result(v)            setResult(v)
 *  fut.set_exception(e)         setException(e)
 *  torch.futures.collect_all    collectAll(futures)
 *  torch.futures.wait_all       waitAll(futures)
 *  rpc.api._wait_all()          {@link WaitAllScope}
 * </pre>
 *
 * <h2>Failures</h2>
 * {@link #await()} and {@link #value()} rethrow a failure on every call:
 * <ul>
 *   <li>an {@link RpcException} is thrown as a fresh {@link RpcException#rethrowable() copy} with
 *       the same code and remote details, whose cause is the stored exception, so the stack trace
 *       shows both the waiter and the place of failure;</li>
 *   <li>any other unchecked exception or error is thrown as it was stored (the same object);</li>
 *   <li>a checked exception (only {@link #setException} can store one) is wrapped in an
 *       {@link RpcException} with code {@link RpcException.Code#INTERNAL} and the original as
 *       cause; Java cannot rethrow it unwrapped from a method that does not declare it.</li>
 * </ul>
 * Unlike PyTorch, where {@code set_exception} completes the future "successfully" with an error
 * to raise, a failure here is a failure everywhere: {@link #collectAll} and {@link #waitAll}
 * exit early on it.
 *
 * <h2>Callbacks</h2>
 * Callbacks added with {@link #then}, {@link #thenApply}, {@link #thenCompose} and
 * {@link #addDoneCallback} run in registration order, once, after the future completes with a
 * value or a failure. A callback added to a complete future runs inline, on the adding thread;
 * otherwise it runs on the thread that completes the future (for RPC replies, an agent thread).
 * Two exceptions keep the order and the stack safe: if the completing thread is still running the
 * earlier callbacks, a new one is queued behind them on that thread; and when callbacks complete
 * futures nested more than {@value CallbackQueue#MAX_NESTED_FIRES} deep, the deeper callbacks run
 * on the same thread just after the current outermost callback returns, so a chain of any length
 * cannot overflow the stack. Callbacks should therefore be short and must not block; use
 * {@link #value()} inside them ({@link #await()} on the future passed in is fine too, it is done).
 *
 * <h2>Cancelling</h2>
 * {@link #cancel} fails a future that is not done with {@link RpcException.Code#CANCELLED} at once.
 * On the future of a call ({@code rpcAsync}, a bound function's or an RRef's {@code rpcAsync}) it
 * also cancels the remote work: the callee drops the request if it has not started (or not even
 * arrived: a cancel that overtakes its call is remembered there), interrupts the
 * handler's thread if it runs, and cancels the nested calls that handler waits on, on whichever
 * workers they went to. A call that times out is cancelled on the callee the same way. A future
 * derived with {@link #then} and the like is cancelled alone (its parent goes on); cancelling the
 * {@link CompletableFuture} of {@link #toCompletableFuture} cancels this future. A {@code remote()}
 * has no future to cancel: its creation is cancelled with the handler that made it, or when its
 * timeout passes; the RRef then raises that ({@code CANCELLED}, {@code TIMEOUT}) on use, and its
 * delete still reaches the owner, which drops the value: nothing leaks.
 *
 * <h2>Inside a request handler</h2>
 * A callback registered while a handler runs (an {@code @AsyncExecution} function chaining calls)
 * runs in that handler's name wherever it runs: the calls it makes inherit the deadline of the
 * call being handled and are cancelled with it, as the handler's own calls are.
 *
 * <h2>Do not block transport threads</h2>
 * Calling {@link #await()} (or {@link #waitAll}) on a transport thread while the future is not
 * complete throws {@link RpcException.Code#ILLEGAL_STATE} at once: the reply would arrive on that
 * very thread, so waiting would deadlock it. Chain with {@link #then} or
 * {@link #addDoneCallback} instead. Awaiting a future that is already complete never blocks and
 * is allowed everywhere.
 *
 * <h2>Completing</h2>
 * This class is both the read and the write side, as PyTorch's is: {@link #setResult} and
 * {@link #setException} are public and throw when the future is already complete. Ferry's agent
 * uses the non-throwing {@code tryComplete}/{@code tryFail} of
 * {@link dev.ferry.rpc.internal.concurrent.FutureCompleter}, which are not public API.
 *
 * <p>This class is thread-safe: any thread may complete, wait on, or add callbacks to a future.
 *
 * @param <T> the type of the value
 */
public final class RpcFuture<T> {
    static {
        FutureCompleter.setAccess(new CompleterAccess());
    }

    /** {@link #state} holds this, never a user value, when a future failed. */
    private record Failure(Throwable cause) {
    }

    private static final Object INCOMPLETE = new Object();
    // Completes normally with the value or a Failure, never exceptionally, so that the stored
    // throwable is kept exactly (CompletableFuture wraps and unwraps CompletionException). Its
    // blocking get() is the one place where threads wait.
    private final CompletableFuture<Object> state = new CompletableFuture<>();
    private final CallbackQueue callbacks = new CallbackQueue();
    /**
     * How {@link #await()} polls (yielding) before it parks, or null: it parks at once. A call's
     * future, and what derives from it, shares its agent's ({@code TransportTuning.spinTime},
     * adapted to how long waits turn out to be; never on a single CPU or a virtual thread): a reply
     * due within the window is then seen without the wake-up of a parked thread (on a VM whose idle
     * vCPU halts, ~50–100 µs). Futures a program makes itself do not spin.
     */
    private final AdaptiveSpin spin;
    /** For a call's future: what cancels the call ({@link #cancel}); null for any other future. */
    private final FutureCompleter.Canceller canceller;
    /** The call {@link #canceller} cancels. */
    private final long callId;

    /** A new incomplete future; complete it with {@link #setResult} or {@link #setException}. */
    public RpcFuture() {
        this(null);
    }

    private RpcFuture(AdaptiveSpin spin) {
        this(spin, null, 0);
    }

    private RpcFuture(AdaptiveSpin spin, FutureCompleter.Canceller canceller, long callId) {
        this.spin = spin;
        this.canceller = canceller;
        this.callId = callId;
    }

    /** A future already completed with {@code value} (null allowed). */
    public static <T> RpcFuture<T> completed(T value) {
        RpcFuture<T> future = new RpcFuture<>();
        future.tryComplete(value);
        return future;
    }

    /** A future already failed with {@code failure}. */
    public static <T> RpcFuture<T> failed(Throwable failure) {
        Objects.requireNonNull(failure, "failure");
        RpcFuture<T> future = new RpcFuture<>();
        future.tryFail(failure);
        return future;
    }

    /**
     * A future that completes like {@code stage}. A {@link CompletionException} from a dependent
     * stage is unwrapped to its cause.
     *
     * <pre>{@code
     * RpcFuture<String> f = RpcFuture.fromCompletionStage(httpClient.sendAsync(req, ofString()).thenApply(HttpResponse::body));
     * }</pre>
     */
    public static <T> RpcFuture<T> fromCompletionStage(CompletionStage<? extends T> stage) {
        Objects.requireNonNull(stage, "stage");
        RpcFuture<T> future = new RpcFuture<>();
        stage.whenComplete((value, failure) -> {
            if (failure == null) {
                future.tryComplete(value);
            } else {
                future.tryFail(failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure);
            }
        });
        return future;
    }

    // ---------------------------------------------------------------- state

    /** True once the future has a value or a failure (also after a timeout or an error). */
    public boolean done() {
        return state.isDone();
    }

    /** True if the future is done with a failure. */
    public boolean failed() {
        return state.getNow(INCOMPLETE) instanceof Failure;
    }

    /**
     * The failure exactly as stored (not a rethrowable copy); for code that inspects failures
     * without catching, such as a reply encoder.
     *
     * @throws RpcException {@link RpcException.Code#ILLEGAL_STATE} if the future is not done or
     *                      did not fail
     */
    public Throwable exceptionNow() {
        Object outcome = state.getNow(INCOMPLETE);
        if (outcome instanceof Failure failure) {
            return failure.cause();
        }
        throw new RpcException(RpcException.Code.ILLEGAL_STATE, outcome == INCOMPLETE
                ? "exceptionNow() called on a future that is not done yet"
                : "exceptionNow() called on a future that completed with a value");
    }

    // ---------------------------------------------------------------- reading

    /**
     * Waits until the future is done and returns its value or throws its failure (see the class
     * comment for how failures are thrown). May be called any number of times.
     *
     * @throws RpcException {@link RpcException.Code#ILLEGAL_STATE} at once if called on a
     *                      transport thread while the future is not done;
     *                      {@link RpcException.Code#INTERNAL} if the thread is interrupted while
     *                      waiting (the interrupt flag is set again, the cause is the
     *                      {@link InterruptedException}, and the future stays as it was)
     */
    public T await() {
        Object outcome = state.getNow(INCOMPLETE);
        long start = 0;
        if (outcome == INCOMPLETE) {
            checkMayBlock();
            start = System.nanoTime();
            outcome = spinBriefly(start);
        }
        if (outcome == INCOMPLETE) {
            ManagedBlocking.Permit permit = ManagedBlocking.beforeBlocking();
            try {
                outcome = state.get();
                if (spin != null) {
                    spin.parkedWaitEnded(System.nanoTime() - start);
                }
            } catch (InterruptedException e) {
                throw interrupted(e);
            } catch (ExecutionException e) {
                throw new RpcException(RpcException.Code.INTERNAL, "Future state failed unexpectedly", e);
            } finally {
                ManagedBlocking.afterBlocking(permit);
            }
        }
        return report(outcome);
    }

    /**
     * Like {@link #await()}, but gives up after {@code timeout}. A zero or negative timeout only
     * checks whether the future is done.
     *
     * @throws RpcException {@link RpcException.Code#TIMEOUT} if not done in time; the future
     *                      itself stays incomplete and can still be awaited or completed
     */
    public T await(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        Object outcome = state.getNow(INCOMPLETE);
        if (outcome == INCOMPLETE && !timeout.isNegative() && !timeout.isZero()) {
            checkMayBlock();
            outcome = spinBriefly(System.nanoTime());
        }
        if (outcome == INCOMPLETE) {
            checkMayBlock();
            ManagedBlocking.Permit permit = ManagedBlocking.beforeBlocking();
            try {
                outcome = state.get(saturatedNanos(timeout), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                throw interrupted(e);
            } catch (TimeoutException e) {
                throw new RpcException(RpcException.Code.TIMEOUT,
                        "Future did not complete within " + Durations.describe(timeout));
            } catch (ExecutionException e) {
                throw new RpcException(RpcException.Code.INTERNAL, "Future state failed unexpectedly", e);
            } finally {
                ManagedBlocking.afterBlocking(permit);
            }
        }
        return report(outcome);
    }

    /**
     * The value of a future that is done, without blocking; throws its failure like
     * {@link #await()}. The way to read the future inside a callback.
     *
     * @throws RpcException {@link RpcException.Code#ILLEGAL_STATE} if the future is not done
     */
    public T value() {
        Object outcome = state.getNow(INCOMPLETE);
        if (outcome == INCOMPLETE) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE,
                    "value() called on a future that is not done yet; use await() or then()");
        }
        return report(outcome);
    }

    // ---------------------------------------------------------------- callbacks

    /**
     * Runs {@code callback} with this future once it is done, and returns a future of the
     * callback's result. As in PyTorch, the callback runs whether this future succeeded or failed;
     * it reads the outcome with {@link #value()}, which rethrows a failure. If the callback throws,
     * the returned future fails with that exception. A callback returning a future does not
     * flatten; use {@link #thenCompose} for that.
     *
     * <pre>{@code
     * RpcFuture<Integer> plusOne = fut.then(f -> f.value() + 1);       // fails if fut failed
     * RpcFuture<String> status = fut.then(f -> f.failed() ? "failed" : "ok");  // never fails
     * }</pre>
     *
     * @throws NullPointerException if {@code callback} is null
     */
    public <U> RpcFuture<U> then(Function<? super RpcFuture<T>, ? extends U> callback) {
        Objects.requireNonNull(callback, "then(): callback must not be null");
        RpcFuture<U> child = new RpcFuture<>(spin);
        callbacks.add(CallContext.bind(new ThenCallback<>(this, callback, child)));
        return child;
    }

    /**
     * Maps the value of this future; a failure passes to the returned future unchanged, without
     * calling {@code mapper}. If {@code mapper} throws, the returned future fails with that.
     *
     * <pre>{@code
     * RpcFuture<Integer> length = nameFuture.thenApply(String::length);
     * }</pre>
     *
     * @throws NullPointerException if {@code mapper} is null
     */
    public <U> RpcFuture<U> thenApply(Function<? super T, ? extends U> mapper) {
        Objects.requireNonNull(mapper, "thenApply(): mapper must not be null");
        RpcFuture<U> child = new RpcFuture<>(spin);
        callbacks.add(CallContext.bind(new ApplyCallback<>(this, mapper, child)));
        return child;
    }

    /**
     * Continues with another asynchronous step: the returned future completes like the future
     * that {@code next} returns for this future's value. A failure of this future passes through
     * without calling {@code next}; if {@code next} throws or returns null, the returned future
     * fails. This is how an {@code @AsyncExecution} function chains remote calls.
     *
     * <pre>{@code
     * RpcFuture<Tensor> both = agent.rpcAsync("w1", Ops::first, x)
     *         .thenCompose(y -> agent.rpcAsync("w2", Ops::second, y));
     * }</pre>
     *
     * @throws NullPointerException if {@code next} is null
     */
    public <U> RpcFuture<U> thenCompose(Function<? super T, ? extends RpcFuture<U>> next) {
        Objects.requireNonNull(next, "thenCompose(): function must not be null");
        RpcFuture<U> child = new RpcFuture<>(spin);
        callbacks.add(CallContext.bind(new ComposeCallback<>(this, next, child)));
        return child;
    }

    /**
     * Runs {@code callback} with this future once it is done. An exception thrown by the callback
     * is logged at WARN ("Got the following error when running the callback: ...") and swallowed;
     * the future and the other callbacks are not affected.
     *
     * @throws NullPointerException if {@code callback} is null
     */
    public void addDoneCallback(Consumer<? super RpcFuture<T>> callback) {
        Objects.requireNonNull(callback, "addDoneCallback(): callback must not be null");
        callbacks.add(CallContext.bind(() -> callback.accept(this)));
    }

    // ---------------------------------------------------------------- cancelling

    /**
     * Fails this future with {@link RpcException.Code#CANCELLED} unless it is done. For a call's
     * future the remote work is cancelled too (see the class comment): the callee is told, and,
     * with {@code mayInterruptIfRunning}, interrupts the handler's thread if it runs and cancels
     * the nested calls it waits on; without, a handler already running finishes, and its answer is
     * dropped. A request that has not started never runs either way.
     *
     * <pre>{@code
     * RpcFuture<Tensor> slow = agent.rpcAsync("worker1", Ops::train, batch);
     * slow.cancel(true);          // slow fails CANCELLED now; worker1's handler is interrupted
     * }</pre>
     *
     * @return true if this call cancelled the future, false if it was done already (a call answered,
     *         failed or timed out: then nothing happens, here or on the callee)
     */
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (done()) {
            return false;
        }
        if (canceller != null) {
            return canceller.cancel(callId, mayInterruptIfRunning);
        }
        return tryFail(new RpcException(RpcException.Code.CANCELLED, "the future was cancelled"));
    }

    // ---------------------------------------------------------------- completing

    /**
     * Completes this future with {@code value} (null allowed) and runs its callbacks on this
     * thread.
     *
     * @throws RpcException {@link RpcException.Code#ILLEGAL_STATE} if the future is already done
     */
    public void setResult(T value) {
        if (!tryComplete(value)) {
            throw completedTwice();
        }
    }

    /**
     * Fails this future with {@code failure} and runs its callbacks on this thread.
     *
     * @throws RpcException {@link RpcException.Code#ILLEGAL_STATE} if the future is already done
     */
    public void setException(Throwable failure) {
        Objects.requireNonNull(failure, "failure");
        if (!tryFail(failure)) {
            throw completedTwice();
        }
    }

    boolean tryComplete(T value) {
        if (!state.complete(value)) {
            return false;
        }
        callbacks.fire();
        return true;
    }

    boolean tryFail(Throwable failure) {
        if (!state.complete(new Failure(failure))) {
            return false;
        }
        callbacks.fire();
        return true;
    }

    // ---------------------------------------------------------------- groups

    /**
     * A future of all {@code futures}: completes with the input futures themselves (in order)
     * once all are done, or fails as soon as any one fails, with that failure, without waiting
     * for the rest. An empty list gives a future already completed with an empty list.
     *
     * @throws NullPointerException if the list or one of its elements is null
     */
    public static RpcFuture<List<RpcFuture<?>>> collectAll(List<? extends RpcFuture<?>> futures) {
        List<RpcFuture<?>> inputs = copyOfFutures(futures);
        RpcFuture<List<RpcFuture<?>>> all = new RpcFuture<>();
        if (inputs.isEmpty()) {
            all.tryComplete(inputs);
            return all;
        }
        CollectAll collector = new CollectAll(inputs, all);
        for (RpcFuture<?> input : inputs) {
            input.callbacks.add(() -> collector.inputDone(input));
        }
        return all;
    }

    /**
     * Waits for all {@code futures} and returns their values in order; throws the first failure
     * (as {@link #await()} throws it) as soon as any future fails, without waiting for the rest.
     *
     * <pre>{@code
     * List<Tensor> results = RpcFuture.waitAll(List.of(
     *         agent.rpcAsync("w1", Ops::step, x), agent.rpcAsync("w2", Ops::step, x)));
     * }</pre>
     *
     * @return an unmodifiable list (it may contain nulls)
     * @throws RpcException as {@link #await()}, including the transport-thread check
     */
    public static <T> List<T> waitAll(List<? extends RpcFuture<? extends T>> futures) {
        collectAll(futures).await();
        return values(futures);
    }

    /**
     * Like {@link #waitAll(List)}, giving up after {@code timeout}.
     *
     * @throws RpcException {@link RpcException.Code#TIMEOUT} if not all are done in time and none
     *                      failed
     */
    public static <T> List<T> waitAll(List<? extends RpcFuture<? extends T>> futures, Duration timeout) {
        collectAll(futures).await(timeout);
        return values(futures);
    }

    // ---------------------------------------------------------------- bridges

    /**
     * A new {@link CompletableFuture} that completes like this future (a failure is stored as
     * is, so {@code get()} wraps it in an {@code ExecutionException}). Completing it does not
     * affect this future; cancelling it cancels this future ({@link #cancel cancel(true)}, the
     * remote work of a call included), as {@link CompletableFuture#cancel} promises.
     */
    public CompletableFuture<T> toCompletableFuture() {
        CompletableFuture<T> view = new CancellingView<>(this);
        if (done()) {
            // At once, not as a callback: one queued behind callbacks still running on another
            // thread would leave the view of a done future incomplete (and cancellable) meanwhile.
            completeView(view);
        } else {
            callbacks.add(CallContext.bind(() -> completeView(view)));
        }
        return view;
    }

    private void completeView(CompletableFuture<T> view) {
        Object outcome = state.getNow(INCOMPLETE);
        if (outcome instanceof Failure failure) {
            view.completeExceptionally(failure.cause());
        } else {
            view.complete(cast(outcome));
        }
    }

    /** The {@link #toCompletableFuture} of a future: its cancel cancels the future too. */
    private static final class CancellingView<T> extends CompletableFuture<T> {
        private final RpcFuture<T> source;

        CancellingView(RpcFuture<T> source) {
            this.source = source;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                source.cancel(true);
            }
            return cancelled;
        }

    }

    @Override
    public String toString() {
        String id = "RpcFuture@" + Integer.toHexString(System.identityHashCode(this));
        Object outcome = state.getNow(INCOMPLETE);
        if (outcome == INCOMPLETE) {
            int pending = callbacks.pendingCount();
            return id + "[Incomplete" + (pending == 0 ? "" : ", " + pending + " callbacks") + "]";
        }
        if (outcome instanceof Failure failure) {
            return id + "[Completed exceptionally: " + failure.cause() + "]";
        }
        return id + "[Completed normally]";
    }

    // ---------------------------------------------------------------- internals

    private T report(Object outcome) {
        if (!(outcome instanceof Failure failure)) {
            return cast(outcome);
        }
        Throwable cause = failure.cause();
        if (cause instanceof RpcException rpcException) {
            throw rpcException.rethrowable();
        }
        if (cause instanceof RuntimeException runtimeException) {
            throw runtimeException;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        throw new RpcException(RpcException.Code.INTERNAL, "Future failed with " + cause, cause);
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object value) {
        return (T) value;
    }

    /**
     * Polls, yielding, for up to the adaptive spin budget from {@code start}; virtual threads do
     * not spin (they would hold a carrier). Returns the outcome or INCOMPLETE.
     */
    private Object spinBriefly(long start) {
        AdaptiveSpin spin = this.spin;
        if (spin == null || spin.budgetNanos() <= 0 || Thread.currentThread().isVirtual()) {
            return INCOMPLETE;
        }
        long budget = spin.budgetNanos();
        do {
            boolean uncontended = spin.yieldUncontended();
            Object outcome = state.getNow(INCOMPLETE);
            if (outcome != INCOMPLETE) {
                spin.hit();
                return outcome;
            }
            if (!uncontended) {
                return INCOMPLETE; // busy CPUs: park (the miss is counted)
            }
        } while (System.nanoTime() - start < budget);
        spin.miss();
        return INCOMPLETE;
    }

    private void checkMayBlock() {
        if (NonBlockingThreads.currentIsNonBlocking()) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, "Waiting for " + this
                    + " on transport thread '" + Thread.currentThread().getName()
                    + "' would deadlock the transport, which must deliver the reply on this thread; "
                    + "use then() or addDoneCallback() instead of await()");
        }
    }

    private RpcException interrupted(InterruptedException e) {
        Thread.currentThread().interrupt();
        return new RpcException(RpcException.Code.INTERNAL, "Interrupted while waiting for " + this, e);
    }

    private static RpcException completedTwice() {
        return new RpcException(RpcException.Code.ILLEGAL_STATE, "Attempting to mark a completed Future as "
                + "complete again. Note that a Future can only be marked completed once.");
    }

    private static long saturatedNanos(Duration timeout) {
        try {
            return timeout.toNanos();
        } catch (ArithmeticException overflow) {
            return timeout.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private static List<RpcFuture<?>> copyOfFutures(List<? extends RpcFuture<?>> futures) {
        Objects.requireNonNull(futures, "futures");
        for (int i = 0; i < futures.size(); i++) {
            Objects.requireNonNull(futures.get(i), "futures[" + i + "] is null");
        }
        return List.copyOf(futures);
    }

    private static <T> List<T> values(List<? extends RpcFuture<? extends T>> futures) {
        List<T> values = new ArrayList<>(futures.size());
        for (RpcFuture<? extends T> future : futures) {
            values.add(future.value());
        }
        return Collections.unmodifiableList(values);
    }

    /** Passes this future's outcome to {@code target} exactly (no rethrowable copy). */
    private void propagateTo(RpcFuture<?> target) {
        Object outcome = state.getNow(INCOMPLETE);
        if (outcome instanceof Failure failure) {
            target.tryFail(failure.cause());
        } else {
            target.tryComplete(cast(outcome));
        }
    }

    /** {@link #then}: the callback sees the parent; its result or exception completes the child. */
    private record ThenCallback<T, U>(RpcFuture<T> parent, Function<? super RpcFuture<T>, ? extends U> callback,
                                      RpcFuture<U> child) implements Runnable {
        @Override
        public void run() {
            U result;
            try {
                result = callback.apply(parent);
            } catch (Throwable t) {
                child.tryFail(t);
                return;
            }
            // false if the user completed the child themselves; theirs stands.
            child.tryComplete(result);
        }
    }

    /** {@link #thenApply}: maps a value, passes a failure through. */
    private record ApplyCallback<T, U>(RpcFuture<T> parent, Function<? super T, ? extends U> mapper,
                                       RpcFuture<U> child) implements Runnable {
        @Override
        public void run() {
            Object outcome = parent.state.getNow(INCOMPLETE);
            if (outcome instanceof Failure failure) {
                child.tryFail(failure.cause());
                return;
            }
            U result;
            try {
                result = mapper.apply(cast(outcome));
            } catch (Throwable t) {
                child.tryFail(t);
                return;
            }
            child.tryComplete(result);
        }
    }

    /** {@link #thenCompose}: the child follows the future returned for the parent's value. */
    private record ComposeCallback<T, U>(RpcFuture<T> parent, Function<? super T, ? extends RpcFuture<U>> next,
                                         RpcFuture<U> child) implements Runnable {
        @Override
        public void run() {
            Object outcome = parent.state.getNow(INCOMPLETE);
            if (outcome instanceof Failure failure) {
                child.tryFail(failure.cause());
                return;
            }
            RpcFuture<U> inner;
            try {
                inner = next.apply(cast(outcome));
            } catch (Throwable t) {
                child.tryFail(t);
                return;
            }
            if (inner == null) {
                child.tryFail(new NullPointerException("thenCompose(): function returned null instead of a future"));
                return;
            }
            inner.callbacks.add(() -> inner.propagateTo(child));
        }
    }

    /** {@link #collectAll}: counts inputs down; the first failure wins. */
    private static final class CollectAll {
        private final List<RpcFuture<?>> inputs;
        private final RpcFuture<List<RpcFuture<?>>> all;
        private final AtomicInteger remaining;

        CollectAll(List<RpcFuture<?>> inputs, RpcFuture<List<RpcFuture<?>>> all) {
            this.inputs = inputs;
            this.all = all;
            this.remaining = new AtomicInteger(inputs.size());
        }

        void inputDone(RpcFuture<?> input) {
            Object outcome = input.state.getNow(INCOMPLETE);
            if (outcome instanceof Failure failure) {
                all.tryFail(failure.cause());
            } else if (remaining.decrementAndGet() == 0) {
                all.tryComplete(inputs);
            }
        }
    }

    private static final class CompleterAccess implements FutureCompleter.Access {
        @Override
        public <T> RpcFuture<T> newFuture(AdaptiveSpin spin) {
            return new RpcFuture<>(spin);
        }

        @Override
        public <T> RpcFuture<T> newCallFuture(AdaptiveSpin spin, FutureCompleter.Canceller canceller, long callId) {
            return new RpcFuture<>(spin, canceller, callId);
        }

        @Override
        public <T> boolean tryComplete(RpcFuture<T> future, T value) {
            return future.tryComplete(value);
        }

        @Override
        public boolean tryFail(RpcFuture<?> future, Throwable failure) {
            return future.tryFail(failure);
        }
    }
}
