package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

@Timeout(60)
class RRefTest {
    private static LocalCluster cluster;

    @BeforeAll
    static void start() {
        cluster = LocalCluster.start(3);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static RpcAgent w(int rank) {
        return cluster.agent(rank);
    }

    private static int owners(int rank) {
        return Integer.parseInt(w(rank).getDebugInfo().get("rref.num_owner_rrefs"));
    }

    @Test
    void remoteThenToHere() {
        RRef<Integer> rref = w(0).remote("worker1", Ops::add, 3, 4);
        assertThat(rref.isOwner()).isFalse();
        assertThat(rref.owner()).isEqualTo(w(0).getWorkerInfo("worker1"));
        assertThat(rref.ownerName()).isEqualTo("worker1");
        assertThat(rref.toHere()).isEqualTo(7);
        assertThat(rref.confirmedByOwner()).isTrue();
        assertThat(rref.toString()).startsWith("UserRRef(RRefId = GloballyUniqueId(created_on=0, local_id=");
        rref.close();
    }

    @Test
    void remoteToSelfIsAnOwnerHandle() {
        RRef<Counter> rref = w(1).to(1).remote(Counter::new, 5);
        assertThat(rref.isOwner()).isTrue();
        assertThat(rref.localValue().value()).isEqualTo(5);
        assertThat(rref.localValue()).isSameAs(rref.localValue());
        assertThat(rref.toString()).startsWith("OwnerRRef(GloballyUniqueId(created_on=1");
    }

    @Test
    void localValueOnAUserIsAClearError() {
        RRef<Integer> rref = w(0).remote("worker2", Ops::noop, 1);
        assertThatThrownBy(rref::localValue).isInstanceOf(RpcException.class)
                .hasMessageContaining("can't call localValue() on user WorkerInfo(id=0, name=worker0)")
                .hasMessageContaining("Call it on owner WorkerInfo(id=2, name=worker2)");
        rref.close();
    }

    @Test
    void localValueSharedWithAnotherWorker() {
        RRef<Integer> forty = w(0).rref(40);
        assertThat(forty.isOwner()).isTrue();
        assertThat(w(0).rpcSync("worker1", Counter::addToRRef, forty, 50)).isEqualTo(90);
        assertThat(w(0).rpcAsync("worker2", Counter::addToRRef, forty, 50).await()).isEqualTo(90);
        assertThat(w(0).remote("worker1", Counter::addToRRef, forty, 50).toHere()).isEqualTo(90);
    }

    @Test
    void methodsRunWhereTheValueLives() {
        RRef<Counter> counter = w(0).to(1).remote(Counter::new, 10);
        assertThat(counter.rpcSync(Counter::add, 2)).isEqualTo(12);
        assertThat(counter.rpcAsync(Counter::add, 5).await()).isEqualTo(17);
        RRef<Integer> later = counter.remote(Counter::add, 7);
        assertThat(later.toHere()).isEqualTo(24);
        assertThat(counter.rpcSync(Counter::where)).isEqualTo("worker1");
        assertThat(counter.withTimeout(Duration.ofSeconds(5)).rpcSync(Counter::value)).isEqualTo(24);
        CounterApi api = counter.proxy(CounterApi.class);
        assertThat(api.add(1)).isEqualTo(25);
        assertThat(api.value()).isEqualTo(25);
        assertThat(api.addLater(5).toCompletableFuture().join()).isEqualTo(30);
        assertThat(counter.toHere().value()).isEqualTo(30);
    }

    @Test
    void callsThroughAnRRefTakeAsManyArgumentsAsTopLevelCalls() {
        RRef<Counter> counter = w(0).remote("worker1", Counter::new, 0);
        assertThat(counter.rpcSync(Counter::addFour, 1, 1, 1, 1)).isEqualTo(4);
        assertThat(counter.rpcAsync(Counter::addFour, 1, 1, 1, 1).await()).isEqualTo(8);
        assertThat(counter.remote(Counter::addFour, 1, 1, 1, 1).toHere()).isEqualTo(12);
        assertThat(counter.rpcSync(Counter::addFive, 1, 1, 1, 1, 1)).isEqualTo(17);
        assertThat(counter.rpcAsync(Counter::addFive, 1, 1, 1, 1, 1).await()).isEqualTo(22);
        assertThat(counter.remote(Counter::addFive, 1, 1, 1, 1, 1).toHere()).isEqualTo(27);
        RRefCalls<Counter> bounded = counter.withTimeout(Duration.ofSeconds(10));
        assertThat(bounded.rpcSync(Counter::addFive, 0, 0, 0, 0, 1)).isEqualTo(28);
        assertThat(bounded.rpcAsync(Counter::addFour, 0, 0, 0, 1).await()).isEqualTo(29);
        assertThat(bounded.remote(Counter::addFive, 0, 0, 0, 0, 1).toHere()).isEqualTo(30);
    }

    @Test
    void asyncExecutionThroughRRefHelpers() {
        RRef<Counter> a = w(0).to(1).remote(Counter::new, 0);
        RRef<Counter> b = w(0).to(2).remote(Counter::new, 100);
        RpcFuture<Integer> forwarded = a.rpcSync(Counter::addThenForward, b, 5);
        assertThat(forwarded.await()).isEqualTo(105);
        assertThat(a.rpcSync(Counter::value)).isEqualTo(5);
        assertThat(a.rpcSync(Counter::addLater, 1).toCompletableFuture().join()).isEqualTo(6);
    }

    @Test
    void userSharesWithUserAndTheReceiverSeesItConfirmed() {
        RRef<Counter> counter = w(0).to(1).remote(Counter::new, 3);
        assertThat(w(0).rpcSync("worker2", Counter::isConfirmed, counter)).isTrue();
        assertThat(w(0).rpcSync("worker2", Counter::valueOf, counter)).isEqualTo(3);
        assertThat(w(0).rpcSync("worker2", Counter::addThrough, counter, 4)).isEqualTo(7);
        // to the owner itself: resolves to the value
        assertThat(w(0).rpcSync("worker1", Counter::valueOf, counter)).isEqualTo(7);
    }

    @Test
    void rrefsReturnedFromCallsAndNestedInCollections() {
        RRef<Counter> made = w(0).rpcSync("worker1", Counter::createOn, "worker2", 9);
        assertThat(made.owner().name()).isEqualTo("worker2");
        assertThat(made.toHere().value()).isEqualTo(9);
        List<RRef<Counter>> locals = w(0).rpcSync("worker2", Counter::localCounters, 3);
        assertThat(locals).extracting(r -> r.rpcSync(Counter::add, 10)).containsExactly(11, 12, 13);
        List<RRef<Integer>> refs = List.of(w(0).remote("worker1", Ops::noop, 1), w(0).remote("worker2", Ops::noop, 2),
                w(0).rref(3));
        assertThat(w(0).rpcSync("worker1", Counter::sumOfRRefs, refs)).isEqualTo(6);
    }

    record Holder(String label, RRef<Integer> ref) {
    }

    @Test
    void rrefsInsideRecords() {
        Holder holder = new Holder("x", w(0).remote("worker1", Ops::noop, 41));
        Holder back = (Holder) w(0).rpcSync("worker2", Ops::identity, holder);
        assertThat(back.label()).isEqualTo("x");
        assertThat(back.ref().toHere()).isEqualTo(41);
    }

    @Test
    void forwardChainThroughManyHops() {
        RRef<Integer> rref = w(0).remote("worker1", Ops::add, 1, 1);
        List<String> route = List.of("worker1", "worker2", "worker0", "worker2", "worker1", "worker0", "worker1", "worker2");
        @SuppressWarnings("unchecked")
        RRef<Integer> back = (RRef<Integer>) w(0).rpcSync("worker2", Ops::forward, route, (Object) rref);
        assertThat(back.toHere()).isEqualTo(2);
    }

    @Test
    void anRRefCannotBePassedOnByAnotherAgent() {
        RRef<Integer> held = w(0).rref(5);
        assertThatThrownBy(() -> w(1).rpcSync("worker2", Ops::identity, held))
                .isInstanceOf(RpcException.class).hasMessageContaining("belongs to another agent");
    }

    @Test
    void errorsOfTheFunctionAreRaisedByToHere() {
        RRef<Integer> failing = w(0).remote("worker1", Ops::fail, "Expected error");
        assertThatThrownBy(failing::toHere).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
            assertThat(e).hasMessageContaining("Expected error");
        });
        assertThatThrownBy(() -> w(0).rpcSync("worker2", Counter::valueOf, (RRef) failing))
                .isInstanceOf(RpcException.class).hasMessageContaining("Expected error");
        RRef<Integer> selfFailing = w(1).remote("worker1", Ops::fail, "on the owner");
        assertThatThrownBy(selfFailing::localValue).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("on the owner");
    }

    @Test
    void creationTimeoutIsRecordedAndRaisedOnUse() {
        RRef<Long> slow = w(0).to(1).withTimeout(Duration.ofMillis(100)).remote(Ops::sleepMillis, 1_500L);
        assertThatThrownBy(() -> slow.toHere(Duration.ofSeconds(10))).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT);
            assertThat(e).hasMessageContaining("RRef creation via remote() timed out");
        });
        assertThatThrownBy(() -> w(0).rpcSync("worker2", Ops::identity, slow)).hasMessageContaining("RRef creation");
        assertThatThrownBy(() -> slow.rpcSync(Object::toString)).hasMessageContaining("RRef creation");
    }

    @Test
    void droppedReferencesFreeTheOwner() {
        int before = owners(1);
        RRef<Counter> counter = w(0).to(1).remote(Counter::new, 1);
        w(0).rpcSync("worker2", Counter::valueOf, counter);   // worker2 held a fork for the call
        assertThat(counter.rpcSync(Counter::value)).isEqualTo(1);
        counter.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            System.gc(); // worker2's reference, received as an argument, is released by the collector
            return owners(1) <= before;
        });
    }

    @Test
    void unreachableReferencesAreReleasedByTheGarbageCollector() {
        int before = owners(2);
        for (int i = 0; i < 20; i++) {
            w(0).remote("worker2", Ops::noop, i).toHere();
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            System.gc();
            return owners(2) <= before;
        });
    }

    @Test
    void rrefsCannotBeSerializedOutsideFerry() {
        RRef<Integer> rref = w(0).rref(1);
        assertThatThrownBy(() -> new java.io.ObjectOutputStream(java.io.OutputStream.nullOutputStream())
                .writeObject(rref)).isInstanceOf(java.io.NotSerializableException.class);
    }
}
