/* spectrum-kernel-bench: the spectrum's fused analysis kernel against a cuFFT pipeline on the same
 * data, both on the device only (no uploads, no downloads).
 *
 * FRAMES frames of SIZE points, back to back in an F32 signal already on the device, each its own
 * interval (one FFT per result row of SIZE / 2 + 1 dB values, threshold -60), computed:
 * - ours: the fused launch (window on load, FFT, dB with threshold, stored into its row), as the
 *   engine's kind of work launches it for a batch of one job of FRAMES FFTs;
 * - cuFFT: a window kernel writing the windowed frames, cufftExecR2C (plan made before timing), a
 *   dB kernel writing the rows.
 * Also, for information: cufftExecR2C alone, and ours with 16 FFTs per interval (the accumulate
 * path: zeroing the sums, then atomic adds).
 *
 * Timing: 10 warm-ups, then RUNS rounds in which every variant runs once, each timed alone with
 * CUDA events on the one stream; medians. Effective GB/s counts the signal read once and the dB
 * rows written once. The outputs are compared band by band where cuFFT's level is above
 * threshold + 1: beyond 0.05 dB the benchmark fails (exit 1), as it does if the accumulated
 * means stray from cuFFT's by as much. No CUDA device: exit 77.
 *
 * Usage: spectrum-kernel-bench [--runs N] [--frames N] [--size N] */
#include "spectrum_kernels.h"
#include "spectrum_values.h"

#include "kernel_bench.cuh"

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kThreshold = -60;
constexpr size_t kFftsPerSlot = 16;
constexpr float kMaxDbError = 0.05f;

struct Bench {
  size_t n = 0, bands = 0, frames = 0, slots = 0;
  float norm_db = 0;
  cudaStream_t stream = nullptr;
  float *d_signal = nullptr, *d_window = nullptr, *d_windowed = nullptr;
  float2 *d_bins = nullptr, *d_twiddles = nullptr;
  float *d_ours = nullptr, *d_ref = nullptr, *d_sums = nullptr;
  /* the fused kernel's job descriptors and transform units (one job: each FFT into its own row,
   * or added into shared slots) */
  CudafftSpectrumFusedDesc *d_own = nullptr, *d_shared = nullptr;
  CudafftSpectrumFusedUnit *d_own_units = nullptr, *d_shared_units = nullptr;
  cufftHandle plan = 0;
};

/* Uniform in [-1, 1) from a hash of the index: no host array of the whole signal. */
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
    x[i] = (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

/* Frames back to back: windowed[i] = signal[i] window[i mod n], four values per thread (n is a
 * power of two >= 256, the buffers are cudaMalloc'd). */
__global__ void
window_kernel(const float4 *__restrict__ signal, const float4 *__restrict__ window, size_t n4,
              size_t count4, float4 *__restrict__ windowed)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count4;
       i += (size_t)gridDim.x * blockDim.x) {
    const float4 x = signal[i], w = __ldg(&window[i & (n4 - 1)]);
    windowed[i] = make_float4(x.x * w.x, x.y * w.y, x.z * w.z, x.w * w.w);
  }
}

__global__ void
db_kernel(const float2 *__restrict__ bins, size_t count, float norm_db, int threshold,
          float *__restrict__ out)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    const float2 x = bins[i];
    out[i] = cudafft_spectrum_level(x.x * x.x + x.y * x.y, norm_db, threshold);
  }
}

unsigned
blocks_for(size_t count, int threads)
{
  const size_t wanted = (count + threads - 1) / threads;
  return (unsigned)std::min<size_t>(std::max<size_t>(wanted, 1), 65536);
}

void
run_ours(Bench *b)
{
  CHECK_CUDA(cudafft_spectrum_fused_batch(b->n, 0, b->d_own, b->d_own_units, b->frames, b->d_window,
                                          b->norm_db, b->d_twiddles, b->stream));
}

void
run_ours_accumulate(Bench *b)
{
  CHECK_CUDA(cudaMemsetAsync(b->d_sums, 0, b->slots * b->bands * sizeof(float), b->stream));
  CHECK_CUDA(cudafft_spectrum_fused_batch(b->n, 0, b->d_shared, b->d_shared_units, b->frames,
                                          b->d_window, b->norm_db, b->d_twiddles, b->stream));
}

void
run_cufft_r2c(Bench *b)
{
  CHECK_CUFFT(cufftExecR2C(b->plan, b->d_windowed, (cufftComplex *)b->d_bins));
}

