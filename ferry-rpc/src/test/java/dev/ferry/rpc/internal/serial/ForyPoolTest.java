package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.internal.concurrent.AgentThreads;
import org.apache.fory.Fory;
import org.apache.fory.config.ForyBuilder;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class ForyPoolTest {
    private final AtomicInteger built = new AtomicInteger();
    private final ForyPool pool = new ForyPool(new ForyBuilder().withXlang(false).requireClassRegistration(false),
            fory -> built.incrementAndGet());

    @Test
    void applicationThreadsShareTheIdleInstances() throws Exception {
        Fory first = pool.execute(f -> f);
        Fory later = CompletableFuture.supplyAsync(() -> pool.execute(f -> f), r -> Thread.ofPlatform().start(r))
                .get(10, TimeUnit.SECONDS);
        assertThat((Object) later).isSameAs(first);
        assertThat(built).hasValue(1); // the one built up front
    }

    @Test
    void anAgentThreadKeepsAnInstanceOfItsOwnAndBorrowsOnlyWhenReentrant() throws Exception {
        Fory shared = pool.execute(f -> f);
        List<Fory> seen = new ArrayList<>();
        Thread agentThread = AgentThreads.unstarted("agent-thread", () -> {
            seen.add(pool.execute(f -> f));
            seen.add(pool.execute(outer -> {
                seen.add(pool.execute(inner -> inner)); // re-entrant: not the one in use
                return outer;
            }));
        });
        agentThread.start();
        agentThread.join(10_000);
        assertThat(seen).hasSize(3);
        Fory own = seen.get(0);
        assertThat((Object) seen.get(2)).isSameAs(own);
        assertThat((Object) own).isNotSameAs(shared);
        assertThat((Object) seen.get(1)).isSameAs(shared).isNotSameAs(own);
        assertThat((Object) pool.execute(f -> f)).isSameAs(shared); // the shared one went back to the pool
        assertThat(built).hasValue(2);
    }
}
