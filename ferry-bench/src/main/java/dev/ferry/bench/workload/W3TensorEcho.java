package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** W3 driver: {@code float[]} echo from 1 KiB to 128 MiB ({@link W3Worker}). */
public final class W3TensorEcho {

  // Per worker at 128 MiB: the array sent, the reply, and a previous reply not yet collected,
  // plus the transport's buffers; 3 GiB leaves room without tuning the collector.
  static final String HEAP = "-Xmx3g";

  private W3TensorEcho() {}

  /** Runs W3 and writes {@code w3_tensor_echo.json}. */
  public static Path run(BenchOptions options) throws Exception {
    Map<String, Object> sizes = new LinkedHashMap<>();
    Map<String, Object> counts = new LinkedHashMap<>();
    for (W3Worker.Size s : W3Worker.SIZES) {
      sizes.put(s.label(), s.bytes());
      counts.put(s.label(), List.of(s.warmup(), s.calls()));
    }
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("sizes", sizes);
    params.put("warmup_timed", counts);
    params.put("element_type", "direct ByteBuffer of floats (metrics <size>.*), float[] (<size>.array_*)");
    params.put("worker_jvm_args", List.of(HEAP));
    return new Driver("w3_tensor_echo", params, 2, W3Worker.class, Duration.ofSeconds(300))
        .jvmArgs(List.of(HEAP))
        .run(options);
  }
}
