package dev.ferry.rpc.internal.security;

/**
 * Tells a stalled connection from a slow or idle one, from periodic looks at what it has received:
 * stalled means in the middle of a frame at two looks in a row, with no frame finished and less
 * than {@link ConnectionLimits#STALL_PROGRESS_BYTES} received between them (half a frame, or a byte
 * every 100 ms). An idle connection (between frames) never stalls, and a large frame arriving at a
 * megabyte per period or more never does either. So a stall is caught within two periods.
 *
 * <p>Not thread-safe: one thread looks (a scheduler, or the connection's event loop).
 */
public final class StallDetector {
    private long position;
    private long frames;
    private boolean inFrame;

    /**
     * One look: {@code received} bytes so far, {@code finished} frames so far, and whether a frame
     * is begun and not finished now. True if the connection stalled since the previous look.
     */
    public boolean stalled(long received, long finished, boolean midFrame) {
        boolean stalled = midFrame && inFrame && finished == frames
                && received - position < ConnectionLimits.STALL_PROGRESS_BYTES;
        position = received;
        frames = finished;
        inFrame = midFrame;
        return stalled;
    }
}
