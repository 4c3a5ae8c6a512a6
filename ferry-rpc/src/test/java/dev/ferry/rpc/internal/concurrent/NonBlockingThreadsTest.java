package dev.ferry.rpc.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;

@Timeout(30)
class NonBlockingThreadsTest {

    @Test
    void factoryMakesNamedDaemonFastThreadLocalThreads() {
        ThreadFactory factory = NonBlockingThreads.factory("ferry-io");
        Thread first = factory.newThread(() -> { });
        Thread second = factory.newThread(() -> { });

        assertThat(first.getName()).isEqualTo("ferry-io-1");
        assertThat(second.getName()).isEqualTo("ferry-io-2");
        assertThat(first.isDaemon()).isTrue();
        assertThat(first).isInstanceOf(FastThreadLocalThread.class);
        assertThat(((FastThreadLocalThread) first).permitBlockingCalls()).isFalse();
        assertThat(NonBlockingThreads.isNonBlocking(first)).isTrue();
    }

    @Test
    void otherThreadsAreNotNonBlocking() {
        assertThat(NonBlockingThreads.currentIsNonBlocking()).isFalse();
        assertThat(NonBlockingThreads.isNonBlocking(new Thread(() -> { }))).isFalse();
        assertThat(NonBlockingThreads.isNonBlocking(new FastThreadLocalThread(() -> { }))).isFalse();
        assertThat(NonBlockingThreads.isNonBlocking(null)).isFalse();
    }

    @Test
    void runningThreadKnowsItIsNonBlockingAndHasFastThreadLocals() throws Exception {
        FastThreadLocal<String> local = new FastThreadLocal<>();
        CompletableFuture<String> seen = new CompletableFuture<>();
        Thread thread = NonBlockingThreads.factory("probe").newThread(() -> {
            local.set("fast");
            seen.complete(NonBlockingThreads.currentIsNonBlocking() + " "
                    + FastThreadLocalThread.currentThreadHasFastThreadLocal() + " " + local.get());
        });
        thread.start();
        assertThat(seen.get(10, TimeUnit.SECONDS)).isEqualTo("true true fast");
        thread.join(10_000);
        assertThat(thread.isAlive()).isFalse();
    }
}
