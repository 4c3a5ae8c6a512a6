package dev.ferry.rpc.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An RRef owner killed with {@code kill -9} (a JVM of its own): the users' bookkeeping of its
 * RRefs is released (confirmed users, a fork still awaiting the owner's confirmation, a creation
 * and a fetch in flight), every use fails {@code UNAVAILABLE} naming the owner, and the
 * survivors' graceful shutdown does not wait for any of it.
 */
@Timeout(180)
class DeadOwnerRRefsTest {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @AfterEach
    void forget() {
        DeadOwnerFunctions.KEPT.clear();
    }

    @Test
    void theRRefsOfAKilledOwnerAreReleasedOnTheirUsers() throws Exception {
        // No heartbeats: the killed process's closed connections are how the survivors learn of it.
        try (RemoteWorld world = RemoteWorld.start(3, 2, Duration.ZERO)) {
            RpcAgent zero = world.agent(0);
            RpcAgent one = world.agent(1);
            RRef<Integer> value = zero.remote("worker2", Ops::add, 1, 2);
            assertThat(value.toHere()).isEqualTo(3);
            assertThat(zero.rpcSync("worker1", DeadOwnerFunctions::keep, value)).isTrue(); // a confirmed fork on worker1
            RRef<Long> slow = zero.to("worker2").withTimeout(Duration.ofSeconds(120)).remote(Ops::sleepMillis, 120_000L);
            CompletableFuture<Long> fetching = CompletableFuture.supplyAsync(() -> slow.toHere(Duration.ofSeconds(120)));

            world.stopRemote(); // the owner can no longer confirm the fork that comes next
            RpcFuture<String> forked = zero.to("worker1").withTimeout(Duration.ofSeconds(120))
                    .rpcAsync(DeadOwnerFunctions::ownerOf, value);
            await().atMost(BOUND).untilAsserted(() -> {
                assertThat(one.getDebugInfo()).containsEntry("rref.num_pending_users", "1");
                assertThat(zero.getDebugInfo()).containsEntry("rref.num_pending_children", "1");
            });

            world.killRemote();
            // The fork's wait ends: the request runs, with a reference whose owner is gone.
            assertThat(forked.await()).isEqualTo("worker2");
            await().atMost(BOUND).untilAsserted(() -> assertThatThrownBy(value::toHere)
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                        assertThat(e.getMessage()).contains("worker2");
                    }));
            assertThatThrownBy(() -> value.rpcSync(Object::toString)).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                assertThat(e.getMessage()).contains("worker2");
            });
            RRef<?> kept = DeadOwnerFunctions.KEPT.get(0);
            assertThatThrownBy(kept::toHere).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                assertThat(e.getMessage()).contains("worker2");
            });
            assertThatThrownBy(() -> fetching.get(BOUND.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                        assertThat(e.getMessage()).contains("worker2");
                    });

            for (RpcAgent survivor : List.of(zero, one)) {
                await().atMost(BOUND).untilAsserted(() -> assertThat(survivor.getDebugInfo())
                        .as(survivor.getWorkerInfo().name())
                        .containsEntry("rref.num_live_users", "0")
                        .containsEntry("rref.num_pending_users", "0")
                        .containsEntry("rref.num_pending_children", "0")
                        .containsEntry("rref.num_pending_futures", "0")
                        .containsEntry("rref.num_owner_rrefs", "0"));
            }
            long start = System.nanoTime();
            List<CompletableFuture<Void>> shutdowns = List.of(zero, one).stream()
                    .map(agent -> CompletableFuture.runAsync(() -> agent.shutdown(true, Duration.ofSeconds(60))))
                    .toList();
            for (CompletableFuture<Void> shutdown : shutdowns) {
                shutdown.get(90, TimeUnit.SECONDS); // throws if a graceful shutdown failed
            }
            System.err.println("DeadOwnerRRefsTest: the survivors shut down gracefully in "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
            assertThat(zero.isRunning()).isFalse();
            assertThat(one.isRunning()).isFalse();
        }
    }
}
