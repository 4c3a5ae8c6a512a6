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
            assertThat(segment.releaseOrWhyNot(offset, new Object())).isEqualTo("lent on another connection");
            assertThat(segment.releaseOrWhyNot(offset + 8, owner)).isEqualTo("not lent");
            assertThat(segment.releaseOrWhyNot(1L << 40, owner)).isEqualTo("outside the segment");
            assertThat(segment.releaseOrWhyNot(offset, owner)).isNull();
            assertThat(segment.releaseOrWhyNot(offset, owner)).isEqualTo("not lent");
            assertThat(segment.lentBytes()).isZero();
        } finally {
            segment.close();
        }
    }

    private static long take(SharedSegment segment, int length, Object owner) {
        return segment.take(length, owner).range().offset();
    }
}
