package dev.ferry.distributed.internal.pipeline;

import dev.ferry.distributed.TensorSerialization;
import dev.ferry.rpc.spi.SerializationExtension;
import dev.ferry.rpc.spi.TypeRegistry;

/**
 * Registers the values pipeline steps send between workers, with ids next to the tensor types'
 * (part of the wire format: never renumber). Installed by {@link java.util.ServiceLoader}.
 */
public final class PipelineTypes implements SerializationExtension {
    public static final int STAGE_PLAN_ID = TensorSerialization.PARAMETER_ID + 1;

    /** Public for {@link java.util.ServiceLoader}. */
    public PipelineTypes() {
    }

    @Override
    public void register(TypeRegistry registry) {
        registry.register(StagePlan.class, STAGE_PLAN_ID);
    }
}
