package dev.ferry.distributed;

import dev.ferry.distributed.TensorFunctions.Holder;
import dev.ferry.distributed.TensorFunctions.Layout;
import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.testing.LocalCluster;
import dev.ferry.tensor.DType;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tensors as arguments and results of calls between two workers over loopback sockets, following
 * PyTorch's RPC tests ({@code test_py_tensors}, {@code test_non_cont_tensors}, ...) and its
 * pickler's rules (shared storages, compacted sparse views, {@code requires_grad}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TensorsOverRpcTest extends ThreeWorkers {
    @Test
    void sumOfTwoTensorsComesBackThroughEveryCallForm() {
        Tensor ones = Tensors.ones(3, 3);
        Tensor expected = Tensors.ones(3, 3).mul(2);

        assertThat(worker0.rpcSync("worker1", TensorFunctions::add, ones, ones).equal(expected)).isTrue();
        assertThat(worker0.rpcAsync("worker1", TensorFunctions::add, ones, ones).await().equal(expected)).isTrue();
        try (RRef<Tensor> rref = worker0.remote("worker1", TensorFunctions::add, ones, ones)) {
            assertThat(rref.toHere().equal(expected)).isTrue();
        }
    }

    @Test
    void hundredAsyncCallsIncludingAnEmptyTensor() {
        List<RpcFuture<Tensor>> futures = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            futures.add(worker0.rpcAsync("worker1", TensorFunctions::add, Tensors.ones(i, i), Tensors.ones(i, i)));
        }
        List<Tensor> results = RpcFuture.waitAll(futures);
        for (int i = 0; i < 100; i++) {
            assertThat(results.get(i).shape()).containsExactly(i, i);
            assertThat(results.get(i).equal(Tensors.ones(i, i).mul(2))).as("ones(%d, %d) * 2", i, i).isTrue();
        }
    }

    @Test
    void tensorsInsideContainersRecordsAndMapKeys() {
        Tensor a = Tensors.ones(2);
        Tensor b = Tensors.ones(3).mul(2);
        Holder holder = new Holder(List.of(List.of(a, b), List.of()), Map.of("c", Tensors.ones(4)));
        Map<Tensor, Tensor> keyedByTensor = Map.of(a, b);
        Object argument = List.of(holder, keyedByTensor, List.of(a));

        double remote = worker0.rpcSync("worker1", TensorFunctions::sumAll, argument);

        assertThat(remote).isEqualTo(TensorFunctions.sumAll(argument)).isEqualTo(2 + 6 + 4 + 2 + 6 + 2);
    }

    @Test
    void nonContiguousViewOfASmallTensorStaysAView() {
        Tensor base = Tensors.rand(5, 5);
        Tensor view = base.narrow(1, 2, 2);

        Layout seen = worker0.rpcSync("worker1", TensorFunctions::layoutOf, view);
        Tensor back = (Tensor) worker0.rpcSync("worker1", TensorFunctions::echo, view);

        assertThat(seen.contiguous()).isFalse();
        assertThat(seen.strides()).containsExactly(5, 1);
        assertThat(seen.offset()).isEqualTo(2);
        assertThat(seen.storageSize()).isEqualTo(25);
        assertThat(back.isContiguous()).isFalse();
        assertThat(back.equal(view)).isTrue();
        assertThat(worker0.rpcSync("worker1", TensorFunctions::layoutOf, base).contiguous()).isTrue();
    }

    @Test
    void viewsUsingAtMostHalfOfALargeStorageAreSentCompact() {
        Tensor big = Tensors.rand(100, 100); // 40,000 bytes

        Layout tenRows = worker0.rpcSync("worker1", TensorFunctions::layoutOf, big.narrow(0, 0, 10));
        Layout sixtyRows = worker0.rpcSync("worker1", TensorFunctions::layoutOf, big.narrow(0, 40, 60));
        Layout tenColumns = worker0.rpcSync("worker1", TensorFunctions::layoutOf, big.narrow(1, 0, 10));
        Tensor columnsBack = (Tensor) worker0.rpcSync("worker1", TensorFunctions::echo, big.narrow(1, 0, 10));

        assertThat(tenRows.storageSize()).isEqualTo(1000);
        assertThat(tenRows.offset()).isZero();
        assertThat(sixtyRows.storageSize()).isEqualTo(10_000);
        assertThat(sixtyRows.offset()).isEqualTo(4000);
        assertThat(tenColumns.contiguous()).isTrue();
        assertThat(tenColumns.strides()).containsExactly(10, 1);
        assertThat(columnsBack.equal(big.narrow(1, 0, 10))).isTrue();
    }

    @Test
    void anExpandedTensorTravelsAsItsSmallStorage() {
        Tensor expanded = Tensors.ones(1, 4096).expand(4096, 4096); // 16 M elements over 4,096

        Layout seen = worker0.rpcSync("worker1", TensorFunctions::layoutOf, expanded);

        assertThat(seen.storageSize()).isEqualTo(4096);
        assertThat(seen.strides()).containsExactly(0, 1);
        assertThat(seen.shape()).containsExactly(4096, 4096);
    }

    @Test
    void sharingWithinOneMessageIsKept() {
        Tensor small = Tensors.rand(4, 4);
        Tensor big = Tensors.rand(100, 100);

        boolean rowsShare = worker0.rpcSync("worker1", TensorFunctions::sameStorage, small.select(0, 0), small.select(0, 3));
        boolean sameTensor = worker0.rpcSync("worker1", TensorFunctions::sameTensor, small, small);
        boolean compactedShare = worker0.rpcSync("worker1", TensorFunctions::sameStorage,
                big.narrow(0, 0, 10), big.narrow(0, 50, 10));

        assertThat(rowsShare).isTrue();
        assertThat(sameTensor).isTrue();
        assertThat(compactedShare).isFalse();
    }

    @Test
    void requiresGradTravelsBothWaysAsAFreshLeaf() {
        Tensor leaf = Tensors.rand(3).requiresGrad_(true);
        Tensor withHistory = leaf.mul(2);

        Layout ofLeaf = worker0.rpcSync("worker1", TensorFunctions::layoutOf, leaf);
        Layout ofNonLeaf = worker0.rpcSync("worker1", TensorFunctions::layoutOf, withHistory);
        Layout ofPlain = worker0.rpcSync("worker1", TensorFunctions::layoutOf, Tensors.rand(3));
        Tensor back = worker0.rpcSync("worker1", TensorFunctions::doubledRequiringGrad, 3);

        for (Layout seen : List.of(ofLeaf, ofNonLeaf)) {
            assertThat(seen.requiresGrad()).isTrue();
            assertThat(seen.leaf()).isTrue();
            assertThat(seen.hasGradFn()).isFalse();
        }
        assertThat(ofPlain.requiresGrad()).isFalse();
        assertThat(back.requiresGrad()).isTrue();
        assertThat(back.isLeaf()).isTrue();
        assertThat(back.gradFn()).isNull();
        assertThat(back.equal(Tensors.ones(3).mul(2))).isTrue();
        assertThat(withHistory.gradFn()).as("sending leaves the sender's graph alone").isNotNull();
    }

    @Test
    void aParameterArrivesAsAParameter() {
        Parameter frozen = new Parameter(Tensors.rand(2, 3), false);

        assertThat(worker0.rpcSync("worker1", TensorFunctions::isParameter, new Parameter(Tensors.rand(2)))).isTrue();
        Tensor back = (Tensor) worker0.rpcSync("worker1", TensorFunctions::echo, frozen);

        assertThat(back).isInstanceOf(Parameter.class);
        assertThat(back.requiresGrad()).isFalse();
        assertThat(back.equal(frozen)).isTrue();
    }

    @Test
    void everyDtypeRoundTrips() {
        List<Tensor> tensors = List.of(
                Tensors.arange(6).view(2, 3),
                Tensors.arange(6).to(DType.INT32),
                Tensors.rand(2, 2).to(DType.FLOAT64),
                Tensors.arange(4).gt(1.5),
                Tensors.scalar(3.5));
        for (Tensor t : tensors) {
            Tensor back = (Tensor) worker0.rpcSync("worker1", TensorFunctions::echo, t);
            assertThat(back.dtype()).isEqualTo(t.dtype());
            assertThat(back.shape()).isEqualTo(t.shape());
            assertThat(back.equal(t)).as("%s", t).isTrue();
        }
    }

    @Test
    void aLargeTensorTravelsOutOfBand() {
        Tensor large = Tensors.rand(2048, 1024); // 8 MiB, above the out-of-band threshold

        Tensor back = worker0.rpcSync("worker1", TensorFunctions::add, large, Tensors.zeros(1));

        assertThat(back.equal(large)).isTrue();
    }

    @Test
    void theInProcessBackendCarriesTensorsToo() {
        try (LocalCluster inProcess = LocalCluster.start(2, BackendType.IN_PROCESS)) {
            Tensor view = Tensors.rand(5, 5).narrow(1, 2, 2);
            Tensor back = (Tensor) inProcess.agent(0).rpcSync("worker1", TensorFunctions::echo, view);

            assertThat(back).isNotSameAs(view);
            assertThat(back.isContiguous()).isFalse();
            assertThat(back.equal(view)).isTrue();
        }
    }
}
