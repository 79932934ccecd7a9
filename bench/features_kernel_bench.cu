/* features-kernel-bench: the features engine's fused frame kernel against the pipeline torchaudio
 * or DALI runs on a GPU, and against the engine's CPU backend, in the same run.
 *
 * STREAMS streams of FRAMES frames of Whisper's features (16 kHz, 400-point FFT, hop 160,
 * periodic Hann, centred with reflection, power, 80 Slaney mel bands, log10 with floor 1e-10; per
 * frame, without the per-chunk normalisation, which is a reduction of its own), each stream's
 * samples already on the device:
 * - ours: the features kind's launch for a batch of STREAMS jobs, one per stream (as the executor
 *   launches it for STREAMS objects of one channel each): the frame kernel reading each frame
 *   from the stream's history (reflection at its start), window, real FFT, power, the sparse mel
 *   bank, log10, the values stored; one kernel;
 * - cuFFT + cuBLAS: a framing kernel writing the windowed frames (the same reflection), one
 *   cufftExecR2C of STREAMS x FRAMES transforms, a power kernel, cublasSgemm with the dense mel
 *   matrix, a log kernel (plans and handles made before timing);
 * - the CPU backend: STREAMS objects of one channel (FFTW), each pushed its FRAMES frames' samples
 *   (host wall time, one thread).
 *
 * Timing: each device variant's launches captured once into a CUDA graph (the device's time
 * alone: the kind lays out its batch on the host first, as the executor's launcher does), 10
 * warm-ups, then RUNS rounds in which each runs once, timed with CUDA events on one stream;
 * medians (the CPU: the median of 3). The floor: the bytes the kernel must
 * move (each stream's samples read once, the features written once) at the device's peak
 * bandwidth (--peak-gbs, else from its memory clock and bus width), against its arithmetic (about
 * 5 N log2 N flops of the real FFT, the window, the power, the mel weights, the log: counted per
 * frame) at --peak-tflops (default 60, an H100's FP32 without tensor cores): the larger is the
 * floor, and its name says which bound applies. The outputs are compared: ours against the
 * pipeline's and the CPU backend's, beyond 1e-3 (log10 units) the bench fails (exit 1). No CUDA
 * device: exit 77.
 *
 * Usage: features-kernel-bench [--runs N] [--streams N] [--frames N] [--peak-gbs G]
 *                              [--peak-tflops T] */
#include "features_kernels.h"
#include "features_tables.h"
#include "mixed_fft.cuh"
#include "twiddles.h"

#include "kernel_bench.cuh"

#include <cudafft/features.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK_CUBLAS(call)                                                                         \
  do {                                                                                             \
    const cublasStatus_t s_ = (call);                                                              \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      fprintf(stderr, "%s:%d: %s: cuBLAS error %d\n", __FILE__, __LINE__, #call, (int)s_);         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

namespace {

constexpr int kN = 400, kHop = 160, kBins = kN / 2 + 1, kMels = 80;
constexpr float kMaxError = 1e-3f;

struct Bench {
  size_t streams = 1024, frames = 100, length = 0, history = 0;
  cudaStream_t stream = nullptr;
  /* ours */
  CudafftFeaturesConfig config = {};
  std::vector<CudafftFeaturesStepJob> jobs;
  std::vector<CudafftJob *> job_list;
  void *d_aux = nullptr;
  float *d_history = nullptr, *d_ours = nullptr;
  void *d_tables = nullptr;
  float2 *d_twiddles = nullptr;
  /* the pipeline */
  float *d_window = nullptr, *d_frames = nullptr, *d_power = nullptr, *d_mel = nullptr;
  float *d_ref = nullptr;
  float2 *d_bins = nullptr;
  cufftHandle plan = 0;
  cublasHandle_t blas = nullptr;
  cudaGraphExec_t ours_graph = nullptr, pipeline_graph = nullptr;
};

__global__ void
fill_kernel(float *x, size_t count)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 0x9E3779B9u ^ (uint32_t)(i >> 32) * 0x85EBCA6Bu;
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    x[i] = ((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f) * 0.5f;
  }
}

/* Frame f of stream s, windowed: samples f hop - n/2 + i of the stream, reflected at its start. */
__global__ void
framing_kernel(const float *__restrict__ history, size_t history_pitch, size_t frames,
               const float *__restrict__ window, size_t total, float *__restrict__ out)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    const size_t frame = i / kN, k = i % kN;
    const size_t s = frame / frames, f = frame % frames;
    long p = (long)(f * kHop) - kN / 2 + (long)k;
    p = p < 0 ? -p : p;
    out[i] = history[s * history_pitch + (size_t)p] * __ldg(&window[k]);
  }
}

