package dev.ferry.bench.compute;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.optim.Optimizer;
import dev.ferry.tensor.optim.SGD;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The single-process compute anchor, exactly as {@code bench/pytorch/local_compute.py}:
 *
 * <ul>
 *   <li>C1 matmul: float32 [512,512] @ [512,512] (inputs {@code rand} with a generator seeded 0),
 *       20 warm-up + 200 timed, each timed individually.</li>
 *   <li>C2 mlp_step: the W5 model in one process (Linear(256,256) → ReLU → Linear(256,10), batch 64
 *       from {@code randn}/{@code randint} seeded 0, cross-entropy, SGD lr 0.05, default init after
 *       seeding the default generator with 0): zero_grad + forward + backward + step,
 *       20 warm-up + 300 timed.</li>
 * </ul>
 *
 * Reported per run: {@code matmul512.median_ms}, {@code matmul512.GFLOPs} (2·512³ / median),
 * {@code mlp_step.median_ms}, {@code mlp_step.steps_per_s} (300 / timed-loop wall time). Writes
 * {@code <out>/local_compute.json} in the shape of {@code bench/WORKLOADS.md} ("Output") with
 * mode {@code java}, to print next to PyTorch with {@code report.py --results DIR:ferry}.
 *
 * <pre>
 * java -cp ... dev.ferry.bench.compute.LocalComputeBench [--repeats 5] [--out bench-results]
 * </pre>
 */
public final class LocalComputeBench {
    private static final String MODE = "java";

    private LocalComputeBench() {
    }

    public static void main(String[] args) throws IOException {
        int repeats = 5;
        Path out = Path.of("bench-results");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                default -> {
                    System.err.println("usage: LocalComputeBench [--repeats N] [--out DIR]");
                    System.exit(2);
                }
            }
        }
        String loadStart = loadavg();
        String date = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        List<Map<String, Double>> runs = new ArrayList<>();
        for (int r = 0; r < repeats; r++) {
            Map<String, Double> run = oneRun();
            runs.add(run);
            System.out.println("[local_compute] mode=" + MODE + " run " + r + ": " + run);
        }
        Map<String, Object> env = new LinkedHashMap<>();
        env.put("date_utc", date);
        env.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        env.put("blas", Tensors.blasBackend());
        env.put("nproc", Runtime.getRuntime().availableProcessors());
        env.put("loadavg_start", loadStart);
        env.put("loadavg_end", loadavg());
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("workload", "local_compute");
        doc.put("params", Map.of("repeats", repeats, "blas", Tensors.blasBackend()));
        doc.put("env", env);
        doc.put("summary", Map.of(MODE, summarize(runs)));
        doc.put("runs", Map.of(MODE, runs));
        doc.put("failures", List.of());
        Files.createDirectories(out);
        Path file = out.resolve("local_compute.json");
        Files.writeString(file, dev.ferry.bench.harness.PlainJson.write(doc) + "\n");
        System.out.println(MODE + " (" + Tensors.blasBackend() + ") medians: " + medians(runs));
        System.out.println("wrote " + file);
    }

    static Map<String, Double> oneRun() {
        Generator g = new Generator(0);
        Tensor a = Tensors.rand(g, 512, 512);
        Tensor b = Tensors.rand(g, 512, 512);
        long[] mm = timed(() -> a.mm(b), 20, 200);
        double mmMedianMs = median(mm) / 1e6;

        Tensors.manualSeed(0);
        Linear l1 = new Linear(256, 256);
        Linear l2 = new Linear(256, 10);
        List<Tensor> params = new ArrayList<>(l1.parameters());
        params.addAll(l2.parameters());
        Optimizer opt = new SGD(params, 0.05);
        Tensor x = Tensors.randn(new Generator(0), 64, 256);
        Tensor y = Tensors.randint(0, 10, new Generator(0), 64);
        Runnable step = () -> {
            opt.zeroGrad();
            Tensor loss = Functional.crossEntropy(l2.forward(l1.forward(x).relu()), y);
            loss.backward();
            opt.step();
        };
        for (int i = 0; i < 20; i++) {
            step.run();
        }
        long[] st = new long[300];
        long all = System.nanoTime();
        for (int i = 0; i < st.length; i++) {
            long t0 = System.nanoTime();
            step.run();
            st[i] = System.nanoTime() - t0;
        }
        double total = (System.nanoTime() - all) / 1e9;

        Map<String, Double> run = new LinkedHashMap<>();
        run.put("matmul512.median_ms", mmMedianMs);
        run.put("matmul512.GFLOPs", 2.0 * 512 * 512 * 512 / (mmMedianMs / 1e3) / 1e9);
        run.put("mlp_step.median_ms", median(st) / 1e6);
        run.put("mlp_step.steps_per_s", 300 / total);
        return run;
    }

    private static long[] timed(Runnable fn, int warm, int n) {
        for (int i = 0; i < warm; i++) {
            fn.run();
        }
        long[] xs = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            fn.run();
            xs[i] = System.nanoTime() - t0;
        }
        return xs;
    }

    /** Python's statistics.median: the mean of the two middle values for an even count. */
    static double median(long[] xs) {
        double[] d = new double[xs.length];
        for (int i = 0; i < xs.length; i++) {
            d[i] = xs[i];
        }
        return median(d);
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static Map<String, Map<String, Object>> summarize(List<Map<String, Double>> runs) {
        Map<String, Map<String, Object>> summary = new LinkedHashMap<>();
        for (String key : runs.get(0).keySet()) {
            double[] v = runs.stream().mapToDouble(r -> r.get(key)).toArray();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("median", median(v));
            m.put("min", Arrays.stream(v).min().orElseThrow());
            m.put("max", Arrays.stream(v).max().orElseThrow());
            m.put("n", v.length);
            summary.put(key, m);
        }
        return summary;
    }

    private static Map<String, Double> medians(List<Map<String, Double>> runs) {
        Map<String, Double> m = new LinkedHashMap<>();
        summarize(runs).forEach((k, v) -> m.put(k, Math.round((Double) v.get("median") * 1000) / 1000.0));
        return m;
    }

    private static String loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return String.join(" ", f[0], f[1], f[2]);
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }
}
