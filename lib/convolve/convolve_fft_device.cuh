/* convolve_fft_device.cuh: the device code that the F32 FFT paths' kernels share, the
 * partitioned path's (convolve_partitioned_kernels.cu) and the split path's
 * (convolve_split_kernels.cu): the transform's shape and plans, the real frames read, the mix, the
 * staged writer of an inverse transform's kept half, the forward transforms (to bins, and times a
 * spectrum into the inverse's pre-step), a job's descriptor in shared memory and the MAC's complex
 * multiply-adds. Device functions inlined into each kernel, in an unnamed namespace as
 * convolve_launch.cuh's: only those two files include it.
 *
 * Every FFT kernel runs one N = 4096 point real transform per thread block: the 2048-point complex
 * block_fft (wide plan: 128 threads, 16 points each) on the even/odd sample pairs, with
 * real_forward_post / real_inverse_pre around it, in 17 KB of static shared memory (so they run on
 * every architecture, sm_75 included, without raising the shared-memory limit).
 *
 * Batches: every launch serves the jobs of every convolution object in an executor batch. A kernel
 * takes the jobs' descriptors and a map from unit to job (convolve_kernels.h); a thread block reads
 * its unit and its job's descriptor (the same address for all its threads: broadcast loads) and
 * then runs the body one object's launch ran, with the object's parameters from the descriptor, so
 * that a job computes exactly what it would alone. */
#ifndef CUDAFFT_CONVOLVE_FFT_DEVICE_CUH
#define CUDAFFT_CONVOLVE_FFT_DEVICE_CUH

#include "block_fft.cuh"
#include "convolve_kernels.h"
#include "global_memory.cuh"
#include "twiddles.h"

#include <cstdint>

namespace cudafft {

constexpr int kConvBlock = CUDAFFT_CONVOLVE_BLOCK; /* B; also the complex transform's points */
constexpr int kConvPitch = CUDAFFT_CONVOLVE_BIN_PITCH;
/* Output points m >= kKeepPoint of the complex inverse hold output samples 2m, 2m + 1 >= B: the
 * second half, which overlap-save keeps. */
constexpr int kKeepPoint = kConvBlock / 2;

static_assert(CUDAFFT_CONVOLVE_FFT_SIZE == 2 * kConvBlock, "N must be 2 B");
static_assert(kConvPitch % 16 == 0 && kConvPitch > kConvBlock, "rows must stay 128-byte aligned");

/* A frame of N real samples, 16-byte aligned (rows and block offsets are multiples of 4 floats),
 * read as complex points z[m] = (x[2m], x[2m+1]): in memory that is a row of N/2 complex points,
 * which the FFT's own reader takes (16-byte loads where a thread reads adjacent points). */
__device__ __forceinline__ GlobalIn
real_frame(const float *x)
{
  return GlobalIn{reinterpret_cast<const float2 *>(x), 1.0f};
}

/* y mixed with the dry input x. Where the dry gain is 0 (mix 1, the default) x is not used at all:
 * 0 * Inf would turn a clean wet sample into NaN. */
__device__ __forceinline__ float
mixed(float y, float x, float wet_gain, float dry_gain)
{
  return dry_gain != 0.0f ? y * wet_gain + x * dry_gain : y * wet_gain;
}

/* The staged destination, which the fused kernels write with: the last pass writes the kept points
 * m >= first, conjugated, to stage[m - first], a plain row in shared memory that then holds the
 * kept output samples in order; after a barrier the block writes them out in runs of adjacent
 * samples (16 bytes a thread where the layout allows). The last pass's own global stores were 8
 * bytes a thread, two frames apart when interleaved, and Nsight Compute counted half of each stored
 * sector wasted. The pass writes runs of adjacent points and the copy reads runs of 16 bytes:
 * neither conflicts in the banks. Keep >= 0: first == Keep, a multiple of the last pass's Ns, so
 * that a point j + r Ns (j < Ns in the last pass) is kept iff r Ns >= Keep, known at compile time:
 * the dropped half's outputs are neither stored nor computed. Keep < 0: first known at run time
 * only (even). */
template <int Keep> struct ConvolveStageOut {
  float2 *stage;
  int first;
};

template <int P, int B, int Ns, int Keep>
__device__ __forceinline__ void
write_points(ConvolveStageOut<Keep> to, const float2 *v, int j0)
{
  static_assert(Keep < 0 || Keep % Ns == 0, "the kept points must be whole radix rows");
#pragma unroll
  for (int r = 0; r < P; ++r) {
    if constexpr (Keep >= 0)
      if (r * Ns < Keep)
        continue;
    if constexpr (B % 2 == 0) {
      /* j0, Ns and first even: the pair (m, m + 1) is kept or dropped as one, 16-byte aligned */
#pragma unroll
      for (int b = 0; b < B; b += 2) {
        const int m = j0 + b + r * Ns;
        if (Keep < 0 && m < to.first)
          continue;
        const float2 a = v[b * P + r], c = v[(b + 1) * P + r];
        *reinterpret_cast<float4 *>(to.stage + (m - to.first)) = make_float4(a.x, -a.y, c.x, -c.y);
      }
    } else {
#pragma unroll
      for (int b = 0; b < B; ++b) {
        const int m = j0 + b + r * Ns;
        if (Keep < 0 && m < to.first)
          continue;
        to.stage[m - to.first] = conj(v[b * P + r]);
      }
    }
  }
}

} // namespace cudafft

