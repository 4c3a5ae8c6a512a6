package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A user function's failure reaches the caller whole (worker, remote class, remote message), on
 * every call kind, whichever worker ran it and whatever the timing.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteErrorsReachTheCallerTest {
    private static final int CALLS = 1_000;
    private LocalCluster cluster;

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(2);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    private static void assertWhole(RpcException e, String worker, String message) {
        assertThat(e.code()).as("%s", e).isEqualTo(RpcException.Code.REMOTE_ERROR);
        assertThat(e.workerName()).as("%s", e).isEqualTo(worker);
        assertThat(e.remoteClassName()).as("%s", e).isEqualTo(IllegalArgumentException.class.getName());
        assertThat(e.remoteMessage()).as("%s", e).isEqualTo(message);
        assertThat(e).hasMessageContaining("On " + worker + ": java.lang.IllegalArgumentException: " + message);
    }

    @Test
    void everyFailedRemoteToAPeerKeepsTheWholeError() {
        RpcAgent zero = cluster.agent(0);
        // Many at once, then each waited for: creation replies and fetches race in every order.
        List<RRef<Integer>> failing = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
            failing.add(zero.remote("worker1", Ops::fail, "no " + i));
        }
        for (int i = 0; i < CALLS; i++) {
            assertWhole(catchThrowableOfType(RpcException.class, failing.get(i)::toHere), "worker1", "no " + i);
        }
    }

    @Test
    void aFailedRemoteToTheCallersOwnWorkerFailsAsToAnother() {
        RpcAgent zero = cluster.agent(0);
        RRef<Integer> own = zero.remote("worker0", Ops::fail, "here");
        RRef<Integer> other = zero.remote("worker1", Ops::fail, "here");

        RpcException local = catchThrowableOfType(RpcException.class, own::toHere);
        RpcException remote = catchThrowableOfType(RpcException.class, other::toHere);

        assertWhole(local, "worker0", "here");
        assertWhole(remote, "worker1", "here");
        assertThat(local.getMessage().replace("worker0", "W")).isEqualTo(remote.getMessage().replace("worker1", "W"));
    }

    @Test
    void everyCallKindKeepsTheWholeError() {
        RpcAgent zero = cluster.agent(0);
        for (String worker : List.of("worker0", "worker1")) {
            assertWhole(catchThrowableOfType(RpcException.class, () -> zero.rpcSync(worker, Ops::fail, "sync")),
                    worker, "sync");
            assertWhole(catchThrowableOfType(RpcException.class, zero.rpcAsync(worker, Ops::fail, "async")::await),
                    worker, "async");
            RRef<Integer> rref = zero.remote(worker, Ops::fail, "remote");
            assertWhole(catchThrowableOfType(RpcException.class, rref::toHere), worker, "remote");
        }
    }
}
