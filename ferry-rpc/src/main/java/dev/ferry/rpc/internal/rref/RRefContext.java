package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RemoteStackTrace;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import dev.ferry.rpc.internal.serial.RemoteErrorInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One worker's side of the RRef reference-counting protocol (PyTorch's {@code RRefContext}):
 * the RRefs it owns with their known forks, its users awaiting confirmation, and the forks it
 * handed on that are not yet accepted.
 *
 * <pre>
 *  sender (fork)                      receiver                         owner
 *  owner  → user:  fork registered at once; the receiver's user is confirmed, no messages
 *  user   → owner: parent keeps a pending child  ── CHILD_ACCEPT ◀── receiver (resolves to the value)
 *  user   → user:  parent keeps a pending child;  receiver ── FORK_REQUEST ──▶ owner adds the fork
 *                                                 receiver ◀────── ack ──────
 *                  parent ◀── CHILD_ACCEPT ────── receiver
 *  user released (close, GC, shutdown) and confirmed and no pending children ── USER_DELETE ──▶ owner
 * </pre>
 *
 * The two guarantees follow: the owner drops a value only when its last known fork is deleted,
 * and a fork is known to the owner before the user that handed it on can delete its own.
 *
 * <p>This class is thread-safe; state changes happen under its lock, messages are sent outside it.
 */
public final class RRefContext {
    private static final Logger log = LoggerFactory.getLogger(RRefContext.class);
    private static final Cleaner CLEANER = Cleaner.create(runnable -> {
        Thread thread = new Thread(runnable, "rref-cleaner");
        thread.setDaemon(true);
        return thread;
    });
    /**
     * Each thread's recorder, kept for the thread's life: a request decoded on the warm request
     * thread then allocates nothing for it unless an RRef is among its arguments (setting and
     * removing a thread-local, and a list per request, were ~5 % of what a small call allocated).
     */
    private static final ThreadLocal<Recording> RECORDING = ThreadLocal.withInitial(Recording::new);
    private static final CompletableFuture<Void> NOTHING_TO_CONFIRM = CompletableFuture.completedFuture(null);

    private final RRefHost host;
    private final AtomicLong nextLocalId = new AtomicLong();
    private final Map<GloballyUniqueId, OwnerState> owners = new HashMap<>();
    private final Map<GloballyUniqueId, UserState> pendingUsers = new HashMap<>();
    private final Map<GloballyUniqueId, UserState> pendingChildren = new HashMap<>();
    private final Set<UserState> liveUsers = Collections.newSetFromMap(new IdentityHashMap<>());
    private final ControlMessages control;
    private boolean closed;

    public RRefContext(RRefHost host) {
        this.host = host;
        this.control = new ControlMessages(host, this::isClosed);
    }

    public GloballyUniqueId nextId() {
        return new GloballyUniqueId(host.self().id(), nextLocalId.getAndIncrement());
    }

    // ---- creation -------------------------------------------------------------------------

    /** A handle on a local value; it enters the owner table only when first shared. */
    public RRef<?> ownLocal(Object value) {
        OwnerState state = new OwnerState(nextId());
        state.created = true;
        state.setValue(value);
        return RRefFactory.access().owner(this, state);
    }

    /** The creator's user RRef for a {@code remote()} call to another worker. */
    public RRef<?> newCreatorUser(WorkerInfo owner, GloballyUniqueId rrefId, GloballyUniqueId forkId) {
        UserState state = new UserState(rrefId, forkId, owner);
        synchronized (this) {
            pendingUsers.put(forkId, state);
            liveUsers.add(state);
        }
        RRef<?> rref = RRefFactory.access().user(this, state);
        CLEANER.register(rref, () -> release(state));
        return rref;
    }

    /** The owner handle of a {@code remote()} call to this same worker, kept alive by a self fork. */
    public RRef<?> newSelfOwner(GloballyUniqueId rrefId) {
        OwnerState state;
        synchronized (this) {
            state = owners.computeIfAbsent(rrefId, OwnerState::new);
            state.created = true;
            state.forks.add(rrefId);
        }
        return RRefFactory.access().owner(this, state);
    }