using namespace cudafft;

namespace {

constexpr int kWide = kPlanWide;
using Shape = FftShape<kConvBlock, kWide>;
constexpr int kThreads = Shape::kThreads; /* per transform = per thread block */
/* The MAC kernel's inverse FFT runs the narrow plan (8 points per thread, 256 threads), so that
 * its sums are spread over twice the threads of the wide plan: thread t owns the bin pairs
 * (2u, 2u + 1), u = t + i kMacThreads, as one float4 each, and thread 0 also bin B. Twice the loads
 * in flight per output block, at the same registers per thread, is what small launches (a block or
 * two of a few channels per call) need; large ones do not mind. */
constexpr int kNarrow = kPlanNarrow;
using MacShape = FftShape<kConvBlock, kNarrow>;
constexpr int kMacThreads = MacShape::kThreads;
constexpr int kMacPairs = kConvBlock / 2 / kMacThreads;
static_assert(kMacPairs * 2 * kMacThreads == kConvBlock, "bin pairs must divide evenly");
static_assert(MacShape::kStride == Shape::kStride, "both plans use the same shared row");
/* The twiddle table: the wide plan's, then the narrow plan's (cudafft_convolve_twiddle_plans()). */
constexpr int kWideTwiddles = twiddle_count(kConvBlock, kWide);

/* The forward real FFT of `from` into shared memory, then each bin (scaled) to bins[k]. */
template <typename From>
__device__ __forceinline__ void
forward_to_bins(From from, float2 *smem, float2 *bins, float scale, const float2 *twiddles)
{
  const SharedRow s{smem};
  block_fft<kConvBlock, kWide>(from, s, s, threadIdx.x, twiddles);
  real_forward_post<kConvBlock, kWide, kThreads>(smem, threadIdx.x, twiddles, [&](int k, float2 x) {
    bins[k] = make_float2(scale * x.x, scale * x.y);
  });
}

/* The forward real FFT of `from`, each bin times h[k], then real_inverse_pre's step on the
 * products, left in shared memory for the inverse block_fft (a barrier at the end). The bin pair
 * (k, N - k) that real_forward_post gives a thread is the pair real_inverse_pre needs for the same
 * k, so one thread does both in registers, in place: no other thread touches the pair, and the
 * products never make a round trip through shared memory (one write, one read and a barrier fewer
 * per transform, in kernels bound by shared-memory traffic), and w[k] is loaded once for both.
 * The arithmetic is theirs, operation for operation. */
template <typename From>
__device__ __forceinline__ void
forward_times_pre(From from, float2 *smem, const float2 *__restrict__ h, const float2 *twiddles)
{
  constexpr int N = kConvBlock;
  const SharedRow s{smem};
  block_fft<N, kWide>(from, s, s, threadIdx.x, twiddles);
  const float2 *w = twiddles + real_twiddle_offset(N, kWide);
#pragma unroll
  for (int i = 0; i < N / 2 / kThreads; ++i) {
    const int k = threadIdx.x + i * kThreads;
    if (k == 0) {
      const float2 z = smem[0], m = smem[pad(N / 2)];
      const float y0 = cmul(make_float2(z.x + z.y, 0.0f), __ldg(&h[0])).x;
      const float yn = cmul(make_float2(z.x - z.y, 0.0f), __ldg(&h[N])).x;
      const float2 ym = cmul(conj(m), __ldg(&h[N / 2])); /* X[N/2] = conj(Z[N/2]) */
      smem[0] = make_float2(y0 + yn, -(y0 - yn));
      smem[pad(N / 2)] = make_float2(2.0f * ym.x, 2.0f * ym.y);
      continue;
    }
    const float2 a = smem[pad(k)], b = conj(smem[pad(N - k)]);
    const float2 wk = __ldg(&w[k]);
    /* real_forward_post */
    const float2 e = make_float2(0.5f * (a.x + b.x), 0.5f * (a.y + b.y));
    const float2 o = make_float2(0.5f * (a.y - b.y), -0.5f * (a.x - b.x));
    const float2 wo = cmul(wk, o);
    const float2 yk = cmul(e + wo, __ldg(&h[k]));
    const float2 ynk = cmul(conj(e - wo), __ldg(&h[N - k]));
    /* real_inverse_pre */
    const float2 xnk = conj(ynk);
    const float2 sum = yk + xnk, diff = yk - xnk;
    const float2 q = cmul(conj(wk), diff);
    smem[pad(k)] = conj(make_float2(sum.x - q.y, sum.y + q.x));
    smem[pad(N - k)] = conj(make_float2(sum.x + q.y, q.x - sum.y));
  }
  __syncthreads();
}

/* A thread block's job descriptor, copied once to shared memory (`stage`, a word per thread) for
 * the kernels that read its fields after their transforms: from there they are loaded where they
 * are used (after the barriers), instead of being held in registers across the transforms (the
 * per-object kernels had them as parameters, in constant memory, which cost no registers either).
 */
template <typename Job>
__device__ __forceinline__ const Job &
shared_job(const Job *__restrict__ jobs, uint32_t index, Job &stage)
{
  static_assert(sizeof(Job) % 4 == 0, "descriptors are whole words");
  constexpr int kWords = sizeof(Job) / 4;
  static_assert(kWords <= kThreads, "a word per thread");
  const uint32_t *from = reinterpret_cast<const uint32_t *>(jobs + index);
  uint32_t *to = reinterpret_cast<uint32_t *>(&stage);
  if (threadIdx.x < kWords)
    to[threadIdx.x] = from[threadIdx.x];
  __syncthreads();
  return stage;
}

/* acc + x h for one complex bin, and for a pair of bins (a float4), with fused multiply-adds in
 * the MACs' order. */
__device__ __forceinline__ float2
cmac(float2 acc, float2 x, float2 h)
{
  acc.x = fmaf(x.x, h.x, fmaf(-x.y, h.y, acc.x));
  acc.y = fmaf(x.x, h.y, fmaf(x.y, h.x, acc.y));
  return acc;
}

__device__ __forceinline__ float4
cmac2(float4 acc, float4 x, float4 h)
{
  acc.x = fmaf(x.x, h.x, fmaf(-x.y, h.y, acc.x));
  acc.y = fmaf(x.x, h.y, fmaf(x.y, h.x, acc.y));
  acc.z = fmaf(x.z, h.z, fmaf(-x.w, h.w, acc.z));
  acc.w = fmaf(x.z, h.w, fmaf(x.w, h.z, acc.w));
  return acc;
}

} // namespace

#endif
