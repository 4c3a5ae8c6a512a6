package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.concurrent.ActivityCounter;
import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import dev.ferry.rpc.internal.concurrent.CallContext;
import dev.ferry.rpc.internal.concurrent.DedicatedThreads;
import dev.ferry.rpc.internal.observe.CallEvents;
import dev.ferry.rpc.internal.observe.RateLimitedLog;
import dev.ferry.rpc.internal.observe.CallObservers;
import dev.ferry.rpc.internal.observe.ObservedRequest;
import dev.ferry.rpc.internal.observe.RpcHandleEvent;
import dev.ferry.rpc.internal.rref.OwnerState;
import dev.ferry.rpc.internal.rref.RRefContext;
import dev.ferry.rpc.internal.serial.CallRequest;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.serial.FunctionInvoker;
import dev.ferry.rpc.internal.serial.FunctionResolver;
import dev.ferry.rpc.internal.serial.IntactText;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import dev.ferry.rpc.internal.serial.RemoteErrorInfo;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.transport.Responder;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Runs the calls peers send to this worker. Each request runs on its own virtual thread, so a
 * handler that blocks (on a nested call, say) holds no platform thread, unless the one
 * {@link WarmRequestThread} takes it: when free, or when it is busy with short requests and this
 * one will wait only briefly behind them (its backlog moves to virtual threads as soon as a
 * handler there blocks, so nothing waits behind a blocked handler for long). At most
 * {@code numWorkerThreads} run at once ({@link RequestLimiter}). An {@code @AsyncExecution}
 * function returns a future and its reply is sent when that completes, with no thread held.
 *
 * <p>Every failure becomes an ERROR reply to the caller, and is logged here, on the callee, too.
 *
 * <h2>Deadlines and cancellation</h2>
 * An application request is its handler's {@link CallContext}: while the handler runs, and in the
 * callbacks it registers, the calls it makes end by the caller's deadline (the time left the call
 * carried, {@link InboundMessage#remainingNanos()}, from its arrival here) and are cancelled with
 * it. A caller's cancel ({@link #cancel}) drops a request not started yet (or not arrived yet:
 * {@link EarlyCancels}), cancels the calls its
 * handler made and still waits on, then interrupts the handler's thread if it still runs; the
 * interrupt never outlives the handler (a shared thread, the warm one or a lane's, runs the next
 * request clean).
 */
final class IncomingCalls {
    private static final Logger log = LoggerFactory.getLogger(IncomingCalls.class);
    /** At most this many refusals are logged per minute and worker; the rest are counted. */
    static final int REFUSALS_LOGGED_PER_MINUTE = 20;
    /**
     * The largest call decoded on the transport thread to see whether its {@code ferry-inline}
     * header may be honoured (Ferry's inline calls carry a few numbers): a larger one goes to a
     * request thread, whatever it says.
     */
    private static final int MAX_INLINE_BYTES = 16 * 1024;

    /**
     * Errors stored as the value of an RRef created here, already logged when they happened; held
     * weakly, so only as long as something (the RRef's owner state) still holds them.
     */
    private final Set<Throwable> storedErrors = Collections.synchronizedSet(
            Collections.newSetFromMap(new WeakHashMap<>()));
    private final RpcAgent agent;
    private final RRefContext rrefs;
    private final WorkerInfo self;
    private final ObjectCodec codec;
    private final FunctionResolver resolver;
    private final List<CallInterceptor> interceptors;
    private final CallObservers observers;
    private final RequestLimiter limiter;
    private final ExecutorService executor;
    /** Runs requests while free, spinning between them (null: every request gets a virtual thread). */
    private final WarmRequestThread warm;
    private final ReadThrottle throttle;
    private final ActivityCounter active = new ActivityCounter();
    private final RateLimitedLog refusals = RateLimitedLog.perMinute(log, REFUSALS_LOGGED_PER_MINUTE);
    private final AtomicInteger activeAsync = new AtomicInteger();
    private volatile boolean replying = true;
    /** Set by a non-graceful shutdown: handlers are being interrupted. */
    private volatile boolean abandoning;
    private final CallCounters counters;
    /** The application requests not answered yet, for their callers' cancel messages. */
    private final CancellableRequests<Request> cancellable = new CancellableRequests<>();
    /** Requests their callers cancelled while this worker had them. */
    private final java.util.concurrent.atomic.AtomicLong cancelled = new java.util.concurrent.atomic.AtomicLong();
    /** Of those, the ones whose cancel came before them. */
    private final java.util.concurrent.atomic.AtomicLong cancelledEarly = new java.util.concurrent.atomic.AtomicLong();
    /** Cancels the calls made for a request (with an interrupt of their handlers, or without). */
    private final BiConsumer<CallContext, Boolean> cancelMadeFor;
    /** The caller of the system call this thread runs, for {@link SystemCalls#cancelCall}. */
    private static final ThreadLocal<WorkerInfo> SYSTEM_CALLER = new ThreadLocal<>();
    /** The most time left a call may claim (~73 years): arrival plus it never overflows. */
    private static final long MAX_REMAINING_NANOS = Long.MAX_VALUE / 4;

