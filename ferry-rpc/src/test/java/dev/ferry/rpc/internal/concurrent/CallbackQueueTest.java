package dev.ferry.rpc.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class CallbackQueueTest {

    @Test
    void runsCallbacksInRegistrationOrderThenInline() {
        CallbackQueue queue = new CallbackQueue();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = i;
            queue.add(() -> order.add(n));
        }
        assertThat(order).isEmpty();
        assertThat(queue.pendingCount()).isEqualTo(5);

        queue.fire();
        assertThat(order).containsExactly(0, 1, 2, 3, 4);
        assertThat(queue.pendingCount()).isZero();

        queue.add(() -> order.add(5));
        assertThat(order).containsExactly(0, 1, 2, 3, 4, 5);
    }

    @Test
    void throwingCallbackDoesNotStopTheOthers() {
        CallbackQueue queue = new CallbackQueue();
        List<String> order = new ArrayList<>();
        queue.add(() -> order.add("a"));
        queue.add(() -> {
            throw new IllegalStateException("cb fail");
        });
        queue.add(() -> order.add("c"));
        queue.fire();
        assertThat(order).containsExactly("a", "c");
    }

    @Test
    void firesOnlyOnce() {
        CallbackQueue queue = new CallbackQueue();
        queue.fire();
        assertThatThrownBy(queue::fire).isInstanceOf(IllegalStateException.class);
    }

    /**
     * Queues fired inside callbacks nest up to {@link CallbackQueue#MAX_NESTED_FIRES}; deeper ones
     * are deferred to the outermost queue, which runs them before its own next callback.
     */
    @Test
    void deepNestingIsDeferredToTheOutermostQueue() {
        int chain = CallbackQueue.MAX_NESTED_FIRES + 10;
        List<CallbackQueue> queues = new ArrayList<>();
        for (int i = 0; i < chain; i++) {
            queues.add(new CallbackQueue());
        }
        List<String> events = new ArrayList<>();
        int[] maxDepthSeen = {0};
        int[] depth = {0};
        for (int i = 0; i < chain; i++) {
            int n = i;
            queues.get(i).add(() -> {
                depth[0]++;
                maxDepthSeen[0] = Math.max(maxDepthSeen[0], depth[0]);
                events.add("run " + n);
                if (n + 1 < chain) {
                    queues.get(n + 1).fire();
                }
                depth[0]--;
            });
        }
        queues.get(0).add(() -> events.add("sibling of 0"));

        queues.get(0).fire();

        List<String> expected = new ArrayList<>();
        for (int i = 0; i < chain; i++) {
            expected.add("run " + i);
        }
        expected.add("sibling of 0");
        assertThat(events).containsExactlyElementsOf(expected);
        assertThat(maxDepthSeen[0]).isEqualTo(CallbackQueue.MAX_NESTED_FIRES);
        for (CallbackQueue queue : queues) {
            assertThat(queue.pendingCount()).isZero();
        }
    }

    @Test
    void callbackAddedToADeferredQueueRunsWhenItDrains() {
        CallbackQueue outer = new CallbackQueue();
        List<String> events = new ArrayList<>();
        // outer fires at depth 1 and chain[k] at depth k + 2, so the last one is the first deferred.
        CallbackQueue[] chain = new CallbackQueue[CallbackQueue.MAX_NESTED_FIRES];
        for (int i = 0; i < chain.length; i++) {
            chain[i] = new CallbackQueue();
        }
        for (int i = 0; i + 1 < chain.length; i++) {
            CallbackQueue next = chain[i + 1];
            chain[i].add(next::fire);
        }
        CallbackQueue deepest = chain[chain.length - 1];
        chain[chain.length - 2].add(() -> {
            // deepest has fired but is deferred: a callback added now is queued, not run inline.
            deepest.add(() -> events.add("late"));
            events.add("added");
        });
        deepest.add(() -> events.add("early"));
        outer.add(chain[0]::fire);
        outer.fire();

        assertThat(events).containsExactly("added", "early", "late");
    }
}
