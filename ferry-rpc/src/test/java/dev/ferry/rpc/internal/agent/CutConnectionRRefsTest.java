package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.transport.TransportFactory;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The connections between a user of RRefs and their owner close (a network reset: both processes
 * live on) and the next message opens new ones. The user declares the owner lost and gives its
 * RRefs up (each use fails {@code UNAVAILABLE} naming the owner), but the owner still holds the
 * values: the user's deletes are owed to it, and once they get through its table drains, so a
 * graceful shutdown that fails on leaked RRefs passes. Two workers over loopback TCP.
 */
@Timeout(120)
class CutConnectionRRefsTest {
    private static final Duration BOUND = Duration.ofSeconds(20);

    private static int debug(RpcAgent agent, String key) {
        return Integer.parseInt(agent.getDebugInfo().get("rref." + key));
    }

    @Test
    void theDeletesOfRRefsGivenUpWhenTheirOwnersConnectionClosedReachTheOwner() throws Exception {
        RewritingTransport[] transports = new RewritingTransport[2];
        try (TcpStoreServer store = TcpStoreServer.start("127.0.0.1", 0)) {
            RpcBackendOptions options = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:" + store.port())
                    .rendezvousTimeout(Duration.ofSeconds(60)).heartbeatTimeout(Duration.ofSeconds(1))
                    .failOnRRefLeaks(true).applicationPackage(LocalCluster.TEST_CODE).build();
            CompletableFuture<RpcAgent> starting = CompletableFuture.supplyAsync(() -> start(1, options, store, transports));
            RpcAgent user = start(0, options, store, transports);
            RpcAgent owner = starting.get(60, TimeUnit.SECONDS);
            boolean shutDown = false;
            try {
                List<RRef<Integer>> rrefs = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    RRef<Integer> rref = user.remote("worker1", Ops::add, i, 1);
                    assertThat(rref.toHere()).isEqualTo(i + 1);
                    rrefs.add(rref);
                }
                assertThat(debug(owner, "num_owner_rrefs")).isEqualTo(3);

                assertThat(transports[0].cutConnections(new RpcException(RpcException.Code.UNAVAILABLE,
                        "connection reset (test)"))).isPositive();
                // the user gives the owner's RRefs up: the owner was lost
                await().atMost(BOUND).untilAsserted(() -> assertThatThrownBy(rrefs.getFirst()::toHere)
                        .isInstanceOfSatisfying(RpcException.class, e -> {
                            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                            assertThat(e.getMessage()).contains("worker1");
                        }));
                // passing one on fails as using it does (UNAVAILABLE), saying why
                assertThatThrownBy(() -> user.rpcAsync("worker1", Ops::identity, rrefs.get(1)).await())
                        .isInstanceOfSatisfying(RpcException.class, e -> {
                            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                            assertThat(e.getMessage())
                                    .contains("cannot call fork on it, its owner is gone: worker worker1 is lost");
                        });
                rrefs.forEach(RRef::close);
                // ... and the owner, which lives on, drops the values once the deletes get through
                await().atMost(BOUND).untilAsserted(() -> {
                    assertThat(owner.getDebugInfo()).containsEntry("rref.num_owner_rrefs", "0")
                            .containsEntry("rref.num_forks", "0");
                    assertThat(user.getDebugInfo()).containsEntry("rref.num_live_users", "0")
                            .containsEntry("rref.num_pending_users", "0").containsEntry("rref.num_pending_futures", "0")
                            .containsEntry("rref.num_messages_undelivered", "0");
                });
                // the group goes on: calls, and new RRefs, released as usual
                assertThat(user.rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
                try (RRef<Integer> next = user.remote("worker1", Ops::add, 2, 2)) {
                    assertThat(next.toHere()).isEqualTo(4);
                }
                await().atMost(BOUND).until(() -> debug(owner, "num_owner_rrefs") == 0
                        && user.getWorkerInfos().size() == 2 && owner.getWorkerInfos().size() == 2);
                shutDown = true;
                shutDownGracefully(user, owner); // throws on a leaked RRef (failOnRRefLeaks)
            } finally {
                if (!shutDown) {
                    user.shutdown(false, Duration.ZERO);
                    owner.shutdown(false, Duration.ZERO);
                }
            }
        }
    }

    private static void shutDownGracefully(RpcAgent... agents) throws Exception {
        List<CompletableFuture<Void>> shutdowns = new ArrayList<>();
        for (RpcAgent agent : agents) {
            shutdowns.add(CompletableFuture.runAsync(() -> agent.shutdown(true, Duration.ofSeconds(30))));
        }
        for (CompletableFuture<Void> shutdown : shutdowns) {
            shutdown.get(60, TimeUnit.SECONDS);
        }
    }

    private static RpcAgent start(int rank, RpcBackendOptions options, TcpStoreServer store,
                                  RewritingTransport[] transports) {
        TransportFactory cuttable = (opts, name, threads) -> transports[rank] =
                new RewritingTransport(TransportFactory.NETTY.create(opts, name, threads));
        TcpStore client = TcpStore.connect("127.0.0.1", store.port(), Duration.ofSeconds(60));
        return DefaultRpcAgent.start(new WorkerInfo("worker" + rank, rank), 2, options, client, client, cuttable);
    }
}