void
run_cufft(Bench *b)
{
  const size_t count4 = b->frames * b->n / 4;
  window_kernel<<<blocks_for(count4, 256), 256, 0, b->stream>>>(
      (const float4 *)b->d_signal, (const float4 *)b->d_window, b->n / 4, count4,
      (float4 *)b->d_windowed);
  CHECK_CUDA(cudaGetLastError());
  run_cufft_r2c(b);
  const size_t count = b->frames * b->bands;
  db_kernel<<<blocks_for(count, 256), 256, 0, b->stream>>>(b->d_bins, count, b->norm_db, kThreshold,
                                                           b->d_ref);
  CHECK_CUDA(cudaGetLastError());
}

using RunFn = void (*)(Bench *);

} // namespace

int
main(int argc, char **argv)
{
  Bench b;
  b.n = 4096;
  b.frames = 16384;
  int runs = 50;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
      b.frames = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "--size") && i + 1 < argc)
      b.n = parse_size(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--runs N] [--frames N] [--size N]\n", argv[0]);
      return 2;
    }
  }
  if (runs < 1 || b.frames == 0 || b.frames > (1u << 24)) {
    fprintf(stderr, "spectrum-kernel-bench: --runs must be >= 1, --frames in 1..%u\n", 1u << 24);
    return 2;
  }
  const CudafftBlockKernels *fused = cudafft_spectrum_fused_kernels(b.n);
  if (!fused) {
    fprintf(stderr, "spectrum-kernel-bench: no fused kernel for size %zu (powers of two %d..%d)\n",
            b.n, CUDAFFT_FUSED_MIN_SIZE, CUDAFFT_MAX_SIZE);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fprintf(stderr, "spectrum-kernel-bench: no CUDA device: the benchmark needs a GPU\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (fused->smem_bytes > prop.sharedMemPerBlockOptin) {
    fprintf(stderr,
            "spectrum-kernel-bench: size %zu needs %zu bytes of shared memory; %s offers "
            "%zu\n",
            b.n, fused->smem_bytes, prop.name, prop.sharedMemPerBlockOptin);
    return 77;
  }
  b.bands = b.n / 2 + 1;
  b.slots = (b.frames + kFftsPerSlot - 1) / kFftsPerSlot;
  b.norm_db = (float)(20.0 * log10((double)b.n));
  print_device(prop);
  printf("%zu frames of %zu points back to back, %zu bands per row, threshold %d dB; median of "
         "%d runs\n",
         b.frames, b.n, b.bands, kThreshold, runs);

  const size_t samples = b.frames * b.n, levels = b.frames * b.bands;
  CHECK_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaMalloc(&b.d_signal, samples * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_windowed, samples * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_window, b.n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_bins, levels * sizeof(float2)));
  CHECK_CUDA(cudaMalloc(&b.d_ours, levels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_ref, levels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_sums, b.slots * b.bands * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_own, sizeof(CudafftSpectrumFusedDesc)));
  CHECK_CUDA(cudaMalloc(&b.d_shared, sizeof(CudafftSpectrumFusedDesc)));
  CHECK_CUDA(cudaMalloc(&b.d_own_units, b.frames * sizeof(CudafftSpectrumFusedUnit)));
  CHECK_CUDA(cudaMalloc(&b.d_shared_units, b.frames * sizeof(CudafftSpectrumFusedUnit)));
  CHECK_OURS(cudafft_twiddles_upload(&fused->twiddles, 1, b.stream, &b.d_twiddles));
  CHECK_CUDA(cudafft_block_kernels_prepare(fused));

  fill_kernel<<<blocks_for(samples, 256), 256, 0, b.stream>>>(b.d_signal, samples);
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> window(b.n);
  for (size_t i = 0; i < b.n; ++i)
    window[i] = (float)(0.53836 - 0.46164 * cos(2.0 * M_PI * (double)i / (double)b.n));
  /* one job of b.frames transforms, one frame each, as the engine's kind lays out a batch */
  std::vector<CudafftSpectrumFusedUnit> own(b.frames), shared(b.frames);
  for (size_t f = 0; f < b.frames; ++f) {
    own[f] = cudafft_spectrum_fused_unit(b.d_signal + f * b.n, 0, f, 1);
    shared[f] = cudafft_spectrum_fused_unit(b.d_signal + f * b.n, 0, f / kFftsPerSlot, 0);
  }
  CHECK_CUDA(cudaMemcpyAsync(b.d_window, window.data(), b.n * sizeof(float), cudaMemcpyHostToDevice,
                             b.stream));
  CHECK_CUDA(cudaMemcpyAsync(b.d_own_units, own.data(), b.frames * sizeof(own[0]),
                             cudaMemcpyHostToDevice, b.stream));
  CHECK_CUDA(cudaMemcpyAsync(b.d_shared_units, shared.data(), b.frames * sizeof(shared[0]),
                             cudaMemcpyHostToDevice, b.stream));
  const CudafftSpectrumFusedDesc own_desc = {b.d_signal, 0,          nullptr, b.d_ours,
                                             nullptr,    kThreshold, 1};
  CudafftSpectrumFusedDesc shared_desc = own_desc;
  shared_desc.magnitude = b.d_sums;
  CHECK_CUDA(
      cudaMemcpyAsync(b.d_own, &own_desc, sizeof own_desc, cudaMemcpyHostToDevice, b.stream));
  CHECK_CUDA(cudaMemcpyAsync(b.d_shared, &shared_desc, sizeof shared_desc, cudaMemcpyHostToDevice,
                             b.stream));
  CHECK_CUFFT(cufftPlan1d(&b.plan, (int)b.n, CUFFT_R2C, (int)b.frames));
  CHECK_CUFFT(cufftSetStream(b.plan, b.stream));
  CHECK_CUDA(cudaStreamSynchronize(b.stream));

  const RunFn fns[] = {run_ours, run_cufft, run_cufft_r2c, run_ours_accumulate};
  float ms[4];
  time_medians(&b, fns, 4, runs, ms);
  const double gb = (double)(samples + levels) * sizeof(float) / 1e9;
  printf("ours  (fused: window, FFT, dB, store)   %8.4f ms %7.0f GB/s\n", ms[0], gb / ms[0] * 1e3);
  printf("cuFFT (window kernel, R2C, dB kernel)   %8.4f ms %7.0f GB/s\n", ms[1], gb / ms[1] * 1e3);
  printf("ratio cuFFT / ours                      %8.2fx\n", ms[1] / ms[0]);
  printf("for information: cufftExecR2C alone     %8.4f ms\n", ms[2]);
  printf("for information: ours, %zu FFTs per interval (zeroing, atomic adds) %8.4f ms\n",
         kFftsPerSlot, ms[3]);

  /* fresh outputs from one run of each, after the timing's */
  CHECK_CUDA(cudaMemsetAsync(b.d_ours, 0xff, levels * sizeof(float), b.stream));
  CHECK_CUDA(cudaMemsetAsync(b.d_ref, 0xff, levels * sizeof(float), b.stream));
  run_ours(&b);
  run_cufft(&b);
  run_ours_accumulate(&b);
  CHECK_CUDA(cudaStreamSynchronize(b.stream));
  const std::vector<float> ours = download(b.d_ours, levels), ref = download(b.d_ref, levels);
  const std::vector<float> sums = download(b.d_sums, b.slots * b.bands);
  double max_diff = 0, max_mean_diff = 0;
  size_t compared = 0, bad = 0;
  for (size_t i = 0; i < levels; ++i) {
    if (!std::isfinite(ours[i]))
      ++bad;
    else if (ref[i] > kThreshold + 1) {
      max_diff = std::max(max_diff, (double)std::fabs(ours[i] - ref[i]));
      ++compared;
    }
  }
  for (size_t slot = 0; slot < b.slots; ++slot) {
    const size_t first = slot * kFftsPerSlot;
    const size_t count = std::min(kFftsPerSlot, b.frames - first);
    for (size_t k = 0; k < b.bands; ++k) {
      double mean = 0;
      for (size_t f = first; f < first + count; ++f)
        mean += ref[f * b.bands + k];
      mean /= (double)count;
      const double got = sums[slot * b.bands + k] / (double)count;
      const double diff = std::isfinite(got) ? std::fabs(got - mean) : INFINITY;
      max_mean_diff = std::max(max_mean_diff, diff);
    }
  }
  printf("max |dB difference| ours vs cuFFT: %.5f over %zu bands above %d dB (%zu not finite); "
         "of %zu-FFT means: %.5f\n",
         max_diff, compared, kThreshold + 1, bad, kFftsPerSlot, max_mean_diff);

  cufftDestroy(b.plan);
  cudaFree(b.d_signal);
  cudaFree(b.d_windowed);
  cudaFree(b.d_window);
  cudaFree(b.d_bins);
  cudaFree(b.d_ours);
  cudaFree(b.d_ref);
  cudaFree(b.d_sums);
  cudaFree(b.d_own);
  cudaFree(b.d_shared);
  cudaFree(b.d_own_units);
  cudaFree(b.d_shared_units);
  cudaFree(b.d_twiddles);
  cudaStreamDestroy(b.stream);
  if (bad > 0 || compared == 0 || max_diff > kMaxDbError || !(max_mean_diff <= kMaxDbError)) {
    fprintf(stderr, "spectrum-kernel-bench: FAILED: the outputs differ beyond %.2f dB\n",
            kMaxDbError);
    return 1;
  }
  return 0;
}