    /** On the owner, when a {@code remote()} request arrives: the state its result goes into. */
    public OwnerState ownerForCreation(GloballyUniqueId rrefId, GloballyUniqueId forkId) {
        synchronized (this) {
            OwnerState state = owners.computeIfAbsent(rrefId, OwnerState::new);
            state.created = true;
            if (!forkId.equals(rrefId)) {
                state.forks.add(forkId);
            }
            return state;
        }
    }

    /** The creator learned how its {@code remote()} call ended: confirm, or record the failure. */
    public void creationAnswered(RRef<?> rref, Throwable failure) {
        Object state = RRefFactory.access().stateOf(rref);
        if (state instanceof UserState user) {
            if (failure != null) {
                user.creationError = creationFailure(failure);
                // A timed-out or cancelled creation may still have happened on the owner (the
                // delete that follows on the same connection finds it); one that failed here never left.
                // A failure the owner reported (any code: it registered the creation on arrival,
                // before resolving or running anything) means it holds a place the delete must free.
                user.neverSent = failure instanceof RpcException rpc && !reportedByCallee(rpc)
                        && rpc.code() != RpcException.Code.TIMEOUT
                        && rpc.code() != RpcException.Code.REMOTE_ERROR && rpc.code() != RpcException.Code.UNAVAILABLE
                        && rpc.code() != RpcException.Code.CANCELLED;
            }
            confirm(user);
        } else if (state instanceof OwnerState owner) {
            if (failure != null) {
                owner.setError(creationFailure(failure));
            }
            dropFork(owner.id, owner.id);
        }
    }

