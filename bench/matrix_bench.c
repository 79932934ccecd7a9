/* matrix-bench: the matrix convolution (cudafft/matrix.h) on the GPU and on its CPU backend in one
 * run: a matrix of I inputs x O outputs of T-second responses at 48 kHz (default 64 x 64 of 1 s:
 * 4,096 filters), at each block size L (default 128 and 2048).
 *
 * For each block size and backend it makes the object (timed apart: the responses' spectra), pushes
 * a few blocks untimed, then pushes one block of L frames of random F32 input at a time, as fast as
 * it can, timing each push with CLOCK_MONOTONIC: one block's time through the library, input and
 * output in host memory. It reports the median, p99, p99.9 and the worst block time, p99.9 as a
 * share of the block's period (L / 48000 s), and the audio seconds per wall second; for L = 2048
 * also the GPU's throughput over the CPU backend's. Block size 0 (zero latency) is pushed 32 frames
 * at a time, its period 32 / 48000 s (its head is filtered on the host: run it with small
 * matrices, 8 x 2 say). Rows stop after --seconds of audio or
 * --max-wall seconds, whichever comes first (the CPU backend of a large matrix is far from real
 * time and runs a few blocks only; the row says how many).
 *
 * Then the fused multiply-accumulate alone (cudafft_matrix_kernel_time(): a dense matrix, the same
 * partitions, CUDA events around repeated launches): its time per block, the response spectra it
 * must read once per block (its memory floor), its achieved bandwidth and its time over the floor
 * at the device's peak bandwidth (from the device's memory clock and bus width, or --peak-gbs)
 * and at what a device-to-device copy of 512 MB reaches.
 *
 * With --instances M,..: M objects of the same matrix instead of one (a media server's streams,
 * 7.1 to binaural say: --inputs 8 --outputs 2 --ir-seconds 0.005), pushed by a pool of min(M, 64)
 * threads on the GPU (a push mostly waits for the device) and min(M, host threads) on the CPU, each
 * thread pushing one block to each object of its share in turn, flat out; a row gives each
 * stream's audio seconds per wall second (real time where at least 1) and the p99.9 of a push.
 *
 * With --device-memory each cuda row is followed by a cuda-mem row: the same pushes with input and
 * output in device memory (cudaMalloc'd on device 0; cudafft_matrix_push_device, as
 * cudamatrixconvolve pushes CUDA memory), so that the staging copies the host rows pay show apart.
 *
 * Usage: matrix-bench [--inputs I] [--outputs O] [--ir-seconds T] [--blocks L,...]
 *          [--backends cuda,cpu] [--seconds S] [--max-wall W] [--peak-gbs G] [--instances M,..]
 *          [--device-memory]
 * Exit status: 0, or 1 where an object could not be made or a push failed. */
#define _POSIX_C_SOURCE 200809L

#include "bench_common.h"
#include "matrix_kernels.h"

#include <cudafft/matrix.h>

#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 48000
#define MAX_BLOCKS 16

