package dev.ferry.rpc.internal.transport;

import java.time.Instant;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Who a shared-memory peer is, beyond one connection: the token of the segment it announced (one
 * per transport, random, so it tells a peer's transports apart and stays the same when the peer
 * reconnects) and, when its announcement names it, its process (pid and start time, so a reused
 * pid is not taken for the peer). Ranges of our segment lent on a connection that closed are
 * tagged with it ({@link SharedSegment#orphan}): the same peer may release them on a later
 * connection, and once its process is gone they are free.
 *
 * @param token the peer's segment token
 * @param pid   the peer's process id, or -1 when its announcement does not name it
 * @param start when that process started, if known
 */
record PeerProcess(long token, long pid, Optional<Instant> start) {
    /** {@code /proc/<pid>/fd/<n>} (an unlinked segment) or {@code .../ferry-<pid>-<hex>.shm}. */
    private static final Pattern PID = Pattern.compile("^/proc/([0-9]{1,10})/fd/[0-9]+$|/ferry-([0-9]{1,10})-[0-9a-f]+\\.shm$");

    /** The peer that announced {@code path} with {@code token}, its process looked up now. */
    static PeerProcess of(long token, String path) {
        Matcher matcher = PID.matcher(path);
        if (!matcher.find()) {
            return new PeerProcess(token, -1, Optional.empty());
        }
        long pid = Long.parseLong(matcher.group(1) != null ? matcher.group(1) : matcher.group(2));
        return new PeerProcess(token, pid, ProcessHandle.of(pid).flatMap(process -> process.info().startInstant()));
    }

    /**
     * Whether the peer's process has certainly ended (so it holds no view of our memory any more).
     * False when unknown, and always for this process (a peer transport in this JVM may have
     * closed, but the application may still hold views it received).
     */
    boolean isGone() {
        if (pid < 0 || pid == ProcessHandle.current().pid()) {
            return false;
        }
        Optional<ProcessHandle> process = ProcessHandle.of(pid);
        if (process.isEmpty() || !process.get().isAlive()) {
            return true;
        }
        // The pid now belongs to another process.
        Optional<Instant> now = process.get().info().startInstant();
        return start.isPresent() && now.isPresent() && !start.get().equals(now.get());
    }
}
