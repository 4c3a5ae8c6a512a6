package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A worker whose static world never forms says whom it waits for while it waits, instead of being
 * silent until initRpc's timeout (a minute by default), which looks like a hang when a rank was
 * never started. The real TCP store on loopback; the notices' schedule shortened.
 */
@Timeout(30)
class GroupRendezvousNoticesTest {

    @Test
    void aWorkerWaitingForRanksThatNeverCameNamesThemWhileItWaitsAndWhenItGivesUp() {
        List<String> said = new CopyOnWriteArrayList<>();
        try (TcpStoreServer server = TcpStoreServer.start("127.0.0.1", 0);
             TcpStore store = TcpStore.connect("127.0.0.1", server.address().getPort(), Duration.ofSeconds(10))) {
            GroupRendezvous.Notices often = new GroupRendezvous.Notices(Duration.ofMillis(200), Duration.ofMillis(300),
                    said::add);

            assertThatThrownBy(() -> GroupRendezvous.join(store, new WorkerInfo("worker0", 0), "127.0.0.1:1", 3,
                    Duration.ofSeconds(2), often))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.RENDEZVOUS_FAILED))
                    .hasMessageContaining("rendezvous of 3 workers did not complete within 2 s: ranks [1, 2] never arrived");
        }
        assertThat(said).hasSizeBetween(1, 6) // at 0.2 s, then every 0.3 s: on time, and no more often
                .allSatisfy(line -> assertThat(line).startsWith("worker0: waiting for ranks [1, 2] of a world of 3 to join (")
                        .endsWith(" of 2 s)"));
    }

    @Test
    void aRankThatArrivesAfterANoticeFormsTheWorld() throws Exception {
        List<String> said = new CopyOnWriteArrayList<>();
        GroupRendezvous.Notices often = new GroupRendezvous.Notices(Duration.ofMillis(100), Duration.ofMillis(100),
                said::add);
        try (TcpStoreServer server = TcpStoreServer.start("127.0.0.1", 0);
             TcpStore first = TcpStore.connect("127.0.0.1", server.address().getPort(), Duration.ofSeconds(10));
             TcpStore second = TcpStore.connect("127.0.0.1", server.address().getPort(), Duration.ofSeconds(10))) {
            CompletableFuture<GroupRendezvous.Joined> early = CompletableFuture.supplyAsync(() -> GroupRendezvous.join(
                    first, new WorkerInfo("worker0", 0), "127.0.0.1:1", 2, Duration.ofSeconds(20), often));
            await().atMost(Duration.ofSeconds(10)).until(() -> !said.isEmpty());

            GroupRendezvous.join(second, new WorkerInfo("worker1", 1), "127.0.0.1:2", 2, Duration.ofSeconds(20), often);

            assertThat(early.get(10, TimeUnit.SECONDS)).isNotNull();
            assertThat(said.getFirst()).startsWith("worker0: waiting for rank [1] of a world of 2 to join (");
        }
    }
}