    IncomingCalls(RpcAgent agent, WorkerInfo self, ObjectCodec codec, FunctionResolver resolver,
                  List<CallInterceptor> interceptors, CallObservers observers, int numWorkerThreads, RRefContext rrefs,
                  ReadThrottle throttle,
                  CallCounters counters, long warmSpinNanos, Consumer<Runnable> schedule,
                  BiConsumer<CallContext, Boolean> cancelMadeFor) {
        this.cancelMadeFor = cancelMadeFor;
        this.throttle = throttle;
        this.counters = counters;
        this.rrefs = rrefs;
        this.agent = agent;
        this.self = self;
        this.codec = codec;
        this.resolver = resolver;
        this.interceptors = interceptors;
        this.observers = observers;
        this.limiter = new RequestLimiter(numWorkerThreads);
        // One name for all (no per-thread counter): a request's thread is created per request, and
        // numbering them cost a string per call.
        this.executor = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("ferry-request-" + self.name()).factory());
        this.warm = warmSpinNanos > 0 && AdaptiveSpin.MULTI_CPU
                ? new WarmRequestThread("ferry-request-warm-" + self.name(), warmSpinNanos, this::startVirtual, schedule,
                        limiter, () -> CurrentAgent.set(agent), WarmRequestThread.Timing.ofThisMachine())
                : null;
    }

    /**
     * Accepts a CALL read on a transport thread; the work happens elsewhere. An RRef creation is
     * registered here, in arrival order, so a fetch or fork that follows on the same connection
     * always finds the RRef.
     */
    void submit(PeerChannel channel, PeerLink link, InboundMessage message, Responder responder) {
        throttle.arrived(channel, message.payloadBytes());
        WorkerInfo caller = link.worker;
        ReturnPath back = new ReturnPath(link, responder);
        boolean counted = !message.headers().contains(SystemCalls.MARKER);
        if (counted) {
            active.increment();
            counters.received(message.payloadBytes());
        }
        byte[] deletes = message.headers().get(UserDeletes.HEADER);
        if (deletes != null) {
            applyDeletes(caller, deletes, message.headers().contains(UserDeletes.AGAIN));
        }
        byte[] create = message.headers().get(AgentRRefHost.CREATE);
        OwnerState created = null;
        if (create != null) {
            try {
                GloballyUniqueId[] ids = AgentRRefHost.parseCreate(create);
                created = rrefs.ownerForCreation(ids[0], ids[1]);
            } catch (RpcException e) {
                log.warn("{}: bad RRef creation from {}: {}", self.name(), caller.name(), e.getMessage());
            }
        }
        OwnerState owner = created;
        ObservedRequest observed = counted ? observers.request(caller, message.headers(), message.payloadBytes()) : null;
        Decoded decoded = null;
        if (message.headers().contains(SystemCalls.INLINE) && message.payloadBytes() <= MAX_INLINE_BYTES) {
            // RRef control messages and fetches never block (a fetch replies when the value is
            // there): run them here and save a thread hand-off each. Ferry's own only: a peer that
            // sends the header on another call does not choose the thread that runs it.
            decoded = decodeHere(message);
            if (decoded.isSystemCall(resolver)) {
                run(back, caller, message, false, owner, decoded, null, null);
                return;
            }
        }
        long remaining = message.remainingNanos();
        long deadline = remaining == 0 ? 0 : System.nanoTime() + Math.min(remaining, MAX_REMAINING_NANOS);
        Request request = new Request(back, caller, message, counted, owner, decoded, observed,
                deadline == 0 ? 0 : deadline | 1);
        if (counted && !cancellable.add(request.key, caller, request)) {
            // Its cancel came first (it travelled on a lane, or in chunks): it runs as a request
            // cancelled before it started does, decoded but not called.
            log.debug("{}: request #{} from {} was cancelled before it arrived", self.name(), message.id(),
                    caller.name());
            cancelled.incrementAndGet();
            cancelledEarly.incrementAndGet();
            request.cancel(false);
        }
        if (DedicatedThreads.current()) {
            // A thread the transport dedicates to this exchange (a lane's): it may block, and
            // nothing else waits for it, so it runs the request as the warm request thread would.
            runInline(request);
            return;
        }
        if (warm == null || !warm.offer(request)) {
            startVirtual(request);
        }
    }

    /**
     * Decodes the request, noting the RRefs among its arguments that their owners have yet to
     * confirm: the request waits for them, so the function never sees an unconfirmed reference
     * (as in PyTorch).
     */
    private Decoded decode(InboundMessage message) {
        RRefContext.startRecording();
        CallRequest request;
        CompletableFuture<Void> confirmations;
        try {
            request = codec.decode(message.inBand(), message.outOfBand(), message.headers(), CallRequest.class);
        } finally {
            confirmations = RRefContext.finishRecording();
        }
        return new Decoded(request, confirmations, null);
    }

    /**
     * The request decoded on this transport thread, or why that failed: the request thread then
     * reports it (decoding once only, since decoding RRefs registers them).
     */
    private Decoded decodeHere(InboundMessage message) {
        try {
            return decode(message);
        } catch (RuntimeException e) {
            return new Decoded(null, null, e);
        }
    }

    /**
     * A request decoded, with the confirmations of RRefs among its arguments still to come; or the
     * failure to decode it ({@code request} and {@code confirmations} null).
     */
    private record Decoded(CallRequest request, CompletableFuture<Void> confirmations, RuntimeException failure) {
        /** Whether it is one of Ferry's system calls, with nothing to wait for. */
        boolean isSystemCall(FunctionResolver resolver) {
            if (failure != null || !confirmations.isDone()) {
                return false;
            }
            try {
                return resolver.resolve(request.function()).isSystem();
            } catch (RuntimeException e) {
                return false; // unknown or refused: the request thread reports it
            }
        }

        /** The request, once its RRefs are confirmed (may wait: not on a transport thread). */
        CallRequest awaitConfirmed() {
            if (failure != null) {
                throw failure;
            }
            if (!confirmations.isDone()) {
                RpcFuture.fromCompletionStage(confirmations).await();
            }
            return request;
        }
    }

    /** Runs {@code request} on a virtual thread of its own; drops it if the agent shuts down. */
    private void startVirtual(Runnable task) {
        Request request = (Request) task;
        try {
            executor.execute(() -> {
                limiter.enter();
                CurrentAgent.set(agent);
                try {
                    request.run();
                } finally {
                    CurrentAgent.clear();
                    limiter.exit();
                }
            });
        } catch (RejectedExecutionException e) {
            throttle.left(request.message.payloadBytes());
            if (request.counted) {
                finished(request);
            }
            log.warn("{} dropped request #{} from {}: the agent is shutting down", self.name(), request.message.id(),
                    request.caller.name());
        }
    }

    /** Runs {@code request} on this thread (one that may block), as a request thread runs it. */
    private void runInline(Request request) {
        limiter.enter();
        RpcAgent previous = CurrentAgent.enter(agent);
        try {
            request.run();
        } finally {
            CurrentAgent.restore(previous);
            limiter.exit();
        }
    }

    /**
     * A request to run off the transport thread, and the context of its handler. Its cancel state
     * is guarded by itself: an interrupt reaches the handler's thread only while the handler runs.
     */
    private final class Request extends CallContext implements Runnable {
        final ReturnPath back;
        final WorkerInfo caller;
        final InboundMessage message;
        final boolean counted;
        final OwnerState created;
        /** Decoded already on the transport thread, or null. */
        final Decoded decoded;
        /** Its timeline for the call observers following it, or null. */
        final ObservedRequest observed;
        /** The caller's deadline here ({@link System#nanoTime()}, odd); 0: none. */
        final long deadline;
        /** Its key among the {@link #cancellable} requests. */
        final long key;
        private volatile boolean cancelled;
        /** The thread running the handler, while it runs; guarded by this. */
        private Thread runner;
        /** Whether {@link #runner} was interrupted by a cancel; guarded by this. */
        private boolean interrupted;
        /** The future an {@code @AsyncExecution} handler returned; guarded by this. */
        private RpcFuture<?> async;

        Request(ReturnPath back, WorkerInfo caller, InboundMessage message, boolean counted, OwnerState created,
                Decoded decoded, ObservedRequest observed, long deadline) {
            this.deadline = deadline;
            this.key = CancellableRequests.key(caller.id(), message.id());
            this.decoded = decoded;
            this.observed = observed;
            this.back = back;
            this.caller = caller;
            this.message = message;
            this.counted = counted;
            this.created = created;
        }

        @Override
        public void run() {
            IncomingCalls.this.run(back, caller, message, counted, created, decoded, observed, this);
        }

        @Override
        public long deadline() {
            return deadline;
        }

        @Override
        public boolean cancelled() {
            return cancelled;
        }

        @Override
        public String callerName() {
            return caller.name();
        }

        /** The handler starts on this thread; false: the request was cancelled before, it must not run. */
        synchronized boolean start() {
            if (cancelled) {
                return false;
            }
            runner = Thread.currentThread();
            return true;
        }

        /**
         * The handler returned ({@code async}: the future of an {@code @AsyncExecution} one, else
         * null) or threw: no interrupt reaches this thread from now on, and one that came is
         * cleared. A cancel that came while it ran cancels the future it returned.
         */
        void handlerEnded(RpcFuture<?> returned) {
            boolean cancelReturned;
            synchronized (this) {
                runner = null;
                if (interrupted) {
                    Thread.interrupted();
                }
                async = returned;
                cancelReturned = cancelled && returned != null;
            }
            if (cancelReturned) {
                returned.cancel(true);
            }
        }

        /** The caller cancelled this call: see the class comment. */
        void cancel(boolean interrupt) {
            RpcFuture<?> returned;
            synchronized (this) {
                if (cancelled) {
                    return;
                }
                cancelled = true;
                returned = async;
            }
            // Nested calls first: the handler, woken by the interrupt, finds its nested futures cancelled.
            cancelMadeFor.accept(this, interrupt);
            if (interrupt) {
                synchronized (this) {
                    if (runner != null) {
                        interrupted = true;
                        runner.interrupt();
                    }
                }
            }
            if (returned != null) {
                returned.cancel(interrupt);
            }
        }
    }

    /**
     * Call {@code callId} of {@code caller} is cancelled there: drop it if it has not started,
     * else cancel what its handler waits on and, with {@code interrupt}, interrupt the handler.
     * A call not here is remembered for a while: if it was still on its way, it does not run when
     * it arrives ({@link EarlyCancels}); if it was answered already, nothing happens.
     */
    void cancel(WorkerInfo caller, long callId, boolean interrupt) {
        Request request = cancellable.cancelling(CancellableRequests.key(caller.id(), callId), caller);
        if (request == null) {
            log.debug("{}: cancel of request #{} from {} came before it, or after its answer: remembered",
                    self.name(), callId, caller.name());
            return;
        }
        if (!request.caller.equals(caller)) {
            log.debug("{}: cancel of request #{} from {} ignored: not running here", self.name(), callId, caller.name());
            return;
        }
        log.debug("{}: request #{} from {} cancelled by its caller", self.name(), callId, caller.name());
        cancelled.incrementAndGet();
        request.cancel(interrupt);
    }

    /** The caller of the system call the current thread runs (null outside of one). */
    static WorkerInfo systemCaller() {
        return SYSTEM_CALLER.get();
    }

    /** Application requests a cancel message could still find (for tests and debug info). */
    int cancellable() {
        return cancellable.size();
    }

    /** Requests whose cancel came before them, so far. */
    long cancelledEarly() {
        return cancelledEarly.get();
    }

    /** Cancels that came before their calls and still wait for them (for tests and debug info). */
    int earlyCancels() {
        return cancellable.earlyCancels();
    }

    /**
     * {@code caller} is gone (a new incarnation of it replaced it, or it left): the cancels it
     * sent before its calls are forgotten, so that none meets a call of the next worker of its id.
     */
    void forgetCaller(WorkerInfo caller) {
        cancellable.forget(caller);
    }

    /** Requests cancelled by their callers while here, so far (before they arrived included). */
    long cancelled() {
        return cancelled.get();
    }

    /**
     * User deletes riding on a call: applied as it is read, before the call runs; {@code again}
     * if the caller sent some of them before (they may be here already).
     */
    private void applyDeletes(WorkerInfo caller, byte[] header, boolean again) {
        try {
            for (GloballyUniqueId[] pair : UserDeletes.decode(header)) {
                rrefs.onUserDelete(pair[0], pair[1], again);
            }
        } catch (RpcException e) {
            log.warn("{}: bad RRef deletes from {}: {}", self.name(), caller.name(), e.getMessage());
        }
    }

    /**
     * Runs a request on the current thread, which holds a request permit and has the agent as its
     * {@link CurrentAgent} (a transport thread running a control message has neither: those never
     * block); {@code decoded} if already, {@code observed} if call observers follow it.
     */
    private void run(ReturnPath back, WorkerInfo caller, InboundMessage message, boolean counted,
                     OwnerState created, Decoded decoded, ObservedRequest observed, Request context) {
        // Out of the queue the throttle counts: from here on this request runs, or blocks on a
        // nested call with its permit given back, and never holds up the requests read after it.
        throttle.left(message.payloadBytes());
        long start = System.nanoTime();
        if (observed != null) {
            observed.started(start);
        }
        CallInfo info = null;
        boolean replyLater = false;
        boolean handlerReturned = false;
        RpcHandleEvent event = CallEvents.beginRequest();
        String outcome = "ok";
        boolean started = false;
        CallContext previous = null;
        try {
            // Decoded even when cancelled already: the RRefs among the arguments must take part in
            // the reference-counting protocol (accept their forks), whether the function runs or not.
            CallRequest request = (decoded != null ? decoded : decode(message)).awaitConfirmed();
            if (context != null) {
                if (!context.start()) {
                    throw new RpcException(RpcException.Code.CANCELLED, "request #" + message.id() + " from "
                            + caller.name() + " was cancelled by its caller before it started");
                }
                started = true;
                previous = CallContext.enter(context);
            }
            info = new CallInfo(caller, self, message.id(), request.function().displayName());
            if (observed != null) {
                observed.decoded(info);
            }
            FunctionInvoker invoker = resolver.resolve(request.function());
            if (!counted && !invoker.isSystem()) {
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "the " + SystemCalls.MARKER.name()
                        + " header marks Ferry's own calls, not " + invoker.name());
            }
            Object[] args = request.args() == null ? new Object[0] : request.args();
            if (message.headers().contains(AgentRRefHost.RECEIVER)) {
                args = withReceiverValue(args, info);
            }
            for (CallInterceptor interceptor : interceptors) {
                args = interceptor.afterReceiveRequest(info, args, message.headers());
            }
            Object result;
            if (invoker.isSystem()) {
                SYSTEM_CALLER.set(caller);
                try {
                    result = invokeScoped(info, invoker, request.function().captured(), args, message.headers());
                } finally {
                    SYSTEM_CALLER.remove();
                }
            } else {
                result = invokeScoped(info, invoker, request.function().captured(), args, message.headers());
            }
            RpcFuture<?> pending = invoker.isAsync() ? asFuture(result, invoker.name()) : null;
            if (started) {
                started = false;
                context.handlerEnded(pending);
                CallContext.restore(previous);
            }
            if (pending != null) {
                replyLater = true;
                activeAsync.incrementAndGet();
                CallInfo asyncInfo = info;
                pending.addDoneCallback(done -> {
                    if (observed != null) {
                        observed.handlerEnded(true);
                    }
                    if (counted) {
                        counters.handled(!done.failed(), System.nanoTime() - start);
                    }
                    try {
                        if (done.failed()) {
                            Throwable failure = asSeenBy(context, done.exceptionNow());
                            replyOrStoreError(back, asyncInfo, created, failure, !counted, observed);
                        } else {
                            replyOrStore(back, asyncInfo, created, done.value(), message.headers(), !counted,
                                    observed);
                        }
                    } finally {
                        activeAsync.decrementAndGet();
                        if (counted) {
                            finished(context);
                        }
                    }
                });
            } else {
                if (observed != null) {
                    observed.handlerEnded(false);
                }
                if (counted) {
                    // Counted before the answer leaves, so a caller that has it finds it counted.
                    counters.handled(true, System.nanoTime() - start);
                    handlerReturned = true;
                }
                replyOrStore(back, info, created, result, message.headers(), !counted, observed);
            }
        } catch (Throwable thrown) {
            if (started) {
                started = false;
                context.handlerEnded(null);
                CallContext.restore(previous);
            }
            Throwable failure = asSeenBy(context, thrown);
            if (observed != null && !replyLater && !handlerReturned) {
                observed.handlerEnded(false);
            }
            if (counted && !replyLater && !handlerReturned) {
                counters.handled(false, System.nanoTime() - start);
            }
            outcome = CallEvents.outcome(failure);
            replyOrStoreError(back, info != null ? info : new CallInfo(caller, self, message.id(), "?"), created,
                    failure, !counted, observed);
        } finally {
            CallEvents.finishRequest(event, caller, info != null ? info.function() : "?", message.payloadBytes(),
                    replyLater, outcome);
            if (!replyLater && counted) {
                finished(context);
            }
        }
    }

    /**
     * What a request's failure is once its caller cancelled it: {@code CANCELLED} (how an
     * interrupted handler ended is no news to anyone; an RRef's value says it was cancelled).
     */
    private static Throwable asSeenBy(Request context, Throwable failure) {
        if (context == null || !context.cancelled()
                || failure instanceof RpcException rpc && rpc.code() == RpcException.Code.CANCELLED) {
            return failure;
        }
        return new RpcException(RpcException.Code.CANCELLED, "request #" + context.message.id() + " from "
                + context.caller.name() + " was cancelled by its caller (its handler ended with " + failure + ")",
                failure);
    }

    /** For calls on an RRef's value: argument 0, the RRef, becomes the value it refers to. */
    private Object[] withReceiverValue(Object[] args, CallInfo info) {
        if (args.length == 0 || !(args[0] instanceof RRef<?> rref) || !rref.isOwner()) {
            throw new RpcException(RpcException.Code.UNKNOWN_RREF, info.function() + " was sent to " + self.name()
                    + " to run on an RRef's value, but its receiver is not an RRef owned here");
        }
        Object[] copy = args.clone();
        copy[0] = rref.localValue();
        return copy;
    }

    /**
     * Replies with the result, or, for a {@code remote()} call, stores the result as the RRef's
     * value and acknowledges. The acknowledgement goes first: a fetch already waiting for the value
     * is answered when it is set, and its caller, the creator in the common {@code remote()} then
     * {@code toHere()}, then finds its reference confirmed instead of waiting for one more message.
     */
    private void replyOrStore(ReturnPath back, CallInfo info, OwnerState created, Object result,
                              CallHeaders requestHeaders, boolean system, ObservedRequest observed) {
        if (created == null) {
            reply(back, info, result, requestHeaders, system, observed);
            return;
        }
        reply(back, info, Boolean.TRUE, requestHeaders, system, observed);
        created.setValue(result);
    }

    /**
     * As {@link #replyOrStore}, for a failure: the reply goes first (and logs the failure), then a
     * {@code remote()}'s failure becomes its RRef's value and is remembered as logged, so that each
     * later hand-back of it (fetches, calls on the value) is logged at DEBUG, not as a new failure.
     */
    private void replyOrStoreError(ReturnPath back, CallInfo info, OwnerState created, Throwable failure,
                                   boolean system, ObservedRequest observed) {
        try {
            replyError(back, info, failure, system, observed);
        } finally {
            if (created != null) {
                storedErrors.add(failure);
                created.setError(failure);
            }
        }
    }

    private Object invokeScoped(CallInfo info, FunctionInvoker invoker, Object[] captured, Object[] args,
                                CallHeaders headers) throws Throwable {
        CallInterceptor.Scope[] scopes = new CallInterceptor.Scope[interceptors.size()];
        try {
            for (int i = 0; i < scopes.length; i++) {
                scopes[i] = interceptors.get(i).onHandlerStart(info, headers);
            }
            return invoker.invoke(captured, args);
        } finally {
            for (int i = scopes.length - 1; i >= 0; i--) {
                if (scopes[i] != null) {
                    scopes[i].close();
                }
            }
        }
    }

    private static RpcFuture<?> asFuture(Object result, String function) {
        if (result instanceof RpcFuture<?> future) {
            return future;
        }
        if (result instanceof CompletionStage<?> stage) {
            return RpcFuture.fromCompletionStage(stage);
        }
        throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "Functions marked @AsyncExecution must return an"
                + " RpcFuture or CompletionStage, but " + function + " returned "
                + (result == null ? "null" : result.getClass().getName()));
    }

    private void reply(ReturnPath back, CallInfo info, Object result, CallHeaders requestHeaders, boolean system,
                       ObservedRequest observed) {
        CallHeaders headers = CallHeaders.empty();
        EncodedPayload payload;
        try {
            for (CallInterceptor interceptor : interceptors) {
                headers = interceptor.beforeSendResponse(info, result, requestHeaders, headers);
            }
            payload = codec.encode(result, headers);
        } catch (Throwable failure) {
            replyError(back, info, new RpcException(RpcException.Code.SERIALIZATION_ERROR,
                    "the result of " + info.function() + " could not be sent: " + failure.getMessage(), failure), system,
                    observed);
            return;
        }
        if (observed != null) {
            observed.ended(info, payload.totalBytes(), null);
        }
        send(back, info, new OutboundMessage(MessageKind.REPLY, info.callId(), headers, payload), system);
    }

    private void replyError(ReturnPath back, CallInfo info, Throwable failure, boolean system) {
        replyError(back, info, failure, system, null);
    }

    private void replyError(ReturnPath back, CallInfo info, Throwable failure, boolean system,
                            ObservedRequest observed) {
        if (abandoning) {
            // The caller should learn that this worker went away, not see our interruption.
            failure = new RpcException(RpcException.Code.UNAVAILABLE, self.name() + " shut down while running "
                    + info.function() + " for " + info.caller().name());
        }
        if (failure instanceof RpcException rpc && rpc.code() == RpcException.Code.CANCELLED) {
            // Its caller asked for this and no longer waits: no news.
            log.debug("{}: request #{} ({}) from {} cancelled: {}", self.name(), info.callId(), info.function(),
                    info.caller().name(), IntactText.of(failure.getMessage()));
        } else if (isRefusal(failure)) {
            // What a peer may send at will: logged within bounds.
            refusals.warn("{} refused request #{} ({}) from {}: {}", self.name(), info.callId(), info.function(),
                    info.caller().name(), IntactText.of(failure.getMessage()));
        } else if (storedErrors.contains(failure)) {
            // An RRef's failed value handed back to a user (toHere, type) or met by a call on the value
            // (rref.rpcSync, RemoteModule.create's check): logged when it happened.
            log.debug("{}: request #{} ({}) from {} handed back an RRef's failed value: {}", self.name(),
                    info.callId(), info.function(), info.caller().name(), IntactText.of(failure.toString()));
        } else if (system && failure instanceof RpcException) {
            // Ferry's own protocol answering as designed (say, a gather that cannot complete because a
            // member left): the caller acts on it, and a leader refusing 63 members must not log 63 lines.
            log.debug("{}: request #{} ({}) from {} answered with {}", self.name(), info.callId(), info.function(),
                    info.caller().name(), IntactText.of(failure.toString()));
        } else {
            // One line: the error goes back to the caller whole; its stack trace here only when asked for.
            log.warn("{} failed running request #{} ({}) from {}: {}: {}", self.name(), info.callId(), info.function(),
                    info.caller().name(), failure.getClass().getName(), IntactText.of(failure.getMessage()));
            log.debug("{} failed running request #{}", self.name(), info.callId(), failure);
        }
        EncodedPayload payload;
        try {
            payload = codec.encode(RemoteErrorInfo.of(failure));
        } catch (RuntimeException e) {
            payload = codec.encode(RemoteErrorInfo.of(new RpcException(RpcException.Code.INTERNAL,
                    failure.getClass().getName() + ": " + IntactText.of(failure.getMessage()))));
        }
        if (observed != null) {
            observed.ended(info, payload.totalBytes(), failure);
        }
        send(back, info, new OutboundMessage(MessageKind.ERROR, info.callId(), CallHeaders.empty(), payload), system);
    }

    /**
     * Sends a reply. Once shutdown has started only Ferry's own calls are still answered: their
     * handlers never block, and a peer waiting on, say, an all-gather acknowledgement must get it.
     */
    private void send(ReturnPath back, CallInfo info, OutboundMessage message, boolean system) {
        if ((!replying && !system) || !back.responder.isActive()) {
            log.warn("RPC agent for {} won't send response to request #{} to {}, as {}", self.name(), info.callId(),
                    info.caller().name(), replying ? "the connection is closed" : "the agent is shutting down");
            return;
        }
        Consumer<Throwable> lost = failure -> log.warn("response to request #{} of {} was lost: {}",
                info.callId(), info.caller().name(), failure.toString());
        try {
            Delivery delivery = Deliveries.ofAnswer(message.headers(),
                    back.link.calls.sending(message.kind(), message.id()));
            try {
                back.responder.respond(message, delivery, lost);
            } catch (RuntimeException e) {
                back.link.calls.withdrawn(message.kind()); // not sent: the error that follows answers the call
                throw e;
            }
        } catch (RuntimeException e) {
            if (message.kind() == MessageKind.REPLY) {
                replyError(back, info, e, system);
            } else {
                log.error("cannot send the error of request #{} to {}", info.callId(), info.caller().name(), e);
            }
        }
    }

    /** Who sent a request, and how its answer goes back (the transport's {@link Responder}). */
    private record ReturnPath(PeerLink link, Responder responder) {
    }

    /** Failures the request itself caused: a function refused or unknown, a value refused or undecodable. */
    private static boolean isRefusal(Throwable failure) {
        if (!(failure instanceof RpcException rpc)) {
            return false;
        }
        return switch (rpc.code()) {
            case UNKNOWN_FUNCTION, SERIALIZATION_ERROR, PROTOCOL_ERROR -> true;
            default -> false;
        };
    }

    private void finished(Request request) {
        if (request != null) {
            cancellable.remove(request.key, request);
        }
        active.decrement();
    }

    /** Application requests received and not yet answered, asynchronous ones included. */
    int active() {
        return active.get();
    }

    /** Waits until no application request is active; {@code timeout} zero means no limit. */
    boolean awaitIdle(java.time.Duration timeout) throws InterruptedException {
        return active.awaitZero(timeout);
    }

    /** Refusals logged so far (what {@link #REFUSALS_LOGGED_PER_MINUTE} bounds). */
    long refusalsLogged() {
        return refusals.logged();
    }

    int activeAsync() {
        return activeAsync.get();
    }

    int running() {
        return limiter.running() - (warm != null && warm.idleWithPermit() ? 1 : 0);
    }

    /**
     * Stops taking requests. Gracefully, requests already running finish (at a graceful shutdown
     * only Ferry's own calls can still be running); otherwise they are interrupted. Either way,
     * replies of handlers that finish before the transport closes are still sent, so a call that
     * completed just before a shutdown is not lost.
     */
    void close(boolean graceful) {
        if (!graceful) {
            abandoning = true;
        }
        if (warm != null) {
            warm.stopTaking(); // its backlog goes to virtual threads before they stop starting
        }
        if (graceful) {
            executor.shutdown();
        } else {
            executor.shutdownNow();
        }
        if (warm != null) {
            warm.close(!graceful, 5_000);
        }
        awaitTermination();
        replying = false;
    }

    private void awaitTermination() {
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                log.warn("{}: request handlers still running after shutdown", self.name());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
