package dev.ferry.distributed.pipeline;

import java.io.Serial;

/**
 * A {@link Pipeline} step failed: a stage's forward or backward pass threw, its worker went away or
 * did not answer in time, or the loss function failed. The step's other stages were stopped; the
 * pipeline is ready for the next step. The cause is the failure itself: for a stage on another
 * worker an {@link dev.ferry.rpc.RpcException} carrying the remote error, type, message and stack.
 */
public final class PipelineException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** {@link #stage()} of a failure of the loss function, on the driver. */
    public static final int LOSS = -1;

    private final int stage;

    PipelineException(String message, int stage, Throwable cause) {
        super(message, cause);
        this.stage = stage;
    }

    /** The index of the stage that failed, or {@link #LOSS}. */
    public int stage() {
        return stage;
    }
}
