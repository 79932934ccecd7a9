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
 * the engine's C2C plan of 4096 points at the batch through its default path (cached graphs),
 * through CUDAFFT_LAUNCH=driver and =runtime, and through its graphs with the output rotating over
 * six buffers (more than a plan caches graphs for, so that every call rewrites a graph); and cuFFT.
 *
 * Usage: launch-bench [--batch B] [--runs R] (defaults 64 and 300) */
#include "bench_check.h"
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

__global__ void
empty_kernel(const float2 *, float2 *, int, float, float, const float2 *)
{
}

struct Bench {
  int batch = 64;
  float2 *in = nullptr, *out = nullptr;
  float2 *rotating[kRotating] = {};
  int next = 0;
  CudafftPlan *graph_plan = nullptr, *driver_plan = nullptr, *runtime_plan = nullptr;
  cudaStream_t stream = nullptr; /* the default plan's; every row but the other plans' runs here */
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
  CHECK_OURS(cudafft_execute_device(b.graph_plan, CUDAFFT_FORWARD, b.in, b.out, b.batch, 1.0f));
}

void
ours_driver(Bench &b)
{
  CHECK_OURS(cudafft_execute_device(b.driver_plan, CUDAFFT_FORWARD, b.in, b.out, b.batch, 1.0f));
}

void
ours_runtime(Bench &b)
{
  CHECK_OURS(cudafft_execute_device(b.runtime_plan, CUDAFFT_FORWARD, b.in, b.out, b.batch, 1.0f));
}

void
ours_rotating(Bench &b)
{
  b.next = (b.next + 1) % kRotating;
  CHECK_OURS(cudafft_execute_device(b.graph_plan, CUDAFFT_FORWARD, b.in, b.rotating[b.next],
                                    b.batch, 1.0f));
}

void
cufft(Bench &b)
{
  CHECK_CUFFT(cufftExecC2C(b.cufft, (cufftComplex *)b.in, (cufftComplex *)b.out, CUFFT_FORWARD));
}

struct Row {
  const char *name;
  void (*call)(Bench &);
  cudaStream_t stream;
};

double
now_us()
{
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A plan whose launch path is CUDAFFT_LAUNCH=path (NULL: the default). */
CudafftPlan *
plan_with_launch(const char *path)
{
  if (path)
    setenv("CUDAFFT_LAUNCH", path, 1);
  else
    unsetenv("CUDAFFT_LAUNCH");
  CudafftPlan *plan = nullptr;
  CHECK_OURS(cudafft_plan_create(&plan, CUDAFFT_BACKEND_CUDA, -1, CUDAFFT_C2C, kN));
  unsetenv("CUDAFFT_LAUNCH");
  return plan;
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
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s; C2C %d x %d; event-timed medians of %d runs, rows interleaved\n", prop.name,
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

  b.graph_plan = plan_with_launch(nullptr);
  b.driver_plan = plan_with_launch("driver");
  b.runtime_plan = plan_with_launch("runtime");
  b.stream = (cudaStream_t)cudafft_plan_get_cuda_stream(b.graph_plan);
  CHECK_CUFFT(cufftPlan1d(&b.cufft, kN, CUFFT_C2C, b.batch));
  CHECK_CUFFT(cufftSetStream(b.cufft, b.stream));
  cudaDriverEntryPointQueryResult found;
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&b.launch, 4000,
                                              cudaEnableDefault, &found));
  CHECK_CUDA(cudaGetFuncBySymbol((cudaFunction_t *)&b.empty, (const void *)empty_kernel));
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(b.stream, cudaStreamCaptureModeThreadLocal));
  empty_driver(b);
  CHECK_CUDA(cudaStreamEndCapture(b.stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&b.empty_graph, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));

  const cudaStream_t driver_stream = (cudaStream_t)cudafft_plan_get_cuda_stream(b.driver_plan);
  const cudaStream_t runtime_stream = (cudaStream_t)cudafft_plan_get_cuda_stream(b.runtime_plan);
  const Row rows[] = {
      {"memset 4 B", memset4, b.stream},
      {"empty kernel, cuLaunchKernel", empty_driver, b.stream},
      {"empty kernel, <<<>>>", empty_runtime, b.stream},
      {"empty kernel, graph", empty_graph, b.stream},
      {"ours (cached graphs)", ours, b.stream},
      {"ours, CUDAFFT_LAUNCH=driver", ours_driver, driver_stream},
      {"ours, CUDAFFT_LAUNCH=runtime", ours_runtime, runtime_stream},
      {"ours, 6 outputs rotating", ours_rotating, b.stream},
      {"cuFFT", cufft, b.stream},
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
      CHECK_CUDA(cudaEventRecord(start, rows[i].stream));
      rows[i].call(b);
      CHECK_CUDA(cudaEventRecord(stop, rows[i].stream));
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
      CHECK_CUDA(cudaStreamSynchronize(rows[i].stream));
      const double before = now_us();
      rows[i].call(b);
      one.push_back(now_us() - before);
    }
    std::sort(one.begin(), one.end());
    CHECK_CUDA(cudaStreamSynchronize(rows[i].stream));
    const double before = now_us();
    for (int q = 0; q < 200; ++q)
      rows[i].call(b);
    const double queued = (now_us() - before) / 200;
    CHECK_CUDA(cudaStreamSynchronize(rows[i].stream));
    printf("%-30s %8.2f %8.2f %8.2f   %8.2f %8.2f\n", rows[i].name, t[runs / 2], t[runs / 10],
           t[runs * 9 / 10], one[100], queued);
  }

  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(b.empty_graph);
  cufftDestroy(b.cufft);
  cudafft_plan_destroy(b.graph_plan);
  cudafft_plan_destroy(b.driver_plan);
  cudafft_plan_destroy(b.runtime_plan);
  cudaFree(b.in);
  cudaFree(b.out);
  for (float2 *buffer : b.rotating)
    cudaFree(buffer);
  return 0;
}
