package dev.ferry.rpc;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.HeaderKey;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ordered messages made while the connection to their peer is still opening leave in the order
 * they were made. Calls that carry an interceptor's context are ordered (a barrier among the
 * messages to that peer: docs/architecture.md, the delivery contract); the callee's observer sees
 * requests as they arrive, before they are queued. Before, each waited for the connection with a
 * stage of its own, and CompletableFuture runs those last-in first-out: they arrived reversed.
 */
class OrderedCallsWhileConnectingTest {

    private static final HeaderKey<Long> SEQUENCE = HeaderKey.ofLong("test-sequence");

    @Test
    void callsMadeBeforeTheConnectionIsOpenArriveInTheOrderTheyWereMade() throws Exception {
        AtomicLong next = new AtomicLong();
        CallInterceptor numbering = new CallInterceptor() {
            @Override
            public CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
                return headers.with(SEQUENCE, next.getAndIncrement());
            }
        };
        try (LocalCluster cluster = LocalCluster.start(3, options -> options.addInterceptor(numbering))) {
            Queue<Long> arrived = new ConcurrentLinkedQueue<>();
            try (AutoCloseable observing = cluster.agent(2).addCallObserver(new CallObserver() {
                @Override
                public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
                    if (caller.name().equals("worker1")) {
                        arrived.add(headers.get(SEQUENCE));
                    }
                    return false;
                }
            })) {
                // worker1 and worker2 met only through worker0's store: worker1's first call to
                // worker2 opens their connection, and the calls after it wait for it too.
                RpcAgent worker1 = cluster.agent(1);
                List<RpcFuture<Integer>> calls = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    calls.add(worker1.rpcAsync("worker2", Ops::add, i, 1));
                }
                for (int i = 0; i < calls.size(); i++) {
                    assertThat(calls.get(i).await(Duration.ofSeconds(30))).isEqualTo(i + 1);
                }
                assertThat(arrived).hasSize(50);
                assertThat(new ArrayList<>(arrived)).isSorted();
            }
        }
    }
}
