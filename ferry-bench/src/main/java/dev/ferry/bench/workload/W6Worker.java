package dev.ferry.bench.workload;

import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcAgents;
import dev.ferry.rpc.RpcBackendOptions;
import java.io.BufferedReader;
import java.lang.management.ClassLoadingMXBean;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W6 worker. Protocol on stdin/stdout, driven by {@link W6InitShutdown}:
 *
 * <pre>
 * worker                                   driver
 *   load Ferry's classes
 *   READY  ------------------------------&gt;  (all READY) t_go
 *          &lt;------------------------------  GO
 *   init (rendezvous, all ranks joined)
 *   INIT   ------------------------------&gt;  timestamp on arrival
 *   graceful shutdown
 *   DONE   ------------------------------&gt;  timestamp on arrival
 *   RESULT {init_local_s, shutdown_local_s, init_cpu_s, init_classes_loaded, init_jit_ms}
 * </pre>
 *
 * The JDK has no system-wide monotonic clock that two JVMs can compare ({@code System.nanoTime}
 * has an arbitrary origin per JVM), so the driver timestamps these lines on arrival with its own
 * clock; the worker's own durations are reported alongside for a cross-check.
 */
public final class W6Worker {

  private W6Worker() {}

  /** Worker entry point, started once per rank by the driver (see {@link WorkerContext}). */
  public static void main(String[] args) {
    WorkerContext.run(args, W6Worker::body);
  }

  private static void body(WorkerContext ctx) throws Exception {
    // "Load the runtime up to the point where init would be called": the options and the agent
    // factory, with their static initialisers, as Python imports torch.distributed.rpc.
    RpcBackendOptions options = ctx.options(16, Duration.ofSeconds(60));
    Class.forName(RpcAgents.class.getName(), true, W6Worker.class.getClassLoader());
    // What init costs this process, whatever the load: CPU, classes loaded, JIT compilation
    // (the beans are fetched before READY, so that their own loading is not counted).
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    ClassLoadingMXBean classes = ManagementFactory.getClassLoadingMXBean();
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    ctx.signal("READY");
    BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line = stdin.readLine();
    if (!"GO".equals(line)) {
      throw new IllegalStateException("expected GO on stdin, got " + line);
    }
    long go = System.nanoTime();
    long cpuAtGo = os.getProcessCpuTime();
    long classesAtGo = classes.getTotalLoadedClassCount();
    long jitAtGo = jit.getTotalCompilationTime();
    RpcAgent agent = RpcAgents.start("worker" + ctx.rank(), ctx.rank(), ctx.world(), options);
    long init = System.nanoTime();
    long cpuInit = os.getProcessCpuTime() - cpuAtGo;
    long classesInit = classes.getTotalLoadedClassCount() - classesAtGo;
    long jitInit = jit.getTotalCompilationTime() - jitAtGo;
    ctx.signal("INIT");
    agent.shutdown();
    long end = System.nanoTime();
    ctx.signal("DONE");
    Map<String, Object> result = new LinkedHashMap<>();
    result.put("init_local_s", (init - go) / 1e9);
    result.put("shutdown_local_s", (end - init) / 1e9);
    result.put("init_cpu_s", cpuInit / 1e9);
    result.put("init_classes_loaded", classesInit);
    result.put("init_jit_ms", jitInit);
    ctx.report(result);
  }
}
