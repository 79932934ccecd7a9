/* launch-bench: what one small call costs, by the way its kernel is launched.
 *
 * At small batches a call's latency is mostly the host's launch and the events around it, not the
 * FFT: this bench shows where that time goes. Each row is one kind of call, timed two ways:
 *  - event-timed alone: events recorded around the one call on the stream it runs on, after the
 *    stream went idle (what fft-bench's --calls 1 measures); median, 10th and 90th percentile;
 *  - host cost: the host time the call itself takes, once after an idle stream (median), and per
 *    call when 200 are queued back to back.
 * Rows: a 4-byte cudaMemsetAsync (the floor of any call); an empty kernel of the batch's grid
 * launched through the driver (cuLaunchKernel), the runtime (<<<>>>) and a one-node CUDA graph;
 * the engine's C2C plan of 4096 points at the batch through its cached graphs, and through them
 * with the output rotating over six buffers (more than a plan caches graphs for, so that every call
 * rewrites a cached graph's kernel arguments); and cuFFT.
 *
 * Usage: launch-bench [--batch B] [--runs R] (defaults 64 and 300) */
#include "bench_check.h"
#include "driver_entry.cuh"
#include "kernel_launch.h"
#include <cudafft/fft.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <time.h>
#include <vector>

namespace {

constexpr int kN = 4096;
constexpr int kRotating = 6;
static_assert(kRotating > CUDAFFT_GRAPH_ENTRIES,
              "the rotating row must miss the plan's graph cache");

__global__ void
empty_kernel(const float2 *, float2 *, int, float, float, const float2 *)
{
}

struct Bench {
  int batch = 64;
  float2 *in = nullptr, *out = nullptr;
  float2 *rotating[kRotating] = {};
  int next = 0;
  CudafftPlan *plan = nullptr;
  cudaStream_t stream = nullptr; /* the plan's; every row runs here */
  cufftHandle cufft = 0;
  CUfunction empty = nullptr;
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  cudaGraphExec_t empty_graph = nullptr;
};

void
empty_driver(Bench &b)
{
  int batch = b.batch;
  float sign = 1.0f, scale = 1.0f;
  const float2 *twiddles = nullptr;
  void *args[] = {&b.in, &b.out, &batch, &sign, &scale, &twiddles};
  if (b.launch(b.empty, (unsigned)b.batch, 1, 1, 256, 1, 1, 0, (CUstream)b.stream, args, nullptr) !=
      CUDA_SUCCESS) {
    fprintf(stderr, "launch-bench: cuLaunchKernel failed\n");
    exit(1);
  }
}

void
empty_runtime(Bench &b)
{
  empty_kernel<<<b.batch, 256, 0, b.stream>>>(b.in, b.out, b.batch, 1.0f, 1.0f, nullptr);
  CHECK_CUDA(cudaGetLastError());
}

void
empty_graph(Bench &b)
{
  CHECK_CUDA(cudaGraphLaunch(b.empty_graph, b.stream));
}

void
memset4(Bench &b)
{
  CHECK_CUDA(cudaMemsetAsync(b.out, 0, 4, b.stream));
}

void
ours(Bench &b)
{
  CHECK_OURS(cudafft_execute_device(b.plan, CUDAFFT_FORWARD, b.in, b.out, b.batch, 1.0f));
}

void
ours_rotating(Bench &b)
{
  b.next = (b.next + 1) % kRotating;
  CHECK_OURS(
      cudafft_execute_device(b.plan, CUDAFFT_FORWARD, b.in, b.rotating[b.next], b.batch, 1.0f));
}

void
cufft(Bench &b)
{
  CHECK_CUFFT(cufftExecC2C(b.cufft, (cufftComplex *)b.in, (cufftComplex *)b.out, CUFFT_FORWARD));
}

struct Row {
  const char *name;
  void (*call)(Bench &);
};

double
now_us()
{
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

} // namespace

int
main(int argc, char **argv)
{
  Bench b;
  int runs = 300;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--batch") && i + 1 < argc)
      b.batch = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--batch B] [--runs R]\n", argv[0]);
      return 2;
    }
  }
  if (b.batch < 1 || runs < 1) {
    fprintf(stderr, "launch-bench: batch and runs must be positive\n");
    return 2;
  }
  if (cudafft_cuda_device_count() == 0) {
    fprintf(stderr, "launch-bench: no CUDA device: the benchmark needs a GPU\n");
    return 77;
  }
  cudaDeviceProp prop;
  /* everything on device 0: our plan (pinned), cuFFT's and the buffers (the current device) */
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device 0: %s; C2C %d x %d; event-timed medians of %d runs, rows interleaved\n", prop.name,
         b.batch, kN, runs);

  const size_t count = (size_t)kN * b.batch;
  CHECK_CUDA(cudaMalloc(&b.in, count * sizeof(float2)));
  CHECK_CUDA(cudaMalloc(&b.out, count * sizeof(float2)));
  for (float2 *&buffer : b.rotating)
    CHECK_CUDA(cudaMalloc(&buffer, count * sizeof(float2)));
  std::vector<float2> host(count);
  for (float2 &x : host)
    x = make_float2(2.0f * rand() / RAND_MAX - 1.0f, 2.0f * rand() / RAND_MAX - 1.0f);
  CHECK_CUDA(cudaMemcpy(b.in, host.data(), count * sizeof(float2), cudaMemcpyHostToDevice));

  CHECK_OURS(cudafft_plan_create(&b.plan, CUDAFFT_BACKEND_CUDA, 0, CUDAFFT_C2C, kN));
  b.stream = (cudaStream_t)cudafft_plan_get_cuda_stream(b.plan);
  CHECK_CUFFT(cufftPlan1d(&b.cufft, kN, CUFFT_C2C, b.batch));
  CHECK_CUFFT(cufftSetStream(b.cufft, b.stream));
  cudaDriverEntryPointQueryResult found;
  CHECK_CUDA(cudafft_driver_entry("cuLaunchKernel", 4000, (void **)&b.launch, &found));
  CHECK_CUDA(cudaGetFuncBySymbol((cudaFunction_t *)&b.empty, (const void *)empty_kernel));
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(b.stream, cudaStreamCaptureModeThreadLocal));
  empty_driver(b);
  CHECK_CUDA(cudaStreamEndCapture(b.stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&b.empty_graph, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));

  const Row rows[] = {
      {"memset 4 B", memset4},
      {"empty kernel, cuLaunchKernel", empty_driver},
      {"empty kernel, <<<>>>", empty_runtime},
      {"empty kernel, graph", empty_graph},
      {"ours (cached graphs)", ours},
      {"ours, 6 outputs rotating", ours_rotating},
      {"cuFFT", cufft},
  };
  const int row_count = sizeof rows / sizeof *rows;

  std::vector<std::vector<float>> us(row_count);
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int warm = 0; warm < 20; ++warm)
    for (const Row &row : rows)
      row.call(b);
  CHECK_CUDA(cudaDeviceSynchronize());
  for (int r = 0; r < runs; ++r)
    for (int i = 0; i < row_count; ++i) {
      CHECK_CUDA(cudaEventRecord(start, b.stream));
      rows[i].call(b);
      CHECK_CUDA(cudaEventRecord(stop, b.stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float ms;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
      us[i].push_back(1000.0f * ms);
    }

  printf("%-30s %28s   %s\n", "", "event-timed alone (us)", "host cost (us)");
  printf("%-30s %8s %8s %8s   %8s %8s\n", "call", "median", "p10", "p90", "one", "queued");
  for (int i = 0; i < row_count; ++i) {
    std::vector<float> &t = us[i];
    std::sort(t.begin(), t.end());
    std::vector<double> one;
    for (int r = 0; r < 200; ++r) {
      CHECK_CUDA(cudaStreamSynchronize(b.stream));
      const double before = now_us();
      rows[i].call(b);
      one.push_back(now_us() - before);
    }
    std::sort(one.begin(), one.end());
    CHECK_CUDA(cudaStreamSynchronize(b.stream));
    const double before = now_us();
    for (int q = 0; q < 200; ++q)
      rows[i].call(b);
    const double queued = (now_us() - before) / 200;
    CHECK_CUDA(cudaStreamSynchronize(b.stream));
    printf("%-30s %8.2f %8.2f %8.2f   %8.2f %8.2f\n", rows[i].name, t[runs / 2], t[runs / 10],
           t[runs * 9 / 10], one[100], queued);
  }

  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(b.empty_graph);
  cufftDestroy(b.cufft);
  cudafft_plan_destroy(b.plan);
  cudaFree(b.in);
  cudaFree(b.out);
  for (float2 *buffer : b.rotating)
    cudaFree(buffer);
  return 0;
}
