package dev.ferry.rpc.internal.store;

import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * In-JVM locks that serialize access to store files before the OS file lock is taken.
 *
 * <p>Why a static table, against the no-singletons rule: {@link java.nio.channels.FileChannel#lock()}
 * locks belong to the whole JVM, and a second channel on the same file in the same JVM gets an
 * {@link java.nio.channels.OverlappingFileLockException} instead of waiting. Two {@code FileStore}s
 * on one file in one JVM (two ranks in a test, or two stores in one worker) must therefore agree on
 * one JVM-wide lock per file, which only process-wide state can give.
 *
 * <p>Files map to a fixed set of stripes by their file key (device and inode), so nothing is ever
 * allocated or leaked per file; two unrelated files sharing a stripe merely take turns. Each stripe
 * also carries a condition that in-JVM writers signal, so waiters in this JVM wake at once instead
 * of at their next poll.
 */
final class FileLockStripes {
    private static final Stripe[] STRIPES = new Stripe[64];

    static {
        for (int i = 0; i < STRIPES.length; i++) {
            STRIPES[i] = new Stripe();
        }
    }

    private FileLockStripes() {
    }

    /** The lock and change condition of one stripe. */
    static final class Stripe {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
    }

    static Stripe forFile(Object fileKey) {
        return STRIPES[Math.floorMod(Objects.hashCode(fileKey), STRIPES.length)];
    }
}
