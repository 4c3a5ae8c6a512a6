package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W8 driver: small calls between two workers while 128 MiB echoes run back to back between the
 * same two ({@link W8Worker}); whether small messages wait behind large ones. Defined in
 * {@code ferry-bench/README.md} (W8), with a PyTorch counterpart in {@code ferry-bench/pytorch/}.
 */
public final class W8SmallBehindLarge {

  private W8SmallBehindLarge() {}

  /** Runs W8 and writes {@code w8_small_behind_large.json}. */
  public static Path run(BenchOptions options) throws Exception {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("large_bytes", W8Worker.LARGE_BYTES);
    params.put("small_warmup", W8Worker.WARMUP);
    params.put("small_calls", W8Worker.CALLS);
    params.put("modes", List.of("sync", "async"));
    params.put("worker_jvm_args", List.of(W3TensorEcho.HEAP));
    return new Driver("w8_small_behind_large", params, 2, W8Worker.class, Duration.ofSeconds(300))
        .jvmArgs(List.of(W3TensorEcho.HEAP))
        .run(options);
  }
}
