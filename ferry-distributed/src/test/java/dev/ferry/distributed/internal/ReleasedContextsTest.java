package dev.ferry.distributed.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@link ReleasedContexts} says came after its context ended. */
class ReleasedContextsTest {
    private static final long WORKER3 = 3L << 48;
    private final ReleasedContexts released = new ReleasedContexts();

    @Test
    void aReleaseIsRememberedForItsIncarnationOnly() {
        released.add(new ContextKey(WORKER3 + 5, 10), 0);
        assertThat(released.ended(new ContextKey(WORKER3 + 5, 10))).isTrue();
        assertThat(released.ended(new ContextKey(WORKER3 + 5, 11))).as("a later incarnation's").isFalse();
        assertThat(released.ended(new ContextKey(WORKER3 + 6, 10))).isFalse();
    }

    @Test
    void theLatestReleasesAreRemembered() {
        for (long n = 0; n <= ReleasedContexts.CAPACITY; n++) {
            released.add(new ContextKey(WORKER3 + n, 10), 0);
        }
        assertThat(released.size()).isEqualTo(ReleasedContexts.CAPACITY);
        assertThat(released.ended(new ContextKey(WORKER3, 10))).as("the oldest went").isFalse();
        assertThat(released.ended(new ContextKey(WORKER3 + 1, 10))).isTrue();
    }

    @Test
    void everyContextBelowTheCreatorsMarkEnded() {
        assertThat(released.add(new ContextKey(WORKER3 + 7, 10), 5)).isTrue();
        assertThat(released.ended(new ContextKey(WORKER3 + 4, 10))).isTrue();
        assertThat(released.ended(new ContextKey(WORKER3 + 5, 10))).as("still open when it was sent").isFalse();
        assertThat(released.add(new ContextKey(WORKER3 + 8, 10), 3)).as("an older mark tells nothing").isFalse();
        assertThat(released.closedBelow(3, 10)).isEqualTo(5);
        assertThat(released.ended(new ContextKey(WORKER3 + 4, 11))).as("not a later incarnation's").isFalse();
    }

    @Test
    void aLaterIncarnationEndsTheEarlierOnesContexts() {
        assertThat(released.seen(3, 10)).as("the first seen").isFalse();
        assertThat(released.seen(3, 10)).isFalse();
        assertThat(released.seen(3, 12)).isTrue();
        assertThat(released.ended(new ContextKey(WORKER3 + 1, 10))).isTrue();
        assertThat(released.ended(new ContextKey(WORKER3 + 1, 12))).isFalse();
        assertThat(released.seen(3, 11)).as("an earlier one, late").isFalse();
        assertThat(released.ended(new ContextKey(WORKER3 + 1, 11))).isTrue();
    }
}
