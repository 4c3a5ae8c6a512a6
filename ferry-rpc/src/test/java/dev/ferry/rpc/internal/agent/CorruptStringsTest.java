package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.transport.TransportFactory;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.policy.app.Greeter;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;
import dev.ferry.rpc.testing.LocalCluster;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A string whose header a member forged with coder 3 (the two coder bits of Fory's string header:
 * 0 Latin-1, 1 UTF-16, 2 UTF-8; 3 no encoder writes, and Fory 1.6's uncompressed reader made of it a
 * {@code String} whose {@code length()} disagrees with its characters) is refused while its message
 * is decoded, wherever it sits: the call fails {@code SERIALIZATION_ERROR} within its timeout, no
 * function sees the string, and the worker goes on.
 *
 * <p>Each worker's transport forges the header of {@link #FORGED}, Latin-1 as every encoder writes
 * it, in what it receives (calls, answers): the messages are otherwise what Ferry sent.
 */
@Timeout(120)
class CorruptStringsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** The string whose header is forged: under 32 characters, so that its header is one byte. */
    private static final String FORGED = "a forged header";
    private static final byte[] LATIN1 = FORGED.getBytes(StandardCharsets.ISO_8859_1);
    /** Its header as Fory writes it: the byte count, then coder 0 (Latin-1) in the low two bits. */
    private static final byte HEADER = (byte) (LATIN1.length << 2);

    private static TcpStoreServer store;
    private static RpcAgent caller;
    private static RpcAgent callee;
    private static final RewritingTransport[] transports = new RewritingTransport[2];
    /** How many strings the transports forged: a test that forged none proves nothing. */
    private static final AtomicInteger forged = new AtomicInteger();

    /** A value whose component is a string (Fory generates its serializer). */
    public record Note(int id, String text) {
    }

    @BeforeAll
    static void start() throws Exception {
        store = TcpStoreServer.start("127.0.0.1", 0);
        int port = store.port();
        RpcBackendOptions options = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:" + port)
                .rendezvousTimeout(Duration.ofSeconds(60)).applicationPackage(LocalCluster.TEST_CODE).build();
        CompletableFuture<RpcAgent> one = CompletableFuture.supplyAsync(() -> start(1, options, port));
        caller = start(0, options, port);
        callee = one.get(60, TimeUnit.SECONDS);
        callee.register("identity", Ops::identity);
        for (RewritingTransport transport : transports) {
            transport.calls = CorruptStringsTest::forge;
            transport.messages = CorruptStringsTest::forge;
        }
    }

    private static RpcAgent start(int rank, RpcBackendOptions options, int port) {
        TransportFactory rewriting = (opts, name, threads) -> transports[rank] =
                new RewritingTransport(TransportFactory.NETTY.create(opts, name, threads));
        TcpStore client = TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60));
        return DefaultRpcAgent.start(new WorkerInfo("worker" + rank, rank), 2, options, client, client, rewriting);
    }

    @AfterAll
    static void stop() {
        for (RpcAgent agent : new RpcAgent[] {caller, callee}) {
            if (agent != null) {
                agent.shutdown(false, Duration.ZERO);
            }
        }
        store.close();
    }

    @Test
    void aTopLevelArgument() {
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::identity, FORGED));
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::concat, "x", FORGED));
    }

    @Test
    void aRecordComponent() {
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::identity, new Note(7, FORGED)));
    }

    @Test
    void anElementOfACollectionOrMap() {
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::lengths, List.of("x", FORGED)));
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT)
                .rpcSync(Ops::identity, new ArrayList<>(List.of(new Note(1, FORGED)))));
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::identity, new HashMap<>(Map.of(FORGED, 1))));
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::identity, Map.of(1, FORGED)));
    }

    @Test
    void anElementOfAnArray() {
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::identity, (Object) new String[] {"x", FORGED}));
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::identity, new Object[] {1, FORGED}));
    }

    @Test
    void anAnswer() {
        // the callee makes the string; its answer reaches the caller forged
        refused(() -> caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::concat, "a forged ", "header"));
    }

    @Test
    void messagesOfRRefs() {
        // the call that creates the RRef's value on its owner
        refused(() -> {
            try (RRef<Object> created = caller.remote("worker1", Ops::identity, FORGED)) {
                created.toHere(TIMEOUT);
            }
        });
        // the owner's answer to a fetch
        refused(() -> {
            try (RRef<String> fetched = caller.remote("worker1", Ops::concat, "a forged ", "header")) {
                fetched.toHere(TIMEOUT);
            }
        });
        // a proxy's call of the owner's value (one of Ferry's system calls)
        try (RRef<Greeter> greeter = caller.remote("worker1", Greeter::create, "hi")) {
            refused(() -> greeter.proxy(Greeter.class, TIMEOUT).greet(FORGED));
            assertThat(greeter.proxy(Greeter.class, TIMEOUT).greet("you")).isEqualTo("hi you");
        }
    }

    @Test
    void aCallByName() {
        // a system call: the name and the values travel as SystemCalls.callByName's arguments
        refused(() -> caller.rpcSync("worker1", "identity", List.of(FORGED), Map.of()));
        refused(() -> caller.rpcSync("worker1", "identity", List.of(), Map.of("value", FORGED)));
    }

    /**
     * {@code call} fails SERIALIZATION_ERROR saying why, within its timeout (a lost call would be
     * TIMEOUT), after a string was forged; and the callee answers the next call.
     */
    private static void refused(ThrowingCallable call) {
        int before = forged.get();
        assertThatThrownBy(call).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).as(e.toString()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR);
            assertThat(e).hasMessageContaining("coder");
        });
        assertThat(forged.get()).as("strings forged").isGreaterThan(before);
        assertThat(caller.to("worker1").withTimeout(TIMEOUT).rpcSync(Ops::add, 2, 3)).as("the worker goes on").isEqualTo(5);
    }

    /** {@code message} with each Latin-1 {@link #FORGED} given coder 3; the message itself if it holds none. */
    private static InboundMessage forge(InboundMessage message) {
        byte[] bytes = new byte[message.inBand().remaining()];
        message.inBand().duplicate().get(bytes);
        boolean changed = false;
        for (int i = 1; i + LATIN1.length <= bytes.length; i++) {
            if (bytes[i - 1] == HEADER && java.util.Arrays.equals(bytes, i, i + LATIN1.length, LATIN1, 0, LATIN1.length)) {
                bytes[i - 1] |= 0b11;
                forged.incrementAndGet();
                changed = true;
            }
        }
        return !changed ? message : new InboundMessage(message.kind(), message.id(), message.headers(),
                ByteBuffer.wrap(bytes), message.outOfBand(), message.flags(), message.remainingNanos());
    }
}
