package dev.ferry.distributed.optim;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.Module;

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
}
