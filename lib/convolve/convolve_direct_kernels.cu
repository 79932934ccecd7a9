/* convolve_direct_kernels.cu: the direct path's kernels (time-domain FIR, F32 and F64): a tiled
 * multiply-add per output frame, and the append of the job's last frames to the history ring.
 * The tile shape is in convolve_kernels.h (CUDAFFT_CONVOLVE_DIRECT_TILE_*). */

#include "convolve_kernels.h"
#include "convolve_launch.cuh"

#include <cstdint>

namespace {

constexpr int kDirectUnit = CUDAFFT_CONVOLVE_DIRECT_UNIT;

constexpr int kDirectThreads = 256;
constexpr int kDirectOutputs = 4;   /* consecutive frames of one channel per thread */
constexpr int kDirectTapChunk = 64; /* taps staged at a time */
constexpr int kDirectMaxTileChannels = 32;
static_assert(CUDAFFT_CONVOLVE_DIRECT_TILE_FRAMES(1) == kDirectOutputs * kDirectThreads,
              "the header's tile shape is the kernel's");
/* A tile's shared memory, in elements: its taps chunk (kernel_rows > 1: one row per channel) and
 * its input window (the tile's frames and the kDirectTapChunk - 1 before them, rounded up to whole
 * phase rows: at most 3 frames more). */
constexpr int kDirectWindowMost =
    kDirectOutputs * kDirectThreads + (kDirectTapChunk + 2) * kDirectMaxTileChannels;
constexpr int kDirectTapsMost = kDirectTapChunk * kDirectMaxTileChannels;
constexpr int kDirectShared = kDirectWindowMost + kDirectTapsMost;
static_assert(kDirectShared * sizeof(double) <= 48 * 1024, "static shared memory");

__device__ __forceinline__ double
mixed(double y, double x, double wet_gain, double dry_gain)
{
  return dry_gain != 0.0 ? y * wet_gain + x * dry_gain : y * wet_gain;
}

__device__ __forceinline__ float
fused_mac(float h, float x, float acc)
{
  return fmaf(h, x, acc);
}

__device__ __forceinline__ double
fused_mac(double h, double x, double acc)
{
  return fma(h, x, acc);
}

/* One tile of a direct job (CudafftConvolveDirectJob) in T, the format's type: thread (cl, g)
 * sums output frames n0 + 4 g + r (r < 4) of channel c0 + cl. Per chunk of taps the block stages
 * the taps and the window of input frames they reach (from the job's input, or from the ring for
 * frames before the job's first), then each thread runs k ascending over the chunk with its four
 * inputs in registers, sliding by one frame per tap: one shared load per tap for four
 * multiply-adds, where a thread per output with global loads read a tap and a sample per
 * multiply-add. The window is stored in four phases (frame j at phase j mod 4, row j / 4), so
 * that the threads of a warp, whose frames are 4 apart, read adjacent words. */
template <typename T>
__device__ __forceinline__ void
direct_tile(const CudafftConvolveDirectJob &job, uint32_t unit, T *smem)
{
  const int channels = job.channels, taps_count = job.taps_count;
  const int tc = CUDAFFT_CONVOLVE_DIRECT_TILE_CHANNELS(channels);
  const int groups = kDirectThreads / tc, tile_frames = kDirectOutputs * groups;
  const int channel_tiles = (channels + tc - 1) / tc;
  const int c0 = (int)(unit % (uint32_t)channel_tiles) * tc;
  const long long n0 = (long long)(unit / (uint32_t)channel_tiles) * tile_frames;
  const long long frames = (long long)job.frames;
  const int ring_frames = taps_count - 1;
  const int tap_rows = job.kernel_rows > 1 ? tc : 1;
  const int window = tile_frames + kDirectTapChunk - 1;
  const int phase_rows = (window + 3) / 4;
  T *taps = smem, *win = smem + kDirectTapsMost;
  const T *__restrict__ in = static_cast<const T *>(job.in);
  const T *__restrict__ ring = static_cast<const T *>(job.history);
  const T *__restrict__ h = static_cast<const T *>(job.taps);
  const int t = threadIdx.x, cl = t % tc, g = t / tc;
  const bool active = g < groups;
  T acc[kDirectOutputs];
#pragma unroll
  for (int r = 0; r < kDirectOutputs; ++r)
    acc[r] = T(0);
  for (int k0 = 0; k0 < taps_count; k0 += kDirectTapChunk) {
    const int kcount = min(kDirectTapChunk, taps_count - k0);
    __syncthreads(); /* the previous chunk's reads are done */
    for (int i = t; i < kcount * tap_rows; i += kDirectThreads) {
      const int kk = i / tap_rows, row = c0 + i % tap_rows;
      taps[i] =
          row < channels ? h[(size_t)(job.kernel_rows > 1 ? row : 0) * taps_count + k0 + kk] : T(0);
    }
    /* frame n0 - k0 - (chunk - 1) + j at window position j */
    const long long first = n0 - k0 - (kDirectTapChunk - 1);
    for (int i = t; i < window * tc; i += kDirectThreads) {
      const int j = i / tc, l = i % tc, c = c0 + l;
      const long long n = first + j;
      T v = T(0);
      if (c < channels && n < frames && n >= -(long long)ring_frames) {
        if (n >= 0)
          v = in[(size_t)n * channels + c];
        else
          v = ring[(size_t)((job.history_head + ring_frames + n) % ring_frames) * channels + c];
      }
      win[((j & 3) * phase_rows + (j >> 2)) * tc + l] = v;
    }
    __syncthreads();
    if (!active)
      continue;
    /* x[n0 + 4 g + r - k] sits at window position 4 g + r + chunk - 1 - (k - k0) */
    auto at = [&](int j) { return win[((j & 3) * phase_rows + (j >> 2)) * tc + cl]; };
    T x[kDirectOutputs];
#pragma unroll
    for (int r = 0; r < kDirectOutputs; ++r)
      x[r] = at(4 * g + r + kDirectTapChunk - 1);
    const T *ht = taps + (tap_rows > 1 ? cl : 0);
    for (int kk = 0; kk < kcount; ++kk) {
      const T hk = ht[kk * tap_rows];
#pragma unroll
      for (int r = 0; r < kDirectOutputs; ++r)
        acc[r] = fused_mac(hk, x[r], acc[r]);
      if (kk + 1 < kcount) {
#pragma unroll
        for (int r = kDirectOutputs - 1; r > 0; --r)
          x[r] = x[r - 1];
        x[0] = at(4 * g + kDirectTapChunk - 2 - kk);
      }
    }
  }
  const int c = c0 + cl;
  if (!active || c >= channels)
    return;
  T *out = static_cast<T *>(job.out);
  const T wet_gain = (T)job.wet_gain, dry_gain = (T)job.dry_gain;
#pragma unroll
  for (int r = 0; r < kDirectOutputs; ++r) {
    const long long n = n0 + 4 * g + r;
    if (n < frames) {
      const size_t i = (size_t)n * channels + c;
      out[i] = mixed(acc[r], dry_gain != T(0) ? in[i] : T(0), wet_gain, dry_gain);
    }
  }
}

/* One tile per thread block; F32 and F64 jobs share a launch (each block takes its job's type). */
__global__ void
__launch_bounds__(kDirectThreads) direct_kernel(const CudafftConvolveDirectJob *__restrict__ jobs,
                                                const CudafftConvolveUnit *__restrict__ units)
{
  __shared__ double smem[kDirectShared];
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveDirectJob &job = jobs[u.job];
  if (job.format == CUDAFFT_SAMPLE_F64)
    direct_tile<double>(job, u.unit, smem);
  else
    direct_tile<float>(job, u.unit, reinterpret_cast<float *>(smem));
}

/* Sample i of the job's last min(frames, taps_count - 1) frames to its place in the ring. */
template <typename T>
__device__ __forceinline__ void
append_sample(const CudafftConvolveDirectJob &job, size_t i)
{
  const size_t channels = (unsigned)job.channels, ring_frames = (size_t)job.taps_count - 1;
  const size_t kept = job.frames < ring_frames ? job.frames : ring_frames;
  const size_t f = job.frames - kept + i / channels, c = i % channels;
  static_cast<T *>(job.history)[((job.history_head + f) % ring_frames) * channels + c] =
      static_cast<const T *>(job.in)[f * channels + c];
}

__global__ void
__launch_bounds__(kDirectUnit) append_kernel(const CudafftConvolveDirectJob *__restrict__ jobs,
                                             const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveDirectJob &job = jobs[u.job];
  const size_t ring_frames = (size_t)job.taps_count - 1;
  const size_t kept = job.frames < ring_frames ? job.frames : ring_frames;
  const size_t i = (size_t)u.unit * kDirectUnit + threadIdx.x;
  if (i >= kept * (unsigned)job.channels)
    return;
  if (job.format == CUDAFFT_SAMPLE_F64)
    append_sample<double>(job, i);
  else
    append_sample<float>(job, i);
}

} // namespace

extern "C" cudaError_t
cudafft_convolve_direct_launch(const CudafftConvolveDirectJob *jobs,
                               const CudafftConvolveUnit *units, size_t count,
                               const CudafftConvolveUnit *append_units, size_t append_count,
                               cudaStream_t stream)
{
  const cudaError_t error = launch_units(direct_kernel, count, kDirectThreads, stream, jobs, units);
  if (error != cudaSuccess)
    return error;
  return launch_units(append_kernel, append_count, kDirectUnit, stream, jobs, append_units);
}
