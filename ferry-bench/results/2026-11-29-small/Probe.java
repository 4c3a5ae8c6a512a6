import dev.ferry.rpc.*;
import dev.ferry.bench.workload.BenchFunctions;
import java.util.*;

/** W1-like probe with a latency histogram; MODE env: w1 (default) or w2. */
public class Probe {
  public static void main(String[] a) throws Exception {
    int rank = Integer.parseInt(System.getenv("RANK"));
    RpcAgent agent = RpcAgents.start("worker" + rank, rank, 2, RpcBackendOptions.builder()
        .initMethod("tcp://127.0.0.1:" + System.getenv("MASTER_PORT")).build());
    if (System.getenv().getOrDefault("MODE", "w1").equals("idle2")) {
      java.util.Map<String, Long> ta = tasks(); Thread.sleep(2000); java.util.Map<String, Long> tb = tasks();
      long tot = 0; StringBuilder sb = new StringBuilder("idle2 rank" + rank + ":");
      for (var e : tb.entrySet()) { long d = e.getValue() - ta.getOrDefault(e.getKey(), 0L); tot += d; if (d > 0) sb.append(" ").append(e.getKey()).append("=").append(d); }
      System.out.println(sb + " total ticks " + tot);
      agent.shutdown(); return;
    }
    if (rank == 0) {
      String mode = System.getenv().getOrDefault("MODE", "w1");
      if (mode.equals("idle")) {
        Thread.sleep(12000);
      } else if (mode.equals("w1")) {
        int n = Integer.parseInt(System.getenv().getOrDefault("N", "20000"));
        for (int i = 0; i < 2000; i++) agent.rpcSync("worker1", BenchFunctions::noop, 1);
        long[] lat = new long[n];
        for (int i = 0; i < n; i++) { long t = System.nanoTime(); agent.rpcSync("worker1", BenchFunctions::noop, 1); lat[i] = System.nanoTime() - t; }
        StringBuilder ch = new StringBuilder("chunks:");
        for (int c0 = 0; c0 + 5000 <= n; c0 += 5000) { long[] x = Arrays.copyOfRange(lat, c0, c0 + 5000); Arrays.sort(x); ch.append(String.format(" %.0f/%.0f", x[2500]/1e3, x[4500]/1e3)); }
        System.out.println(ch);
        long[] s = lat.clone(); Arrays.sort(s);
        System.out.printf("median %.1f p90 %.1f p99 %.1f us%n", s[n/2]/1e3, s[(int)(n*.9)]/1e3, s[(int)(n*.99)]/1e3);
        int[] edges = {10,15,20,25,30,35,40,50,60,80,100,150,200,300,500,1000,2000,5000,100000};
        int[] c = new int[edges.length];
        for (long l : lat) { double u = l/1e3; for (int k=0;k<edges.length;k++) if (u < edges[k]) { c[k]++; break; } }
        StringBuilder sb = new StringBuilder("hist:");
        for (int k=0;k<edges.length;k++) if (c[k]>0) sb.append(String.format(" <%d:%.1f%%", edges[k], 100.0*c[k]/n));
        System.out.println(sb);
      } else if (mode.equals("w2long")) {
        int w = Integer.parseInt(System.getenv().getOrDefault("W", "64"));
        for (int k = 0; k < 6; k++) { long t0 = System.nanoTime(); run(agent, 50000, w);
          System.out.printf("w%d %.0f calls/s%n", w, 50000/((System.nanoTime()-t0)/1e9)); }
      } else {
        for (int w : new int[]{1, 8, 64, 256}) {
          run(agent, 2000, w); long t0 = System.nanoTime();
          StringBuilder ch = new StringBuilder();
          for (int k = 0; k < 5; k++) { long t1 = System.nanoTime(); run(agent, 2000, w); ch.append(String.format(" %.0f", 2000/((System.nanoTime()-t1)/1e9))); }
          System.out.printf("w%d %.0f calls/s  chunks%s%n", w, 10000/((System.nanoTime()-t0)/1e9), ch);
        }
      }
    } else {
      if (System.getenv().getOrDefault("MODE", "w1").equals("idle")) Thread.sleep(12000);
    }
    agent.shutdown();
  }
  static java.util.Map<String, Long> tasks() throws Exception {
    java.util.Map<String, Long> m = new java.util.TreeMap<>();
    for (java.io.File t : new java.io.File("/proc/self/task").listFiles()) {
      String st = new String(java.nio.file.Files.readAllBytes(new java.io.File(t, "stat").toPath()));
      String name = st.substring(st.indexOf('(') + 1, st.lastIndexOf(')')).replace(' ', '_') + "#" + t.getName();
      String[] f = st.substring(st.lastIndexOf(')') + 2).split(" ");
      m.put(name, Long.parseLong(f[11]) + Long.parseLong(f[12]));
    }
    return m;
  }
  static void run(RpcAgent agent, int n, int w) {
    ArrayDeque<RpcFuture<Integer>> q = new ArrayDeque<>();
    for (int i = 0; i < n; i++) { if (q.size() == w) q.removeFirst().await(); q.addLast(agent.rpcAsync("worker1", BenchFunctions::noop, 1)); }
    while (!q.isEmpty()) q.removeFirst().await();
  }
}
