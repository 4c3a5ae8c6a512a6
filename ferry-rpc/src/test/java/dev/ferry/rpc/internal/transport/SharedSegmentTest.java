package dev.ferry.rpc.internal.transport;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Lending and releasing ranges of a segment: no range is ever lent twice, releases are checked. */
class SharedSegmentTest {
    private static final Path SHM = Path.of("/dev/shm");
    private static final int G = SharedSegment.GRANULE;

    @Test
    void freedRangesNeverOverlapLentOnes() throws Exception {
        assumeTrue(Files.isDirectory(SHM));
        SharedSegment segment = SharedSegment.create(SHM, 16L * G);
        try {
            Object owner = new Object();
            long a = take(segment, G, owner);
            long b = take(segment, G, owner);
            take(segment, G, owner);
            long d = take(segment, 2 * G, owner);
            take(segment, G, owner);
            long f = take(segment, G, owner);
            assertThat(a).isEqualTo(G);
            // Free ranges at b (1 granule), d (2) and f with the tail (10): a tree of three, d inside it.
            assertThat(segment.release(b, owner)).isTrue();
            assertThat(segment.release(d, owner)).isTrue();
            assertThat(segment.release(f, owner)).isTrue();
            assertThat(take(segment, 2 * G, owner)).isEqualTo(d);
            // 11 granules are free now, not one more.
            Set<Long> offsets = new HashSet<>();
            List<Long> taken = new ArrayList<>();
            for (var range = segment.take(G, owner); range != null; range = segment.take(G, owner)) {
                taken.add(range.range().offset());
                offsets.add(range.range().offset());
            }
            assertThat(taken).hasSize(11).hasSameSizeAs(offsets);
        } finally {
            segment.close();
        }
    }

    @Test
    void onlyTheOwnerReleasesAndOnlyOnce() throws Exception {
        assumeTrue(Files.isDirectory(SHM));
        SharedSegment segment = SharedSegment.create(SHM, 4L * G);
        try {
            Object owner = new Object();
            long offset = take(segment, 1000, owner);
            assertThat(segment.releaseOrWhyNot(offset, new Object(), null)).isEqualTo("lent on another connection");
            assertThat(segment.releaseOrWhyNot(offset + 8, owner, null)).isEqualTo("not lent");
            assertThat(segment.releaseOrWhyNot(1L << 40, owner, null)).isEqualTo("outside the segment");
            assertThat(segment.releaseOrWhyNot(offset, owner, null)).isNull();
            assertThat(segment.releaseOrWhyNot(offset, owner, null)).isEqualTo("not lent");
            assertThat(segment.lentBytes()).isZero();
        } finally {
            segment.close();
        }
    }

    @Test
    void aRangeLentOnAClosedConnectionComesBackFromTheSamePeerOrWhenItsProcessEnded() throws Exception {
        assumeTrue(Files.isDirectory(SHM));
        SharedSegment segment = SharedSegment.create(SHM, 4L * G);
        try {
            PeerProcess alive = PeerProcess.of(42, "/proc/" + ProcessHandle.current().pid() + "/fd/7");
            Process exited = new ProcessBuilder("true").start();
            exited.waitFor();
            PeerProcess gone = new PeerProcess(43, exited.pid(), java.util.Optional.empty());
            Object closedLink = new Object();
            long first = take(segment, 1000, closedLink);
            long second = take(segment, 1000, closedLink);
            segment.orphan(closedLink, alive);
            Object goneLink = new Object();
            long third = take(segment, 1000, goneLink);
            segment.orphan(goneLink, gone);
            assertThat(segment.orphanedBytes()).isEqualTo(3L * G);

            // Only the same peer (its token) may release it, on any of its connections.
            assertThat(segment.releaseOrWhyNot(first, new Object(), null))
                    .isEqualTo("lent to another peer on a closed connection");
            assertThat(segment.releaseOrWhyNot(first, new Object(), alive)).isNull();
            assertThat(segment.releaseOrWhyNot(second, new Object(), gone))
                    .isEqualTo("lent to another peer on a closed connection");
            assertThat(segment.releaseOrWhyNot(second, new Object(), new PeerProcess(42, -1, java.util.Optional.empty())))
                    .isNull();
            // A process that ended reads nothing: its ranges are free; a live one's stay lent.
            Object other = new Object();
            take(segment, 1000, other);
            segment.orphan(other, alive);
            assertThat(segment.reclaimGone()).isEqualTo(G);
            assertThat(segment.releaseOrWhyNot(third, goneLink, gone)).isEqualTo("not lent");
            assertThat(segment.orphanedBytes()).isEqualTo(G);
            assertThat(segment.lentBytes()).isEqualTo(G);
        } finally {
            segment.close();
        }
    }

    @Test
    void aPeerProcessIsKnownByTheSegmentItAnnounced() {
        long self = ProcessHandle.current().pid();
        assertThat(PeerProcess.of(1, "/proc/" + self + "/fd/12").pid()).isEqualTo(self);
        assertThat(PeerProcess.of(1, "/dev/shm/ferry-" + self + "-1f.shm").pid()).isEqualTo(self);
        assertThat(PeerProcess.of(1, "/somewhere/else").pid()).isEqualTo(-1);
        assertThat(PeerProcess.of(1, "/proc/" + self + "/fd/12").isGone()).isFalse();
        assertThat(PeerProcess.of(1, "/somewhere/else").isGone()).isFalse();
    }

    private static long take(SharedSegment segment, int length, Object owner) {
        return segment.take(length, owner).range().offset();
    }
}
