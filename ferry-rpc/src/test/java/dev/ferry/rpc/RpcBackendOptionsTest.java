package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The default backend's options (PyTorch's TensorPipeRpcBackendOptions), device maps included. */
@Timeout(60)
class RpcBackendOptionsTest {
    @TempDir
    Path dir;

    @Test
    void defaultsAreTorchs() {
        RpcBackendOptions options = RpcBackendOptions.defaults();
        assertThat(options.numWorkerThreads()).isEqualTo(16);
        assertThat(options.rpcTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(options.initMethod()).isEqualTo("env://");
        assertThat(options.rendezvousTimeout()).isEqualTo(options.rpcTimeout());
        assertThat(options.deviceMaps()).isEmpty();
        assertThat(options.devices()).isEmpty();
        assertThat(options).isInstanceOf(BackendOptions.class);
    }

    @Test
    void badValuesAreRejectedWhenSet() {
        assertThatThrownBy(() -> RpcBackendOptions.builder().numWorkerThreads(0))
                .isInstanceOf(RpcException.class).hasMessageContaining("numWorkerThreads must be at least 1, got 0");
        assertThatThrownBy(() -> RpcBackendOptions.builder().rpcTimeout(Duration.ofSeconds(-5)))
                .isInstanceOf(RpcException.class).hasMessageContaining("rpcTimeout must not be negative");
    }

    @Test
    void theTransportTuningIsKeptByToBuilderAndItsCopiesKeepTheOtherSettings() {
        assertThat(RpcBackendOptions.defaults().transport().closeTimeout()).isEqualTo(Duration.ofSeconds(10));
        TransportTuning tuning = TransportTuning.defaults().withCloseTimeout(Duration.ofMillis(250)).withSyncLanes(2);
        RpcBackendOptions options = RpcBackendOptions.builder().transport(tuning).build();
        assertThat(options.toBuilder().build().transport()).isSameAs(tuning);
        assertThat(tuning.withUnixSockets(false).closeTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(tuning.withUnixSockets(false).syncLanes()).isEqualTo(2);
        assertThat(TransportTuning.defaults().syncLanes()).isEqualTo(4);
        assertThat(TransportTuning.defaults().withCloseTimeout(Duration.ZERO).closeTimeout()).isZero();
        assertThatThrownBy(() -> TransportTuning.defaults().withCloseTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(RpcException.class).hasMessageContaining("closeTimeout must not be negative");
    }

    @Test
    void theCpuMapsToItself() {
        RpcBackendOptions options = RpcBackendOptions.builder()
                .setDeviceMap("worker1", Map.of("cpu", "cpu"))
                .setDeviceMap("worker1", Map.of("cpu", "cpu")) // the same entry again is no conflict
                .setDevices(List.of("cpu"))
                .build();
        assertThat(options.deviceMaps()).isEqualTo(Map.of("worker1", Map.of("cpu", "cpu")));
        assertThat(options.devices()).containsExactly("cpu");
        assertThat(options.toBuilder().build().deviceMaps()).isEqualTo(options.deviceMaps());
        assertThatThrownBy(() -> options.deviceMaps().put("worker2", Map.of()))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> options.deviceMaps().get("worker1").put("cpu", "cpu"))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void otherDevicesAreAClearErrorNotIgnored() {
        for (String device : List.of("cuda:0", "cuda", "0", "meta")) {
            assertThatThrownBy(() -> RpcBackendOptions.builder().setDeviceMap("worker1", Map.of(device, "cpu")))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT);
                        assertThat(e).hasMessageContaining("'" + device + "' is not available")
                                .hasMessageContaining("CPU-only");
                    });
            assertThatThrownBy(() -> RpcBackendOptions.builder().setDevices(List.of(device)))
                    .isInstanceOf(RpcException.class).hasMessageContaining("CPU-only");
        }
        assertThatThrownBy(() -> RpcBackendOptions.builder().setDeviceMap("worker1", Map.of("cpu", "cuda:1")))
                .isInstanceOf(RpcException.class).hasMessageContaining("'cuda:1' is not available");
        assertThatThrownBy(() -> RpcBackendOptions.builder().setDeviceMap("worker1", Map.of("not a device!", "cpu")))
                .isInstanceOf(RpcException.class).hasMessageContaining("invalid device string");
    }

