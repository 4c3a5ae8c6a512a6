package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.MembershipListener;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RemoteFunction;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WaitAllScope;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import dev.ferry.rpc.internal.concurrent.CallContext;
import dev.ferry.rpc.internal.concurrent.DedicatedThreads;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.serial.CallRequest;
import dev.ferry.rpc.internal.serial.ClassPolicy;
import dev.ferry.rpc.internal.serial.CodeOrigins;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.serial.FunctionPolicy;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.serial.FunctionRefs;
import dev.ferry.rpc.internal.serial.FunctionResolver;
import dev.ferry.rpc.internal.serial.NameList;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import dev.ferry.rpc.internal.serial.RemoteErrorInfo;
import dev.ferry.rpc.internal.serial.WireTypes;
import dev.ferry.rpc.internal.observe.AgentMBean;
import dev.ferry.rpc.internal.observe.CallEvents;
import dev.ferry.rpc.internal.observe.CallObservers;
import dev.ferry.rpc.internal.observe.ObservedCall;
import dev.ferry.rpc.internal.observe.ProfileRecorder;
import dev.ferry.rpc.internal.observe.ReportedSeries;
import dev.ferry.rpc.internal.observe.StatusPublisher;
import dev.ferry.rpc.internal.observe.NettyFlightEvents;
import dev.ferry.rpc.internal.observe.RpcCallEvent;
import dev.ferry.rpc.internal.rref.RRefContext;
import dev.ferry.rpc.internal.rref.RRefSerializer;
import dev.ferry.rpc.internal.text.Durations;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.transport.Responder;
import dev.ferry.rpc.internal.transport.Transport;
import dev.ferry.rpc.internal.transport.TransportFactory;
import dev.ferry.rpc.internal.transport.TransportListener;
import dev.ferry.rpc.internal.transport.TransportThreads;
import dev.ferry.rpc.internal.faults.FaultyTransport;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.spi.PeerListener;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.SerializationExtension;
import dev.ferry.rpc.spi.StatusPageProvider;
import dev.ferry.rpc.spi.TrustedFunctions;
import dev.ferry.rpc.store.Store;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Ferry's agent: rendezvous through a store, calls over a {@link Transport}, requests run by
 * {@link IncomingCalls}, answers matched by {@link PendingCalls}, graceful shutdown through
 * {@link AllGathers}.
 *
 * <pre>
 *   caller thread                 transport threads                 request threads (virtual)
 *   invoke ─encode─▶ send ──────▶ (peer) CALL ──────────────────────▶ decode, run, encode
 *   future ◀─complete── REPLY ◀── decode ◀──────────────────────────── send REPLY/ERROR
 * </pre>
 *
 * <p>This class is thread-safe.
 */
public final class DefaultRpcAgent implements RpcAgent {
    private static final Logger log = LoggerFactory.getLogger(DefaultRpcAgent.class);
    private static final String GROUP_KEY = "group-id";
    /** Where rank 0 says its status page takes rank N's reports: under this key plus N. */
    private static final String STATUS_PAGE_KEY = "status-page/";
    /**
     * How long RRef deletes wait for a call to the owner to ride on before they travel by
     * themselves: long enough to gather a burst into one message, short against the owner's wait.
     */
    private static final long SOON_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * How often the request thread's watchdog looks while requests wait behind it: what a request
     * queued behind a handler blocked on something other than a Ferry future waits at most, beyond
     * the stall limit; each look wakes the timer thread.
     */
    private static final long WATCHDOG_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final CallHeaders INLINE_HEADERS = CallHeaders.empty().with(SystemCalls.INLINE, "1");
    private static final dev.ferry.rpc.RpcFunction0<Boolean> ACK = SystemCalls::ack;

    private enum State { RUNNING, SHUTTING_DOWN, CLOSED }

    private final WorkerInfo self;
    private final RpcBackendOptions options;
    private final Store store;
    private final AutoCloseable storeOwner;
    private final ObjectCodec codec;
    private final List<CallInterceptor> interceptors;
    private final List<PeerListener> peerListeners = withServiceLoaded(List.of(), PeerListener.class);
    private final CallObservers observers;
    private final ProfileRecorder profiles;
    private final ReportedSeries reportedSeries = new ReportedSeries();
    /** Stops the reports to a status page ({@link StatusPublisher}); set once the agent has joined. */
    private volatile AutoCloseable status = () -> { };
    /** The status page this agent serves (rank 0 with statusPagePort), or null. */
    private volatile StatusPageProvider.StatusPage statusPage;
    private final Transport transport;
    private final PendingCalls pending = new PendingCalls(call -> cancelRemotely(call, true));
    /** What a call's future's {@code cancel} calls ({@link #cancelCall}). */
    private final FutureCompleter.Canceller canceller = (id, interrupt) -> cancelCall(id, interrupt, null);
    private final CallCounters counters = new CallCounters();
    private final ReadThrottle throttle;
    /** How this agent's callers poll for an answer before they park ({@link RpcFuture#await}). */
    private final AdaptiveSpin callerSpin;
    private final AtomicLong nextCallId = new AtomicLong(1);
    private final AgentTimer timer;
    private final AllGathers allGathers = new AllGathers(this);
    private final NamedCalls namedCalls;
    private final AgentRRefHost rrefHost = new AgentRRefHost(this);
    private final FunctionResolver resolver;
    /** Where the classes peers name are loaded from: the context loader of the thread that made the agent. */
    private final ClassLoader loader;
    private final RRefContext rrefs = new RRefContext(rrefHost);
    private final UserDeletes userDeletes;
    private final Object lifecycle = new Object();
    private volatile State state = State.RUNNING;
    /** Unregisters the agent's JMX MBean ({@link AgentMBean}); set once the agent has joined. */
    private volatile AutoCloseable mbean = () -> { };
    private volatile Duration rpcTimeout;
    /** The members; changes as workers join, leave or restart. */
    private final Membership membership;
    /** This worker's incarnation: its join slot (a restarted worker's is higher than before). */
    private volatile long incarnation;
    /** Whether it joined a running world (a restart, or a world without a fixed size). */
    private volatile boolean late;
    /** Whether its world has no fixed size: then a graceful shutdown is a departure ({@link Departure}). */
    private volatile boolean dynamic;
    private volatile String address;
    private PeerConnections connections;
    private final Listener listener = new Listener();
    private IncomingCalls incoming;
    /** Who graceful shutdown completed without, for the debug info; empty until then. */
    private volatile String shutdownMissing = "";
    /** Which connected peers are alive; it declares silent ones lost ({@link #declareLost}). */
    private final PeerLiveness liveness;

