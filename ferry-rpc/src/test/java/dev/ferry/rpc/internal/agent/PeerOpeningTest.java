package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.transport.PeerChannel;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Sends waiting for a connection leave in the order they were made (a CompletableFuture's own dependents run last-in first-out). */
class PeerOpeningTest {

    /** A channel that only stands for itself: the waiters receive it, nothing calls it. */
    private static final PeerChannel CHANNEL = (PeerChannel) Proxy.newProxyInstance(
            PeerChannel.class.getClassLoader(), new Class<?>[] {PeerChannel.class}, (proxy, method, args) -> {
                if (method.getName().equals("toString")) {
                    return "channel";
                }
                throw new AssertionError("PeerOpening must only hand the channel on, not use it: " + method.getName());
            });

    @Test
    void waitersRunInTheOrderTheyCameOnceTheConnectionOpens() {
        PeerOpening opening = new PeerOpening();
        List<Integer> ran = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            int n = i;
            opening.whenOpen((channel, error) -> {
                assertThat(channel).isSameAs(CHANNEL);
                assertThat(error).isNull();
                ran.add(n);
            });
        }
        assertThat(opening.openNow()).isNull();
        assertThat(ran).isEmpty();

        opening.complete(CHANNEL);

        assertThat(ran).hasSize(100).isSorted();
        assertThat(opening.openNow()).isSameAs(CHANNEL);
    }

    @Test
    void theConnectionIsNotOpenForASenderUntilTheWaitersBeforeItHaveRun() throws Exception {
        PeerOpening opening = new PeerOpening();
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        List<String> ran = java.util.Collections.synchronizedList(new ArrayList<>());
        opening.whenOpen((channel, error) -> {
            firstRunning.countDown();
            await(releaseFirst);
            ran.add("first");
        });
        Thread completing = Thread.ofPlatform().start(() -> opening.complete(CHANNEL));
        assertThat(firstRunning.await(10, TimeUnit.SECONDS)).isTrue();

        // Open, but a waiter is still running: a sender must queue behind it, not send at once.
        assertThat(opening.isDone()).isTrue();
        assertThat(opening.openNow()).isNull();
        CountDownLatch secondRan = new CountDownLatch(1);
        opening.whenOpen((channel, error) -> {
            ran.add("second");
            secondRan.countDown();
        });
        assertThat(ran).isEmpty();

        releaseFirst.countDown();
        assertThat(secondRan.await(10, TimeUnit.SECONDS)).isTrue();
        completing.join();
        assertThat(ran).containsExactly("first", "second");
        assertThat(opening.openNow()).isSameAs(CHANNEL);
    }

    @Test
    void aFailedOpeningReachesEveryWaiterInOrderAndAThrowingWaiterStopsNone() {
        PeerOpening opening = new PeerOpening();
        List<String> ran = new ArrayList<>();
        opening.whenOpen((channel, error) -> {
            ran.add("0 " + error.getMessage());
            throw new IllegalStateException("a waiter's own failure");
        });
        opening.whenOpen((channel, error) -> ran.add("1 " + error.getMessage() + " " + channel));

        opening.completeExceptionally(new IllegalStateException("unreachable"));

        assertThat(ran).containsExactly("0 unreachable", "1 unreachable null");
        assertThat(opening.openNow()).isNull();
    }

    @Test
    void anOpenedConnectionRunsALateWaiterAtOnceOnItsThread() {
        PeerOpening opening = PeerOpening.opened(CHANNEL);
        Thread[] ranOn = new Thread[1];
        opening.whenOpen((channel, error) -> ranOn[0] = Thread.currentThread());
        assertThat(ranOn[0]).isSameAs(Thread.currentThread());
        assertThat(opening.openNow()).isSameAs(CHANNEL);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
