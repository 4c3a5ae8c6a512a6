package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default backend's transport seen from the API: a small call is not held up by a large one,
 * a flood against a slow worker keeps memory bounded (on the in-process transport too), and peers on this host talk over a Unix
 * socket unless TCP is forced.
 */
@Timeout(120)
class TransportFlowTest {
    private static final long MIB = 1 << 20;

    /** Handlers of the flood test wait on this. */
    static volatile CountDownLatch gate = new CountDownLatch(0);

    public static int hold(byte[] data) throws InterruptedException {
        if (!gate.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("gate never opened");
        }
        return data.length;
    }

    @Test
    void aSmallCallCompletesWhileALargeTransferIsInFlight() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent w0 = cluster.agent(0);
            assertThat(w0.rpcSync("worker1", Ops::noop, 1)).isEqualTo(1);
            float[] big = new float[(int) (64 * MIB / 4)];
            for (int i = 0; i < big.length; i += 4096) {
                big[i] = i;
            }
            RpcFuture<Object> echo = w0.rpcAsync("worker1", Ops::identity, big);
            assertThat(w0.rpcSync("worker1", Ops::noop, 7)).isEqualTo(7);
            assertThat(echo.done()).as("the 64 MiB echo is still in flight when the small call returns").isFalse();
            assertThat((float[]) echo.await()).isEqualTo(big);
        }
    }

    static List<BackendType> backends() {
        return List.of(BackendType.NETTY, BackendType.IN_PROCESS);
    }

    @ParameterizedTest
    @MethodSource("backends")
    void aFloodAgainstASlowWorkerKeepsMemoryBoundedAndThenCompletes(BackendType backend) throws Exception {
        int calls = 20_000;
        byte[] payload = new byte[64 * 1024];
        gate = new CountDownLatch(1);
        try (LocalCluster cluster = LocalCluster.start(2, backend)) {
            RpcAgent w0 = cluster.agent(0);
            RpcAgent w1 = cluster.agent(1);
            assertThat(w0.rpcSync("worker1", Ops::noop, 1)).isEqualTo(1);
            long heapBefore = usedHeapAfterGc();
            List<RpcFuture<Integer>> futures = new ArrayList<>(calls);
            Thread issuer = Thread.ofPlatform().name("flood").start(() -> {
                for (int i = 0; i < calls; i++) {
                    futures.add(w0.rpcAsync("worker1", TransportFlowTest::hold, payload));
                }
            });
            // Saturated: the receiver stopped reading and the sender waits for room in its queue.
            until("the receiver pauses and the sender waits", () ->
                    w1.getDebugInfo().get("agent.paused_connections").equals("1")
                            && issuer.getState() == Thread.State.TIMED_WAITING);
            long heapGrowth = usedHeapAfterGc() - heapBefore;
            long direct = usedDirectMemory();
            System.out.printf("%s flood saturated: heap growth %d MiB, direct %d MiB, receiver queued %s%n",
                    backend, heapGrowth / MIB, direct / MIB, w1.getDebugInfo().get("agent.server_queued_requests"));
            // Unbounded, 20,000 x 64 KiB would be 1.25 GiB queued at the sender and as much at the receiver.
            assertThat(heapGrowth).as("heap growth (bytes) under the flood").isLessThan(400 * MIB);
            assertThat(direct).as("direct memory (bytes) under the flood").isLessThan(256 * MIB);
            assertThat(issuer.isAlive()).isTrue();

            gate.countDown();
            issuer.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(issuer.isAlive()).isFalse();
            assertThat(futures).hasSize(calls);
            for (RpcFuture<Integer> future : futures) {
                assertThat(future.await()).isEqualTo(payload.length);
            }
            assertThat(w1.getDebugInfo().get("agent.paused_connections")).isEqualTo("0");
        } finally {
            gate.countDown();
        }
    }

    private static final boolean SHM_AVAILABLE = java.nio.file.Files.isDirectory(java.nio.file.Path.of("/dev/shm"))
            && java.nio.file.Files.isWritable(java.nio.file.Path.of("/dev/shm"));

    @Test
    void largeBuffersBetweenPeersOnThisHostGoThroughSharedMemory() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Epoll.isAvailable() && SHM_AVAILABLE);
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.transport(TransportTuning.defaults()))) {
            java.nio.ByteBuffer sent = java.nio.ByteBuffer.allocateDirect(3 << 20);
            for (int i = 0; sent.hasRemaining(); i++) {
                sent.put((byte) (i * 13));
            }
            sent.flip();
            // A first round trip negotiates shared memory both ways (before it, buffers take the socket).
            cluster.agent(0).rpcSync("worker1", Ops::noop, 1);
            for (int call = 0; call < 3; call++) {
                Object back = cluster.agent(0).rpcSync("worker1", Ops::identity, sent);
                assertThat(back).isEqualTo(sent).isNotSameAs(sent);
            }
            // Three buffers each way through shared memory, none over the socket.
            for (int rank = 0; rank < 2; rank++) {
                java.util.Map<String, String> info = cluster.agent(rank).getDebugInfo();
                assertThat(info).containsEntry("transport.shm.sent_buffers", "3")
                        .containsEntry("transport.shm.received_buffers", "3")
                        .containsEntry("transport.shm.fallbacks", "0");
            }
        }
    }

    @Test
    void peersOnThisHostUseAUnixSocketWhenEnabledElseTcp() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.transport(TransportTuning.defaults()))) {
            cluster.agent(0).rpcSync("worker1", Ops::noop, 1);
            // One round trip negotiates shared memory for large buffers (on by default).
            assertThat(cluster.agent(0).getDebugInfo().get("agent.peer.worker1.transport"))
                    .isEqualTo(Epoll.isAvailable() ? SHM_AVAILABLE ? "uds+shm" : "uds" : "tcp");
        }
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.transport(TransportTuning.defaults().withSharedMemoryBytes(0)))) {
            cluster.agent(0).rpcSync("worker1", Ops::noop, 1);
            assertThat(cluster.agent(0).getDebugInfo().get("agent.peer.worker1.transport"))
                    .isEqualTo(Epoll.isAvailable() ? "uds" : "tcp");
        }
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.transport(TransportTuning.defaults().withUnixSockets(false)))) {
            cluster.agent(0).rpcSync("worker1", Ops::noop, 1);
            assertThat(cluster.agent(0).getDebugInfo().get("agent.peer.worker1.transport")).isEqualTo("tcp");
        }
    }

    @Test
    void spinningEventLoopsAndWaitsDeliverEveryReply() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.transport(TransportTuning.defaults().withSpinTime(java.time.Duration.ofNanos(50_000))))) {
            RpcAgent w0 = cluster.agent(0);
            for (int i = 0; i < 2_000; i++) {
                assertThat(w0.rpcSync("worker1", Ops::noop, i)).isEqualTo(i);
            }
        }
    }

    private static long usedHeapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Netty's pooled memory (reserved, so an upper bound) plus the JDK's direct buffers. */
    private static long usedDirectMemory() {
        long netty = ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider provider
                ? provider.metric().usedDirectMemory() : 0;
        long jdk = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                jdk = pool.getMemoryUsed();
            }
        }
        return Math.max(netty, jdk);
    }

    private static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not true within 60 s: " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
