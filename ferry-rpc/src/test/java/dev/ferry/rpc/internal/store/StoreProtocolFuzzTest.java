package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.BlockingAuthExchange;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreOptions;
import dev.ferry.rpc.testing.ByteMutations;
import dev.ferry.rpc.testing.WarmAllocation;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * Fuzzes rank 0's store server over real sockets on loopback, with and without a token: random
 * bytes and mutated HELLOs from strangers (before the handshake), and random and mutated requests
 * from clients that completed it (bit flips, overwrites, truncations, insertions, length and count
 * fields set to hostile values, unknown opcodes, wild timeouts). Each try sends its bytes, half-closes
 * the socket and reads whatever comes back until the server closes, then checks:
 * <ul>
 *   <li>whatever the server answered is well-formed frames, each error naming an
 *       {@link RpcException.Code} and a message; a stranger gets at most a few hundred bytes;</li>
 *   <li>the server closed that connection (no try waits for the read timeout: no hang);</li>
 *   <li>no thread of the server died of an exception, and the server still serves another client,
 *       connected throughout;</li>
 *   <li>the whole JVM allocated at most {@value #FIXED_ALLOCATION} bytes plus
 *       {@value #ALLOCATION_PER_BYTE} per byte sent during the try (a claimed length honoured would be
 *       up to 64 MiB), warm: a try over it is run again and counted then ({@link WarmAllocation}; the
 *       first try in a JVM allocates ~3.8 MB).</li>
 * </ul>
 *
 * <p>The suite runs 1,000 tries per property. Longer: {@code ./ferry fuzz 100000} (every fuzzer), or
 * {@code -Djqwik.tries.default=N} on {@code -Dtest=StoreProtocolFuzzTest}.
 */
class StoreProtocolFuzzTest {
    private static final String TOKEN = "a-token-of-the-fuzzed-group-0123";
    private static final PeerAuthentication AUTH = PeerAuthentication.of(TOKEN, Duration.ofSeconds(10));
    /** What a try may allocate in the whole JVM whatever it sends: sockets, frames, the check's own calls. */
    private static final long FIXED_ALLOCATION = 4 << 20;
    private static final long ALLOCATION_PER_BYTE = 64;
    /** The most a stranger is told before its connection closes: a HELLO's answer and the token's hello, or an error. */
    private static final int MOST_TO_A_STRANGER = 512;
    private static final int READ_TIMEOUT_MILLIS = 15_000;

    private static final Queue<Throwable> died = new ConcurrentLinkedQueue<>();
    private static Thread.UncaughtExceptionHandler previousHandler;
    private static TcpStore open;
    private static TcpStore authenticated;

    @BeforeContainer
    static void startServers() {
        previousHandler = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> died.add(
                new AssertionError("thread " + thread.getName() + " died", e)));
        open = TcpStore.create(TcpStoreOptions.builder().port(0).server(true).timeout(Duration.ofSeconds(20)).build());
        authenticated = TcpStore.create(TcpStoreOptions.builder().port(0).server(true).authToken(TOKEN)
                .timeout(Duration.ofSeconds(20)).build());
    }

    @AfterContainer
    static void stopServers() {
        try {
            open.close();
            authenticated.close();
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previousHandler);
        }
    }

    @AfterProperty
    void everyConnectionButTheCheckersWentAway() {
        for (TcpStore store : List.of(open, authenticated)) {
            var server = store.server().orElseThrow();
            await().atMost(Duration.ofSeconds(30)).until(() -> server.pendingHandshakes() == 0
                    && server.activeConnections() == 1 && server.parkedRequests() == 0);
        }
        assertThat(died).isEmpty();
    }

    @Property(shrinking = ShrinkingMode.BOUNDED)
    void whatAStrangerSendsClosesItsConnection(@ForAll("strangers") byte[] bytes, @ForAll boolean withToken)
            throws Exception {
        TcpStore store = withToken ? authenticated : open;
        theServerGoesOn(store, bytes.length, () -> {
            byte[] answer;
            try (Socket socket = connect(store)) {
                answer = sendAndReadUntilClosed(socket, bytes);
            }
            assertThat(answer.length).as("bytes a stranger was told").isLessThanOrEqualTo(MOST_TO_A_STRANGER);
        });
    }

    @Property(shrinking = ShrinkingMode.BOUNDED)
    void whatAMemberSendsIsAnsweredClearlyOrClosesItsConnection(@ForAll("requests") byte[] bytes,
                                                                @ForAll boolean withToken) throws Exception {
        TcpStore store = withToken ? authenticated : open;
        theServerGoesOn(store, bytes.length, () -> {
            try (Socket socket = connect(store)) {
                handshake(socket, withToken);
                assertWellFormedAnswers(sendAndReadUntilClosed(socket, bytes));
            }
        });
    }

    private static Socket connect(TcpStore store) throws IOException {
        Socket socket = new Socket("127.0.0.1", store.server().orElseThrow().port());
        socket.setSoTimeout(READ_TIMEOUT_MILLIS);
        return socket;
    }

    private static void handshake(Socket socket, boolean withToken) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(FrameBuilder.start(0, StoreProtocol.OP_HELLO).putInt(StoreProtocol.MAGIC)
                .putShort(StoreProtocol.VERSION).toByteArray());
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        Frame reply = Frame.read(in, StoreProtocol.MAX_HELLO_BYTES);
        assertThat(reply.type()).isEqualTo(StoreProtocol.STATUS_OK);
        if (withToken) {
            BlockingAuthExchange.run(in, out, AUTH, false, "the fuzzed store");
        }
    }

    /** Sends {@code bytes}, half-closes, and reads until the server closes (a reset counts as closed). */
    private static byte[] sendAndReadUntilClosed(Socket socket, byte[] bytes) throws IOException {
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        try {
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
            socket.shutdownOutput();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                answer.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException e) {
            fail("the server neither answered nor closed within " + READ_TIMEOUT_MILLIS + " ms after "
                    + bytes.length + " bytes: " + hex(bytes));
        } catch (SocketException e) {
            // reset: the server closed with bytes of ours unread (it dropped the connection mid-input)
        }
        return answer.toByteArray();
    }

    /** Every answer is a whole frame (a last one may be cut by a reset) with a known status; errors say what. */
    private static void assertWellFormedAnswers(byte[] answers) throws IOException {
        DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(answers));
        while (true) {
            Frame frame;
            try {
                frame = Frame.read(in, StoreProtocol.MAX_FRAME_BYTES);
            } catch (EOFException end) {
                return;
            }
            assertThat(frame.type()).as("status").isBetween(StoreProtocol.STATUS_OK, StoreProtocol.STATUS_ERROR);
            if (frame.type() == StoreProtocol.STATUS_ERROR) {
                String code = frame.body().readString();
                String message = frame.body().readString();
                assertThat(Arrays.stream(RpcException.Code.values()).map(Enum::name)).contains(code);
                assertThat(message).isNotBlank();
            }
        }
    }

    /**
     * Runs {@code attempt}, then checks that the server still serves the connected client and that
     * the whole JVM allocated within the bound for both, warm ({@link WarmAllocation}: a try over it
     * is run again and counted then).
     */
    private static void theServerGoesOn(TcpStore store, int sent, WarmAllocation.Try attempt) throws Exception {
        WarmAllocation.Allocation allocation = WarmAllocation.of(() -> {
            attempt.run();
            String key = "fuzz/checked";
            store.set(key, "fine".getBytes(StandardCharsets.UTF_8));
            assertThat(store.get(key)).asString(StandardCharsets.UTF_8).isEqualTo("fine");
        }, () -> FIXED_ALLOCATION + ALLOCATION_PER_BYTE * sent);
        Statistics.label("allocation").collect(allocation.runs() == 1 ? "within the bound" : "counted on a second run");
        assertThat(allocation.bytes()).as("bytes the JVM allocated for a try of %d bytes", sent)
                .isLessThanOrEqualTo(FIXED_ALLOCATION + ALLOCATION_PER_BYTE * sent);
        assertThat(died).isEmpty();
    }

    private static String hex(byte[] bytes) {
        return java.util.HexFormat.of().formatHex(bytes, 0, Math.min(bytes.length, 256));
    }

    // ---------------------------------------------------------------- inputs

    @Provide
    Arbitrary<byte[]> strangers() {
        Arbitrary<byte[]> hello = Combinators.combine(Arbitraries.integers(),
                Arbitraries.of(StoreProtocol.MAGIC, StoreProtocol.MAGIC, 0),
                Arbitraries.of(StoreProtocol.VERSION, StoreProtocol.VERSION, (short) 2))
                .as((id, magic, version) -> FrameBuilder.start(id, StoreProtocol.OP_HELLO).putInt(magic)
                        .putShort(version).toByteArray());
        // a HELLO, then what an impostor would send for the token's exchange, or a request
        Arbitrary<byte[]> helloThenMore = Combinators.combine(hello, Arbitraries.oneOf(
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(80), validRequest()))
                .as(StoreProtocolFuzzTest::concat);
        return Arbitraries.oneOf(
                Arbitraries.bytes().array(byte[].class).ofMaxSize(256),
                ByteMutations.mutated(Arbitraries.oneOf(hello, helloThenMore), ByteMutations.any(), 3));
    }

    @Provide
    Arbitrary<byte[]> requests() {
        Arbitrary<byte[]> several = validRequest().list().ofMinSize(1).ofMaxSize(4)
                .map(list -> list.stream().reduce(new byte[0], StoreProtocolFuzzTest::concat));
        Arbitrary<byte[]> unknownOp = Combinators.combine(Arbitraries.integers(), Arbitraries.bytes(),
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(32))
                .as((id, op, body) -> FrameBuilder.start(id, op).putBytes(body).toByteArray());
        return Arbitraries.oneOf(
                Arbitraries.bytes().array(byte[].class).ofMaxSize(256),
                unknownOp,
                ByteMutations.mutated(several, ByteMutations.any(), 4));
    }

    /** One request of each kind, with keys of the fuzz's own and timeouts of any sign and size. */
    private static Arbitrary<byte[]> validRequest() {
        Arbitrary<String> key = Arbitraries.strings().ofMaxLength(12).map(k -> "fuzz/" + k);
        Arbitrary<byte[]> value = Arbitraries.bytes().array(byte[].class).ofMaxSize(32);
        Arbitrary<Long> timeout = Arbitraries.oneOf(Arbitraries.longs().between(0, 50),
                Arbitraries.of(Long.MAX_VALUE, Long.MIN_VALUE, -1L), Arbitraries.longs());
        Arbitrary<List<String>> keys = key.list().ofMaxSize(3);
        Arbitrary<StoreRequest> request = Arbitraries.oneOf(
                Combinators.combine(key, value).as(StoreRequest.Set::new),
                Combinators.combine(key, timeout).as(StoreRequest.Get::new),
                Combinators.combine(key, Arbitraries.longs()).as(StoreRequest.Add::new),
                Combinators.combine(key, value, value).as(StoreRequest.CompareSet::new),
                Combinators.combine(keys, timeout).as(StoreRequest.Wait::new),
                keys.map(StoreRequest.Check::new),
                key.map(StoreRequest.Delete::new),
                Arbitraries.just(new StoreRequest.NumKeys()),
                Arbitraries.integers().map(StoreRequest.Cancel::new));
        return Combinators.combine(request, Arbitraries.integers().between(1, 1000)).as(StoreRequest::encode);
    }

    private static byte[] concat(byte[] first, byte[] second) {
        return ByteBuffer.allocate(first.length + second.length).put(first).put(second).array();
    }
}
