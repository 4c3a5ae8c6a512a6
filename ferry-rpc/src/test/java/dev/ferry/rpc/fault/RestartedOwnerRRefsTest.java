package dev.ferry.rpc.fault;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.DynamicWorld;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * An RRef's owner crashes, then restarts (a new incarnation, whose RRef ids start over). While it is
 * lost, its user owes it the delete of the fork it gave up (the owner might only have been cut
 * off); once the new incarnation is admitted nothing is owed any more (it holds nothing of the old
 * one's), and the RRef stays unusable while new ones work.
 */
@Timeout(120)
class RestartedOwnerRRefsTest {
    private static final Duration STEP = Duration.ofSeconds(30);

    private static void assertOwnerGone(RRef<Integer> rref) {
        assertThatThrownBy(rref::toHere).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
            assertThat(e.getMessage()).contains("worker1");
        });
    }

    @Test
    void whatIsOwedToALostOwnerIsDroppedWhenItRestarts() {
        try (DynamicWorld world = DynamicWorld.start()) {
            RpcAgent user = world.join(0, 0);
            RpcAgent owner = world.join(1, 0);
            await().atMost(STEP).until(() -> user.getWorkerInfos().size() == 2);
            RRef<Integer> rref = user.remote("worker1", Ops::add, 1, 1);
            assertThat(rref.toHere()).isEqualTo(2);

            owner.shutdown(false, Duration.ZERO); // crashes: no departure
            await().atMost(STEP).untilAsserted(() -> assertOwnerGone(rref));
            await().atMost(STEP).untilAsserted(() -> assertThat(user.getDebugInfo())
                    .containsEntry("rref.num_messages_undelivered", "1") // the delete, owed while it is lost
                    .containsEntry("rref.num_live_users", "0").containsEntry("rref.num_pending_futures", "0"));

            RpcAgent again = world.join(1, 0);
            await().atMost(STEP).untilAsserted(() -> assertThat(user.getDebugInfo())
                    .containsEntry("rref.num_messages_undelivered", "0"));
            assertOwnerGone(rref);
            try (RRef<Integer> next = user.remote("worker1", Ops::add, 2, 2)) {
                assertThat(next.toHere()).isEqualTo(4);
            }
            await().atMost(STEP).until(() -> "0".equals(again.getDebugInfo().get("rref.num_owner_rrefs")));
        }
    }
}