static double
now_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double
uniform(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static double
percentile(const double *sorted, size_t n, double p)
{
  size_t i = (size_t)ceil(p * (double)n) - 1;
  return sorted[i < n ? i : n - 1];
}

/* The device's peak memory bandwidth in GB/s from its memory clock (kHz) and bus width (bits),
 * DDR; 0 where the runtime does not say. */
static double
device_peak_gbs(void)
{
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

/* What device 0 reaches in practice: a device-to-device copy of 512 MB (read and written), GB/s;
 * 0 where it cannot be measured. */
static double
device_copy_gbs(void)
{
  const size_t bytes = (size_t)512 << 20;
  void *a = NULL, *b = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  float ms = 0;
  double gbs = 0;
  if (cudaSetDevice(0) == cudaSuccess && cudaMalloc(&a, bytes) == cudaSuccess &&
      cudaMalloc(&b, bytes) == cudaSuccess && cudaEventCreate(&start) == cudaSuccess &&
      cudaEventCreate(&stop) == cudaSuccess &&
      cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess && /* warm-up */
      cudaEventRecord(start, 0) == cudaSuccess) {
    int ok = 1;
    for (int r = 0; r < 10 && ok; r++)
      ok = cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0) == cudaSuccess;
    if (ok && cudaEventRecord(stop, 0) == cudaSuccess &&
        cudaEventSynchronize(stop) == cudaSuccess &&
        cudaEventElapsedTime(&ms, start, stop) == cudaSuccess && ms > 0)
      gbs = 10.0 * 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
  }
  if (start)
    cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  cudaGetLastError();
  return gbs;
}

typedef struct {
  double audio_per_wall; /* audio seconds per wall second; 0: not run */
} Row;

/* A push's input and output: host memory, or (on_device: CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE)
 * device memory of device 0 holding the same input. */
typedef struct {
  void *in, *out;
  unsigned on_device;
} Io;

/* Io for pushes of `frames` frames of `in` (host memory, inputs channels); 0 where the device
 * memory cannot be had (the reason printed). */
static int
io_open(Io *io, const float *in, size_t frames, unsigned inputs, unsigned outputs, int on_device)
{
  const size_t in_bytes = frames * inputs * sizeof(float),
               out_bytes = frames * outputs * sizeof(float);
  *io = (Io){NULL, NULL, on_device ? CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE : 0};
  if (!on_device) {
    io->in = malloc(in_bytes);
    io->out = malloc(out_bytes);
    memcpy(io->in, in, in_bytes);
    return 1;
  }
  cudaError_t error = cudaSetDevice(0);
  if (error == cudaSuccess)
    error = cudaMalloc(&io->in, in_bytes);
  if (error == cudaSuccess)
    error = cudaMalloc(&io->out, out_bytes);
  if (error == cudaSuccess)
    error = cudaMemcpy(io->in, in, in_bytes, cudaMemcpyHostToDevice);
  if (error != cudaSuccess)
    printf("cannot make the device memory of the pushes: %s\n", cudaGetErrorString(error));
  return error == cudaSuccess;
}

static void
io_close(Io *io)
{
  if (io->on_device) {
    cudaFree(io->in);
    cudaFree(io->out);
  } else {
    free(io->in);
    free(io->out);
  }
  *io = (Io){NULL, NULL, 0};
}

/* One push of `frames` frames through io; 1 where it failed or produced other than `frames`. */
static int
io_push(CudafftMatrix *mx, const Io *io, size_t frames)
{
  size_t produced = 0;
  const CudafftStatus status =
      cudafft_matrix_push_device(mx, io->in, frames, io->out, &produced, io->on_device, NULL, NULL);
  return status != CUDAFFT_STATUS_OK || produced != frames;
}

static int
run_row(CudafftBackend backend, const char *name, unsigned inputs, unsigned outputs, size_t L,
        const double *taps, size_t ir_taps, double seconds, double max_wall, int device_memory,
        Row *row)
{
  CudafftMatrixConfig config = {.inputs = inputs,
                                .outputs = outputs,
                                .format = CUDAFFT_SAMPLE_F32,
                                .block_size = L,
                                .responses = {.taps_data = taps, .taps = ir_taps}};
  CudafftMatrix *mx = NULL;
  const double t0 = now_seconds();
  CudafftStatus status =
      cudafft_matrix_create(&mx, backend, backend == CUDAFFT_BACKEND_CUDA ? 0 : -1, &config);
  const double made = now_seconds() - t0;
  if (status != CUDAFFT_STATUS_OK) {
    printf("%-8s L=%-5zu cannot make the matrix: %s (%s)\n", name, L, cudafft_status_name(status),
           cudafft_last_error_message());
    return backend == CUDAFFT_BACKEND_CUDA && status == CUDAFFT_STATUS_NO_DEVICE ? 0 : 1;
  }
  const size_t F = L ? L : CUDAFFT_MATRIX_MIN_BLOCK; /* frames a push */
  float *in = malloc(F * inputs * sizeof *in);
  for (size_t n = 0; n < F * inputs; n++)
    in[n] = (float)(0.5 * uniform());
  const size_t wanted = (size_t)ceil(seconds * RATE / (double)F);
  double *times = malloc((wanted + 1) * sizeof *times);
  Io io;
  int failed = !io_open(&io, in, F, inputs, outputs, device_memory);
  size_t blocks = 0;
  for (int w = 0; w < 4 && !failed; w++) /* warm-up */
    failed = io_push(mx, &io, F);
  const double start = now_seconds();
  while (!failed && blocks < wanted && (blocks < 5 || now_seconds() - start < max_wall)) {
    const double a = now_seconds();
    failed = io_push(mx, &io, F);
    times[blocks++] = now_seconds() - a;
  }
  const double wall = now_seconds() - start;
  if (failed) {
    printf("%-8s L=%-5zu push failed: %s\n", name, L, cudafft_last_error_message());
  } else {
    const double period = (double)F / RATE;
    double sum = 0;
    for (size_t b = 0; b < blocks; b++)
      sum += times[b];
    qsort(times, blocks, sizeof *times, bench_compare_doubles);
    row->audio_per_wall = (double)blocks * period / wall;
    printf("%-8s L=%-5zu %7zu blocks  made in %6.2f s  mean %8.3f ms  p50 %8.3f  p99 %8.3f  "
           "p99.9 %8.3f  max %8.3f ms  p99.9 %7.1f%% of the %.2f ms period  %8.2fx real time\n",
           name, L, blocks, made, 1e3 * sum / (double)blocks, 1e3 * percentile(times, blocks, 0.5),
           1e3 * percentile(times, blocks, 0.99), 1e3 * percentile(times, blocks, 0.999),
           1e3 * times[blocks - 1], 100.0 * percentile(times, blocks, 0.999) / period, 1e3 * period,
           row->audio_per_wall);
  }
  fflush(stdout);
  io_close(&io);
  free(times);
  free(in);
  cudafft_matrix_destroy(mx);
  return failed;
}

/* Streams: M objects pushed by a pool of threads. */
typedef struct {
  CudafftMatrix **objects;
  size_t first, count;               /* this thread's share */
  size_t L, inputs, outputs, rounds; /* L: frames a push (32 at block size 0) */
  int device_memory;                 /* the pushes' input and output in device memory */
  double max_wall, start;
  double *times; /* count x rounds push times */
  size_t done;   /* rounds completed */
  int failed;
} Share;

static void *
push_share(void *arg)
{
  Share *s = arg;
  float *in = malloc(s->L * s->inputs * sizeof *in);
  uint32_t state = 0x2545f491u + (uint32_t)s->first; /* a generator of the thread's own */
  for (size_t n = 0; n < s->L * s->inputs; n++) {
    state = state * 1664525u + 1013904223u;
    in[n] = (float)((double)state / 4294967296.0 - 0.5);
  }
  Io io;
  s->failed = !io_open(&io, in, s->L, (unsigned)s->inputs, (unsigned)s->outputs, s->device_memory);
  for (size_t r = 0; r < s->rounds && !s->failed; r++) {
    if (r >= 5 && now_seconds() - s->start > s->max_wall)
      break;
    for (size_t o = 0; o < s->count && !s->failed; o++) {
      const double a = now_seconds();
      s->failed = io_push(s->objects[s->first + o], &io, s->L);
      s->times[s->done * s->count + o] = now_seconds() - a;
    }
    s->done++;
  }
  io_close(&io);
  free(in);
  return NULL;
}

static int
run_streams(CudafftBackend backend, const char *name, unsigned inputs, unsigned outputs, size_t L,
            const double *taps, size_t ir_taps, size_t streams, double seconds, double max_wall,
            int device_memory)
{
  CudafftMatrixConfig config = {.inputs = inputs,
                                .outputs = outputs,
                                .format = CUDAFFT_SAMPLE_F32,
                                .block_size = L,
                                .responses = {.taps_data = taps, .taps = ir_taps}};
  CudafftMatrix **objects = calloc(streams, sizeof *objects);
  int failed = 0;
  const double t0 = now_seconds();
  for (size_t m = 0; m < streams && !failed; m++) {
    const CudafftStatus status = cudafft_matrix_create(
        &objects[m], backend, backend == CUDAFFT_BACKEND_CUDA ? 0 : -1, &config);
    if (status != CUDAFFT_STATUS_OK) {
      printf("%-8s L=%-5zu %zu streams: object %zu cannot be made: %s (%s)\n", name, L, streams, m,
             cudafft_status_name(status), cudafft_last_error_message());
      failed = 1;
    }
  }
  const double made = now_seconds() - t0;
  const size_t most = backend == CUDAFFT_BACKEND_CUDA ? 64 : (size_t)bench_host_threads();
  const size_t threads = failed ? 0 : streams < most ? streams : most;
  const size_t F = L ? L : CUDAFFT_MATRIX_MIN_BLOCK; /* frames a push */
  const size_t rounds = (size_t)ceil(seconds * RATE / (double)F);
  Share *shares = calloc(threads ? threads : 1, sizeof *shares);
  pthread_t *ids = calloc(threads ? threads : 1, sizeof *ids);
  for (size_t m = 0; m < streams && !failed; m++) { /* warm-up */
    float *in = calloc(F * inputs, sizeof *in), *out = malloc(F * outputs * sizeof *out);
    size_t produced;
    failed = cudafft_matrix_push(objects[m], in, F, out, &produced) != CUDAFFT_STATUS_OK;
    free(in);
    free(out);
  }
  const double start = now_seconds();
  for (size_t t = 0, first = 0; t < threads && !failed; t++) {
    const size_t count = streams / threads + (t < streams % threads);
    shares[t] = (Share){.objects = objects,
                        .first = first,
                        .count = count,
                        .L = F,
                        .inputs = inputs,
                        .outputs = outputs,
                        .rounds = rounds,
                        .device_memory = device_memory,
                        .max_wall = max_wall,
                        .start = start,
                        .times = malloc(count * rounds * sizeof(double))};
    first += count;
    pthread_create(&ids[t], NULL, push_share, &shares[t]);
  }
  size_t pushes = 0, least_rounds = SIZE_MAX;
  for (size_t t = 0; t < threads && !failed; t++) {
    pthread_join(ids[t], NULL);
    failed |= shares[t].failed;
    pushes += shares[t].done * shares[t].count;
    least_rounds = shares[t].done < least_rounds ? shares[t].done : least_rounds;
  }
  const double wall = now_seconds() - start;
  if (!failed && pushes > 0) {
    double *all = malloc(pushes * sizeof *all);
    size_t n = 0;
    for (size_t t = 0; t < threads; t++)
      for (size_t k = 0; k < shares[t].done * shares[t].count; k++)
        all[n++] = shares[t].times[k];
    qsort(all, n, sizeof *all, bench_compare_doubles);
    const double period = (double)F / RATE;
    /* each stream's audio per wall second: the slowest thread's rounds over the run */
    const double per_stream = (double)least_rounds * period / wall;
    printf("%-8s L=%-5zu %5zu streams on %2zu threads  made in %6.2f s  %6zu rounds  push p50 "
           "%7.3f  p99.9 %7.3f ms  each stream %7.2fx real time%s\n",
           name, L, streams, threads, made, least_rounds, 1e3 * percentile(all, n, 0.5),
           1e3 * percentile(all, n, 0.999), per_stream, per_stream >= 1 ? "" : "  (behind)");
    free(all);
  } else if (failed) {
    printf("%-8s L=%-5zu %zu streams failed: %s\n", name, L, streams, cudafft_last_error_message());
  }
  fflush(stdout);
  for (size_t t = 0; t < threads; t++)
    free(shares[t].times);
  free(shares);
  free(ids);
  for (size_t m = 0; m < streams; m++)
    cudafft_matrix_destroy(objects[m]);
  free(objects);
  return failed;
}

static size_t
parse_list(const char *text, size_t *values, size_t max)
{
  size_t n = 0;
  while (*text && n < max) {
    char *end;
    values[n++] = strtoul(text, &end, 10);
    text = *end == ',' ? end + 1 : end;
    if (end == text && *end)
      break;
  }
  return n;
}

int
main(int argc, char **argv)
{
  unsigned inputs = 64, outputs = 64;
  double ir_seconds = 1.0, seconds = 10.0, max_wall = 10.0, peak_gbs = 0;
  size_t blocks[MAX_BLOCKS] = {128, 2048}, block_count = 2;
  size_t instances[MAX_BLOCKS] = {0}, instance_count = 0;
  int use_cuda = 1, use_cpu = 1, device_memory = 0;
  for (int a = 1; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : "";
    if (!strcmp(argv[a], "--inputs"))
      inputs = (unsigned)atoi(v), a++;
    else if (!strcmp(argv[a], "--outputs"))
      outputs = (unsigned)atoi(v), a++;
    else if (!strcmp(argv[a], "--ir-seconds"))
      ir_seconds = atof(v), a++;
    else if (!strcmp(argv[a], "--seconds"))
      seconds = atof(v), a++;
    else if (!strcmp(argv[a], "--max-wall"))
      max_wall = atof(v), a++;
    else if (!strcmp(argv[a], "--peak-gbs"))
      peak_gbs = atof(v), a++;
    else if (!strcmp(argv[a], "--blocks"))
      block_count = parse_list(v, blocks, MAX_BLOCKS), a++;
    else if (!strcmp(argv[a], "--instances"))
      instance_count = parse_list(v, instances, MAX_BLOCKS), a++;
    else if (!strcmp(argv[a], "--backends"))
      use_cuda = strstr(v, "cuda") != NULL, use_cpu = strstr(v, "cpu") != NULL, a++;
    else if (!strcmp(argv[a], "--device-memory"))
      device_memory = 1;
    else {
      fprintf(stderr,
              "usage: %s [--inputs I] [--outputs O] [--ir-seconds T] [--blocks L,...] "
              "[--backends cuda,cpu] [--seconds S] [--max-wall W] [--peak-gbs G] "
              "[--instances M,..] [--device-memory]\n",
              argv[0]);
      return 2;
    }
  }
  const size_t ir_taps = (size_t)(ir_seconds * RATE);
  bench_print_host("the GPU part", NULL);
  printf("matrix-bench: %u x %u responses of %g s (%zu taps) at %d Hz, F32, one block a push, "
         "flat out\n",
         inputs, outputs, ir_seconds, ir_taps, RATE);
  const size_t count = (size_t)inputs * outputs * ir_taps;
  double *taps = malloc(count * sizeof *taps);
  if (!taps) {
    fprintf(stderr, "cannot allocate %zu MB of responses\n", count * sizeof *taps >> 20);
    return 1;
  }
  /* Decaying noise: -60 dB at the end, as a room's reverb; scaled so that the outputs stay near
   * the inputs' level. */
  const double scale = 1.0 / sqrt((double)inputs * ir_taps / 7.0);
  for (size_t e = 0; e < (size_t)inputs * outputs; e++)
    for (size_t k = 0; k < ir_taps; k++)
      taps[e * ir_taps + k] = scale * uniform() * exp(-6.9 * (double)k / (double)ir_taps);

  int device_count = 0;
  const int have_device = cudaGetDeviceCount(&device_count) == cudaSuccess && device_count > 0;
  cudaGetLastError();
  if (use_cuda && !have_device)
    printf("no CUDA device: the cuda rows and the kernel's figures are left out\n");
  int failed = 0;
  for (size_t b = 0; b < block_count && instance_count > 0; b++)
    for (size_t k = 0; k < instance_count; k++) {
      for (int mem = 0; mem <= device_memory && use_cuda && have_device; mem++)
        failed |= run_streams(CUDAFFT_BACKEND_CUDA, mem ? "cuda-mem" : "cuda", inputs, outputs,
                              blocks[b], taps, ir_taps, instances[k], seconds, max_wall, mem);
      if (use_cpu)
        failed |= run_streams(CUDAFFT_BACKEND_CPU, "cpu", inputs, outputs, blocks[b], taps, ir_taps,
                              instances[k], seconds, max_wall, 0);
    }
  for (size_t b = 0; b < block_count && instance_count == 0; b++) {
    const size_t L = blocks[b];
    Row gpu = {0}, gpu_mem = {0}, cpu = {0};
    if (use_cuda && have_device)
      failed |= run_row(CUDAFFT_BACKEND_CUDA, "cuda", inputs, outputs, L, taps, ir_taps, seconds,
                        max_wall, 0, &gpu);
    if (use_cuda && have_device && device_memory)
      failed |= run_row(CUDAFFT_BACKEND_CUDA, "cuda-mem", inputs, outputs, L, taps, ir_taps,
                        seconds, max_wall, 1, &gpu_mem);
    if (use_cpu)
      failed |= run_row(CUDAFFT_BACKEND_CPU, "cpu", inputs, outputs, L, taps, ir_taps, seconds,
                        max_wall, 0, &cpu);
    if (gpu.audio_per_wall > 0 && cpu.audio_per_wall > 0)
      printf("L=%-5zu the GPU's throughput is %.1fx the CPU backend's\n", L,
             gpu.audio_per_wall / cpu.audio_per_wall);
    if (gpu.audio_per_wall > 0 && gpu_mem.audio_per_wall > 0)
      printf("L=%-5zu device memory / host memory: %.2fx the throughput\n", L,
             gpu_mem.audio_per_wall / gpu.audio_per_wall);
  }
  free(taps);

  if (use_cuda && have_device && instance_count == 0) {
    const double peak = peak_gbs > 0 ? peak_gbs : device_peak_gbs();
    const double copy = device_copy_gbs();
    printf("device 0: peak %.0f GB/s%s, a device-to-device copy reaches %.0f GB/s (read + "
           "written)\n",
           peak, peak_gbs > 0 ? " (--peak-gbs)" : "", copy);
    for (size_t b = 0; b < block_count; b++) {
      const size_t L = blocks[b];
      if (L == 0) {
        printf("kernel L=0: the tail's kernel is block 32's (run --blocks 32)\n");
        continue;
      }
      const unsigned parts = (unsigned)((ir_taps + L - 1) / L);
      double kernel_s = 0, bytes = 0;
      const CudafftStatus status = cudafft_matrix_kernel_time(
          0, inputs, outputs, L, parts, CUDAFFT_SAMPLE_F32, 50, &kernel_s, &bytes);
      if (status != CUDAFFT_STATUS_OK) {
        printf("kernel L=%zu: %s\n", L, cudafft_last_error_message());
        failed = 1;
        continue;
      }
      const double floor_s = peak > 0 ? bytes / (peak * 1e9) : 0;
      printf("kernel L=%-5zu %u partitions: %.3f ms a block, %.2f GB read (the floor), %.0f GB/s"
             " achieved",
             L, parts, 1e3 * kernel_s, bytes / 1e9, bytes / kernel_s / 1e9);
      if (peak > 0)
        printf(", %.2fx the floor at the peak %.0f GB/s, %.2fx at the copy's %.0f GB/s (%.1f%% of "
               "the %.2f ms period)\n",
               kernel_s / floor_s, peak, copy > 0 ? kernel_s / (bytes / (copy * 1e9)) : 0.0, copy,
               100.0 * kernel_s / ((double)L / RATE), 1e3 * (double)L / RATE);
      else
        printf(" (peak bandwidth unknown: give --peak-gbs)\n");
    }
  }
  return failed;
}