    private DefaultRpcAgent(WorkerInfo self, RpcBackendOptions options, Store store, AutoCloseable storeOwner,
                            TransportFactory transports) {
        this.self = self;
        this.options = options;
        this.namedCalls = new NamedCalls(self.name());
        this.store = store;
        this.storeOwner = storeOwner;
        this.rpcTimeout = options.rpcTimeout();
        this.throttle = new ReadThrottle(options.maxQueuedRequests(), options.maxQueuedRequestBytes());
        this.callerSpin = new AdaptiveSpin(options.transport().spinTime().toNanos());
        this.loader = contextLoader();
        CodeOrigins origins = CodeOrigins.of(loader);
        NameList application = NameList.of(options.applicationPackages());
        this.resolver = new FunctionResolver(new FunctionPolicy(application, NameList.of(options.allowedFunctionPrefixes()),
                trustedClasses(), SystemCalls.class, origins), loader);
        this.profiles = new ProfileRecorder(self.name());
        this.interceptors = withProfiles(withServiceLoaded(options.interceptors(), CallInterceptor.class), profiles);
        this.observers = new CallObservers(withProfiles(withServiceLoaded(List.of(), CallObserver.class), profiles));
        this.codec = new ObjectCodec(new ClassPolicy(application, NameList.of(options.allowedClassPrefixes()), origins,
                        loader),
                withServiceLoaded(options.serializationExtensions(), SerializationExtension.class),
                options.outOfBandThreshold(),
                registry -> {
                    Hello.register(registry);
                    registry.register(RRef.class, WireTypes.RREF_ID, resolver -> new RRefSerializer(resolver.getConfig()));
                },
                rrefs, options.maxMessageBytes(), this);
        // Callbacks of this agent's futures run on its transport and timer threads: they see
        // this agent as the current one, so Rpc.rpcAsync(...) inside a then() works.
        ThreadFactory io = NonBlockingThreads.factory("ferry-io-" + self.name() + "-");
        // A dedicated thread (a lane's accepting end) runs the requests it reads, as this agent's.
        TransportThreads threads = new TransportThreads(runnable -> io.newThread(bindCurrent(runnable)),
                DedicatedThreads.factory("ferry-lane-" + self.name(), () -> CurrentAgent.set(this)));
        Transport made = transports.create(options, self.name(), threads);
        // Faults wrap the whole transport, so every route sees them; without any, nothing is in the way.
        this.transport = options.faultInjection() == null ? made
                : new FaultyTransport(made, options.faultInjection(), new MessageTypes(pending), threads.eventLoops());
        this.timer = new AgentTimer(runnable -> new Thread(bindCurrent(runnable), "ferry-timer-" + self.name()),
                pending::expire);
        this.userDeletes = new UserDeletes(
                (owner, headers) -> send(owner, FunctionRefs.of(ACK), new Object[0], null, true,
                        UserDeletes.copy(headers, INLINE_HEADERS)),
                task -> timer.schedule(task, SOON_NANOS));
        this.membership = new Membership(self.name(), task -> timer.schedule(task, 0));
        this.liveness = new PeerLiveness(self.name(), options.heartbeatTimeout(), this::sendHeartbeat,
                () -> connections == null ? List.of() : connections.connectedPeers(), this::declareLost,
                this::heardAgain, (task, delayNanos) -> timer.schedule(task, delayNanos));
    }

    private Runnable bindCurrent(Runnable body) {
        return () -> {
            CurrentAgent.set(this);
            body.run();
        };
    }

    /**
     * Starts an agent on the Netty transport; see
     * {@link #start(WorkerInfo, int, RpcBackendOptions, Store, AutoCloseable, TransportFactory)}.
     */
    public static DefaultRpcAgent start(WorkerInfo self, int worldSize, RpcBackendOptions options, Store store,
                                        AutoCloseable storeOwner) {
        return start(self, worldSize, options, store, storeOwner, TransportFactory.NETTY);
    }

    /**
     * Starts an agent: listens on a transport from {@code transports}, joins the group through
     * {@code store}, and returns once every worker has joined. Closes {@code storeOwner} on
     * failure and at shutdown.
     */
    public static DefaultRpcAgent start(WorkerInfo self, int worldSize, RpcBackendOptions options, Store store,
                                        AutoCloseable storeOwner, TransportFactory transports) {
        NettyFlightEvents.offUnlessWanted();
        DefaultRpcAgent agent = new DefaultRpcAgent(self, options, store, storeOwner, transports);
        try {
            agent.join(worldSize);
            if (agent.transport instanceof FaultyTransport faulty) {
                faulty.arm(); // initialization is never faulted: the program's messages are
            }
            agent.mbean = AgentMBean.register(self.name(), agent::getDebugInfo, options.jmx());
            agent.startStatusReports(worldSize);
            AgentsAtExit.started(agent);
            return agent;
        } catch (RuntimeException | Error e) {
            agent.closeLocally(false, new RpcException(RpcException.Code.SHUTDOWN, "initialization failed"));
            throw e;
        }
    }