    private static boolean reportedByCallee(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof RemoteStackTrace) {
                return true;
            }
        }
        return false;
    }

    private static RpcException creationFailure(Throwable failure) {
        if (failure instanceof RpcException rpc && rpc.code() == RpcException.Code.TIMEOUT) {
            return new RpcException(RpcException.Code.TIMEOUT, "RRef creation via remote() timed out, and it is"
                    + " possible that the RRef on the owner node does not exist: " + rpc.getMessage(), rpc);
        }
        if (failure instanceof RpcException rpc && rpc.code() == RpcException.Code.REMOTE_ERROR) {
            // The user's error, whole (worker, class, message), exactly as a fetch of the value
            // reports it: which of the two reaches toHere() first depends on timing.
            return rpc.rethrowable();
        }
        if (failure instanceof RpcException rpc) {
            return new RpcException(rpc.code(), "RRef creation via remote() failed: " + rpc.getMessage(), rpc);
        }
        return new RpcException(RpcException.Code.INTERNAL, "RRef creation via remote() failed: " + failure, failure);
    }

    // ---- sending an RRef (fork) -----------------------------------------------------------------

    /** Called when an RRef is written into a message: creates the fork that message carries. */
    public ForkData fork(RRef<?> rref) {
        if (RRefFactory.access().contextOf(rref) != this) {
            throw new RpcException(RpcException.Code.UNKNOWN_RREF, rref + " belongs to another agent than "
                    + host.self().name() + "; an RRef can only be passed on by the worker that holds it");
        }
        Object state = RRefFactory.access().stateOf(rref);
        GloballyUniqueId forkId = nextId();
        int self = host.self().id();
        if (state instanceof OwnerState owner) {
            synchronized (this) {
                checkOpen();
                owners.putIfAbsent(owner.id, owner);
                owner.forks.add(forkId); // registered early: the owner is the sender
            }
            return new ForkData(self, owner.id, forkId, self);
        }
        UserState user = (UserState) state;
        RpcException gone = user.ownerGone;
        if (gone != null) {
            throw ownerGoneError(user, "fork", gone); // passed on, it would be of no use: say why here
        }
        if (user.creationError != null) {
            throw user.creationError.rethrowable();
        }
        synchronized (this) {
            if (user.deleteSent) {
                throw new RpcException(RpcException.Code.UNKNOWN_RREF, describe(user)
                        + " has been deleted. Cannot call fork an UserRRef after deletion.");
            }
            user.pendingChildren++;
            pendingChildren.put(forkId, user);
        }
        return new ForkData(user.owner.id(), user.rrefId, forkId, self);
    }

    // ---- receiving an RRef ----------------------------------------------------------------------

    /** Called when an RRef is read from a message: the handle this worker gets. */
    public RRef<?> receive(ForkData fork) {
        int self = host.self().id();
        WorkerInfo parent = host.worker(fork.parentId());
        if (fork.ownerId() == self) {
            OwnerState owner;
            synchronized (this) {
                owner = owners.get(fork.rrefId());
                if (owner == null) {
                    if (fork.rrefId().createdOn() == self) {
                        throw new RpcException(RpcException.Code.UNKNOWN_RREF, "RRef " + fork.rrefId()
                                + " arrived at its owner " + host.self().name() + ", which does not know it (deleted?)");
                    }
                    // Messages between two workers may use two connections (one each way), so the
                    // RRef can overtake its creation call: hold it until the creation arrives.
                    owner = new OwnerState(fork.rrefId());
                    owners.put(fork.rrefId(), owner);
                }
                if (fork.parentId() == self) {
                    removeFork(owner, fork.forkId()); // sent to itself: undo the early registration
                }
            }
            if (fork.parentId() != self) {
                control.send(ControlMessages.Kind.CHILD_ACCEPT, parent, fork.forkId(),
                        () -> host.sendChildAccept(parent, fork.forkId()));
            }
            return RRefFactory.access().owner(this, owner);
        }
        WorkerInfo owner = host.worker(fork.ownerId());
        UserState user = new UserState(fork.rrefId(), fork.forkId(), owner);
        RRef<?> rref = RRefFactory.access().user(this, user);
        CLEANER.register(rref, () -> release(user));
        synchronized (this) {
            liveUsers.add(user);
            if (fork.parentId() == fork.ownerId()) {
                user.confirmed = true; // the owner registered this fork before sending it
                user.confirmation.complete(null);
                return rref;
            }
            pendingUsers.put(user.forkId, user);
        }
        RECORDING.get().add(user.confirmation);
        control.send(ControlMessages.Kind.FORK_REQUEST, owner, fork.forkId(),
                        () -> host.sendForkRequest(owner, fork.rrefId(), fork.forkId()))
                .addDoneCallback(done -> {
                    if (done.failed()) {
                        log.warn("{}: the owner did not confirm fork {} of {}: {}", host.self().name(), user.forkId,
                                user.rrefId, done.exceptionNow().toString());
                        user.creationError = new RpcException(RpcException.Code.UNAVAILABLE, "the owner "
                                + owner.name() + " could not confirm " + describe(user), done.exceptionNow());
                    }
                    confirm(user);
                    control.send(ControlMessages.Kind.CHILD_ACCEPT, parent, user.forkId,
                            () -> host.sendChildAccept(parent, user.forkId));
                });
        return rref;
    }

    /** Starts recording the forks decoded on this thread, so a request can wait for them. */
    public static void startRecording() {
        RECORDING.get().start();
    }

    /**
     * Stops recording; returns a future that completes when the recorded forks are confirmed (an
     * already completed one, shared, when there were none: callers only wait for it).
     */
    public static CompletableFuture<Void> finishRecording() {
        List<CompletableFuture<Void>> recorded = RECORDING.get().finish();
        if (recorded == null || recorded.isEmpty()) {
            return NOTHING_TO_CONFIRM;
        }
        return CompletableFuture.allOf(recorded.toArray(CompletableFuture[]::new));
    }

    /** The confirmations a thread is recording, between {@link #startRecording} and {@link #finishRecording}. */
    private static final class Recording {
        private boolean active;
        private List<CompletableFuture<Void>> recorded;

        void start() {
            active = true;
            recorded = null;
        }

        void add(CompletableFuture<Void> confirmation) {
            if (active) {
                if (recorded == null) {
                    recorded = new ArrayList<>(2);
                }
                recorded.add(confirmation);
            }
        }

        List<CompletableFuture<Void>> finish() {
            List<CompletableFuture<Void>> result = recorded;
            active = false;
            recorded = null;
            return result;
        }
    }

    // ---- control messages (owner and parent side) ----------------------------------------------------

    /** Owner: a user handed the RRef to another user, who announces its fork. Idempotent. */
    public void onForkRequest(GloballyUniqueId rrefId, GloballyUniqueId forkId) {
        synchronized (this) {
            OwnerState owner = owners.get(rrefId);
            if (owner == null) {
                if (rrefId.createdOn() == host.self().id()) {
                    throw new RpcException(RpcException.Code.UNKNOWN_RREF, "fork " + forkId + " of RRef " + rrefId
                            + ": the owner " + host.self().name() + " does not know this RRef (deleted?)");
                }
                // the creation call may still be on its way: the fork request overtook it
                owner = new OwnerState(rrefId);
                owners.put(rrefId, owner);
            }
            if (!owner.forks.add(forkId)) {
                log.debug("Ignoring duplicate request to add fork {} of RRef {}", forkId, rrefId);
            }
        }
    }

    /** Parent: the receiver of a fork this worker sent has it confirmed by the owner. */
    public void onChildAccept(GloballyUniqueId forkId) {
        UserState user;
        synchronized (this) {
            user = pendingChildren.remove(forkId);
            if (user == null) {
                log.debug("Ignoring duplicate request to delete child UserRRef with ForkId = {}", forkId);
                return;
            }
            user.pendingChildren--;
        }
        maybeDelete(user);
    }

    /**
     * Owner: a user released its fork; {@code again} if the user sent this delete before. Unknown
     * forks are ignored, logged as a warning (bad input, or a protocol bug) unless {@code again}
     * (then it is a repeat of a delete done already, at debug level), except on an RRef whose place a fetch or a fork request kept for a creation that has not come:
     * that is the creator's own fork (any other user's fork is known here before that user may
     * delete it), released after the creator learned that its creation failed on the way. Nothing
     * will set that value, so what waits for it fails, and the place goes with the last fork it knows.
     */
    public void onUserDelete(GloballyUniqueId rrefId, GloballyUniqueId forkId, boolean again) {
        OwnerState neverCreated;
        synchronized (this) {
            OwnerState owner = owners.get(rrefId);
            if (owner == null) {
                log.atLevel(again ? Level.DEBUG : Level.WARN).log("{}: delete of fork {} for an RRef {} this owner"
                        + " does not know: ignored{}", host.self().name(), forkId, rrefId, again ? " (sent again)" : "");
                return;
            }
            if (owner.forks.contains(forkId)) {
                removeFork(owner, forkId);
                return;
            }
            if (owner.created) {
                log.atLevel(again ? Level.DEBUG : Level.WARN).log("{}: delete of unknown fork {} of RRef {}: ignored{}",
                        host.self().name(), forkId, rrefId, again ? " (sent again)" : "");
                return;
            }
            neverCreated = owner;
            if (owner.forks.isEmpty()) {
                owners.remove(rrefId);
            }
        }
        log.debug("{}: the creator released fork {} of RRef {}, whose creation never came here", host.self().name(),
                forkId, rrefId);
        neverCreated.setError(new RpcException(RpcException.Code.UNKNOWN_RREF, "RRef " + rrefId + ": its creation"
                + " never reached its owner " + host.self().name() + ", and its creator released it"));
    }

    /** Owner: the value of an RRef, for a user's {@code toHere()}; waits for its creation. */
    public RpcFuture<Object> valueForFetch(GloballyUniqueId rrefId) {
        synchronized (this) {
            OwnerState owner = owners.get(rrefId);
            if (owner == null) {
                if (rrefId.createdOn() == host.self().id()) {
                    throw new RpcException(RpcException.Code.UNKNOWN_RREF, "the owner " + host.self().name()
                            + " does not know RRef " + rrefId + " (deleted?)");
                }
                owner = new OwnerState(rrefId); // the fetch overtook the creation call
                owners.put(rrefId, owner);
            }
            return owner.value;
        }
    }

    /**
     * User: a copy of the value from its owner ({@code toHere()}). The fetch may reach the owner
     * before the creation it waits for there (the owner keeps a place for it), and a creation whose
     * send was then lost never comes: the fetch would wait until its timeout, or for ever. So it
     * also ends, failed, as soon as this worker learns that the creation (or the fork's
     * confirmation) failed or that the owner is gone.
     */
    public RpcFuture<Object> fetch(UserState user, Duration timeout) {
        synchronized (this) {
            if (user.deleteSent) { // closed by another thread since toHere() checked
                throw deletedError(user, "to_here()");
            }
            user.fetchesInFlight++; // a close() meanwhile sends its delete after the fetch is answered
        }
        RpcFuture<Object> fetched;
        try {
            fetched = host.fetch(user.owner, user.rrefId, timeout);
        } catch (RuntimeException e) {
            fetchEnded(user);
            throw e;
        }
        // Also when the confirmation is already done: toHere() checked it before the fetch, but the
        // creation may have failed in between, and the fetch then waits for it on the owner.
        user.confirmation.thenRun(() -> {
            RpcException failed = user.ownerGone != null ? user.ownerGone : user.creationError;
            if (failed != null) {
                FutureCompleter.tryFail(fetched, failed);
            }
        });
        return fetched;
    }

    /**
     * User: {@code toHere()} stopped waiting for {@code fetched}, from {@link #fetch}. Ended at once
     * if it is done, so that a {@code close()} right after {@code toHere()} queues its delete then,
     * to go with the next call; else (an interrupted wait) when it ends.
     */
    public void fetchAnswered(UserState user, RpcFuture<?> fetched) {
        if (fetched.done()) {
            fetchEnded(user);
        } else {
            fetched.addDoneCallback(done -> fetchEnded(user));
        }
    }

    private void fetchEnded(UserState user) {
        synchronized (this) {
            user.fetchesInFlight--;
        }
        maybeDelete(user);
    }

    /** Owner: the state of an RRef it owns, for calls on the value; null if unknown. */
    public synchronized OwnerState owned(GloballyUniqueId rrefId) {
        return owners.get(rrefId);
    }

    // ---- release and deletion -----------------------------------------------------------------------

    /** The user RRef is released (closed, collected, or shutdown). Idempotent. */
    public void release(UserState user) {
        synchronized (this) {
            if (user.released) {
                return;
            }
            user.released = true;
        }
        maybeDelete(user);
    }

    private void confirm(UserState user) {
        synchronized (this) {
            pendingUsers.remove(user.forkId);
            user.confirmed = true;
        }
        user.confirmation.complete(null);
        maybeDelete(user);
    }

    private void maybeDelete(UserState user) {
        synchronized (this) {
            if (!user.readyToDelete()) {
                return;
            }
            user.deleteSent = true;
            liveUsers.remove(user);
            if (closed || user.neverSent) {
                return; // a closed group, or an owner that never heard of this RRef
            }
        }
        sendDelete(user);
    }

    private void sendDelete(UserState user) {
        AtomicBoolean sentBefore = new AtomicBoolean(); // each retry of this delete says it may be a repeat
        control.send(ControlMessages.Kind.USER_DELETE, user.owner, user.forkId,
                () -> host.sendUserDelete(user.owner, user.rrefId, user.forkId, sentBefore.getAndSet(true)));
    }

    private void dropFork(GloballyUniqueId rrefId, GloballyUniqueId forkId) {
        synchronized (this) {
            OwnerState owner = owners.get(rrefId);
            if (owner != null) {
                removeFork(owner, forkId);
            }
        }
    }

    /** Caller holds the lock. The owner table forgets an RRef whose last fork is gone. */
    private void removeFork(OwnerState owner, GloballyUniqueId forkId) {
        owner.forks.remove(forkId);
        if (owner.forks.isEmpty()) {
            owners.remove(owner.id);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new RpcException(RpcException.Code.SHUTDOWN, "the RRef context of " + host.self().name() + " is closed");
        }
    }

    // ---- shutdown and debugging -----------------------------------------------------------------------

    /** Releases every live user RRef (PyTorch's graceful-shutdown cleanup); deletes follow. */
    public void releaseAllUsers() {
        List<UserState> users;
        synchronized (this) {
            users = new ArrayList<>(liveUsers);
        }
        users.forEach(this::release);
    }

    /** Application-visible RRef work still in flight: unconfirmed users, pending children, messages. */
    public synchronized int busy() {
        return pendingUsers.size() + pendingChildren.size() + control.inFlight();
    }

    /** Waits until no control message is in flight; zero timeout means no limit. */
    public boolean awaitQuiet(Duration timeout) throws InterruptedException {
        return control.awaitQuiet(timeout);
    }

    /**
     * Closes the context: users can no longer be used and no more deletes are sent. Returns one
     * line per fork still known to this owner (the leak report; empty when nothing leaked).
     */
    public List<String> close() {
        List<String> leaks = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (OwnerState owner : owners.values()) {
                for (GloballyUniqueId fork : owner.forks) {
                    leaks.add("Leaking RRef " + owner.id + " with fork Id " + fork);
                }
            }
            for (UserState user : liveUsers) {
                user.deleteSent = true;
            }
            owners.clear();
            pendingUsers.clear();
            pendingChildren.clear();
            liveUsers.clear();
        }
        return leaks;
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    /** Counters as PyTorch's {@code _rref_context_get_debug_info} names them. */
    public synchronized Map<String, String> debugInfo() {
        Map<String, String> info = new LinkedHashMap<>();
        info.put("num_owner_rrefs", Integer.toString(owners.size()));
        info.put("num_forks", Integer.toString(owners.values().stream().mapToInt(o -> o.forks.size()).sum()));
        info.put("num_pending_users", Integer.toString(pendingUsers.size()));
        info.put("num_pending_children", Integer.toString(pendingChildren.size()));
        info.put("num_pending_futures", Integer.toString(control.inFlight()));
        info.put("num_live_users", Integer.toString(liveUsers.size()));
        info.put("num_messages_undelivered", Integer.toString(control.undelivered()));
        return info;
    }

    public WorkerInfo self() {
        return host.self();
    }

    public RRefHost host() {
        return host;
    }

    /** The owner's value, for {@code localValue()}: waits until it is set, rethrows its error. */
    public static Object localValue(OwnerState owner) {
        return owner.value.await();
    }

    /**
     * The owner's value as {@code toHere()} reports it: as {@link #localValue}, but the error of a
     * function that failed making it is the {@link RpcException.Code#REMOTE_ERROR} a fetch from
     * another worker would get, so that {@code remote()} to one's own worker fails as to any other.
     */
    public Object valueAsFetched(OwnerState owner) {
        try {
            return owner.value.await();
        } catch (RuntimeException | Error e) {
            if (!owner.value.failed() || owner.value.exceptionNow() instanceof RpcException) {
                throw e; // not the function's own failure, or already in the caller's terms
            }
            throw RemoteErrorInfo.of(owner.value.exceptionNow()).toException(host.self().name());
        }
    }

    /**
     * The class of the owner's value once it is set ({@code RRef.type()} on the owner); fails as
     * {@link #valueAsFetched} does.
     */
    public RpcFuture<Class<?>> valueType(OwnerState owner) {
        return owner.value.then(done -> ValueTypes.of(valueAsFetched(owner)));
    }

    /**
     * The owner of some of this worker's user RRefs is gone for good (it left, or a new incarnation
     * replaced it): those RRefs raise {@code gone} on every use from now on, nothing waits for the
     * owner's confirmations any more, no delete is sent to it (it holds nothing of ours) and the
     * control messages in flight to it end now (none waits for its retries), so the bookkeeping
     * drains (graceful shutdown waits for it).
     */
    public void ownerGone(WorkerInfo owner, RpcException gone) {
        giveUp(owner, gone);
        control.peerGone(owner, gone);
    }

    /**
     * The owner of some of this worker's user RRefs is lost (its connection closed, or it went
     * silent): as {@link #ownerGone} here, but it may only have been cut off for a while and still
     * hold the values, so the deletes of those RRefs' forks are owed to it, sent until they get
     * through for as long as it is a member of the group (they are not in flight: nothing waits for
     * them). Once back, it drops what no one else holds; the RRefs here stay unusable.
     */
    public void ownerLost(WorkerInfo owner, RpcException lost) {
        List<UserState> owed = giveUp(owner, lost);
        control.peerLost(owner, lost);
        owed.forEach(this::sendDelete);
    }

    /** Gives up the user RRefs of {@code owner}; returns those whose fork the owner may still hold. */
    private List<UserState> giveUp(WorkerInfo owner, RpcException why) {
        List<UserState> users = new ArrayList<>();
        List<UserState> owed = new ArrayList<>();
        synchronized (this) {
            for (UserState user : liveUsers) {
                if (user.owner.equals(owner)) {
                    users.add(user);
                }
            }
            for (UserState user : pendingUsers.values()) {
                if (user.owner.equals(owner) && !users.contains(user)) {
                    users.add(user);
                }
            }
            for (UserState user : users) {
                user.ownerGone = why;
                if (!user.deleteSent && !user.neverSent && !closed) {
                    owed.add(user);
                }
                user.deleteSent = true;
                liveUsers.remove(user);
                pendingUsers.remove(user.forkId);
            }
            pendingChildren.values().removeIf(user -> user.owner.equals(owner));
        }
        // A request that waits for one of them goes on, and fails when it uses it.
        users.forEach(user -> user.confirmation.complete(null));
        return owed;
    }

    /** Throws the recorded creation failure of a user RRef, or a deleted-reference error. */
    public void checkUsable(RRef<?> rref, String operation) {
        checkMade(rref, operation);
        if (RRefFactory.access().stateOf(rref) instanceof UserState user && isDeleted(user)) {
            throw deletedError(user, operation);
        }
    }

    /**
     * Throws the recorded creation failure of a user RRef (its owner gone, or the function that made
     * the value failed). For an operation under way: a deletion since it began (a {@code close()} on
     * another thread, or graceful shutdown's release) does not fail what already reached the owner.
     */
    public void checkMade(RRef<?> rref, String operation) {
        if (RRefFactory.access().stateOf(rref) instanceof UserState user) {
            RpcException gone = user.ownerGone;
            if (gone != null) {
                throw ownerGoneError(user, operation, gone);
            }
            if (user.creationError != null) {
                throw user.creationError.rethrowable();
            }
        }
    }

    private static RpcException deletedError(UserState user, String operation) {
        return new RpcException(RpcException.Code.UNKNOWN_RREF, describe(user)
                + " has been deleted. Cannot call " + operation + " on it after deletion.");
    }

    private static RpcException ownerGoneError(UserState user, String operation, RpcException gone) {
        return new RpcException(gone.code(), describe(user) + ": cannot call " + operation + " on it, its owner"
                + " is gone: " + gone.getMessage(), gone);
    }

    /** The state of a user RRef, for its handle's checks. */
    public synchronized boolean isDeleted(UserState user) {
        return user.deleteSent;
    }

    public synchronized boolean isConfirmed(UserState user) {
        return user.confirmed;
    }

    static String describe(UserState user) {
        return "UserRRef(rref_id=" + user.rrefId + ", fork_id=" + user.forkId + ")";
    }
}
