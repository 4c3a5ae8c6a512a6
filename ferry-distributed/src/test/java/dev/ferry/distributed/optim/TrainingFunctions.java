package dev.ferry.distributed.optim;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.optim.Optimizer;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** Module constructors the tests run on other workers (same seeds as local copies). */
public final class TrainingFunctions {
    private TrainingFunctions() {
    }

    public static Linear hidden() {
        return new Linear(3, 4, true, new Generator(1));
    }

    public static Linear output() {
        return new Linear(4, 1, true, new Generator(2));
    }

    public static Module failing() {
        throw new IllegalStateException("no module today");
    }

    /** A module whose forward reports its training mode (1 training, 0 eval). */
    public static Module modeProbe() {
        return new Module() {
            @Override
            public Tensor forward(Tensor input) {
                return input.mul(isTraining() ? 1 : 0);
            }
        };
    }

    /** The most updates of {@link OverlapProbe}s seen running at once in this process. */
    static final AtomicInteger MOST_AT_ONCE = new AtomicInteger();
    private static final AtomicInteger RUNNING = new AtomicInteger();

    /**
     * An optimizer that records how many of its kind update at once: each update waits (up to
     * 300 ms) for another to join it, so two steps that may overlap do.
     */
    public static OverlapProbe overlapProbe(List<Tensor> params) {
        return new OverlapProbe(params);
    }

    public static Integer mostAtOnce() {
        return MOST_AT_ONCE.get();
    }

    static final class OverlapProbe extends Optimizer {
        OverlapProbe(List<Tensor> params) {
            super(params);
        }

        @Override
        protected void update(Tensor param, Tensor grad) {
            MOST_AT_ONCE.accumulateAndGet(RUNNING.incrementAndGet(), Math::max);
            long until = System.nanoTime() + 300_000_000L;
            while (RUNNING.get() < 2 && System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
            MOST_AT_ONCE.accumulateAndGet(RUNNING.get(), Math::max);
            param.sub_(grad);
            RUNNING.decrementAndGet();
        }
    }
}
