package dev.ferry.distributed.internal;

import dev.ferry.rpc.RRef;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.nn.Module;

import java.util.List;

/** What {@code RemoteModule} runs on the worker that owns the module. */
public final class ModuleCalls {
    private ModuleCalls() {
    }

    /** Answers once the module exists (so that a failing constructor surfaces at creation). */
    public static Boolean ready(Module module) {
        return Boolean.TRUE;
    }

    public static Tensor forward(Module module, Tensor input) {
        return module.forward(input);
    }

    /** An RRef owned here to each of the module's parameters. */
    public static List<RRef<Tensor>> parameterRRefs(Module module) {
        return module.parameters().stream().map(RRef::of).toList();
    }

    public static Boolean train(Module module, Boolean mode) {
        module.train(mode);
        return Boolean.TRUE;
    }

    public static Boolean isTraining(Module module) {
        return module.isTraining();
    }
}
