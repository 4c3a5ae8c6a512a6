/* w5heavy's floor in C: the matrix products of one w5heavy step (batch 256, 1024 -> 1024 -> 1024 -> 10)
 * through the system's BLAS (libblas.so.3: OpenBLAS here, as PyTorch's and Ferry's), row-major
 * expressed column-major as Ferry's Gemm does. Prints the median step and GFLOP/s over the timed steps.
 * Build: gcc -O2 -o sgemm_floor sgemm_floor.c -l:libblas.so.3 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const float *alpha,
                   const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
                   const int *ldc);

/* Row-major C[m,n] = op(A) . op(B): column-major C^T = op(B)^T . op(A)^T. ta/tb: A/B given transposed. */
static void mm(int m, int n, int k, const float *a, int ta, const float *b, int tb, float *c) {
  const float one = 1, zero = 0;
  int lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
  sgemm_(tb ? "T" : "N", ta ? "T" : "N", &n, &m, &k, &one, b, &ldb, a, &lda, &zero, c, &ldc);
}

static float *mat(long n) {
  float *p = malloc(n * sizeof(float));
  for (long i = 0; i < n; i++) p[i] = (float) (i % 7) * 0.01f;
  return p;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int warm = 5, steps = argc > 1 ? atoi(argv[1]) : 50;
  const int B = 256, H = 1024, O = 10;
  float *x = mat((long) B * H), *w1 = mat((long) H * H), *w2 = mat((long) H * H), *w3 = mat((long) O * H);
  float *h1 = mat((long) B * H), *h2 = mat((long) B * H), *out = mat((long) B * O), *g3 = mat((long) B * O);
  float *dw3 = mat((long) O * H), *dh2 = mat((long) B * H), *dw2 = mat((long) H * H), *dh1 = mat((long) B * H);
  float *dw1 = mat((long) H * H);
  double *t = malloc(sizeof(double) * steps);
  for (int s = -warm; s < steps; s++) {
    double t0 = now_ms();
    mm(B, H, H, x, 0, w1, 1, h1);    /* h1 = x . W1^T */
    mm(B, H, H, h1, 0, w2, 1, h2);   /* h2 = h1 . W2^T */
    mm(B, O, H, h2, 0, w3, 1, out);  /* out = h2 . W3^T (worker1) */
    mm(O, H, B, g3, 1, h2, 0, dw3);  /* dW3 = g3^T . h2 */
    mm(B, H, O, g3, 0, w3, 0, dh2);  /* dh2 = g3 . W3 */
    mm(H, H, B, dh2, 1, h1, 0, dw2); /* dW2 = dh2^T . h1 */
    mm(B, H, H, dh2, 0, w2, 0, dh1); /* dh1 = dh2 . W2 */
    mm(H, H, B, dh1, 1, x, 0, dw1);  /* dW1 = dh1^T . x */
    if (s >= 0) t[s] = now_ms() - t0;
  }
  qsort(t, steps, sizeof(double), cmp);
  double flop = 2.0 * ((double) B * H * H * 5 + (double) B * O * H * 3);
  printf("{\"floor\":\"openblas_c\",\"steps\":%d,\"step_median_ms\":%.3f,\"step_min_ms\":%.3f,\"gflops_at_median\":%.1f}\n",
         steps, t[steps / 2], t[0], flop / (t[steps / 2] * 1e6));
  return 0;
}