__global__ void
power_kernel(const float2 *__restrict__ bins, size_t count, float *__restrict__ power)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    const float2 x = bins[i];
    power[i] = x.x * x.x + x.y * x.y;
  }
}

/* In place: the GEMM's output becomes the log-mel values. */
__global__ void
log_kernel(float *mel, size_t count)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    mel[i] = log10f(fmaxf(mel[i], 1e-10f));
}

unsigned
blocks_for(size_t count, int threads)
{
  const size_t wanted = (count + threads - 1) / threads;
  return (unsigned)std::min<size_t>(std::max<size_t>(wanted, 1), 65536);
}

void
launch_ours(Bench *b)
{
  CHECK_OURS(cudafft_features_step_kind.launch(b->job_list.data(), b->job_list.size(), b->d_aux,
                                               b->stream));
}

void
launch_pipeline(Bench *b)
{
  const size_t frames = b->streams * b->frames;
  framing_kernel<<<blocks_for(frames * kN, 256), 256, 0, b->stream>>>(
      b->d_history, b->history, b->frames, b->d_window, frames * kN, b->d_frames);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUFFT(cufftExecR2C(b->plan, b->d_frames, reinterpret_cast<cufftComplex *>(b->d_bins)));
  power_kernel<<<blocks_for(frames * kBins, 256), 256, 0, b->stream>>>(b->d_bins, frames * kBins,
                                                                       b->d_power);
  CHECK_CUDA(cudaGetLastError());
  /* mel[frames][80] (column-major 80 x frames) = W (80 x 201, column-major) x power (201 x
   * frames) */
  const float one = 1.0f, zero = 0.0f;
  CHECK_CUBLAS(cublasSgemm(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, kMels, (int)frames, kBins, &one,
                           b->d_mel, kMels, b->d_power, kBins, &zero, b->d_ref, kMels));
  log_kernel<<<blocks_for(frames * kMels, 256), 256, 0, b->stream>>>(b->d_ref, frames * kMels);
  CHECK_CUDA(cudaGetLastError());
}

using RunFn = void (*)(Bench *);

/* Each variant's launches captured once into a graph, so that the timing is the device's alone
 * (the kind's launch lays out its batch on the host first, as the executor's launcher does). */
