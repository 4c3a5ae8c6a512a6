package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferry.rpc.testing.LocalCluster;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An RRef's delete rides on the next call to its owner ({@code UserDeletes}); whatever becomes of
 * that call, the delete reaches the owner: done when the owner answered the call, sent again
 * (marked as possibly repeated) when the call ended without its answer.
 */
@Timeout(120)
class DeletesRideOnAnyCallTest {

    private static int owned(RpcAgent agent) {
        return Integer.parseInt(agent.getDebugInfo().get("rref.num_owner_rrefs"));
    }

    static int length(byte[] bytes) {
        return bytes.length;
    }

    /** The remote() the delete rides on is refused before it is sent: the delete was lost so, its value kept for good. */
    @Test
    void aDeleteRidingOnARemoteTooLargeToSendStillReachesTheOwner() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.maxMessageBytes(64 * 1024).failOnRRefLeaks(true))) {
            RpcAgent user = cluster.agent(0);
            RpcAgent owner = cluster.agent(1);
            RRef<Integer> first = user.remote("worker1", Ops::add, 1, 1);
            assertThat(first.toHere()).isEqualTo(2);
            first.close();
            assertThatThrownBy(() -> user.remote("worker1", DeletesRideOnAnyCallTest::length, new byte[128 * 1024]).toHere())
                    .isInstanceOf(RpcException.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> owned(owner) == 0);
        }
    }

    /**
     * The toHere(timeout) fetch the delete rides on times out but arrives later: the delete is sent
     * again, and the owner, which has it by then or gets it twice, ignores the repeat.
     */
    @Test
    void aDeleteRidingOnAFetchThatTimesOutStillReachesTheOwner() {
        FaultInjection faults = FaultInjection.builder().delay(Duration.ofSeconds(2), MessageType.RREF_FETCH_CALL).build();
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.faultInjection(faults).failOnRRefLeaks(true))) {
            RpcAgent user = cluster.agent(0);
            RpcAgent owner = cluster.agent(1);
            RRef<Integer> first = user.remote("worker1", Ops::add, 1, 1);
            RRef<Integer> second = user.remote("worker1", Ops::add, 2, 2);
            user.rpcSync("worker1", Ops::add, 0, 0);
            first.close();
            assertThatThrownBy(() -> second.toHere(Duration.ofMillis(100))).isInstanceOf(RpcException.class);
            second.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> owned(owner) == 0);
        }
    }
}
