package dev.ferry.distributed.internal;

import dev.ferry.rpc.spi.TrustedFunctions;

import java.util.Collection;
import java.util.List;

/**
 * The classes whose methods ferry-distributed calls on other workers, so that they work even when
 * an application narrows the function allow-list to its own packages.
 */
public final class DistributedEntryPoints implements TrustedFunctions {

    /** Public for {@link java.util.ServiceLoader}. */
    public DistributedEntryPoints() {
    }

    @Override
    public Collection<Class<?>> classes() {
        return List.of(GradientCalls.class, OptimizerCalls.class, ModuleCalls.class,
                dev.ferry.distributed.internal.pipeline.PipelineCalls.class);
    }
}
