package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.StallDetector;
import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection whose peer stalls in the middle of a frame (half a frame, a byte every
 * 100 ms: see {@link StallDetector}), looking every {@code stallTimeout} on the channel's event
 * loop. A connection this worker has paused (its read throttle) is not the peer's stall, and an
 * idle one (between frames) is not a stall at all.
 */
final class StallWatch {
    private StallWatch() {
    }

    /** Watches {@code channel}, whose bytes {@code units} reads, until it closes. */
    static void start(Channel channel, UnitReader units, Duration stallTimeout) {
        StallDetector detector = new StallDetector();
        long period = stallTimeout.toNanos();
        ScheduledFuture<?> looks = channel.eventLoop().scheduleAtFixedRate(() -> {
            boolean reading = channel.config().isAutoRead();
            if (detector.stalled(units.receivedBytes(), units.deliveredMessages(), reading && units.midFrame())) {
                channel.pipeline().fireExceptionCaught(new RpcException(RpcException.Code.PROTOCOL_ERROR,
                        "the peer stalled in the middle of a frame: less than " + ConnectionLimits.STALL_PROGRESS_BYTES
                                + " bytes of it in " + stallTimeout.toMillis() + " ms"));
            }
        }, period, period, TimeUnit.NANOSECONDS);
        channel.closeFuture().addListener(closed -> looks.cancel(false));
    }
}