cudaGraphExec_t
capture(Bench *b, RunFn launch)
{
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal));
  launch(b);
  CHECK_CUDA(cudaStreamEndCapture(b->stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return exec;
}

void
run_ours(Bench *b)
{
  CHECK_CUDA(cudaGraphLaunch(b->ours_graph, b->stream));
}

void
run_pipeline(Bench *b)
{
  CHECK_CUDA(cudaGraphLaunch(b->pipeline_graph, b->stream));
}

double
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

/* The device state of every stream's job: the tables once (shared by every job, as objects of
 * one configuration hold the same ones), a history row each. */
void
set_up_ours(Bench *b, const CudafftFeaturesTables &t)
{
  const CudafftFeaturesConfig &c = b->config;
  CudafftFeaturesShape shape;
  CHECK_OURS(cudafft_features_shape(&c, &shape));
  std::vector<uint32_t> filters(3 * kMels);
  for (int j = 0; j < kMels; ++j) {
    filters[3 * j] = t.filters[j].first;
    filters[3 * j + 1] = t.filters[j].count;
    filters[3 * j + 2] = t.filters[j].offset;
  }
  const size_t window_bytes = kN * sizeof(float), filter_bytes = filters.size() * 4;
  const size_t weight_bytes = t.weight_count * sizeof(float);
  CHECK_CUDA(cudaMalloc(&b->d_tables, window_bytes + filter_bytes + weight_bytes));
  char *tables = static_cast<char *>(b->d_tables);
  CHECK_CUDA(cudaMemcpy(tables, t.window, window_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(
      cudaMemcpy(tables + window_bytes, filters.data(), filter_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(tables + window_bytes + filter_bytes, t.weights, weight_bytes,
                        cudaMemcpyHostToDevice));
  const CudafftTwiddlePlan plan = {kN / 2, cudafft::kPlanMixed};
  CHECK_OURS(cudafft_twiddles_upload(&plan, 1, b->stream, &b->d_twiddles));
  CHECK_CUDA(cudafft_features_kernels_prepare());
  CudafftFeaturesObject o = {};
  cudafft_features_object_describe(&o, &c, &shape, &t, b->history, 0);
  o.window = reinterpret_cast<const float *>(tables);
  o.filters = reinterpret_cast<const uint32_t *>(tables + window_bytes);
  o.weights = reinterpret_cast<const float *>(tables + window_bytes + filter_bytes);
  o.twiddles = b->d_twiddles;
  b->jobs.assign(b->streams, CudafftFeaturesStepJob{});
  b->job_list.resize(b->streams);
  for (size_t s = 0; s < b->streams; ++s) {
    CudafftFeaturesStepJob &job = b->jobs[s];
    job.job.kind = &cudafft_features_step_kind;
    job.job.device_out = b->d_ours + s * b->frames * kMels;
    job.o = o;
    job.o.history = b->d_history + s * b->history;
    job.step.f0 = 0;
    job.step.f1 = b->frames;
    job.step.length = b->length;
    job.step.first = 0;
    job.step.count = b->frames;
    job.step.kept = UINT64_MAX;
    job.step.made = b->frames;
    job.step.group = 1;
    b->job_list[s] = &job.job;
  }
  const size_t aux = cudafft_features_step_kind.aux_bytes(b->job_list.data(), b->streams);
  std::vector<unsigned char> host_aux(aux);
  CHECK_CUDA(cudaMalloc(&b->d_aux, aux));
  cudafft_features_step_kind.prepare(b->job_list.data(), b->streams, host_aux.data(), b->d_aux);
  CHECK_CUDA(cudaMemcpy(b->d_aux, host_aux.data(), aux, cudaMemcpyHostToDevice));
}

/* The CPU backend over the same samples: seconds of the median of 3 runs, its outputs in out. */
double
time_cpu(const Bench &b, const std::vector<float> &history, std::vector<float> &out)
{
  std::vector<CudafftFeatures *> objects(b.streams);
  for (auto &object : objects)
    CHECK_OURS(cudafft_features_create(&object, CUDAFFT_BACKEND_CPU, -1, &b.config));
  std::vector<double> seconds;
  out.assign(b.streams * b.frames * kMels, NAN);
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    for (size_t s = 0; s < b.streams; ++s) {
      size_t outputs = 0;
      CHECK_OURS(cudafft_features_push(objects[s], history.data() + s * b.history, b.length,
                                       out.data() + s * b.frames * kMels, &outputs));
      cudafft_features_reset(objects[s]);
      if (outputs != b.frames) {
        fprintf(stderr, "features-kernel-bench: the CPU backend made %zu frames, not %zu\n",
                outputs, b.frames);
        exit(1);
      }
    }
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  for (auto object : objects)
    cudafft_features_destroy(object);
  std::sort(seconds.begin(), seconds.end());
  return seconds[1];
}

double
max_difference(const std::vector<float> &a, const std::vector<float> &b, size_t *bad)
{
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs((double)a[i] - b[i]);
    if (!std::isfinite(d))
      ++*bad;
    else
      worst = std::max(worst, d);
  }
  return worst;
}

} // namespace

int
main(int argc, char **argv)
{
  Bench b;
  int runs = 50;
  double peak_gbs = 0, peak_tflops = 60;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--streams") && i + 1 < argc)
      b.streams = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
      b.frames = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "--peak-gbs") && i + 1 < argc)
      peak_gbs = atof(argv[++i]);
    else if (!strcmp(argv[i], "--peak-tflops") && i + 1 < argc)
      peak_tflops = atof(argv[++i]);
    else {
      fprintf(stderr,
              "usage: %s [--runs N] [--streams N] [--frames N] [--peak-gbs G] [--peak-tflops T]\n",
              argv[0]);
      return 2;
    }
  }
  if (runs < 1 || b.streams == 0 || b.streams > 65536 || b.frames == 0 || b.frames > 100000 ||
      !(peak_tflops > 0)) {
    fprintf(stderr, "features-kernel-bench: --runs >= 1, --streams 1..65536, --frames 1..100000, "
                    "--peak-tflops > 0\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fprintf(stderr, "features-kernel-bench: no CUDA device: the benchmark needs a GPU\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  CHECK_CUDA(cudaSetDevice(0));
  print_device(prop);
  CHECK_OURS(cudafft_features_preset(&b.config, "whisper", 16000.0, kMels));
  b.config.output = CUDAFFT_FEATURES_OUTPUT_FRAMES;
  b.config.range = 0.0f; /* the per-chunk normalisation is a reduction of its own */
  b.config.shift = 0.0f;
  b.config.scale = 1.0f;
  b.config.drop_last = 0;
  b.config.layout = CUDAFFT_FEATURES_LAYOUT_FRAME_MAJOR;
  /* frames 0 .. frames - 1 are ready from (frames - 1) hop + n/2 + 1 samples on */
  b.length = (b.frames - 1) * kHop + kN / 2 + 1;
  b.history = (b.length + 63) / 64 * 64;
  printf("%zu streams x %zu frames of Whisper features (16 kHz, n = %d, hop %d, %d mels, log10), "
         "samples on the device; median of %d runs\n",
         b.streams, b.frames, kN, kHop, kMels, runs);

  const size_t frames = b.streams * b.frames;
  CHECK_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaMalloc(&b.d_history, b.streams * b.history * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_ours, frames * kMels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_ref, frames * kMels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_window, kN * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_frames, frames * kN * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_bins, frames * kBins * sizeof(float2)));
  CHECK_CUDA(cudaMalloc(&b.d_power, frames * kBins * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_mel, kMels * kBins * sizeof(float)));
  fill_kernel<<<blocks_for(b.streams * b.history, 256), 256, 0, b.stream>>>(b.d_history,
                                                                            b.streams * b.history);
  CHECK_CUDA(cudaGetLastError());

  CudafftFeaturesTables tables;
  CHECK_OURS(cudafft_features_tables_make(&b.config, &tables));
  set_up_ours(&b, tables);
  /* the pipeline's dense mel matrix (80 x 201, column-major) and window: the same float values */
  std::vector<float> dense(kMels * kBins, 0.0f);
  for (int j = 0; j < kMels; ++j)
    for (unsigned k = 0; k < tables.filters[j].count; ++k)
      dense[(size_t)(tables.filters[j].first + k) * kMels + j] =
          tables.weights[tables.filters[j].offset + k];
  CHECK_CUDA(
      cudaMemcpy(b.d_mel, dense.data(), dense.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b.d_window, tables.window, kN * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUFFT(cufftPlan1d(&b.plan, kN, CUFFT_R2C, (int)frames));
  CHECK_CUFFT(cufftSetStream(b.plan, b.stream));
  CHECK_CUBLAS(cublasCreate(&b.blas));
  CHECK_CUBLAS(cublasSetStream(b.blas, b.stream));
  CHECK_CUDA(cudaStreamSynchronize(b.stream));

  b.ours_graph = capture(&b, launch_ours);
  b.pipeline_graph = capture(&b, launch_pipeline);
  const RunFn fns[] = {run_ours, run_pipeline};
  float ms[2];
  time_medians(&b, fns, 2, runs, ms);
  const std::vector<float> history = download(b.d_history, b.streams * b.history);
  std::vector<float> cpu;
  const double cpu_s = time_cpu(b, history, cpu);

  /* the floor: bytes (each stream's samples read once, the features written once) and flops */
  const double bytes = (double)b.streams * (double)(b.length + b.frames * kMels) * sizeof(float);
  size_t weights = 0;
  for (int j = 0; j < kMels; ++j)
    weights += tables.filters[j].count;
  const double flops_frame = 5.0 * (kN / 2) * std::log2(kN / 2.0) + 6.0 * kN + 4.0 * kBins +
                             2.0 * (double)weights + 20.0 * kMels;
  const double flops = flops_frame * (double)frames;
  const double gbs = peak_gbs > 0 ? peak_gbs : device_peak_gbs();
  const double memory_ms = gbs > 0 ? bytes / (gbs * 1e9) * 1e3 : 0;
  const double arithmetic_ms = flops / (peak_tflops * 1e12) * 1e3;
  const double floor_ms = std::max(memory_ms, arithmetic_ms);
  printf("ours   (fused frame kernel)                        %9.4f ms\n", ms[0]);
  printf("cuFFT + cuBLAS (framing, R2C, power, SGEMM, log)   %9.4f ms   %.2fx ours\n", ms[1],
         ms[1] / ms[0]);
  printf("CPU backend (FFTW, one thread)                     %9.1f ms   %.0fx ours\n", cpu_s * 1e3,
         cpu_s * 1e3 / ms[0]);
  printf("bytes moved %.1f MB: %.4f ms at %.0f GB/s%s; arithmetic %.2f GFLOP: %.4f ms at %.0f "
         "TFLOP/s\n",
         bytes / 1e6, memory_ms, gbs, peak_gbs > 0 ? " (--peak-gbs)" : "", flops / 1e9,
         arithmetic_ms, peak_tflops);
  printf("floor %.4f ms (%s bound): ours at %.2fx the floor\n", floor_ms,
         memory_ms >= arithmetic_ms ? "memory" : "arithmetic", ms[0] / floor_ms);

  CHECK_CUDA(cudaMemset(b.d_ours, 0xff, frames * kMels * sizeof(float)));
  CHECK_CUDA(cudaMemset(b.d_ref, 0xff, frames * kMels * sizeof(float)));
  run_ours(&b);
  run_pipeline(&b);
  CHECK_CUDA(cudaStreamSynchronize(b.stream));
  const std::vector<float> ours = download(b.d_ours, frames * kMels);
  const std::vector<float> ref = download(b.d_ref, frames * kMels);
  size_t bad = 0;
  const double vs_pipeline = max_difference(ours, ref, &bad);
  const double vs_cpu = max_difference(ours, cpu, &bad);
  printf("max |difference| (log10): ours vs the pipeline %.2e, vs the CPU backend %.2e; %zu not "
         "finite\n",
         vs_pipeline, vs_cpu, bad);

  cudafft_features_tables_free(&tables);
  cudaGraphExecDestroy(b.ours_graph);
  cudaGraphExecDestroy(b.pipeline_graph);
  cublasDestroy(b.blas);
  cufftDestroy(b.plan);
  cudaFree(b.d_aux);
  cudaFree(b.d_tables);
  cudaFree(b.d_twiddles);
  cudaFree(b.d_history);
  cudaFree(b.d_ours);
  cudaFree(b.d_ref);
  cudaFree(b.d_window);
  cudaFree(b.d_frames);
  cudaFree(b.d_bins);
  cudaFree(b.d_power);
  cudaFree(b.d_mel);
  cudaStreamDestroy(b.stream);
  if (bad > 0 || !(vs_pipeline <= kMaxError) || !(vs_cpu <= kMaxError)) {
    fprintf(stderr, "features-kernel-bench: FAILED: the outputs differ beyond %g\n",
            (double)kMaxError);
    return 1;
  }
  return 0;
}
