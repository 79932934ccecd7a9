/* fft-bench: the engine against cuFFT in the same process, on the same device buffers.
 *
 * For each transform kind and batch: warm-up, then RUNS timed runs of each library, alternating,
 * each run timed alone with CUDA events on the stream it runs on; the medians are reported. Inputs
 * are uniform random in [-1, 1]; the largest batch (16384 x 4096 points: 512 MB of complex input)
 * is far larger than any L2. Both libraries' outputs are compared with FFTW in double precision (on
 * the first ERROR_TRANSFORMS transforms of the batch) by relative L2 error.
 *
 * Before the table it prints the floor under any one call's time on this machine: an event-timed
 * 4-byte cudaMemsetAsync (launch and event overhead, no work), and each library's host-side cost
 * per call (queueing 1000 batch-64 calls back to back, timed on the host).
 *
 * Usage: fft-bench [--size N[,N...]] [--runs R] [--kind c2c|r2c] [--batch B] [--calls K]
 *   --size takes one size or a list (4096 by default; 400,480,1000,3000 times the sizes of the
 *   mixed-radix kernels that models use, size after size in the same run); --batch B times that
 *   batch alone (any count); --calls K queues K calls per timed run (default 1: one call's
 *   latency; see calls_per_run).
 * The engine launches its kernel through CUDA graphs it caches per plan (lib/cuda/kernel_launch.h);
 * bench/launch-bench shows what that costs a call beside the other ways of launching. */
#define _POSIX_C_SOURCE 200809L
#include "bench_check.h"
#include <cudafft/fft.h>

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <fftw3.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ERROR_TRANSFORMS 64
#define MAX_SIZES 16

typedef void (*RunFn)(void *ctx);

/* Calls queued back to back inside one timed run (--calls); a run's time is divided by it. With
 * 1, each run is one call's latency from the host's launch to the end of its work; with more, the
 * device time per call of a stream kept busy, host launch cost hidden behind the work before. */
static int calls_per_run = 1;