    private void join(int worldSize) {
        address = transport.start(listener);
        Duration timeout = options.rendezvousTimeout();
        String groupId = new String(store.compareSet(GROUP_KEY, new byte[0],
                UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
        incoming = new IncomingCalls(this, self, codec, resolver, interceptors, observers, options.numWorkerThreads(),
                rrefs, throttle, counters, options.transport().spinTime().toNanos(),
                task -> timer.schedule(task, WATCHDOG_NANOS), this::cancelMadeFor);
        connections = new PeerConnections(transport, codec, membership, this::retire);
        GroupRendezvous.Joined joined = GroupRendezvous.join(store, self, address, worldSize, timeout);
        incarnation = joined.incarnation();
        late = joined.late();
        dynamic = worldSize == 0;
        membership.start(joined.directory(), dynamic);
        // Peers that finished rendezvous first may already have connected: their handshakes
        // (and the calls behind them) were held until now.
        connections.ready(new Hello(groupId, self.name(), self.id(), incarnation, address));
        if (late) {
            greetMembers(timeout);
        } else {
            // Like PyTorch's init: one gather so every worker has finished rendezvous (and its
            // connections are warm) before any of them can use, or shut down, the group.
            allGathers.runFirst(timeout);
        }
        liveness.start();
        log.info("{} joined a group of {} workers{}", self.name(), membership.directory().size(),
                late ? " (incarnation " + incarnation + ")" : "");
        log.debug("{} listens at {} ({})", self.name(), address, transport.describe());
    }

    /**
     * A late joiner introduces itself to every member rendezvous found (its Hello admits it there)
     * and waits for each to answer; one that does not (a registration its crashed worker left
     * behind) is dropped from the members. A restarted worker of a fixed-size world that reaches
     * none of its members fails: that world has ended.
     */
    private void greetMembers(Duration timeout) {
        Duration bound = options.heartbeatTimeout().isZero() ? timeout : options.heartbeatTimeout();
        Map<WorkerInfo, RpcFuture<Object>> greetings = new LinkedHashMap<>();
        for (WorkerInfo member : membership.directory().workers()) {
            if (!member.equals(self)) {
                greetings.put(member, invokeInline(member, ACK, new Object[0], bound));
            }
        }
        greetings.forEach((member, answer) -> {
            try {
                answer.await();
            } catch (RpcException e) {
                log.info("{}: {} did not answer when this worker joined, not a member: {}", self.name(), member.name(),
                        e.getMessage());
                membership.dropUnreachable(member.name(), "did not answer when " + self.name() + " joined");
            }
        });
        if (!dynamic && !greetings.isEmpty() && membership.directory().size() == 1) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, self.name() + " came back to a world of "
                    + (greetings.size() + 1) + " workers that has ended: none of " + greetings.keySet().stream()
                    .map(WorkerInfo::name).toList() + " answered");
        }
    }

    /**
     * A new incarnation of a member was admitted: the old one is gone here before anything of the
     * new one runs (its calls fail, its connections close, what was kept for it is released; the
     * caller holds the new one's messages until the result completes), since both have the same
     * name and id, and ids they made (RRefs, autograd contexts) start over.
     */
    private CompletableFuture<Void> retire(Membership.Admitted admitted) {
        WorkerDirectory.Entry old = admitted.replaced();
        RpcException gone = new RpcException(RpcException.Code.UNAVAILABLE, "worker " + old.info().name()
                + " restarted: its incarnation " + old.incarnation() + " is gone (incarnation "
                + admitted.entry().incarnation() + " replaced it)");
        pending.failCallee(old.info().name(), gone);
        incoming.forgetCaller(old.info());
        connections.abort(old.info(), gone, true);
        liveness.forget(old.info());
        CompletableFuture<Void> done = new CompletableFuture<>();
        timer.schedule(() -> {
            try {
                rrefs.ownerGone(old.info(), gone);
                notifyPeerLost(old.info());
            } finally {
                done.complete(null);
            }
        }, 0);
        return done;
    }

    /** A member says it leaves (its departure, {@link Departure}): calls to it fail from now on. */
    void departed(String name, long itsIncarnation) {
        WorkerDirectory.Entry gone = membership.leave(name, itsIncarnation, "left the group");
        if (gone == null) {
            return;
        }
        liveness.forget(gone.info());
        incoming.forgetCaller(gone.info());
        RpcException left = new RpcException(RpcException.Code.UNAVAILABLE, "worker " + name + " left the group");
        timer.schedule(() -> {
            rrefs.ownerGone(gone.info(), left);
            notifyPeerLeft(gone.info());
        }, 0);
    }

    /** Whether this worker joined a running world (and so skipped the group's first gather). */
    public boolean joinedLate() {
        return late;
    }

    /** Whether this worker joined a world that ran already: a restart, or a world without a fixed size. */
    boolean joinedRunningWorld() {
        return late || dynamic;
    }

    /** Whether this worker's world has no fixed size (it started with world size 0). */
    boolean worldWithoutFixedSize() {
        return dynamic;
    }

    Store store() {
        return store;
    }

    ClassLoader classLoader() {
        return loader;
    }

    private static ClassLoader contextLoader() {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        return context != null ? context : DefaultRpcAgent.class.getClassLoader();
    }

    /** The classes the class path's {@link TrustedFunctions} providers list. */
    private static Set<Class<?>> trustedClasses() {
        Set<Class<?>> classes = new HashSet<>();
        for (TrustedFunctions provider : ServiceLoader.load(TrustedFunctions.class)) {
            classes.addAll(provider.classes());
        }
        return classes;
    }

    private static <T> List<T> withServiceLoaded(List<T> configured, Class<T> type) {
        List<T> all = new ArrayList<>(configured);
        for (T found : ServiceLoader.load(type)) {
            if (all.stream().noneMatch(t -> t.getClass() == found.getClass())) {
                all.add(found);
            }
        }
        return List.copyOf(all);
    }

    /** {@code all} and the agent's profile recorder, which is both an interceptor and an observer. */
    private static <T> List<T> withProfiles(List<T> all, T recorder) {
        List<T> with = new ArrayList<>(all);
        with.add(recorder);
        return List.copyOf(with);
    }

    /**
     * Reports to the status page: the one {@code statusUrl} names, else, with {@code statusPagePort},
     * the one rank 0 serves (started here on rank 0; its address shared through the store).
     */
    private void startStatusReports(int worldSize) {
        String url = options.statusUrl();
        if (url == null && options.statusPagePort() >= 0) {
            if (self.id() == 0) {
                StatusPageProvider.StatusPage page = ServiceLoader.load(StatusPageProvider.class).findFirst()
                        .orElseThrow(() -> new RpcException(RpcException.Code.INVALID_ARGUMENT, "statusPagePort needs"
                                + " a status page on the class path (ferry-status, a StatusPageProvider)"))
                        .start(options.statusPagePort(), options.authToken(), worldSize);
                statusPage = page;
                log.info("{}: status page at {}", self.name(), page.pageUrl());
                for (int rank = 0; rank < worldSize; rank++) {
                    store.set(STATUS_PAGE_KEY + rank, page.reportUrl(rank).getBytes(StandardCharsets.UTF_8));
                }
            }
            url = new String(store.get(STATUS_PAGE_KEY + self.id(), options.rendezvousTimeout()), StandardCharsets.UTF_8);
        }
        if (url != null) {
            status = StatusPublisher.start(this, url, options.authToken(), reportedSeries);
        }
    }

    /** The series the application reported on this agent ({@link dev.ferry.rpc.Metrics#report}). */
    public ReportedSeries reportedSeries() {
        return reportedSeries;
    }

