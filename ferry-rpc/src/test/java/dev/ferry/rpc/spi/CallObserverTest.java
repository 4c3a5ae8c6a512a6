package dev.ferry.rpc.spi;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Call observers see every application call's end, on both sides, with a consistent timeline. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class CallObserverTest {
    private LocalCluster cluster;
    private final List<AutoCloseable> registrations = new ArrayList<>();

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(3);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @AfterEach
    void removeObservers() throws Exception {
        for (AutoCloseable registration : registrations) {
            registration.close();
        }
        registrations.clear();
    }

    private Recording observe(int rank) {
        Recording recording = new Recording();
        registrations.add(cluster.agent(rank).addCallObserver(recording));
        return recording;
    }

    @Test
    void aSuccessfulCallIsSeenByCallerAndCalleeWithOrderedTimes() {
        Recording caller = observe(0);
        Recording callee = observe(1);

        assertThat(cluster.agent(0).rpcSync("worker1", Ops::concat, "ab", "cd")).isEqualTo("abcd");

        // Both ends are told before the caller has its value: no wait needed.
        assertThat(caller.calls).hasSize(1);
        CallTimeline call = caller.calls.peek();
        assertThat(call.info().function()).isEqualTo("Ops::concat");
        assertThat(call.info().callee().name()).isEqualTo("worker1");
        assertThat(call.outcome()).isEqualTo("ok");
        assertThat(call.requestBytes()).isPositive();
        assertThat(call.responseBytes()).isPositive();
        assertThat(call.startNanos()).isLessThanOrEqualTo(call.encodedNanos());
        assertThat(call.encodedNanos()).isLessThanOrEqualTo(call.answeredNanos());
        assertThat(call.answeredNanos()).isLessThanOrEqualTo(call.endNanos());
        assertThat(call.serializeNanos() + call.awaitNanos() + call.deserializeNanos()).isEqualTo(call.totalNanos());

        assertThat(callee.requests).hasSize(1);
        RequestTimeline request = callee.requests.peek();
        assertThat(request.info().function()).isEqualTo("Ops::concat");
        assertThat(request.info().caller().name()).isEqualTo("worker0");
        assertThat(request.info().callId()).isEqualTo(call.info().callId());
        assertThat(request.requestBytes()).isEqualTo(call.requestBytes());
        assertThat(request.responseBytes()).isEqualTo(call.responseBytes());
        assertThat(request.asynchronous()).isFalse();
        assertThat(request.outcome()).isEqualTo("ok");
        assertThat(request.queueNanos()).isNotNegative();
        assertThat(request.deserializeNanos()).isNotNegative();
        assertThat(request.handlerNanos()).isNotNegative();
        assertThat(request.serializeNanos()).isNotNegative();
        // The request's whole stay on the callee fits within the call as its caller measured it
        // (both JVM clocks are this JVM's here).
        assertThat(request.arrivedNanos()).isGreaterThanOrEqualTo(call.encodedNanos() - 1);
        assertThat(request.endNanos()).isLessThanOrEqualTo(call.answeredNanos());
        // Only the two ends of the call saw it.
        assertThat(caller.requests).isEmpty();
        assertThat(callee.calls).isEmpty();
    }

    @Test
    void failuresCarryTheirOutcomeOnBothSides() {
        Recording caller = observe(0);
        Recording callee = observe(1);

        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::fail, "no"))
                .isInstanceOf(RpcException.class);

        assertThat(caller.calls).singleElement().satisfies(call -> {
            assertThat(call.outcome()).isEqualTo("REMOTE_ERROR");
            assertThat(call.succeeded()).isFalse();
        });
        assertThat(callee.requests).singleElement().satisfies(request ->
                assertThat(request.outcome()).isEqualTo(IllegalArgumentException.class.getName()));
    }

    @Test
    void aTimeoutEndsTheCallWithoutAnAnswer() {
        Recording caller = observe(0);

        assertThatThrownBy(() -> cluster.agent(0).to("worker1").withTimeout(Duration.ofMillis(50))
                .rpcSync(Ops::sleepMillis, 2_000L)).isInstanceOf(RpcException.class);

        CallTimeline call = caller.calls.peek();
        assertThat(call.outcome()).isEqualTo("TIMEOUT");
        assertThat(call.responseBytes()).isZero();
        assertThat(call.answeredNanos()).isEqualTo(call.endNanos());
        assertThat(call.totalNanos()).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos());
    }

    @Test
    void nestedAndAsynchronousRequestsAreSeenWhereTheyRun() {
        Recording first = observe(1);
        Recording second = observe(2);

        RpcFuture<Integer> relayed = cluster.agent(0).rpcSync("worker1", Ops::asyncRelay, "worker2", 7);
        assertThat(relayed.await()).isEqualTo(7);

        assertThat(first.requests).singleElement().satisfies(request -> {
            assertThat(request.info().function()).isEqualTo("Ops::asyncRelay");
            assertThat(request.asynchronous()).isTrue();
        });
        assertThat(first.calls).singleElement().satisfies(call ->
                assertThat(call.info().callee().name()).isEqualTo("worker2"));
        assertThat(second.requests).singleElement().satisfies(request ->
                assertThat(request.info().caller().name()).isEqualTo("worker1"));
    }

    @Test
    void observersChooseTheirCallsAndAFailingOneChangesNothing() throws Exception {
        Recording choosy = new Recording() {
            @Override
            public boolean followsCall(CallInfo call, CallHeaders headers) {
                return call.function().equals("Ops::add");
            }
        };
        registrations.add(cluster.agent(0).addCallObserver(choosy));
        registrations.add(cluster.agent(0).addCallObserver(new CallObserver() {
            @Override
            public boolean followsCall(CallInfo call, CallHeaders headers) {
                return true;
            }

            @Override
            public void callEnded(CallTimeline call) {
                throw new IllegalStateException("a broken observer");
            }
        }));

        assertThat(cluster.agent(0).rpcSync("worker1", Ops::noop, 1)).isEqualTo(1);
        assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);

        assertThat(choosy.calls).singleElement().satisfies(call ->
                assertThat(call.info().function()).isEqualTo("Ops::add"));
    }

    @Test
    void aRemovedObserverHearsNothingMore() throws Exception {
        Recording recording = new Recording();
        AutoCloseable registration = cluster.agent(0).addCallObserver(recording);
        cluster.agent(0).rpcSync("worker1", Ops::noop, 1);
        registration.close();
        cluster.agent(0).rpcSync("worker1", Ops::noop, 2);

        assertThat(recording.calls).hasSize(1);
    }

    /** Follows every call and request, and keeps their timelines. */
    static class Recording implements CallObserver {
        final Queue<CallTimeline> calls = new ConcurrentLinkedQueue<>();
        final Queue<RequestTimeline> requests = new ConcurrentLinkedQueue<>();

        @Override
        public boolean followsCall(CallInfo call, CallHeaders headers) {
            return true;
        }

        @Override
        public void callEnded(CallTimeline call) {
            calls.add(call);
        }

        @Override
        public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
            return true;
        }

        @Override
        public void requestEnded(RequestTimeline request) {
            requests.add(request);
        }
    }
}
