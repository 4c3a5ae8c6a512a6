/**
 * w5heavy's floor in plain Java: a row-major float matrix product [256,1024] . [1024,1024] in the
 * loop order C2 vectorizes (i, p, j: the innermost loop runs along rows of B and C), one thread.
 * Prints the median time of one product, its GFLOP/s, and the w5heavy step this rate implies (the
 * step's 5 products of this size and 3 small ones).
 * Run: java JavaMatmulFloor.java [timed products]
 */
public class JavaMatmulFloor {
  static void mm(int m, int n, int k, float[] a, float[] b, float[] c) {
    java.util.Arrays.fill(c, 0f);
    for (int i = 0; i < m; i++) {
      int ci = i * n;
      for (int p = 0; p < k; p++) {
        float av = a[i * k + p];
        int bp = p * n;
        for (int j = 0; j < n; j++) {
          c[ci + j] += av * b[bp + j];
        }
      }
    }
  }

  public static void main(String[] args) {
    int timed = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int m = 256, k = 1024, n = 1024;
    float[] a = new float[m * k], b = new float[k * n], c = new float[m * n];
    for (int i = 0; i < a.length; i++) a[i] = (i % 7) * 0.01f;
    for (int i = 0; i < b.length; i++) b[i] = (i % 5) * 0.01f;
    for (int w = 0; w < 5; w++) mm(m, n, k, a, b, c);
    double[] t = new double[timed];
    for (int s = 0; s < timed; s++) {
      long t0 = System.nanoTime();
      mm(m, n, k, a, b, c);
      t[s] = (System.nanoTime() - t0) / 1e6;
    }
    java.util.Arrays.sort(t);
    double median = t[timed / 2];
    double gflops = 2.0 * m * n * k / (median * 1e6);
    double stepFlop = 2.0 * (256.0 * 1024 * 1024 * 5 + 256.0 * 10 * 1024 * 3);
    System.out.printf(java.util.Locale.ROOT,
        "{\"floor\":\"plain_java\",\"product_median_ms\":%.2f,\"gflops\":%.2f,\"implied_step_ms\":%.1f}%n",
        median, gflops, stepFlop / (gflops * 1e6));
  }
}