    /** This agent's part of the {@link dev.ferry.rpc.RpcProfiler}. */
    public ProfileRecorder profileRecorder() {
        return profiles;
    }

    /**
     * Asks {@code worker} for (and removes there) the spans of profile {@code id}, as
     * {@link ProfileRecorder#encode} writes them; one of Ferry's own calls.
     */
    @SuppressWarnings("unchecked")
    public RpcFuture<Object[]> collectProfile(WorkerInfo worker, String id) {
        dev.ferry.rpc.RpcFunction1<String, Object[]> take = SystemCalls::profileSpans;
        RpcFuture<?> spans = invokeSystem(worker, take, new Object[] {id}, null);
        return (RpcFuture<Object[]>) spans;
    }

    WorkerDirectory directory() {
        return membership.directory();
    }

    /** Connections this worker's transport dropped because they failed authentication. */
    long authRejections() {
        String count = transport.debugInfo().get("transport.auth.rejected");
        return count == null ? 0 : Long.parseLong(count);
    }

    NamedCalls namedCalls() {
        return namedCalls;
    }

    @Override
    public void register(String name, RemoteFunction function, Map<String, ?> defaults) {
        namedCalls.register(name, function, Objects.requireNonNull(defaults, "defaults"));
    }

    IncomingCalls incomingCalls() {
        return incoming;
    }

    AllGathers allGathers() {
        return allGathers;
    }

    UserDeletes userDeletes() {
        return userDeletes;
    }

    RRefContext rrefs() {
        return rrefs;
    }

    WorkerInfo self() {
        return self;
    }

    FunctionResolver.InterfaceMethod interfaceMethod(String type, String name, String descriptor) {
        return resolver.interfaceMethod(type, name, descriptor);
    }

    @Override
    public WorkerInfo getWorkerInfo() {
        return self;
    }

    @Override
    public long getIncarnation() {
        return incarnation;
    }

    @Override
    public WorkerInfo getWorkerInfo(String name) {
        return runningDirectory().byName(name);
    }

    @Override
    public WorkerInfo getWorkerInfo(int id) {
        return runningDirectory().byId(id);
    }

    @Override
    public List<WorkerInfo> getWorkerInfos() {
        List<WorkerInfo> members = new ArrayList<>();
        for (WorkerInfo worker : runningDirectory().workers()) {
            if (worker.equals(self) || !liveness.isLost(worker.name())) {
                members.add(worker);
            }
        }
        return List.copyOf(members);
    }

    @Override
    public AutoCloseable addMembershipListener(MembershipListener listener) {
        return membership.addListener(listener);
    }

    @Override
    public boolean isRunning() {
        return state == State.RUNNING;
    }

    @Override
    public <R> RpcFuture<R> invoke(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout) {
        RpcFuture<R> future = send(to, FunctionRefs.of(function), args, timeout, false, CallHeaders.empty());
        WaitAllScope.register(future);
        return future;
    }

    /**
     * {@link #invoke} and then {@code await()}, with one difference the caller cannot see: the
     * transport is told the calling thread waits for this call alone ({@link PeerChannel#exchange}),
     * so it may read the answer on this thread (a lane). Results, errors, timeouts, interrupts and
     * where the callee runs the call are the same.
     */
    @Override
    public <R> R invokeAndWait(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout) {
        RpcFuture<R> future = send(to, FunctionRefs.of(function), args, timeout, false, CallHeaders.empty(), true);
        WaitAllScope.register(future);
        return future.await();
    }

    @Override
    public <R> RRef<R> invokeRemote(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout) {
        return rrefHost.remote(runningDirectory().member(to), FunctionRefs.of(function), args, timeout, false);
    }

    @Override
    public dev.ferry.rpc.BoundFunction bind(WorkerInfo to, RemoteFunction function, Duration timeout) {
        WorkerInfo callee = runningDirectory().member(to);
        return new BoundFunctions.OnWorker(this, callee, BoundFunctions.bind(this, callee, function, timeout));
    }

    /** Binds {@code function} here for a peer: resolved, so allowed, then given a handle ({@link BoundFunctions}). */
    int bindForPeer(FunctionRef function) {
        resolver.resolve(function);
        return codec.bind(function);
    }

