/* W3's echo as a C program: the ceiling of a tensor echo over loopback TCP on this machine.
 *
 * The caller sends one buffer of MiB mebibytes over S TCP streams (127.0.0.1, TCP_NODELAY), each
 * stream carrying its 1/S slice from its own thread; the callee reads every slice into one buffer,
 * and only when all have arrived (a function sees the whole argument) sends them back the same way
 * into the caller's second buffer. The round trip is timed from before the first write to after the
 * last read, as W3 times a call; GB/s counts the bytes both ways (2 x size / median RTT, 1 GB = 1e9).
 * Buffers are touched before the first call and reused, as W3's Java side reuses its tensor.
 *
 * It exists to tell a transport's cost from the machine's: L2 (bench/limits) streams one 1 MiB
 * buffer that stays in the CPU caches on both sides, where an echo of 16 or 128 MiB reads and
 * writes memory.
 *
 * Usage: tcp_echo MiB streams warmup timed      Output: one JSON line.
 * Bounded: alarm() ends both processes after 300 s. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS 16

static size_t total;
static int streams, rounds;
static pthread_barrier_t start_round, end_round, all_read;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void read_fully(int fd, char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) die("read");
    p += r;
    n -= (size_t)r;
  }
}

static void write_fully(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) die("write");
    p += w;
    n -= (size_t)w;
  }
}

typedef struct {
  int fd;
  char *out, *in; /* the slice this stream sends, and where the answer lands */
  size_t len;
} slice_t;

static void *callee_stream(void *arg) {
  slice_t *s = arg;
  for (int i = 0; i < rounds; i++) {
    read_fully(s->fd, s->in, s->len);
    pthread_barrier_wait(&all_read);
    write_fully(s->fd, s->in, s->len);
  }
  return NULL;
}

static void *caller_stream(void *arg) {
  slice_t *s = arg;
  for (int i = 0; i < rounds; i++) {
    pthread_barrier_wait(&start_round);
    write_fully(s->fd, s->out, s->len);
    read_fully(s->fd, s->in, s->len);
    pthread_barrier_wait(&end_round);
  }
  return NULL;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: tcp_echo MiB streams warmup timed\n");
    return 2;
  }
  total = (size_t)atol(argv[1]) << 20;
  streams = atoi(argv[2]);
  int warmup = atoi(argv[3]), timed = atoi(argv[4]);
  if (streams < 1 || streams > MAX_STREAMS || total % (size_t)streams != 0 || timed < 1 || warmup < 0) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  rounds = warmup + timed;
  size_t part = total / (size_t)streams;
  alarm(300);

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, MAX_STREAMS)) die("bind/listen");
  socklen_t len = sizeof addr;
  getsockname(listener, (struct sockaddr *)&addr, &len);

  pid_t child = fork();
  if (child == 0) { /* callee */
    char *buffer = malloc(total);
    memset(buffer, 1, total);
    slice_t slices[MAX_STREAMS];
    pthread_t threads[MAX_STREAMS];
    pthread_barrier_init(&all_read, NULL, (unsigned)streams);
    for (int i = 0; i < streams; i++) {
      int fd = accept(listener, NULL, NULL);
      int index;
      read_fully(fd, (char *)&index, sizeof index); /* which slice this stream carries */
      if (index < 0 || index >= streams) {
        fprintf(stderr, "stream index %d out of range\n", index);
        _exit(1);
      }
      slices[index] = (slice_t){fd, NULL, buffer + (size_t)index * part, part};
    }
    for (int i = 0; i < streams; i++) pthread_create(&threads[i], NULL, callee_stream, &slices[i]);
    for (int i = 0; i < streams; i++) pthread_join(threads[i], NULL);
    _exit(0);
  }
  close(listener);

  char *out = malloc(total), *in = malloc(total);
  memset(out, 7, total);
  memset(in, 0, total);
  slice_t slices[MAX_STREAMS];
  pthread_t threads[MAX_STREAMS];
  pthread_barrier_init(&start_round, NULL, (unsigned)streams + 1);
  pthread_barrier_init(&end_round, NULL, (unsigned)streams + 1);
  for (int i = 0; i < streams; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr)) die("connect");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    write_fully(fd, (const char *)&i, sizeof i);
    slices[i] = (slice_t){fd, out + (size_t)i * part, in + (size_t)i * part, part};
    pthread_create(&threads[i], NULL, caller_stream, &slices[i]);
  }
  double *rtt = malloc(sizeof(double) * (size_t)timed);
  for (int i = 0; i < rounds; i++) {
    double t0 = now_s();
    pthread_barrier_wait(&start_round);
    pthread_barrier_wait(&end_round);
    if (i >= warmup) rtt[i - warmup] = now_s() - t0;
  }
  for (int i = 0; i < streams; i++) pthread_join(threads[i], NULL);
  waitpid(child, NULL, 0);
  if (memcmp(out, in, total) != 0) {
    fprintf(stderr, "echo differs from what was sent\n");
    return 1;
  }
  qsort(rtt, (size_t)timed, sizeof(double), by_value);
  double median = timed % 2 ? rtt[timed / 2] : (rtt[timed / 2 - 1] + rtt[timed / 2]) / 2;
  printf("{\"limit\":\"tcp_echo\",\"MiB\":%zu,\"streams\":%d,\"timed\":%d,\"median_us\":%.1f,\"GB_per_s\":%.3f}\n",
         total >> 20, streams, timed, median * 1e6, 2.0 * (double)total / median / 1e9);
  return 0;
}