static int
compare_floats(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Median milliseconds of runs of fn_a and of fn_b, each run timed alone with a pair of events on
 * its stream; the two alternate run by run, so that clock and temperature drift touch both. */
static void
time_medians(RunFn fn_a, cudaStream_t stream_a, RunFn fn_b, cudaStream_t stream_b, void *ctx,
             int runs, float *median_a, float *median_b)
{
  cudaEvent_t start, stop;
  float *ms_a = malloc(sizeof(float) * runs), *ms_b = malloc(sizeof(float) * runs);
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 10; ++i) {
    fn_a(ctx);
    fn_b(ctx);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  for (int i = 0; i < runs; ++i) {
    for (int which = 0; which < 2; ++which) {
      cudaStream_t stream = which ? stream_b : stream_a;
      float *ms = which ? &ms_b[i] : &ms_a[i];
      CHECK_CUDA(cudaEventRecord(start, stream));
      for (int c = 0; c < calls_per_run; ++c)
        (which ? fn_b : fn_a)(ctx);
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      CHECK_CUDA(cudaEventElapsedTime(ms, start, stop));
      *ms /= (float)calls_per_run;
    }
  }
  qsort(ms_a, runs, sizeof(float), compare_floats);
  qsort(ms_b, runs, sizeof(float), compare_floats);
  *median_a = ms_a[runs / 2];
  *median_b = ms_b[runs / 2];
  free(ms_a);
  free(ms_b);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

typedef struct {
  CudafftPlan *plan;
  CudafftKind kind;
  cufftHandle cufft;
  void *d_in, *d_out;
  size_t batch;
} Bench;

static void
run_ours(void *ctx)
{
  Bench *b = ctx;
  CudafftDirection dir = b->kind == CUDAFFT_C2R ? CUDAFFT_INVERSE : CUDAFFT_FORWARD;
  CHECK_OURS(cudafft_execute_device(b->plan, dir, b->d_in, b->d_out, b->batch, 1.0f));
}

static void
run_cufft(void *ctx)
{
  Bench *b = ctx;
  if (b->kind == CUDAFFT_C2C)
    CHECK_CUFFT(cufftExecC2C(b->cufft, b->d_in, b->d_out, CUFFT_FORWARD));
  else
    CHECK_CUFFT(cufftExecR2C(b->cufft, b->d_in, b->d_out));
}

/* Relative L2 error of out (float) against FFTW double on the first transforms of in. */
static double
error_vs_double(CudafftKind kind, size_t n, const float *in, const float *out, size_t count)
{
  const size_t bins = kind == CUDAFFT_C2C ? n : n / 2 + 1;
  fftw_complex *ref = fftw_malloc(sizeof(fftw_complex) * bins);
  void *src = fftw_malloc(sizeof(double) * 2 * n);
  fftw_plan plan = kind == CUDAFFT_C2C
                       ? fftw_plan_dft_1d((int)n, src, ref, FFTW_FORWARD, FFTW_ESTIMATE)
                       : fftw_plan_dft_r2c_1d((int)n, src, ref, FFTW_ESTIMATE);
  const size_t in_floats = kind == CUDAFFT_C2C ? 2 * n : n;
  double err = 0, norm = 0;
  for (size_t t = 0; t < count; ++t) {
    for (size_t i = 0; i < in_floats; ++i)
      ((double *)src)[i] = in[t * in_floats + i];
    fftw_execute(plan);
    const float *o = out + t * 2 * bins;
    for (size_t k = 0; k < bins; ++k) {
      const double dr = o[2 * k] - ref[k][0], di = o[2 * k + 1] - ref[k][1];
      err += dr * dr + di * di;
      norm += ref[k][0] * ref[k][0] + ref[k][1] * ref[k][1];
    }
  }
  fftw_destroy_plan(plan);
  fftw_free(src);
  fftw_free(ref);
  return sqrt(err / norm);
}

static void
run_memset(void *ctx)
{
  Bench *b = ctx;
  CHECK_CUDA(cudaMemsetAsync(b->d_out, 0, 4, cudaStreamPerThread));
}

static double
now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Host microseconds per call of fn, queued back to back (the GPU work overlaps). */
static double
host_cost_us(RunFn fn, void *ctx, cudaStream_t stream)
{
  const int calls = 1000;
  fn(ctx);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const double start = now_us();
  for (int i = 0; i < calls; ++i)
    fn(ctx);
  const double cost = (now_us() - start) / calls;
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return cost;
}

static void
print_overheads(size_t n, int runs)
{
  Bench b = {.kind = CUDAFFT_C2C, .batch = 64};
  CHECK_CUDA(cudaMalloc(&b.d_in, 2 * n * 64 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_out, 2 * n * 64 * sizeof(float)));
  CHECK_CUDA(cudaMemset(b.d_in, 0, 2 * n * 64 * sizeof(float)));
  float floor_ms, unused;
  time_medians(run_memset, cudaStreamPerThread, run_memset, cudaStreamPerThread, &b, runs,
               &floor_ms, &unused);
  CHECK_OURS(cudafft_plan_create(&b.plan, CUDAFFT_BACKEND_CUDA, 0, CUDAFFT_C2C, n));
  CHECK_CUFFT(cufftPlan1d(&b.cufft, (int)n, CUFFT_C2C, 64));
  cudaStream_t ours_stream = cudafft_plan_get_cuda_stream(b.plan);
  CHECK_CUFFT(cufftSetStream(b.cufft, ours_stream));
  const double ours_us = host_cost_us(run_ours, &b, ours_stream);
  const double cufft_us = host_cost_us(run_cufft, &b, ours_stream);
  printf("floor: event-timed 4-byte cudaMemsetAsync %.4f ms; host cost per C2C call: ours %.2f us, "
         "cuFFT %.2f us\n",
         floor_ms, ours_us, cufft_us);
  cudafft_plan_destroy(b.plan);
  cufftDestroy(b.cufft);
  cudaFree(b.d_in);
  cudaFree(b.d_out);
}

static void
bench_one(CudafftKind kind, size_t n, size_t batch, int runs)
{
  const size_t in_floats = (kind == CUDAFFT_C2C ? 2 * n : n) * batch;
  const size_t out_floats = (kind == CUDAFFT_C2C ? 2 * n : 2 * (n / 2 + 1)) * batch;
  float *h_in = malloc(in_floats * sizeof(float));
  float *h_out = malloc(out_floats * sizeof(float));
  for (size_t i = 0; i < in_floats; ++i)
    h_in[i] = 2.0f * rand() / (float)RAND_MAX - 1.0f;

  Bench b = {.kind = kind, .batch = batch};
  CHECK_CUDA(cudaMalloc(&b.d_in, in_floats * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_out, out_floats * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(b.d_in, h_in, in_floats * sizeof(float), cudaMemcpyHostToDevice));
  const double bytes = (in_floats + out_floats) * sizeof(float);
  const char *name = kind == CUDAFFT_C2C ? "C2C" : "R2C";

  CHECK_CUFFT(
      cufftPlan1d(&b.cufft, (int)n, kind == CUDAFFT_C2C ? CUFFT_C2C : CUFFT_R2C, (int)batch));
  cudaStream_t cufft_stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&cufft_stream, cudaStreamNonBlocking));
  CHECK_CUFFT(cufftSetStream(b.cufft, cufft_stream));
  const size_t checked = batch < ERROR_TRANSFORMS ? batch : ERROR_TRANSFORMS;

  CHECK_OURS(cudafft_plan_create(&b.plan, CUDAFFT_BACKEND_CUDA, 0, kind, n));
  cudaStream_t ours_stream = cudafft_plan_get_cuda_stream(b.plan);
  float ours_ms, cufft_ms;
  time_medians(run_ours, ours_stream, run_cufft, cufft_stream, &b, runs, &ours_ms, &cufft_ms);
  /* the error of each, from a fresh run into a NaN-poisoned output: unwritten values show */
  CHECK_CUDA(cudaMemset(b.d_out, 0xff, out_floats * sizeof(float)));
  CHECK_CUDA(cudaDeviceSynchronize());
  run_cufft(&b);
  CHECK_CUDA(cudaDeviceSynchronize()); /* the plans' streams do not wait for the legacy one */
  CHECK_CUDA(cudaMemcpy(h_out, b.d_out, out_floats * sizeof(float), cudaMemcpyDeviceToHost));
  const double cufft_err = error_vs_double(kind, n, h_in, h_out, checked);
  CHECK_CUDA(cudaMemset(b.d_out, 0xff, out_floats * sizeof(float)));
  CHECK_CUDA(cudaDeviceSynchronize());
  run_ours(&b);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(h_out, b.d_out, out_floats * sizeof(float), cudaMemcpyDeviceToHost));
  const double ours_err = error_vs_double(kind, n, h_in, h_out, checked);
  printf("%-4s %6zu x %-5zu ours %8.4f ms %7.0f GB/s  cuFFT %8.4f ms %7.0f GB/s  "
         "ratio %5.2fx  err ours %.2e cuFFT %.2e (%.2fx)\n",
         name, batch, n, ours_ms, bytes / ours_ms / 1e6, cufft_ms, bytes / cufft_ms / 1e6,
         cufft_ms / ours_ms, ours_err, cufft_err, ours_err / cufft_err);
  fflush(stdout);
  cudafft_plan_destroy(b.plan);
  cufftDestroy(b.cufft);
  cudaStreamDestroy(cufft_stream);
  cudaFree(b.d_in);
  cudaFree(b.d_out);
  free(h_in);
  free(h_out);
}