    AgentRRefHost rrefHost() {
        return rrefHost;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> RRef<T> rref(T value) {
        runningDirectory();
        return (RRef<T>) rrefs.ownLocal(value);
    }

    /** Sends one of Ferry's own calls: not counted as application work at shutdown. */
    RpcFuture<Object> invokeSystem(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout) {
        return send(to, FunctionRefs.of(function), args, timeout, true, CallHeaders.empty());
    }

    /** Sends one of Ferry's own calls that never blocks: the callee runs it on its transport thread. */
    RpcFuture<Object> invokeInline(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout) {
        return send(to, FunctionRefs.of(function), args, timeout, true, INLINE_HEADERS);
    }

    /**
     * As {@link #invokeInline}, for the application ({@code toHere()}'s fetch, {@code type()}'s
     * question): made inside a handler, it ends by the deadline of the call being handled and is
     * cancelled with it; graceful shutdown waits for it as for the application's own calls.
     */
    RpcFuture<Object> invokeInlineForApplication(WorkerInfo to, RemoteFunction function, Object[] args,
                                                 Duration timeout) {
        return send(to, FunctionRefs.of(function), args, timeout, true, INLINE_HEADERS, false, true);
    }

    /** As {@link #invokeWithHeaders}, then waits, as {@link #invokeAndWait} does. */
    <R> R invokeWithHeadersAndWait(WorkerInfo to, FunctionRef function, Object[] args, Duration timeout,
                                   CallHeaders headers) {
        return this.<R>send(to, function, args, timeout, false, headers, true).await();
    }

    /** Sends a call with extra header entries (RRef creation, receiver substitution). */
    <R> RpcFuture<R> invokeWithHeaders(WorkerInfo to, FunctionRef function, Object[] args, Duration timeout,
                                       CallHeaders headers) {
        return send(to, function, args, timeout, false, headers);
    }

    @SuppressWarnings("unchecked")
    private <R> RpcFuture<R> send(WorkerInfo to, FunctionRef function, Object[] args, Duration timeout, boolean system,
                                  CallHeaders base) {
        return send(to, function, args, timeout, system, base, false);
    }

    /** {@code waits}: the calling thread waits for this call alone next ({@link PeerChannel#exchange}). */
    @SuppressWarnings("unchecked")
    private <R> RpcFuture<R> send(WorkerInfo to, FunctionRef function, Object[] args, Duration timeout, boolean system,
                                  CallHeaders base, boolean waits) {
        return send(to, function, args, timeout, system, base, waits, !system);
    }

    /**
     * {@code forApplication}: made for the application (its calls, and a system call such as the
     * fetch of {@code toHere()}), so within a handler's {@link CallContext}: its deadline is at
     * the latest the handled call's, and it is cancelled with that call. Ferry's protocol messages
     * (RRef confirmations and deletes, heartbeats) follow no request: a cancel must not lose them.
     */
    @SuppressWarnings("unchecked")
    private <R> RpcFuture<R> send(WorkerInfo to, FunctionRef function, Object[] args, Duration timeout, boolean system,
                                  CallHeaders base, boolean waits, boolean forApplication) {
        if (timeout != null && timeout.isNegative()) {
            // PyTorch reads -1 as "the default"; a Duration says that with null (no withTimeout), so
            // a negative one is a mistake, not an instant timeout.
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "a call's timeout must be zero (no timeout)"
                    + " or positive, got " + Durations.describe(timeout) + " (for " + function.displayName() + ")");
        }
        long start = System.nanoTime();
        WorkerDirectory workers = runningDirectory();
        WorkerInfo callee = workers.member(to);
        long id = nextCallId.getAndIncrement();
        CallInfo info = new CallInfo(self, callee, id, function.displayName());
        CallHeaders own = system ? base.with(SystemCalls.MARKER, "1") : base;
        CallHeaders headers = own;
        for (CallInterceptor interceptor : interceptors) {
            headers = interceptor.beforeSendRequest(info, args, headers);
        }
        boolean interceptorContext = headers != own;
        ObservedCall observed = system ? null : observers.call(info, headers, start);
        EncodedPayload payload = codec.encode(new CallRequest(function, args), headers);
        if (observed != null) {
            observed.encoded(payload.totalBytes());
        }
        RpcFuture<Object> future = FutureCompleter.newCallFuture(callerSpin, canceller, id);
        RpcCallEvent event = CallEvents.start(info, payload.totalBytes(), system);
        boolean barrier = Deliveries.systemBarrier(system, function);
        headers = userDeletes.attach(callee, headers, future,
                barrier || interceptorContext || headers.contains(AgentRRefHost.CREATE));
        CallContext parent = forApplication ? CallContext.current() : null;
        PendingCall call = new PendingCall(id, info, future, system, forApplication, function, event, counters, start,
                observed, parent);
        if (!system) {
            counters.sent(payload.totalBytes());
        }
        pending.add(call);
        if (state == State.CLOSED) {
            pending.fail(id, new RpcException(RpcException.Code.SHUTDOWN, "RPC agent " + self.name() + " has been shut down"));
            return (RpcFuture<R>) future;
        }
        if (parent != null && parent.cancelled()) {
            pending.fail(id, new RpcException(RpcException.Code.CANCELLED, info.function() + " to " + callee.name()
                    + " was made for a call that " + parent.callerName() + " cancelled"));
            return (RpcFuture<R>) future;
        }
        Duration effective = timeout != null ? timeout : rpcTimeout;
        if (!future.done()) {
            long deadline = effective.isZero() ? 0 : (System.nanoTime() + saturatedNanos(effective)) | 1;
            long inherited = parent == null ? 0 : parent.deadline();
            if (inherited != 0 && (deadline == 0 || inherited - deadline < 0)) {
                // The caller of the request being handled stops waiting before this call's own timeout.
                call.timeoutMillis = Math.max(0, TimeUnit.NANOSECONDS.toMillis(inherited - System.nanoTime()));
                call.inherited = true;
                deadline = inherited;
            } else {
                call.timeoutMillis = effective.toMillis();
            }
            if (deadline != 0) {
                call.deadline = deadline;
                timer.armed(deadline);
            }
        }
        // The callee's handler learns the time left (its own nested calls end by then); Ferry's
        // own calls have no nested calls to bound.
        OutboundMessage message = new OutboundMessage(MessageKind.CALL, id, headers, payload,
                system ? 0 : call.deadline);
        PeerOpening connecting = connections.get(callee);
        PeerChannel open = connecting.openNow();
        if (open != null) {
            // The usual case: the channel is up, send without a completion stage per call.
            sendOn(open, call, message, barrier, interceptorContext, waits);
        } else {
            // In the order the calls were made, behind those still waiting for the connection.
            connecting.whenOpen((channel, error) -> {
                if (future.done()) {
                    return; // cancelled, timed out or failed while connecting: it must not run remotely
                }
                if (error != null) {
                    pending.fail(id, error instanceof RpcException rpc ? rpc
                            : new RpcException(RpcException.Code.UNAVAILABLE, "cannot reach " + callee.name(), error));
                    return;
                }
                sendOn(channel, call, message, barrier, interceptorContext, false); // not on the caller's thread
            });
        }
        return (RpcFuture<R>) future;
    }

    /**
     * Hands {@code message} to {@code channel}, as an exchange when the calling thread waits for it
     * alone next ({@code waits}); whatever fails fails the call, with the same error either way.
     */
    private void sendOn(PeerChannel channel, PendingCall call, OutboundMessage message, boolean systemBarrier,
                        boolean interceptorContext, boolean waits) {
        WorkerInfo callee = call.info.callee();
        long id = call.id;
        call.connection = channel;
        CallBalance calls = PeerLink.of(channel).calls;
        try {
            Delivery delivery = Deliveries.ofCall(systemBarrier, interceptorContext, message.headers(),
                    calls.sending(MessageKind.CALL, id));
            java.util.function.Consumer<Throwable> lost = failure -> pending.fail(id, unavailable(callee, failure));
            try {
                if (waits) {
                    channel.exchange(message, delivery, call.deadline, lost);
                } else {
                    channel.send(message, delivery, lost);
                }
            } catch (RuntimeException e) {
                calls.withdrawn(MessageKind.CALL); // refused (too large, say): never answered
                throw e;
            }
        } catch (RpcException e) {
            pending.fail(id, e);
        } catch (RuntimeException e) {
            pending.fail(id, new RpcException(RpcException.Code.INTERNAL, "cannot send to " + callee.name(), e));
        }
        if (!channel.isActive()) {
            pending.fail(id, unavailable(callee, null));
        }
    }

