package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction1;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.transport.TransportFactory;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.policy.other.Canary;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;
import dev.ferry.rpc.testing.ByteMutations;
import dev.ferry.rpc.testing.WarmAllocation;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Fuzzes what turns a received frame into a call: a real worker (worker1, over TCP) whose
 * transport hands its agent each user call's message mutated &mdash; the Fory payload (which holds
 * the function's reference and the arguments) bit-flipped, overwritten, truncated, extended, its
 * length and count fields set to hostile values, replaced by random bytes; out-of-band buffers
 * added or mutated; headers added with random values, the ones that steer execution included. The
 * calls are valid before mutation: functions the worker's policy allows ({@link Ops}) and one it
 * refuses ({@link Canary}, outside the application's packages). For each call the caller gets its
 * answer or an {@link RpcException} with a clear code (decoding: {@code SERIALIZATION_ERROR} or
 * {@code PROTOCOL_ERROR}; the function: {@code UNKNOWN_FUNCTION}; a call turned into one on an RRef
 * not there: {@code UNKNOWN_RREF}; an allowed function that threw on mutated arguments:
 * {@code REMOTE_ERROR} or {@code INVALID_ARGUMENT}); never a timeout (a lost
 * call), never {@code INTERNAL}. The canary never runs, whatever the mutation; the worker keeps
 * answering; the whole JVM allocates at most {@value #FIXED_ALLOCATION} bytes plus
 * {@value #ALLOCATION_PER_BYTE} per payload byte per call, warm: a call over it is sent again and
 * counted then ({@link WarmAllocation}), as the first decoding in the JVM builds Fory's serializers.
 *
 * <p>The suite runs 1,000 tries per property. Longer: {@code ./ferry fuzz 100000}, or
 * {@code -Djqwik.tries.default=N} on {@code -Dtest=MessageDecoderFuzzTest}.
 */
class MessageDecoderFuzzTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final long FIXED_ALLOCATION = 8 << 20;
    private static final long ALLOCATION_PER_BYTE = 256;
    /** How a mutated call may fail; anything else (a timeout: a lost call; INTERNAL; UNAVAILABLE) is a bug. */
    private static final Set<RpcException.Code> CLEAR = EnumSet.of(RpcException.Code.SERIALIZATION_ERROR,
            RpcException.Code.PROTOCOL_ERROR, RpcException.Code.UNKNOWN_FUNCTION, RpcException.Code.REMOTE_ERROR,
            RpcException.Code.INVALID_ARGUMENT, RpcException.Code.UNKNOWN_RREF);
    private static final List<String> STEERING_HEADERS = List.of(SystemCalls.MARKER.name(), SystemCalls.INLINE.name(),
            UserDeletes.HEADER.name(), AgentRRefHost.CREATE.name(), "ferry-rref-receiver", "ferry-profile",
            "ferry-autograd-context");
    /** Tries over the allocation bound the first time, sent again and counted then (see {@link WarmAllocation}). */
    private static final String RESENT = "re-sent when cold";

    private static TcpStoreServer store;
    private static RpcAgent caller;
    private static RpcAgent victim;
    private static RewritingTransport victimTransport;
    private static long outcomes;
    private static final Map<String, Long> byOutcome = new LinkedHashMap<>();

    @BeforeContainer
    static void start() throws Exception {
        store = TcpStoreServer.start("127.0.0.1", 0);
        int port = store.port();
        RpcBackendOptions options = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:" + port)
                .rendezvousTimeout(Duration.ofSeconds(60))
                .applicationPackage(Ops.class.getName()) // not dev.ferry.rpc.policy.other: the canary is refused
                .build();
        TransportFactory mutating = (opts, name, threads) -> victimTransport =
                new RewritingTransport(TransportFactory.NETTY.create(opts, name, threads));
        CompletableFuture<RpcAgent> one = CompletableFuture.supplyAsync(() -> {
            TcpStore client = TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60));
            return DefaultRpcAgent.start(new WorkerInfo("worker1", 1), 2, options, client, client, mutating);
        });
        TcpStore client = TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60));
        caller = DefaultRpcAgent.start(new WorkerInfo("worker0", 0), 2, options, client, client, TransportFactory.NETTY);
        victim = one.get(60, TimeUnit.SECONDS);
    }

    @AfterContainer
    static void stop() {
        System.out.printf("MessageDecoderFuzzTest: %d mutated calls: %s%n", outcomes, byOutcome);
        for (RpcAgent agent : new RpcAgent[] {caller, victim}) {
            if (agent != null) {
                agent.shutdown(false, Duration.ZERO);
            }
        }
        store.close();
    }

    @Property(shrinking = ShrinkingMode.BOUNDED)
    void aMutatedCallFailsClearlyAndNothingRefusedRuns(@ForAll("calls") Call call,
                                                       @ForAll("mutations") UnaryOperator<InboundMessage> mutation)
            throws Exception {
        int canaryRuns = Canary.RUNS.get();
        long[] payload = {0};
        WarmAllocation.Allocation allocation = WarmAllocation.of(() -> sendMutated(call, mutation, payload),
                () -> FIXED_ALLOCATION + ALLOCATION_PER_BYTE * payload[0]);
        if (allocation.runs() > 1) {
            count(RESENT);
        }
        assertThat(Canary.RUNS.get()).as("runs of the refused canary").isEqualTo(canaryRuns);
        assertThat(allocation.bytes()).as("bytes allocated for a mutated call of %d payload bytes", payload[0])
                .isLessThanOrEqualTo(FIXED_ALLOCATION + ALLOCATION_PER_BYTE * payload[0]);
        assertThat(caller.rpcSync("worker1", Ops::add, 2, 3)).as("the worker goes on").isEqualTo(5);
    }

    /** Sends {@code call} to the worker, which gets it mutated; {@code payload} is set to its bytes before and after. */
    private static void sendMutated(Call call, UnaryOperator<InboundMessage> mutation, long[] payload) {
        victimTransport.calls = message -> {
            if (message.kind() != MessageKind.CALL || message.headers().contains(SystemCalls.MARKER)) {
                return message; // only user calls are mutated
            }
            payload[0] = message.payloadBytes();
            InboundMessage mutated = mutation.apply(message);
            payload[0] += mutated.payloadBytes();
            return mutated;
        };
        try {
            call.send.apply(caller).await(CALL_TIMEOUT); // any answer: an allowed function ran on what arrived
            count("answered");
        } catch (RpcException e) {
            count(e.code().name());
            if (!CLEAR.contains(e.code())) {
                fail("a mutated call of " + call.name + " failed " + e.code() + " (" + e.getMessage() + ")", e);
            }
            if (e.getMessage() == null || e.getMessage().isBlank()) {
                fail("a mutated call of " + call.name + " failed " + e.code() + " without a message", e);
            }
        } finally {
            victimTransport.calls = UnaryOperator.identity();
        }
    }

    private static synchronized void count(String outcome) {
        if (!outcome.equals(RESENT)) {
            outcomes++;
        }
        byOutcome.merge(outcome, 1L, Long::sum);
    }

    /** A valid call before mutation: how to send it, and its name for messages. */
    record Call(String name, Function<RpcAgent, RpcFuture<?>> send) {
        @Override
        public String toString() {
            return name;
        }
    }

    @Provide
    Arbitrary<Call> calls() {
        RpcFunction1<Integer, Integer> canary = Canary::sing;
        return Arbitraries.oneOf(
                Combinators.combine(Arbitraries.integers(), Arbitraries.integers()).as((a, b) ->
                        new Call("Ops::add", agent -> agent.rpcAsync("worker1", Ops::add, a, b))),
                Arbitraries.strings().ofMaxLength(40).map(s ->
                        new Call("Ops::concat", agent -> agent.rpcAsync("worker1", Ops::concat, s, s))),
                Arbitraries.integers().list().ofMaxSize(20).map(list ->
                        new Call("Ops::sum", agent -> agent.rpcAsync("worker1", Ops::sum, list))),
                Arbitraries.strings().ofMaxLength(10).list().ofMaxSize(8).map(words ->
                        new Call("Ops::lengths", agent -> agent.rpcAsync("worker1", Ops::lengths, words))),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(300).map(bytes ->
                        new Call("Ops::identity", agent -> agent.rpcAsync("worker1", Ops::identity, bytes))),
                Arbitraries.strings().ofMaxLength(20).map(message ->
                        new Call("Ops::fail", agent -> agent.rpcAsync("worker1", Ops::fail, message))),
                Arbitraries.integers().map(x ->
                        new Call("Canary::sing", agent -> agent.rpcAsync("worker1", canary, x))));
    }

    @Provide
    Arbitrary<UnaryOperator<InboundMessage>> mutations() {
        Arbitrary<UnaryOperator<byte[]>> bytes = ByteMutations.any().list().ofMinSize(1).ofMaxSize(4)
                .map(list -> body -> {
                    byte[] out = body;
                    for (UnaryOperator<byte[]> mutation : list) {
                        out = mutation.apply(out);
                    }
                    return out;
                });
        Arbitrary<UnaryOperator<InboundMessage>> body = bytes.map(change -> message ->
                withBody(message, change.apply(copy(message.inBand()))));
        Arbitrary<UnaryOperator<InboundMessage>> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(256)
                .map(replacement -> message -> withBody(message, replacement));
        Arbitrary<UnaryOperator<InboundMessage>> buffers = Combinators.combine(bytes,
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(64).list().ofMaxSize(3))
                .as((change, extra) -> message -> {
                    List<ByteBuffer> outOfBand = new ArrayList<>();
                    for (ByteBuffer buffer : message.outOfBand()) {
                        outOfBand.add(ByteBuffer.wrap(change.apply(copy(buffer))));
                    }
                    for (byte[] added : extra) {
                        outOfBand.add(ByteBuffer.wrap(added));
                    }
                    return new InboundMessage(message.kind(), message.id(), message.headers(),
                            ByteBuffer.wrap(change.apply(copy(message.inBand()))), outOfBand, message.flags());
                });
        Arbitrary<UnaryOperator<InboundMessage>> header = Combinators.combine(
                        Arbitraries.oneOf(Arbitraries.of(STEERING_HEADERS), Arbitraries.strings().ofMinLength(1).ofMaxLength(12)),
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(40), bytes, Arbitraries.of(true, false))
                .as((name, value, change, alsoBody) -> message -> {
                    Map<String, byte[]> raw = new LinkedHashMap<>(message.headers().raw());
                    raw.put(name, value);
                    byte[] inBand = copy(message.inBand());
                    return new InboundMessage(message.kind(), message.id(), CallHeaders.ofRaw(raw),
                            ByteBuffer.wrap(alsoBody ? change.apply(inBand) : inBand), message.outOfBand(),
                            message.flags());
                });
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, body), net.jqwik.api.Tuple.of(1, random),
                net.jqwik.api.Tuple.of(1, buffers), net.jqwik.api.Tuple.of(2, header));
    }

    private static InboundMessage withBody(InboundMessage message, byte[] body) {
        return new InboundMessage(message.kind(), message.id(), message.headers(), ByteBuffer.wrap(body),
                message.outOfBand(), message.flags());
    }

    private static byte[] copy(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
