/* matrix-bench: the matrix convolution (cudafft/matrix.h) on the GPU and on its CPU backend in one
 * run: a matrix of I inputs x O outputs of T-second responses at 48 kHz (default 64 x 64 of 1 s:
 * 4,096 filters), at each block size L (default 128 and 2048).
 *
 * For each block size and backend it makes the object (timed apart: the responses' spectra), pushes
 * a few blocks untimed, then pushes one block of L frames of random F32 input at a time, as fast as
 * it can, timing each push with CLOCK_MONOTONIC: one block's time through the library, input and
 * output in host memory. It reports the median, p99, p99.9 and the worst block time, p99.9 as a
 * share of the block's period (L / 48000 s), and the audio seconds per wall second; for L = 2048
 * also the GPU's throughput over the CPU backend's. Rows stop after --seconds of audio or
 * --max-wall seconds, whichever comes first (the CPU backend of a large matrix is far from real
 * time and runs a few blocks only; the row says how many).
 *
 * Then the fused multiply-accumulate alone (cudafft_matrix_kernel_time(): a dense matrix, the same
 * partitions, CUDA events around repeated launches): its time per block, the response spectra it
 * must read once per block (its memory floor), its achieved bandwidth and its time over the floor
 * at the device's peak bandwidth (from the device's memory clock and bus width, or --peak-gbs).
 *
 * Usage: matrix-bench [--inputs I] [--outputs O] [--ir-seconds T] [--blocks L,...]
 *          [--backends cuda,cpu] [--seconds S] [--max-wall W] [--peak-gbs G]
 * Exit status: 0, or 1 where an object could not be made or a push failed. */
#define _POSIX_C_SOURCE 200809L

#include "bench_common.h"
#include "matrix_kernels.h"

#include <cudafft/matrix.h>

#include <cuda_runtime.h>
#include <math.h>
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

typedef struct {
  double audio_per_wall; /* audio seconds per wall second; 0: not run */
} Row;

static int
run_row(CudafftBackend backend, const char *name, unsigned inputs, unsigned outputs, size_t L,
        const double *taps, size_t ir_taps, double seconds, double max_wall, Row *row)
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
    printf("%-5s L=%-5zu cannot make the matrix: %s (%s)\n", name, L, cudafft_status_name(status),
           cudafft_last_error_message());
    return backend == CUDAFFT_BACKEND_CUDA && status == CUDAFFT_STATUS_NO_DEVICE ? 0 : 1;
  }
  float *in = malloc(L * inputs * sizeof *in), *out = malloc(L * outputs * sizeof *out);
  for (size_t n = 0; n < L * inputs; n++)
    in[n] = (float)(0.5 * uniform());
  const size_t wanted = (size_t)ceil(seconds * RATE / (double)L);
  double *times = malloc((wanted + 1) * sizeof *times);
  int failed = 0;
  size_t produced, blocks = 0;
  for (int w = 0; w < 4 && !failed; w++) /* warm-up */
    failed = cudafft_matrix_push(mx, in, L, out, &produced) != CUDAFFT_STATUS_OK;
  const double start = now_seconds();
  while (!failed && blocks < wanted && (blocks < 5 || now_seconds() - start < max_wall)) {
    const double a = now_seconds();
    failed = cudafft_matrix_push(mx, in, L, out, &produced) != CUDAFFT_STATUS_OK || produced != L;
    times[blocks++] = now_seconds() - a;
  }
  const double wall = now_seconds() - start;
  if (failed) {
    printf("%-5s L=%-5zu push failed: %s\n", name, L, cudafft_last_error_message());
  } else {
    const double period = (double)L / RATE;
    double sum = 0;
    for (size_t b = 0; b < blocks; b++)
      sum += times[b];
    qsort(times, blocks, sizeof *times, bench_compare_doubles);
    row->audio_per_wall = (double)blocks * period / wall;
    printf("%-5s L=%-5zu %7zu blocks  made in %6.2f s  mean %8.3f ms  p50 %8.3f  p99 %8.3f  "
           "p99.9 %8.3f  max %8.3f ms  p99.9 %7.1f%% of the %.2f ms period  %8.2fx real time\n",
           name, L, blocks, made, 1e3 * sum / (double)blocks, 1e3 * percentile(times, blocks, 0.5),
           1e3 * percentile(times, blocks, 0.99), 1e3 * percentile(times, blocks, 0.999),
           1e3 * times[blocks - 1], 100.0 * percentile(times, blocks, 0.999) / period, 1e3 * period,
           row->audio_per_wall);
  }
  fflush(stdout);
  free(times);
  free(in);
  free(out);
  cudafft_matrix_destroy(mx);
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
  int use_cuda = 1, use_cpu = 1;
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
    else if (!strcmp(argv[a], "--backends"))
      use_cuda = strstr(v, "cuda") != NULL, use_cpu = strstr(v, "cpu") != NULL, a++;
    else {
      fprintf(stderr,
              "usage: %s [--inputs I] [--outputs O] [--ir-seconds T] [--blocks L,...] "
              "[--backends cuda,cpu] [--seconds S] [--max-wall W] [--peak-gbs G]\n",
              argv[0]);
      return 2;
    }
  }
  const size_t ir_taps = (size_t)(ir_seconds * RATE);
  bench_print_host("the GPU part", NULL);
  printf("matrix-bench: %u x %u responses of %.2f s (%zu taps) at %d Hz, F32, one block a push, "
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
  for (size_t b = 0; b < block_count; b++) {
    const size_t L = blocks[b];
    Row gpu = {0}, cpu = {0};
    if (use_cuda && have_device)
      failed |= run_row(CUDAFFT_BACKEND_CUDA, "cuda", inputs, outputs, L, taps, ir_taps, seconds,
                        max_wall, &gpu);
    if (use_cpu)
      failed |= run_row(CUDAFFT_BACKEND_CPU, "cpu", inputs, outputs, L, taps, ir_taps, seconds,
                        max_wall, &cpu);
    if (gpu.audio_per_wall > 0 && cpu.audio_per_wall > 0)
      printf("L=%-5zu the GPU's throughput is %.1fx the CPU backend's\n", L,
             gpu.audio_per_wall / cpu.audio_per_wall);
  }
  free(taps);

  if (use_cuda && have_device) {
    const double peak = peak_gbs > 0 ? peak_gbs : device_peak_gbs();
    for (size_t b = 0; b < block_count; b++) {
      const size_t L = blocks[b];
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
        printf(", %.2fx the floor at the peak %.0f GB/s (%.1f%% of the %.2f ms period)\n",
               kernel_s / floor_s, peak, 100.0 * kernel_s / ((double)L / RATE),
               1e3 * (double)L / RATE);
      else
        printf(" (peak bandwidth unknown: give --peak-gbs)\n");
    }
  }
  return failed;
}