/* Reads a comma-separated list of sizes into sizes[]; returns how many, 0 on a bad list. */
static int
parse_sizes(const char *text, size_t *sizes)
{
  int count = 0;
  for (const char *at = text; *at && count < MAX_SIZES;) {
    char *end = NULL;
    sizes[count] = strtoul(at, &end, 10);
    if (end == at || (*end && *end != ',') || !cudafft_fft_size_supported(sizes[count])) {
      fprintf(stderr,
              "fft-bench: %s: not a list of supported sizes (16 to 16384, no prime factor "
              "above 7)\n",
              text);
      return 0;
    }
    count++;
    at = *end == ',' ? end + 1 : end;
  }
  return count;
}

int
main(int argc, char **argv)
{
  size_t sizes[MAX_SIZES] = {4096};
  int size_count = 1;
  int runs = 50;
  const char *only_kind = NULL;
  size_t only_batch = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      if (!(size_count = parse_sizes(argv[++i], sizes)))
        return 2;
    } else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--kind") && i + 1 < argc)
      only_kind = argv[++i];
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
      only_batch = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
      calls_per_run = atoi(argv[++i]);
    else {
      fprintf(stderr,
              "usage: %s [--size N[,N...]] [--runs R] [--kind c2c|r2c] [--batch B] [--calls K]\n",
              argv[0]);
      return 2;
    }
  }
  if (runs < 1)
    runs = 1;
  if (calls_per_run < 1)
    calls_per_run = 1;
  if (cudafft_cuda_device_count() == 0) {
    fprintf(stderr, "fft-bench: no CUDA device: %s\n", "the benchmark needs a GPU");
    return 77;
  }
  /* everything on device 0: our plans (pinned), cuFFT's and the buffers (the current device) */
  CHECK_CUDA(cudaSetDevice(0));
  struct cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int runtime = 0, cufft_version = 0;
  cudaRuntimeGetVersion(&runtime);
  cufftGetVersion(&cufft_version);
  printf("device 0: %s (sm_%d%d, %d SMs, L2 %d MB), CUDA runtime %d, cuFFT %d; median of %d runs "
         "of %d call%s each (time per call)\n",
         prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20,
         runtime, cufft_version, runs, calls_per_run, calls_per_run == 1 ? "" : "s");
  srand(12345);
  print_overheads(sizes[0], runs);
  /* --batch B runs that batch alone, whatever it is */
  const size_t batches[] = {only_batch ? only_batch : 64, 1024, 16384};
  const int batch_count = only_batch ? 1 : 3;
  const CudafftKind kinds[] = {CUDAFFT_C2C, CUDAFFT_R2C};
  const char *kind_names[] = {"c2c", "r2c"};
  for (int s = 0; s < size_count; ++s)
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < batch_count; ++i)
        if (!only_kind || !strcmp(only_kind, kind_names[k]))
          bench_one(kinds[k], sizes[s], batches[i], runs);
  return 0;
}
