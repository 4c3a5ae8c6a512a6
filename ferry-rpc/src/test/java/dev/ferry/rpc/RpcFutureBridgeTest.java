package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bridges to and from {@link java.util.concurrent.CompletionStage}. */
@Timeout(30)
class RpcFutureBridgeTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void toCompletableFutureCompletesWithTheValue() throws Exception {
        RpcFuture<String> future = new RpcFuture<>();
        CompletableFuture<String> view = future.toCompletableFuture();
        assertThat(view).isNotDone();
        CompletableFuture.runAsync(() -> future.setResult("v"));
        assertThat(view.get(10, TimeUnit.SECONDS)).isEqualTo("v");
        assertThat(RpcFuture.completed(3).toCompletableFuture()).isCompletedWithValue(3);
    }

    @Test
    void toCompletableFutureFailsWithTheStoredException() {
        RpcException failure = new RpcException(RpcException.Code.UNAVAILABLE, "peer gone");
        CompletableFuture<Integer> view = RpcFuture.<Integer>failed(failure).toCompletableFuture();
        assertThatThrownBy(() -> view.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isSameAs(failure);
        assertThat(view.exceptionNow()).isSameAs(failure);
    }

    @Test
    void completingTheViewDoesNotTouchTheFuture() {
        RpcFuture<String> future = new RpcFuture<>();
        CompletableFuture<String> completed = future.toCompletableFuture();
        completed.complete("forged");
        assertThat(future.done()).isFalse();

        future.setResult("real");
        assertThat(future.value()).isEqualTo("real");
        assertThat(completed.join()).isEqualTo("forged");
        assertThat(future.toCompletableFuture()).isCompletedWithValue("real");
    }

    @Test
    void cancellingTheViewCancelsTheFutureAndOnlyThatView() {
        RpcFuture<String> future = new RpcFuture<>();
        CompletableFuture<String> other = future.toCompletableFuture();
        CompletableFuture<String> cancelled = future.toCompletableFuture();
        CompletableFuture<Integer> dependent = cancelled.thenApply(String::length);
        assertThat(cancelled.cancel(true)).isTrue();

        assertThat(cancelled).isCancelled();
        assertThat(dependent).isCompletedExceptionally();
        assertThatThrownBy(future::value).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.CANCELLED));
        assertThat(other).isCompletedExceptionally().isNotCancelled();
        assertThat(future.cancel(true)).as("already done").isFalse();
    }

    @Test
    void fromCompletionStageFollowsTheStage() {
        CompletableFuture<String> source = new CompletableFuture<>();
        RpcFuture<String> future = RpcFuture.fromCompletionStage(source);
        assertThat(future.done()).isFalse();
        CompletableFuture.runAsync(() -> source.complete("x"));
        assertThat(future.await(WAIT)).isEqualTo("x");

        assertThat(RpcFuture.fromCompletionStage(CompletableFuture.completedFuture(1)).done()).isTrue();
    }

    @Test
    void fromCompletionStageUnwrapsCompletionException() {
        IllegalStateException failure = new IllegalStateException("stage failed");
        CompletableFuture<Integer> source = new CompletableFuture<>();
        // A dependent stage reports the failure wrapped in a CompletionException.
        RpcFuture<Integer> future = RpcFuture.fromCompletionStage(source.thenApply(v -> v + 1));
        source.completeExceptionally(failure);
        assertThat(future.exceptionNow()).isSameAs(failure);
        assertThatThrownBy(future::await).isSameAs(failure);
    }

    @Test
    void fromCompletionStageKeepsCancellation() {
        CompletableFuture<Integer> source = new CompletableFuture<>();
        RpcFuture<Integer> future = RpcFuture.fromCompletionStage(source);
        source.cancel(false);
        assertThatThrownBy(future::value).isInstanceOf(CancellationException.class);
    }

    @Test
    void roundTrip() {
        RpcFuture<Integer> original = new RpcFuture<>();
        RpcFuture<Integer> back = RpcFuture.fromCompletionStage(original.toCompletableFuture().thenApply(v -> v * 2));
        original.setResult(21);
        assertThat(back.await(WAIT)).isEqualTo(42);
    }
}
