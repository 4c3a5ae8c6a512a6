package probe;

import dev.ferry.rpc.internal.serial.ClassPolicy;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.serial.ObjectCodec;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a build of ferry-rpc's codec costs in steady state on application records (Fory's generated
 * serializers against its interpreted ones): a round trip (encode, then decode) of one small record
 * and of a list of 100, each timed over 1 s after 3 s of warm-up, in one JVM.
 *
 * <pre>
 *   java -cp probe.jar:ferry-rpc.jar:lib/* probe.RecordCodecCost
 * </pre>
 */
public final class RecordCodecCost {
    public record Point(int x, int y, String label) {}

    public record Sample(long id, double value, String tag, List<Integer> counts) {}

    public static void main(String[] args) {
        ObjectCodec codec = new ObjectCodec(new ClassPolicy(List.of("probe")), List.of(), 1 << 20);
        Point point = new Point(1, 2, "p");
        List<Sample> samples = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            samples.add(new Sample(i, i * 0.5, "tag" + i, List.of(i, i + 1, i + 2)));
        }
        System.out.printf(Locale.ROOT, "point round trip %.0f ns, 100 samples round trip %.0f ns%n",
                nanosPerRoundTrip(codec, point), nanosPerRoundTrip(codec, samples));
    }

    private static double nanosPerRoundTrip(ObjectCodec codec, Object value) {
        run(codec, value, 3_000_000_000L);
        return run(codec, value, 1_000_000_000L);
    }

    private static double run(ObjectCodec codec, Object value, long nanos) {
        long start = System.nanoTime();
        long count = 0;
        Object sink = null;
        while (System.nanoTime() - start < nanos) {
            for (int i = 0; i < 100; i++) {
                EncodedPayload payload = codec.encode(value);
                sink = codec.decode(ByteBuffer.wrap(payload.inBand()), List.of());
            }
            count += 100;
        }
        if (sink == null) {
            throw new AssertionError();
        }
        return (System.nanoTime() - start) / (double) count;
    }
}
