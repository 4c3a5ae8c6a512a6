package dev.ferry.bench.harness;

import dev.ferry.cli.launch.AotCache;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code env} section of a result file: when and on what the benchmark ran, with the load
 * average at start and end, because the machine is shared and its noise must be visible next to
 * the figures. Keys follow common.py's {@code env_info} where they mean the same thing.
 */
public final class EnvInfo {

  private EnvInfo() {}

  /** Date, JVM, OS, CPU and the current load average as {@code loadavg_start}. */
  public static Map<String, Object> capture() {
    Map<String, Object> env = new LinkedHashMap<>();
    env.put("date_utc", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    env.put("java", System.getProperty("java.runtime.version"));
    env.put("java_vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    env.put("java_vendor", System.getProperty("java.vendor"));
    env.put("kernel", System.getProperty("os.version"));
    env.put("cpu", cpuModel());
    env.put("nproc", Runtime.getRuntime().availableProcessors());
    // Workers start from the launcher's ahead-of-time cache when there is one (the first run of a
    // workload after a build trains it): say so beside the figures.
    env.put("aot_cache", AotCache.defaultDirectory()
        .map(AotCache::in).filter(AotCache::supported)
        .map(c -> c.directory().toString()).orElse("off"));
    env.put("eager_jit", AotCache.eagerCompilationFromEnvironment());
    env.put("loadavg_start", loadAverage());
    return env;
  }

  /** The first three fields of {@code /proc/loadavg} as strings (as common.py records them). */
  public static List<String> loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return Arrays.asList(f).subList(0, Math.min(3, f.length));
    } catch (IOException e) {
      return List.of("?");
    }
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException e) {
      // not Linux: fall through
    }
    return "?";
  }
}