    /**
     * Cancels call {@code id} if it is still pending: its future fails {@code CANCELLED} now and
     * its callee is told ({@link #cancelRemotely}). {@code parent}: the request it was made for,
     * cancelled by its own caller (null: its future's {@code cancel}). Returns whether it was pending.
     */
    private boolean cancelCall(long id, boolean interrupt, CallContext parent) {
        PendingCall call = pending.remove(id);
        if (call == null) {
            return false;
        }
        String what = call.info.function() + " to " + call.info.callee().name();
        call.fail(new RpcException(RpcException.Code.CANCELLED, parent == null ? what + " was cancelled"
                : what + " was cancelled with the call it was made for (cancelled by " + parent.callerName() + ")"));
        cancelRemotely(call, interrupt);
        return true;
    }

    /** Cancels the calls still pending that were made for {@code request}, a request its caller cancelled. */
    private void cancelMadeFor(CallContext request, boolean interrupt) {
        for (PendingCall call : pending.madeFor(request)) {
            cancelCall(call.id, interrupt, request);
        }
    }

    /**
     * Tells the callee of {@code call}, which ended here (cancelled, timed out), to stop working on
     * it ({@link SystemCalls#cancelCall}). On a virtual thread: this may run on the timer or a
     * transport thread, which must never wait for room in a send queue. A call never sent needs
     * nothing; Ferry's own calls are not cancellable there.
     */
    private void cancelRemotely(PendingCall call, boolean interrupt) {
        if (call.system || call.connection == null || state == State.CLOSED) {
            return;
        }
        WorkerInfo callee = call.info.callee();
        Object[] args = {call.id, interrupt};
        Thread.ofVirtual().name("ferry-cancel-" + self.name()).start(() -> {
            try {
                send(callee, SystemCalls.CANCEL, args, null, true, INLINE_HEADERS);
            } catch (RuntimeException e) {
                log.debug("{}: the cancel of call #{} could not be sent to {}: {}", self.name(), call.id, callee.name(),
                        e.toString());
            }
        });
    }

    private static RpcException unavailable(WorkerInfo peer, Throwable cause) {
        if (cause instanceof RpcException known && known.code() == RpcException.Code.UNAVAILABLE) {
            return known; // it says already which peer and why (declareLost)
        }
        return new RpcException(RpcException.Code.UNAVAILABLE, "connection to worker " + peer.name() + " was lost"
                + (cause == null ? "" : ": " + cause), cause);
    }

    private WorkerDirectory runningDirectory() {
        WorkerDirectory workers = membership.directory();
        if (state == State.CLOSED || workers == null) {
            throw new RpcException(RpcException.Code.SHUTDOWN, "RPC agent " + self.name()
                    + (state == State.CLOSED ? " has been shut down" : " is not initialized yet"));
        }
        return workers;
    }

    @Override
    public AutoCloseable addCallObserver(CallObserver observer) {
        return observers.add(observer);
    }

    @Override
    public Duration getRpcTimeout() {
        return rpcTimeout;
    }