    @Test
    void negativeIndicesAreRejected() {
        for (String device : List.of("cuda:-1", "-1")) {
            assertThatThrownBy(() -> RpcBackendOptions.builder().setDeviceMap("worker1", Map.of(device, "cpu")))
                    .isInstanceOf(RpcException.class).hasMessageContaining("Device index must not be negative");
            assertThatThrownBy(() -> RpcBackendOptions.builder().setDeviceMap("worker1", Map.of("cpu", device)))
                    .isInstanceOf(RpcException.class).hasMessageContaining("Device index must not be negative");
        }
    }

    @Test
    void mapsMustBeOneToOne() {
        // Checked before whether the devices exist, as PyTorch does, so the message names the real mistake.
        assertThatThrownBy(() -> RpcBackendOptions.builder().setDeviceMap("worker1", Map.of("cpu", "cpu"))
                .setDeviceMap("worker1", Map.of("cpu", "cuda:0")))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("`set_device_map` only supports 1-to-1 mapping, trying to map cpu to cuda:0 and cpu");
        assertThatThrownBy(() -> RpcBackendOptions.builder().setDeviceMap("worker1", Map.of("cpu", "cpu"))
                .setDeviceMap("worker1", Map.of("cuda:0", "cpu")))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("only supports 1-to-1 mapping, trying to map cuda:0 and cpu to cpu");
        assertThatThrownBy(() -> RpcBackendOptions.builder().deviceMaps(Map.of("worker1", Map.of("cuda:0", "cuda:1",
                "cuda:1", "cuda:1")))).isInstanceOf(RpcException.class).hasMessageContaining("only supports 1-to-1 mapping");
        assertThatThrownBy(() -> RpcBackendOptions.builder().setDevices(List.of("cpu", "cpu")))
                .isInstanceOf(RpcException.class).hasMessageContaining("duplicated devices");
    }

    @Test
    void deviceMapsAreCheckedAcrossTheGroupAtInit() throws Exception {
        RpcBackendOptions base = RpcBackendOptions.builder().initMethod("file://" + dir.resolve("bad-map"))
                .rendezvousTimeout(Duration.ofSeconds(20)).applicationPackage(LocalCluster.TEST_CODE).build();
        RpcBackendOptions mapsToNobody = base.toBuilder().setDeviceMap("nobody", Map.of("cpu", "cpu")).build();
        List<Object> results = startBoth(mapsToNobody, base);
        // Every worker checks every worker's maps, so the one mistake fails them all, with one message.
        for (Object result : results) {
            assertThat(result).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT);
                assertThat(e).hasMessageContaining("Node worker0 has invalid target node names in its device maps");
            });
        }

        RpcBackendOptions good = base.toBuilder().initMethod("file://" + dir.resolve("good-map"))
                .setDeviceMap("worker1", Map.of("cpu", "cpu")).setDevices(List.of("cpu")).build();
        List<Object> started = startBoth(good, good.toBuilder().setDeviceMap("worker0", Map.of("cpu", "cpu")).build());
        try {
            assertThat(((RpcAgent) started.get(0)).rpcSync("worker1", Ops::add, 2, 3)).isEqualTo(5);
        } finally {
            started.parallelStream().filter(RpcAgent.class::isInstance).map(RpcAgent.class::cast).forEach(RpcAgent::shutdown);
        }
    }

    /** Starts worker0 and worker1 in process, concurrently; each result is the agent or the exception. */
    private static List<Object> startBoth(RpcBackendOptions options0, RpcBackendOptions options1) throws Exception {
        List<CompletableFuture<Object>> starting = new ArrayList<>();
        List<RpcBackendOptions> options = List.of(options0, options1);
        for (int rank = 0; rank < 2; rank++) {
            int r = rank;
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return RpcAgents.start("worker" + r, BackendType.IN_PROCESS, r, 2, options.get(r));
                } catch (RuntimeException e) {
                    return e;
                }
            }));
        }
        List<Object> results = new ArrayList<>();
        for (CompletableFuture<Object> future : starting) {
            results.add(future.get(40, TimeUnit.SECONDS));
        }
        return results;
    }
}
