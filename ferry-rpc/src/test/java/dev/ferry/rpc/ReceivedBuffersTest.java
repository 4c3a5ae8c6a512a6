package dev.ferry.rpc;

import dev.ferry.rpc.internal.wire.Loans;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Releasing received buffers early, end to end over TCP (where large buffers arrive in the receive pool). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReceivedBuffersTest {
    private static final int SIZE = 3 << 20;
    private LocalCluster cluster;

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(2, BackendType.NETTY, b -> b.transport(TransportTuning.defaults().withUnixSockets(false)));
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    /** Returns what it received and gives its memory back once the reply is written. */
    public static ByteBuffer echoReleased(ByteBuffer t) {
        return ReceivedBuffers.releaseAfterSend(t);
    }

    /** Releases what it received, then tries to return it. */
    public static ByteBuffer releaseThenReturn(ByteBuffer t) {
        if (!ReceivedBuffers.release(t)) {
            throw new IllegalStateException("not received memory");
        }
        return t;
    }

    public static ByteBuffer echo(ByteBuffer t) {
        return t;
    }

    @Test
    void aReceivedReplyCanBeReleasedOnceAndIsUnusableAfterwards() {
        assumeTrue(Loans.available());
        ByteBuffer sent = filled(1);
        ByteBuffer reply = cluster.agent(0).rpcSync("worker1", ReceivedBuffersTest::echo, sent);
        assertThat(reply).isEqualTo(sent);
        assertThat(ReceivedBuffers.release(reply)).isTrue();
        assertThat(ReceivedBuffers.release(reply)).isFalse();
        assertThatThrownBy(() -> reply.get(0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", ReceivedBuffersTest::echo, reply))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.ILLEGAL_STATE));
        // The agent works on: the next call reuses the memory.
        assertThat(cluster.agent(0).rpcSync("worker1", ReceivedBuffersTest::echo, sent)).isEqualTo(sent);
        assertThat(ReceivedBuffers.release(sent)).isFalse(); // the caller's own buffer
    }

    @Test
    void repliesReleasedAfterSendingAreIntactWhileLaterRequestsReuseTheirMemory() {
        assumeTrue(Loans.available());
        List<ByteBuffer> sent = new ArrayList<>();
        List<RpcFuture<ByteBuffer>> replies = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ByteBuffer t = filled(i + 10);
            sent.add(t);
            replies.add(cluster.agent(0).rpcAsync("worker1", ReceivedBuffersTest::echoReleased, t));
        }
        for (int i = 0; i < replies.size(); i++) {
            ByteBuffer reply = replies.get(i).await();
            assertThat(reply).as("reply %d", i).isEqualTo(sent.get(i));
            assertThat(ReceivedBuffers.release(reply)).isTrue();
        }
    }

    @Test
    void aBufferReleasedBeforeItIsReturnedFailsTheCallClearly() {
        assumeTrue(Loans.available());
        ByteBuffer sent = filled(3);
        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", ReceivedBuffersTest::releaseThenReturn, sent))
                .isInstanceOf(RpcException.class).hasMessageContaining("release");
        assertThat(cluster.agent(0).rpcSync("worker1", ReceivedBuffersTest::echo, sent)).isEqualTo(sent);
    }

    private static ByteBuffer filled(int seed) {
        ByteBuffer t = ByteBuffer.allocateDirect(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < SIZE; i += 4) {
            t.putInt(i, i * 31 + seed);
        }
        return t;
    }
}