    @Override
    public void setRpcTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "rpc timeout must be zero or positive, got " + timeout);
        }
        rpcTimeout = timeout;
    }

    @Override
    public Map<String, Object> allGather(Object value) {
        return allGather(value, rpcTimeout);
    }

    @Override
    public Map<String, Object> allGather(Object value, Duration timeout) {
        runningDirectory();
        return allGathers.run(value, timeout);
    }

    @Override
    public Map<String, Object> allGather(Object value, java.util.Collection<String> workerNames, Duration timeout) {
        runningDirectory();
        return allGathers.run(value, java.util.Objects.requireNonNull(workerNames, "workerNames"), timeout);
    }

    @Override
    public void shutdown(boolean graceful, Duration timeout) {
        synchronized (lifecycle) {
            if (state != State.RUNNING) {
                return;
            }
            state = State.SHUTTING_DOWN;
        }
        AgentsAtExit.stopped(this);
        RuntimeException failure = null;
        if (graceful) {
            // No gather but shutdown's from here on: peers waiting in one this worker has not
            // started learn it now, not at their timeout.
            allGathers.leaving();
            try {
                if (dynamic) {
                    new Departure(this, pending, incoming, timeout).run();
                } else {
                    new GracefulShutdown(this, pending, incoming, timeout).run();
                }
            } catch (RuntimeException e) {
                failure = e;
                log.warn("{}: graceful shutdown failed, shutting down locally: {}", self.name(), e.getMessage());
            }
        }
        List<String> leaks = closeLocally(graceful && failure == null,
                new RpcException(RpcException.Code.SHUTDOWN, "RPC agent " + self.name() + " is shutting down"));
        if (failure != null) {
            throw failure;
        }
        if (!leaks.isEmpty() && options.failOnRRefLeaks()) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, self.name() + ": Detected RRef leaks during"
                    + " shutdown (references still held somewhere when shutdown ran):\n" + String.join("\n", leaks));
        }
    }

    /** Closes everything of this agent; returns the RRef leaks found (already logged). */
    private List<String> closeLocally(boolean graceful, RpcException reason) {
        log.debug("RPC agent for {} is shutting down", self.name());
        if (incoming != null) {
            incoming.close(graceful);
        }
        state = State.CLOSED;
        liveness.stop();
        try {
            status.close(); // its last report says so
            if (statusPage != null) {
                statusPage.close();
            }
        } catch (Exception e) {
            log.debug("{}: stopping the status reports failed: {}", self.name(), e.toString());
        }
        pending.failAll(reason);
        allGathers.failAll(reason);
        List<String> leaks = rrefs.close();
        if (!leaks.isEmpty()) {
            log.warn("{}: Detected RRef leaks during shutdown (references still held somewhere when shutdown"
                    + " ran):\n{}", self.name(), String.join("\n", leaks));
        }
        if (graceful) {
            transport.close();
        } else {
            // Calls not written yet must not run remotely after their futures failed with this.
            transport.closeNow(reason);
        }
        timer.close(); // joins the timer thread
        try {
            mbean.close();
        } catch (Exception e) {
            log.debug("{}: unregistering the agent's MBean failed: {}", self.name(), e.toString());
        }
        try {
            storeOwner.close();
        } catch (Exception e) {
            log.warn("{}: closing the rendezvous store failed: {}", self.name(), e.toString());
        }
        return leaks;
    }

    @Override
    public Map<String, String> getDebugInfo() {
        Map<String, String> info = new LinkedHashMap<>();
        info.put("agent.name", self.name());
        info.put("agent.rank", Integer.toString(self.id()));
        info.put("agent.state", state.name());
        WorkerDirectory members = membership.directory();
        info.put("agent.world_size", members == null ? "0" : Integer.toString(members.size()));
        info.put("agent.incarnation", Long.toString(incarnation));
        info.put("agent.transport", transport.describe());
        info.putAll(transport.debugInfo());
        // The first part of what the transport advertises (host:port); the rest (a same-host socket) apart.
        String advertised = String.valueOf(address);
        int extra = advertised.indexOf(';');
        info.put("agent.address", extra < 0 ? advertised : advertised.substring(0, extra));
        if (extra >= 0) {
            info.put("agent.address.extra", advertised.substring(extra + 1));
        }
        info.put("agent.client_active_calls", Integer.toString(pending.size()));
        info.put("agent.client_active_user_calls", Integer.toString(pending.applicationCalls()));
        info.put("agent.server_active_calls", Integer.toString(incoming == null ? 0 : incoming.active()));
        info.put("agent.server_active_async_calls", Integer.toString(incoming == null ? 0 : incoming.activeAsync()));
        info.put("agent.server_running_calls", Integer.toString(incoming == null ? 0 : incoming.running()));
        info.put("agent.server_cancellable_calls", Integer.toString(incoming == null ? 0 : incoming.cancellable()));
        info.put("agent.server_cancelled_calls", Long.toString(incoming == null ? 0 : incoming.cancelled()));
        info.put("agent.server_early_cancelled_calls", Long.toString(incoming == null ? 0 : incoming.cancelledEarly()));
        info.put("agent.server_early_cancels", Integer.toString(incoming == null ? 0 : incoming.earlyCancels()));
        info.put("agent.bound_functions", Integer.toString(codec.boundFunctions()));
        info.put("agent.num_worker_threads", Integer.toString(options.numWorkerThreads()));
        info.put("agent.rpc_timeout_ms", Long.toString(rpcTimeout.toMillis()));
        StatusPageProvider.StatusPage page = statusPage;
        if (page != null) {
            info.put("agent.status_page", page.pageUrl());
        }
        info.put("agent.server_queued_requests", Integer.toString(throttle.queuedRequests()));
        info.put("agent.paused_connections", Integer.toString(throttle.pausedConnections()));
        info.put("agent.heartbeat_timeout_ms", Long.toString(options.heartbeatTimeout().toMillis()));
        StringBuilder lost = new StringBuilder();
        liveness.lost().forEach((peer, why) -> lost.append(lost.isEmpty() ? "" : "; ").append(peer).append(": ").append(why));
        info.put("agent.lost_peers", lost.toString());
        info.put("agent.shutdown.missing", shutdownMissing);
        info.put("agent.gathers_in_progress", allGathers.inProgress());
        info.put("agent.read_pauses", Long.toString(throttle.pauses()));
        counters.putInto(info);
        if (connections != null) {
            connections.kinds().forEach((peer, kind) -> info.put("agent.peer." + peer + ".transport", kind));
        }
        rrefs.debugInfo().forEach((key, value) -> info.put("rref." + key, value));
        return info;
    }

    @Override
    public String toString() {
        return "RpcAgent(" + self + ", " + state + ")";
    }

    /** Handles what the transport reads; runs on transport threads, so it never blocks. */
    private final class Listener implements TransportListener {
        @Override
        public void onMessage(PeerChannel channel, InboundMessage message) {
            if (PeerLink.of(channel) instanceof PeerLink link) {
                liveness.heard(link.worker);
            }
            switch (message.kind()) {
                case HELLO -> onHello(channel, message);
                case REPLY, ERROR -> onAnswer(channel, message);
                case CALL -> throw new IllegalStateException("a call delivered as a message");
            }
        }

        private void onHello(PeerChannel channel, InboundMessage message) {
            Hello hello;
            try {
                hello = codec.decode(message.inBand(), message.outOfBand(), Hello.class);
            } catch (RpcException e) {
                log.warn("{}: bad hello from {}: {}", self.name(), channel.remoteAddress(), e.getMessage());
                channel.close();
                return;
            }
            connections.accept(channel, hello);
        }

        @Override
        public void onCall(PeerChannel channel, InboundMessage call, Responder responder) {
            if (PeerLink.of(channel) instanceof PeerLink link) {
                liveness.heard(link.worker);
            }
            if (!connections.deferUntilAccepted(channel, () -> dispatchCall(channel, call, responder))) {
                dispatchCall(channel, call, responder);
            }
        }

        private void dispatchCall(PeerChannel channel, InboundMessage call, Responder responder) {
            if (PeerLink.of(channel) instanceof PeerLink link) {
                link.calls.received(call);
                incoming.submit(channel, link, call, responder);
            } else {
                log.warn("{}: closing connection from {}: a call before the handshake", self.name(),
                        channel.remoteAddress());
                channel.close();
            }
        }

        private void onAnswer(PeerChannel channel, InboundMessage message) {
            PeerLink link = PeerLink.of(channel);
            if (link == null) {
                // Only an accepted channel has no peer yet, and nothing was asked on it: a stranger's,
                // which must not get past the transport's handshake limits by sending an answer first.
                log.warn("{}: closing connection from {}: an answer before the handshake", self.name(),
                        channel.remoteAddress());
                channel.close();
                return;
            }
            link.calls.received(message);
            PendingCall call = pending.remove(message.id());
            if (call == null) {
                log.debug("{}: dropping a late answer to call #{} from {}", self.name(), message.id(), link.worker);
                return;
            }
            call.answered(message.payloadBytes());
            try {
                if (message.kind() == MessageKind.ERROR) {
                    RemoteErrorInfo error = codec.decode(message.inBand(), message.outOfBand(), RemoteErrorInfo.class);
                    call.fail(error.toException(call.info.callee().name()));
                    return;
                }
                Object result = codec.decode(message.inBand(), message.outOfBand(), message.headers());
                for (CallInterceptor interceptor : interceptors) {
                    result = interceptor.afterReceiveResponse(call.info, result, message.headers());
                }
                // An asynchronous function's static type is a future: keep the caller's types
                // honest by handing it the value as a completed future.
                call.complete(call.function.asDeclaredResult(result));
            } catch (RpcException e) {
                call.fail(e);
            } catch (RuntimeException e) {
                call.fail(new RpcException(RpcException.Code.INTERNAL,
                        "handling the answer of " + call.info.function() + " failed: " + e, e));
            }
        }

        @Override
        public void onClosed(PeerChannel connection, Throwable cause) {
            if (connections != null) {
                connections.closed(connection);
            }
            if (PeerLink.of(connection) instanceof PeerLink link) {
                WorkerInfo peer = link.worker;
                // A member's: it is lost (a departed one's close, after it said so, is no news).
                boolean member = state != State.CLOSED && membership.directory() != null
                        && membership.directory().containsName(peer.name());
                if (member) {
                    String why = cause == null ? "its connection closed" : "its connection broke: " + cause;
                    if (liveness.connectionClosed(peer, why)) {
                        reportLost(peer, why);
                    }
                    allGathers.peerLost(peer);
                }
                pending.failConnection(connection, call -> unavailable(peer, cause));
                boolean declaredLost = cause instanceof RpcException known && known.code() == RpcException.Code.UNAVAILABLE;
                if (state == State.RUNNING && cause != null && !declaredLost) { // declareLost said it
                    log.warn("{}: connection to {} closed: {}", self.name(), peer.name(), cause.toString());
                }
                if (state == State.RUNNING && member && !peerListeners.isEmpty()) {
                    timer.schedule(() -> notifyPeerLost(peer), 0);
                }
            }
        }
    }

    /**
     * {@code peer} sent nothing for the heartbeat timeout ({@link PeerLiveness}): its calls fail
     * now, with why, and its connections close (their close tells the {@link PeerListener}s). On
     * the timer thread.
     */
    private void declareLost(WorkerInfo peer, String why) {
        if (state == State.CLOSED) {
            return;
        }
        RpcException lost = new RpcException(RpcException.Code.UNAVAILABLE, "worker " + peer.name() + " is lost: " + why);
        log.warn("{}: {}", self.name(), lost.getMessage());
        pending.failCallee(peer.name(), lost);
        connections.abort(peer, lost, false);
        allGathers.peerLost(peer);
        reportLost(peer, why);
    }

    /** {@code peer} became lost: the membership listeners hear of it, and its RRefs here stop waiting for it. */
    private void reportLost(WorkerInfo peer, String why) {
        membership.lost(peer, why);
        RpcException lost = new RpcException(RpcException.Code.UNAVAILABLE, "worker " + peer.name() + " is lost: " + why);
        timer.schedule(() -> rrefs.ownerLost(peer, lost), 0);
    }

    /** A call to {@code peer} found it unreachable (a gather's leader): it is lost until heard again. */
    void unreachable(WorkerInfo peer, String why) {
        if (liveness.unreachable(peer, why)) {
            reportLost(peer, "unreachable: " + why);
        }
        allGathers.peerLost(peer);
    }

    /** {@code peer}, lost before, was heard again (a partition healed, a stopped process resumed). */
    private void heardAgain(WorkerInfo peer) {
        log.info("{}: {} is heard again", self.name(), peer.name());
        membership.back(peer);
    }

    /**
     * Sends {@code peer} a heartbeat, answered on its transport thread; on a virtual thread, since
     * a send may wait for room in a full send queue and the timer thread must never wait.
     */
    private void sendHeartbeat(WorkerInfo peer, Duration timeout, Runnable done) {
        Thread.ofVirtual().name("ferry-heartbeat-" + self.name()).start(() -> {
            try {
                invokeInline(peer, ACK, new Object[0], timeout).addDoneCallback(answered -> {
                    Throwable failure = answered.failed() ? answered.exceptionNow() : null;
                    if (failure instanceof RpcException e && state != State.CLOSED
                            && (e.code() == RpcException.Code.UNAVAILABLE || e.code() == RpcException.Code.UNAUTHENTICATED)) {
                        if (liveness.unreachable(peer, e.getMessage())) {
                            reportLost(peer, "unreachable: " + e.getMessage());
                        }
                        allGathers.peerLost(peer);
                    }
                    done.run();
                });
            } catch (RuntimeException e) {
                done.run(); // shut down meanwhile
            }
        });
    }

    PeerLiveness liveness() {
        return liveness;
    }

    /** Whether {@code peer} is lost here ({@link PeerLiveness#isLost}: not heard since) or no longer a member. */
    boolean isLost(WorkerInfo peer) {
        WorkerDirectory members = membership.directory();
        return members != null && !members.contains(peer.name(), peer.id()) || liveness.isLost(peer.name());
    }

    /** {@code peer}'s incarnation while it is a member (lost or not), else -1. */
    long incarnationOf(WorkerInfo peer) {
        WorkerDirectory members = membership.directory();
        WorkerDirectory.Entry entry = members == null ? null : members.entry(peer.name());
        return entry != null && entry.info().id() == peer.id() ? entry.incarnation() : -1;
    }

    /** The members a graceful shutdown completed without, with why (for the debug info). */
    void shutdownMissing(Map<String, String> missing) {
        StringBuilder text = new StringBuilder();
        missing.forEach((peer, why) -> text.append(text.isEmpty() ? "" : "; ").append(peer).append(": ").append(why));
        shutdownMissing = text.toString();
    }

    /** Runs {@code task} on the timer thread after {@code delayNanos}; it must be short and never wait. */
    void schedule(Runnable task, long delayNanos) {
        timer.schedule(task, delayNanos);
    }

    /** Tells the {@link PeerListener}s that {@code peer} left the group; on the timer thread. */
    private void notifyPeerLeft(WorkerInfo peer) {
        for (PeerListener listener : peerListeners) {
            try {
                listener.onPeerLeft(this, peer);
            } catch (RuntimeException e) {
                log.warn("{}: peer listener {} failed on the departure of {}", self.name(), listener.getClass().getName(),
                        peer.name(), e);
            }
        }
    }

    /** Tells the {@link PeerListener}s that {@code peer} is gone; on the timer thread (listeners may take a while). */
    private void notifyPeerLost(WorkerInfo peer) {
        for (PeerListener listener : peerListeners) {
            try {
                listener.onPeerLost(this, peer);
            } catch (RuntimeException e) {
                log.warn("{}: peer listener {} failed on the loss of {}", self.name(), listener.getClass().getName(),
                        peer.name(), e);
            }
        }
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4; // ~73 years: never, without overflowing nanoTime arithmetic
        }
    }
}
