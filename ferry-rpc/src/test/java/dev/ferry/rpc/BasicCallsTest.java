package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Runs on the default backend; {@link InProcessBasicCallsTest} runs the same on the in-process one. */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BasicCallsTest {
    private LocalCluster cluster;

    record Point(int x, int y) {
    }

    enum Color { RED, GREEN }

    BackendType backend() {
        return BackendType.NETTY;
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(3, backend());
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @Test
    void rpcSyncByNameRankAndWorkerInfo() {
        RpcAgent w0 = cluster.agent(0);
        assertThat(w0.rpcSync("worker1", Ops::add, 3, 4)).isEqualTo(7);
        assertThat(w0.to(2).rpcSync(Ops::add, 1, 1)).isEqualTo(2);
        assertThat(w0.to(w0.getWorkerInfo("worker1")).rpcSync(Ops::concat, "a", "b")).isEqualTo("ab");
    }

    @Test
    void rpcAsyncReturnsFuture() {
        RpcFuture<Integer> future = cluster.agent(1).rpcAsync("worker2", Ops::add, 20, 22);
        assertThat(future.await()).isEqualTo(42);
        assertThat(future.done()).isTrue();
    }

    @Test
    void workerCanCallItself() {
        assertThat(cluster.agent(0).rpcSync("worker0", Ops::whoAmI)).isEqualTo("worker0");
        assertThat(cluster.agent(0).rpcSync("worker2", Ops::whoAmI)).isEqualTo("worker2");
    }

    @Test
    void valuesOfManyKindsRoundTrip() {
        RpcAgent w0 = cluster.agent(0);
        List<Object> values = Arrays.asList(null, 1, 2L, 3.5, 'c', true, "text", new Point(1, 2), Color.GREEN,
                List.of(1, 2, 3), Map.of("a", 1), new int[] {1, 2, 3}, new String[] {"x", null},
                new ArrayList<>(List.of(new Point(3, 4))));
        for (Object value : values) {
            Object back = w0.rpcSync("worker1", Ops::identity, value);
            if (value instanceof int[] ints) {
                assertThat((int[]) back).containsExactly(ints);
            } else if (value instanceof String[] strings) {
                assertThat((String[]) back).containsExactly(strings);
            } else {
                assertThat(back).isEqualTo(value);
            }
        }
    }

    @Test
    void largeArraysTravelOutOfBand() {
        float[] big = new float[1 << 20];
        for (int i = 0; i < big.length; i++) {
            big[i] = i * 0.5f;
        }
        float[] back = (float[]) cluster.agent(0).rpcSync("worker1", Ops::identity, (Object) big);
        assertThat(back).isEqualTo(big); // containsExactly is quadratic on a million elements
        byte[] bytes = new byte[3 << 20];
        bytes[bytes.length - 1] = 7;
        byte[] bytesBack = (byte[]) cluster.agent(0).rpcSync("worker2", Ops::identity, (Object) bytes);
        assertThat(bytesBack).hasSize(bytes.length).endsWith((byte) 7);
    }

    @Test
    void largeByteBuffersTravelWithoutCopiesAndKeepTheirOrder() {
        for (int size : new int[] {100, 40 << 10, 3 << 20}) {
            ByteBuffer direct = ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer heap = ByteBuffer.allocate(size);
            for (int i = 0; i < size; i++) {
                direct.put(i, (byte) (i * 31));
                heap.put(i, (byte) (i * 7));
            }
            for (ByteBuffer sent : List.of(direct, heap)) {
                ByteBuffer back = (ByteBuffer) cluster.agent(0).rpcSync("worker1", Ops::identity, (Object) sent);
                assertThat(back).isNotSameAs(sent).isEqualTo(sent);
                assertThat(back.order()).isEqualTo(sent.order());
                assertThat(sent.position()).isZero(); // sending does not move the caller's buffer
            }
        }
    }

    @Test
    void lambdasWithCapturedValues() {
        int offset = 100;
        RpcFunction1<Integer, Integer> addOffset = x -> x + offset;
        assertThat(cluster.agent(0).rpcSync("worker1", addOffset, 5)).isEqualTo(105);
    }

    @Test
    void collectionsAsArguments() {
        assertThat(cluster.agent(2).rpcSync("worker0", Ops::sum, List.of(1, 2, 3, 4))).isEqualTo(10);
        assertThat(cluster.agent(2).rpcSync("worker0", Ops::lengths, List.of("ab", "c")))
                .isEqualTo(Map.of("ab", 2, "c", 1));
    }

    @Test
    void remoteExceptionCarriesClassMessageStackAndWorker() {
        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::fail, "Expected error"))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
                    assertThat(e.remoteClassName()).isEqualTo(IllegalArgumentException.class.getName());
                    assertThat(e.remoteMessage()).isEqualTo("Expected error");
                    assertThat(e.workerName()).isEqualTo("worker1");
                    assertThat(e).hasMessageContaining("Expected error").hasMessageContaining("worker1");
                    Throwable remote = e.getCause().getCause();
                    assertThat(remote).isInstanceOf(RemoteStackTrace.class);
                    assertThat(remote.getStackTrace()).anyMatch(f -> f.getMethodName().equals("fail")
                            && f.getClassName().equals(Ops.class.getName()));
                });
    }

    @Test
    void remoteCauseChainIsKept() {
        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker2", Ops::failNested, "x"))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    RemoteStackTrace remote = (RemoteStackTrace) e.getCause().getCause();
                    assertThat(remote.remoteClassName()).isEqualTo(RuntimeException.class.getName());
                    assertThat(remote.getCause()).isInstanceOf(RemoteStackTrace.class)
                            .hasMessage("inner: x");
                    assertThat(((RemoteStackTrace) remote.getCause()).remoteClassName())
                            .isEqualTo(IllegalStateException.class.getName());
                });
    }

    @Test
    void nestedCallFromHandler() {
        assertThat(cluster.agent(0).rpcSync("worker1", Ops::relay, "worker2", 9)).isEqualTo(9);
    }

    @Test
    void workerInfos() {
        RpcAgent w1 = cluster.agent(1);
        assertThat(w1.getWorkerInfo()).isEqualTo(new WorkerInfo("worker1", 1));
        assertThat(w1.getWorkerInfo("worker2").id()).isEqualTo(2);
        assertThat(w1.getWorkerInfo(0).name()).isEqualTo("worker0");
        assertThat(w1.getWorkerInfos()).extracting(WorkerInfo::name).containsExactly("worker0", "worker1", "worker2");
        assertThatThrownBy(() -> w1.getWorkerInfo("nobody")).isInstanceOf(RpcException.class)
                .hasMessageContaining("could not find destination name nobody");
        assertThatThrownBy(() -> w1.getWorkerInfo(3)).isInstanceOf(RpcException.class)
                .hasMessageContaining("could not find destination id 3");
    }

    @Test
    void allGatherReturnsEveryWorkersValue() {
        List<Map<String, Object>> results = cluster.onEach(a -> a.allGather(a.getWorkerInfo().id() * 10));
        for (Map<String, Object> result : results) {
            assertThat(result).containsExactlyInAnyOrderEntriesOf(Map.of("worker0", 0, "worker1", 10, "worker2", 20));
        }
        cluster.onEach(a -> {
            a.barrier();
            return null;
        });
    }

    @Test
    void timeoutNamesDestinationAndDuration() throws Exception {
        RpcFuture<Long> slow = cluster.agent(0).to("worker1").withTimeout(Duration.ofMillis(200))
                .rpcAsync(Ops::sleepMillis, 5_000L);
        assertThatThrownBy(slow::await).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT);
            assertThat(e).hasMessageContaining("200 ms").hasMessageContaining("worker1");
        });
        // the worker stays usable, and the late reply is dropped without harm
        assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
    }
}
