package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** PyTorch's {@code _ignore_rref_leak}: leaked RRefs fail shutdown, naming them, when asked to. */
@Timeout(60)
class RRefLeakPolicyTest {

    @Test
    void anOwnerLeavingWhileAUserHoldsItsRRefFailsShutdownNamingTheLeak() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.failOnRRefLeaks(true))) {
            RRef<Integer> held = cluster.agent(0).remote("worker1", Ops::add, 1, 2);
            assertThat(held.toHere()).isEqualTo(3);

            assertThatThrownBy(() -> cluster.agent(1).shutdown(false, Duration.ZERO))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.ILLEGAL_STATE))
                    .hasMessageContaining("worker1: Detected RRef leaks during shutdown")
                    .hasMessageContaining("Leaking RRef " + held.rrefId() + " with fork Id ");
            // the agent closed all the same
            assertThat(cluster.agent(1).isRunning()).isFalse();
            cluster.agent(0).shutdown(false, Duration.ZERO);
        }
    }

    @Test
    void byDefaultLeaksAreOnlyLogged() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RRef<Integer> held = cluster.agent(0).remote("worker1", Ops::add, 1, 2);
            assertThat(held.toHere()).isEqualTo(3);

            cluster.agent(1).shutdown(false, Duration.ZERO);
            assertThat(cluster.agent(1).isRunning()).isFalse();
            cluster.agent(0).shutdown(false, Duration.ZERO);
        }
    }

    @Test
    void aGracefulShutdownReleasesHeldReferencesSoNothingLeaks() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.failOnRRefLeaks(true))) {
            RRef<Integer> held = cluster.agent(0).remote("worker1", Ops::add, 1, 2);
            assertThat(held.toHere()).isEqualTo(3);

            cluster.onEach(agent -> {
                agent.shutdown();
                return null;
            });
        }
    }
}
