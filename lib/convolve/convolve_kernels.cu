/* convolve_kernels.cu: the convolution's kernels, built from the block FFT's device functions.
 *
 * The single-precision (F32) FFT kernels are here, the split path's among them, and the fill that
 * every path uses. The F64 partitioned path's kernels (the deinterleave, MAC and output around
 * cuFFT's double transforms) are in convolve_f64_kernels.cu, the direct path's tiled kernel (F32
 * and F64) in convolve_direct_kernels.cu. Every FFT kernel here runs one N = 4096 point real
 * transform per thread block: the 2048-point complex block_fft (wide plan: 128 threads, 16 points
 * each) on the even/odd sample pairs, with real_forward_post / real_inverse_pre around it, in 17 KB
 * of static shared memory (so they run on every architecture, sm_75 included, without raising the
 * shared-memory limit).
 *
 * Batches: every launch serves the jobs of every convolution object in an executor batch. A kernel
 * takes the jobs' descriptors and a map from unit to job (convolve_kernels.h); a thread block reads
 * its unit and its job's descriptor (the same address for all its threads: broadcast loads) and
 * then runs the body one object's launch ran, with the object's parameters from the descriptor, so
 * that a job computes exactly what it would alone. F32 and F64 outputs share a launch
 * (with_output).
 *
 * Fusion: the partitioned path runs two kernels per batch, forward (signal -> delay line) and MAC
 * (delay line x kernel spectra -> inverse FFT -> mix -> interleaved output): block q's MAC needs
 * the spectra of blocks q - 1, q - 2, ... of the same launch, which other thread blocks compute,
 * so the two cannot share a kernel without a grid-wide barrier. The MAC's sum stays in registers
 * and goes straight into the inverse FFT in shared memory: the accumulated spectrum never touches
 * global memory, and nothing is carried from one output block to the next (a NaN in an input
 * block reaches only the outputs whose sums read its slot). With one partition (P = 1) the delay
 * line is not needed and the whole pipeline is one kernel (fused_kernel).
 *
 * Output: the fused kernels' inverse transform writes its last pass, the kept half, to shared
 * memory (ConvolveStageOut), and the block then writes it out in runs of adjacent samples (16 bytes
 * a thread for mono and planar output): written straight from the pass, each thread's samples were
 * two frames apart. The MAC's last pass writes global memory itself (ConvolveMixOut): staging made
 * the fused kernel faster but the partitioned chain slower. In the fused kernels the forward
 * transform's real post-step, the product and the inverse's real pre-step are one step in
 * registers (forward_times_pre): these kernels are bound by shared-memory traffic (Nsight Compute
 * on the planar one).
 *
 * Launch bounds: every kernel asks ptxas only to fit its thread count, which leaves the registers
 * uncapped; capping them for more blocks per multiprocessor (as the spectrum's fused kernel does)
 * made these kernels slower. The MAC alone names the blocks per multiprocessor it has anyway
 * (kMacBlocks), which raises the registers ptxas lets it use rather than capping them. The MAC
 * issues one partition's loads at a time (Depth 1) in launches large enough to fill the device
 * and two (Depth 2) in small ones. Each choice is the fastest measured for the partitioned chain,
 * which the element runs; the measurements, and the variants tried and dropped, are in
 * bench/HISTORY.md.
 *
 * Length: about 1000 lines, past the ~800 a file usually keeps, because the partitioned and split
 * paths' kernels are built from the same device helpers (forward_to_bins, the MAC's cmac, the
 * staged inverse_to_output and its writers) that must inline into each kernel: split across
 * translation units they would move to a header of device code that only this file includes. The
 * split path's kernels are together from kSplitRow on, its launchers at the end. */

#include "block_fft.cuh"
#include "convolve_launch.cuh"
#include "convolve_kernels.h"
#include "global_memory.cuh"
#include "twiddles.h"

#include <climits>
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

/* One partition of a kernel row: `count` taps (<= B) at x, zeros after them up to N, each rounded
 * to float as it is read (as the host rounded them before). Rows start at any tap, hence scalar
 * loads; this runs once per kernel. */
struct ConvolvePartitionIn {
  const double *x;
  int count;
};

template <int P, int B, int Stride>
__device__ __forceinline__ void
read_points(float2 *v, ConvolvePartitionIn from, int j0)
{
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const int i = 2 * (j0 + b + r * Stride);
      v[b * P + r] = make_float2(i < from.count ? (float)from.x[i] : 0.0f,
                                 i + 1 < from.count ? (float)from.x[i + 1] : 0.0f);
    }
}

/* y mixed with the dry input x. Where the dry gain is 0 (mix 1, the default) x is not used at all:
 * 0 * Inf would turn a clean wet sample into NaN. */
__device__ __forceinline__ float
mixed(float y, float x, float wet_gain, float dry_gain)
{
  return dry_gain != 0.0f ? y * wet_gain + x * dry_gain : y * wet_gain;
}

/* The last pass's destination for an output block: point m is the conjugate of the sample pair
 * (2m, 2m + 1) (see real_inverse_pre); the second half is mixed with the block's input and written
 * interleaved in T, the first half (the circular wrap) dropped. The unstaged form, which the MAC
 * writes with: each thread writes its own points' samples, two frames apart. */
template <typename T> struct ConvolveMixOut {
  T *out;           /* the block's first frame, this channel's sample; frames `channels` apart */
  const float *dry; /* the block's input samples, this channel (8-byte aligned) */
  int channels;
  float wet_gain, dry_gain;
};

template <int P, int B, int Ns, typename T>
__device__ __forceinline__ void
write_points(ConvolveMixOut<T> to, const float2 *v, int j0)
{
  static_assert(kKeepPoint % Ns == 0, "the kept points must be whole radix rows");
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      /* m < kKeepPoint iff r Ns < kKeepPoint (j0 + b < Ns): a constant, as in ConvolveStageOut */
      if (r * Ns < kKeepPoint)
        continue;
      const int m = j0 + b + r * Ns;
      const int i = 2 * (m - kKeepPoint);
      const float2 x = *reinterpret_cast<const float2 *>(to.dry + i);
      const size_t at = (size_t)i * to.channels;
      to.out[at] = (T)mixed(v[b * P + r].x, x.x, to.wet_gain, to.dry_gain);
      to.out[at + to.channels] = (T)mixed(-v[b * P + r].y, x.y, to.wet_gain, to.dry_gain);
    }
}

/* The benchmark's unstaged destination: samples keep_from..N-1 of the block as planar floats.
 * Keep >= 0: keep_from / 2, known at compile time (as in ConvolveStageOut). */
template <int Keep> struct ConvolvePlanarOut {
  float *out; /* where sample keep_from goes (8-byte aligned) */
  int keep_from;
};

template <int P, int B, int Ns, int Keep>
__device__ __forceinline__ void
write_points(ConvolvePlanarOut<Keep> to, const float2 *v, int j0)
{
  static_assert(Keep < 0 || Keep % Ns == 0, "the kept points must be whole radix rows");
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      if constexpr (Keep >= 0)
        if (r * Ns < Keep)
          continue;
      const int i = 2 * (j0 + b + r * Ns);
      if (Keep >= 0 || i >= to.keep_from)
        *reinterpret_cast<float2 *>(to.out + (i - to.keep_from)) =
            make_float2(v[b * P + r].x, -v[b * P + r].y);
    }
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

/* Kernel spectra: one thread block per partition of a job (CudafftConvolveSpectraJob). */
__global__ void
__launch_bounds__(kThreads) spectra_kernel(const CudafftConvolveSpectraJob *__restrict__ jobs,
                                           const CudafftConvolveUnit *__restrict__ units,
                                           const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSpectraJob &d = jobs[u.job];
  const size_t first = (size_t)u.unit * kConvBlock;
  const int count = d.count - first < (size_t)kConvBlock ? (int)(d.count - first) : kConvBlock;
  const ConvolvePartitionIn from{d.taps + first, count};
  forward_to_bins(from, smem, d.spectra + (size_t)u.unit * kConvPitch,
                  1.0f / CUDAFFT_CONVOLVE_FFT_SIZE, twiddles);
}

/* A partitioned job's transform unit q channels + c: frame q of channel c. Within a job,
 * consecutive thread blocks take the channels of a frame, so that they read rows of different
 * channels at the same offset (and a mono kernel's spectra at about the same time, from L2). */
struct FrameOf {
  int q, c;
  __device__
  FrameOf(uint32_t unit, int channels)
      : q((int)unit / channels), c((int)unit % channels)
  {
  }
};

/* Forward FFTs into the delay line: thread block u takes frame q of channel c of its job. */
__global__ void
__launch_bounds__(kThreads) forward_kernel(const CudafftConvolveBlocksJob *__restrict__ jobs,
                                           const CudafftConvolveUnit *__restrict__ units,
                                           const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveBlocksJob &d = jobs[u.job];
  const FrameOf f(u.unit, d.channels);
  const int slots = d.slots;
  int slot = d.first_slot + f.q;
  if (slot >= slots)
    slot -= slots;
  const GlobalIn from =
      real_frame(global(d.signal) + (size_t)f.c * d.pitch + (size_t)f.q * kConvBlock);
  forward_to_bins(from, smem, global(d.ring) + ((size_t)f.c * slots + slot) * kConvPitch, 1.0f,
                  twiddles);
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

/* The staged kept half y[0..B) (shared memory, complete) mixed with the block's input `dry` and
 * written from `out` on, frames `channels` apart. Mono: float4 runs of 4 frames, adjacent threads
 * adjacent 16 bytes (F64: two 16-byte stores); interleaved channels: one frame per thread, adjacent
 * threads adjacent frames (a thread block holds one channel, so a stored sector is shared with the
 * other channels' blocks). The input is read only where its gain is not 0 (see mixed()). */
template <int Threads, typename T>
__device__ __forceinline__ void
store_mixed(const float *y, T *out, const float *dry, int channels, float wet_gain, float dry_gain)
{
  const int t = threadIdx.x;
  const bool with_dry = dry_gain != 0.0f;
  if (channels == 1 &&
      ((reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(dry)) & 15) == 0) {
    const float4 *y4 = reinterpret_cast<const float4 *>(y);
    const float4 *x4 = reinterpret_cast<const float4 *>(dry);
#pragma unroll
    for (int i = 0; i < kConvBlock / 4 / Threads; ++i) {
      const int k = t + i * Threads;
      const float4 a = y4[k];
      const float4 x = with_dry ? x4[k] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      const float4 v =
          make_float4(mixed(a.x, x.x, wet_gain, dry_gain), mixed(a.y, x.y, wet_gain, dry_gain),
                      mixed(a.z, x.z, wet_gain, dry_gain), mixed(a.w, x.w, wet_gain, dry_gain));
      if constexpr (sizeof(T) == sizeof(float)) {
        reinterpret_cast<float4 *>(out)[k] = v;
      } else {
        double2 *o2 = reinterpret_cast<double2 *>(out) + 2 * k;
        o2[0] = make_double2(v.x, v.y);
        o2[1] = make_double2(v.z, v.w);
      }
    }
  } else {
#pragma unroll 4
    for (int i = 0; i < kConvBlock / Threads; ++i) {
      const int f = t + i * Threads;
      const float x = with_dry ? dry[f] : 0.0f;
      out[(size_t)f * channels] = (T)mixed(y[f], x, wet_gain, dry_gain);
    }
  }
}

/* Calls write(out) with the job's output as float * or double *, by its format: both forms are
 * compiled into a kernel, and a thread block takes the one of its job (the branch is the same for
 * all its threads), so that jobs of both formats share a launch. */
template <typename Job, typename Write>
__device__ __forceinline__ void
with_output(const Job &job, Write write)
{
  if (job.format == CUDAFFT_SAMPLE_F64)
    write(global(static_cast<double *>(job.out)));
  else
    write(global(static_cast<float *>(job.out)));
}

template <typename T>
__device__ __forceinline__ ConvolveMixOut<T>
mix_out(T *out, const float *dry, int channels, float wet_gain, float dry_gain)
{
  return ConvolveMixOut<T>{out, dry, channels, wet_gain, dry_gain};
}

/* The inverse real FFT (plan Kind) of the bins in shared memory (complete: a barrier before),
 * output block q of channel c of a partitioned job mixed and written in the job's format. Staged,
 * only the stores after the transform depend on the format, so only they are compiled twice;
 * unstaged, the transform's last pass stores, so the whole transform is. */
template <int Kind, bool Pre, bool Staged>
__device__ __forceinline__ void
inverse_to_output(float2 *smem, int q, int c, const CudafftConvolveBlocksJob &job,
                  const float2 *twiddles)
{
  constexpr int kKindThreads = FftShape<kConvBlock, Kind>::kThreads;
  if constexpr (Pre)
    real_inverse_pre<kConvBlock, Kind, kKindThreads>(smem, threadIdx.x, twiddles);
  const int channels = job.channels;
  const size_t frame0 = (size_t)q * kConvBlock, at = frame0 * channels + c;
  const float *dry = global(job.signal) + (size_t)c * job.pitch + kConvBlock + frame0;
  const float wet_gain = job.wet_gain, dry_gain = job.dry_gain;
  const SharedRow s{smem};
  if constexpr (Staged) {
    /* the last pass reads all of smem before its barrier, so the stage may overwrite it */
    block_fft<kConvBlock, Kind>(s, s, ConvolveStageOut<kKeepPoint>{smem, kKeepPoint}, threadIdx.x,
                                twiddles);
    __syncthreads();
    with_output(job, [&](auto *out) {
      store_mixed<kKindThreads>(reinterpret_cast<const float *>(smem), out + at, dry, channels,
                                wet_gain, dry_gain);
    });
  } else {
    with_output(job, [&](auto *out) {
      block_fft<kConvBlock, Kind>(s, s, mix_out(out + at, dry, channels, wet_gain, dry_gain),
                                  threadIdx.x, twiddles);
    });
  }
}

/* Multiply-accumulate over the delay line, then the inverse FFT, in one thread block per output
 * block (q channels + c, as forward_kernel: a mono kernel's partition p is read by neighbouring
 * blocks at about the same time, from L2, and so is a channel's slot by its blocks q and q + 1).
 * Each thread keeps its bins' sums in registers; the loads of a partition (4 float4 of X and 4 of
 * H per thread, adjacent threads adjacent addresses) are independent, so a thread has 8 in flight,
 * or 8 Depth: Depth = 2, for small launches, issues two partitions' loads before their sums. The
 * sums run over p in order either way. The delay line is read-only here (the forward kernel wrote
 * it in an earlier launch), so its loads take the read-only path, as they did when the ring was a
 * kernel parameter. kMacBlocks: the thread blocks per multiprocessor that the MAC's registers
 * (about 56 a thread left to ptxas) allowed anyway; named in the launch bounds, it lets ptxas use
 * the 64 registers a thread that this occupancy leaves. Since the job's fields moved from kernel
 * parameters (constant memory) into registers beside the sums, ptxas, left to itself, issued a
 * partition's eight loads two at a time; with the 64 it issues them four at a time again, as the
 * per-object kernel did. twiddles: the narrow plan's. */
constexpr int kMacBlocks = 4;
static_assert(kMacBlocks * kMacThreads * 64 <= 65536, "64 registers a thread at kMacBlocks");

template <int Depth>
__global__ void
__launch_bounds__(kMacThreads, kMacBlocks)
    mac_kernel(const CudafftConvolveBlocksJob *__restrict__ jobs,
               const CudafftConvolveUnit *__restrict__ units, const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  const int t = threadIdx.x;
  const CudafftConvolveUnit u = units[blockIdx.x];
  __shared__ CudafftConvolveBlocksJob stage;
  const CudafftConvolveBlocksJob &job = shared_job(jobs, u.job, stage);
  const int channels = job.channels, slots = job.slots, partitions = job.partitions;
  const FrameOf f(u.unit, channels);
  const int q = f.q, c = f.c;
  const int row = job.kernel_rows > 1 ? c : 0;
  int newest = job.first_slot + q;
  if (newest >= slots)
    newest -= slots;
  const float2 *x_rows = global(job.ring) + (size_t)c * slots * kConvPitch;
  const float2 *h_rows = global(job.spectra) + (size_t)row * partitions * kConvPitch;
  /* partition p's rows: the spectrum of block q - p (slot newest - p) and H[row][p] */
  auto x_row = [&](int p) {
    const int slot = newest - p < 0 ? newest - p + slots : newest - p;
    return x_rows + (size_t)slot * kConvPitch;
  };
  auto h_row = [&](int p) { return h_rows + (size_t)p * kConvPitch; };
  float4 acc[kMacPairs];
#pragma unroll
  for (int i = 0; i < kMacPairs; ++i)
    acc[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float2 last = make_float2(0.0f, 0.0f); /* bin B (thread 0) */
  auto add_last = [&](const float2 *x, const float2 *h) {
    last = cmac(last, x[kConvBlock], __ldg(&h[kConvBlock]));
  };
  int p = 0;
  if constexpr (Depth > 1) {
    for (; p + Depth <= partitions; p += Depth) {
      float4 xs[Depth][kMacPairs], hs[Depth][kMacPairs];
#pragma unroll
      for (int d = 0; d < Depth; ++d) {
        const float4 *x4 = reinterpret_cast<const float4 *>(x_row(p + d));
        const float4 *h4 = reinterpret_cast<const float4 *>(h_row(p + d));
#pragma unroll
        for (int i = 0; i < kMacPairs; ++i) {
          xs[d][i] = __ldg(&x4[t + i * kMacThreads]);
          hs[d][i] = __ldg(&h4[t + i * kMacThreads]);
        }
      }
#pragma unroll
      for (int d = 0; d < Depth; ++d)
#pragma unroll
        for (int i = 0; i < kMacPairs; ++i)
          acc[i] = cmac2(acc[i], xs[d][i], hs[d][i]);
      if (t == 0)
#pragma unroll
        for (int d = 0; d < Depth; ++d)
          add_last(x_row(p + d), h_row(p + d));
    }
  }
  for (; p < partitions; ++p) {
    const float2 *x = x_row(p), *h = h_row(p);
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    const float4 *h4 = reinterpret_cast<const float4 *>(h);
#pragma unroll
    for (int i = 0; i < kMacPairs; ++i)
      acc[i] = cmac2(acc[i], __ldg(&x4[t + i * kMacThreads]), __ldg(&h4[t + i * kMacThreads]));
    if (t == 0)
      add_last(x, h);
  }
#pragma unroll
  for (int i = 0; i < kMacPairs; ++i) {
    const int k = 2 * (t + i * kMacThreads);
    smem[pad(k)] = make_float2(acc[i].x, acc[i].y);
    smem[pad(k + 1)] = make_float2(acc[i].z, acc[i].w);
  }
  if (t == 0)
    smem[pad(kConvBlock)] = last;
  __syncthreads();
  inverse_to_output<kNarrow, true, false>(smem, q, c, job, twiddles);
}

/* P = 1: forward FFT, product, inverse FFT and mix in one thread block per output block. */
__global__ void
__launch_bounds__(kThreads)
    fused_kernel(const CudafftConvolveBlocksJob *__restrict__ jobs,
                 const CudafftConvolveUnit *__restrict__ units, const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  const CudafftConvolveUnit u = units[blockIdx.x];
  __shared__ CudafftConvolveBlocksJob stage;
  const CudafftConvolveBlocksJob &job = shared_job(jobs, u.job, stage);
  const FrameOf f(u.unit, job.channels);
  const float2 *h = global(job.spectra) + (size_t)(job.kernel_rows > 1 ? f.c : 0) * kConvPitch;
  const GlobalIn from =
      real_frame(global(job.signal) + (size_t)f.c * job.pitch + (size_t)f.q * kConvBlock);
  forward_times_pre(from, smem, h, twiddles);
  inverse_to_output<kWide, false, true>(smem, f.q, f.c, job, twiddles);
}

/* Keep: the kept points' start keep_from / 2 where it is a constant, else -1 (ConvolveStageOut,
 * ConvolvePlanarOut). Staged: the output 16-byte aligned and keep_from a multiple of 4, so that
 * float4 k of the stage is float4 k of the row. */
template <bool Staged, int Keep>
__global__ void
__launch_bounds__(kThreads)
    fused_planar_kernel(const float *__restrict__ in, size_t in_hop,
                        const float2 *__restrict__ spectrum, float *__restrict__ out,
                        size_t out_hop, int keep_from, const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  const size_t b = blockIdx.x;
  forward_times_pre(real_frame(in + b * in_hop), smem, spectrum, twiddles);
  const SharedRow s{smem};
  if constexpr (Staged) {
    const int first = Keep >= 0 ? Keep : keep_from / 2;
    block_fft<kConvBlock, kWide>(s, s, ConvolveStageOut<Keep>{smem, first}, threadIdx.x, twiddles);
    __syncthreads();
    const float4 *y4 = reinterpret_cast<const float4 *>(smem);
    float4 *o4 = reinterpret_cast<float4 *>(out + b * out_hop);
    const int count = (CUDAFFT_CONVOLVE_FFT_SIZE - 2 * first) / 4;
#pragma unroll 8
    for (int k = threadIdx.x; k < count; k += kThreads)
      o4[k] = y4[k];
  } else {
    block_fft<kConvBlock, kWide>(s, s, ConvolvePlanarOut<Keep>{out + b * out_hop, keep_from},
                                 threadIdx.x, twiddles);
  }
}

static_assert(kConvBlock % kFlatThreads == 0, "a deinterleave unit is whole rounds of threads");

/* A job's interleaved samples [first, first + B) (one unit) to its signal rows: channel c's frame i
 * to signal[c pitch + i], and the frames from `last` on also to next[c pitch + i - last]. */
template <typename T>
__device__ __forceinline__ void
deinterleave_unit(const T *__restrict__ raw, size_t first, unsigned channels, float *signal,
                  size_t pitch, float *next, size_t last)
{
#pragma unroll 4
  for (int j = threadIdx.x; j < kConvBlock; j += kFlatThreads) {
    const size_t i = first + j;
    const size_t frame = i / channels, c = i % channels;
    const float v = (float)raw[i];
    signal[c * pitch + frame] = v;
    if (frame >= last)
      next[c * pitch + (frame - last)] = v;
  }
}

__global__ void
__launch_bounds__(kFlatThreads)
    deinterleave_kernel(const CudafftConvolveBlocksJob *__restrict__ jobs,
                        const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveBlocksJob &job = jobs[u.job];
  const size_t first = (size_t)u.unit * kConvBlock;
  const size_t last = (size_t)(job.blocks - 1) * kConvBlock;
  float *signal = global(job.signal) + kConvBlock, *next = global(job.next);
  if (job.format == CUDAFFT_SAMPLE_F64)
    deinterleave_unit(global(static_cast<const double *>(job.in)), first, job.channels, signal,
                      job.pitch, next, last);
  else
    deinterleave_unit(global(static_cast<const float *>(job.in)), first, job.channels, signal,
                      job.pitch, next, last);
}

/* The split path (CudafftConvolveSplitJob) --------------------------------------------------- */

constexpr int kSplitRun = CUDAFFT_CONVOLVE_SPLIT_RUN;
constexpr int kSplitChunks = CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS;
/* The split MAC: one bin pair (a float4) per thread and partition. */
constexpr int kSplitMacThreads = kConvBlock / 2 / kSplitChunks;
constexpr size_t kSplitRow = 3 * (size_t)kConvBlock; /* a signal row: blocks j - 2, j - 1, j */
constexpr size_t kTailRow = 2 * (size_t)kConvBlock;  /* a tail ring row: z of blocks j - 1, j */
static_assert(kSplitRun % kFlatThreads == 0, "a run is whole rounds of threads");

/* Gather: a run of the job's interleaved input to the signal rows of blocks j, j + 1 and j + 2
 * (adjacent threads adjacent input samples, as the deinterleave). */
__global__ void
__launch_bounds__(kFlatThreads)
    split_gather_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                        const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const size_t samples = job.frames * job.channels, first = (size_t)u.unit * kSplitRun;
  const size_t channels = job.channels;
#pragma unroll 4
  for (int j = threadIdx.x; j < kSplitRun; j += kFlatThreads) {
    const size_t i = first + j;
    if (i >= samples)
      break;
    const size_t frame = job.within + i / channels, c = i % channels;
    const float v = job.in[i];
    job.signal[c * kSplitRow + 2 * kConvBlock + frame] = v;
    job.next[c * kSplitRow + kConvBlock + frame] = v;
    job.after[c * kSplitRow + frame] = v;
  }
}

/* Head: the FFT convolution of the N frames that end at the job's last (the fused kernel's forward
 * FFT, product and inverse), its last `frames` samples staged, mixed with the job's input and
 * written interleaved, one frame per thread, adjacent threads adjacent frames. */
__global__ void
__launch_bounds__(kThreads) split_head_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                              const CudafftConvolveUnit *__restrict__ units,
                                              const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  __shared__ CudafftConvolveSplitJob stage;
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = shared_job(jobs, u.job, stage);
  const size_t c = u.unit;
  const float *row = job.signal + c * kSplitRow;
  const float2 *h = job.head_spectra + (job.kernel_rows > 1 ? c : 0) * kConvPitch;
  forward_times_pre(real_frame(row + job.within + job.frames), smem, h, twiddles);
  const int frames = (int)job.frames, first = kConvBlock - frames / 2; /* complex points */
  const SharedRow s{smem};
  block_fft<kConvBlock, kWide>(s, s, ConvolveStageOut<-1>{smem, first}, threadIdx.x, twiddles);
  __syncthreads();
  const float *y = reinterpret_cast<const float *>(smem);
  const float *dry = row + 2 * kConvBlock + job.within;
  const size_t channels = job.channels;
  const float wet_gain = job.wet_gain, dry_gain = job.dry_gain;
  float *out = job.out + c;
  for (int f = threadIdx.x; f < frames; f += kThreads)
    out[f * channels] = mixed(y[f], dry_gain != 0.0f ? dry[f] : 0.0f, wet_gain, dry_gain);
}

/* MAC: the job's share of block j's earlier partitions, added to acc in place (the block's first
 * share, from partition 1, starts from zeros instead); each thread keeps one bin pair's sum in
 * registers over the partitions (p ascending), as the MAC kernel does. */
__global__ void
__launch_bounds__(kSplitMacThreads)
    split_mac_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                     const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const int c = (int)u.unit / kSplitChunks, chunk = (int)u.unit % kSplitChunks;
  const int partitions = job.partitions, first = job.mac_first, end = job.mac_end, slot = job.slot;
  const int k = chunk * kSplitMacThreads + threadIdx.x; /* bins 2k, 2k + 1 */
  const bool last_bin = chunk == 0 && threadIdx.x == 0; /* also bin B */
  const float2 *__restrict__ x_rows = job.ring + (size_t)c * partitions * kConvPitch;
  const float2 *__restrict__ h_rows =
      job.spectra + (size_t)(job.kernel_rows > 1 ? c : 0) * partitions * kConvPitch;
  float2 *acc_row = job.acc + (size_t)c * kConvPitch;
  const bool fresh = first == 1;
  float4 acc =
      fresh ? make_float4(0.0f, 0.0f, 0.0f, 0.0f) : reinterpret_cast<const float4 *>(acc_row)[k];
  float2 last = last_bin && !fresh ? acc_row[kConvBlock] : make_float2(0.0f, 0.0f);
#pragma unroll 4
  for (int p = first; p < end; ++p) {
    const int s = slot - p < 0 ? slot - p + partitions : slot - p;
    const float2 *x = x_rows + (size_t)s * kConvPitch, *h = h_rows + (size_t)p * kConvPitch;
    acc = cmac2(acc, reinterpret_cast<const float4 *>(x)[k],
                __ldg(&reinterpret_cast<const float4 *>(h)[k]));
    if (last_bin)
      last = cmac(last, x[kConvBlock], __ldg(&h[kConvBlock]));
  }
  reinterpret_cast<float4 *>(acc_row)[k] = acc;
  if (last_bin)
    acc_row[kConvBlock] = last;
}

/* Transforms, first: block j's spectrum (signal row c from B: blocks j - 1 and j) to its ring
 * slot. */
__global__ void
__launch_bounds__(kThreads) split_forward_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                                 const CudafftConvolveUnit *__restrict__ units,
                                                 const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const size_t c = u.unit;
  forward_to_bins(real_frame(job.signal + c * kSplitRow + kConvBlock), smem,
                  job.ring + (c * job.partitions + job.slot) * kConvPitch, 1.0f, twiddles);
}

/* Transforms, then: acc + X[j] H[row][0] (X[j] H[row][0] alone for one partition: acc is then
 * never written), the inverse FFT (the narrow plan, as the MAC kernel's) and its kept half,
 * staged, to block tail_block of the channel's tail ring row in 16-byte runs, unmixed. Nothing is
 * stored to global memory before the loads are done (a store to acc, which the compiler cannot
 * tell apart from the other rows, would order each load after it: twice the kernel's time).
 * twiddles: the narrow plan's. */
__global__ void
__launch_bounds__(kMacThreads) split_finish_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                                   const CudafftConvolveUnit *__restrict__ units,
                                                   const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  __shared__ CudafftConvolveSplitJob stage;
  const int t = threadIdx.x;
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = shared_job(jobs, u.job, stage);
  const size_t c = u.unit;
  const int partitions = job.partitions;
  const float2 *x = job.ring + (c * partitions + job.slot) * kConvPitch;
  const float2 *h = job.spectra + (size_t)(job.kernel_rows > 1 ? c : 0) * partitions * kConvPitch;
  const bool earlier = partitions > 1; /* acc holds the earlier partitions' sum */
  const float2 *acc_row = job.acc + c * kConvPitch;
  const float4 *acc4 = reinterpret_cast<const float4 *>(acc_row);
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  const float4 *h4 = reinterpret_cast<const float4 *>(h);
#pragma unroll
  for (int i = 0; i < kMacPairs; ++i) {
    const int k = t + i * kMacThreads;
    const float4 sum =
        cmac2(earlier ? acc4[k] : make_float4(0.0f, 0.0f, 0.0f, 0.0f), x4[k], __ldg(&h4[k]));
    smem[pad(2 * k)] = make_float2(sum.x, sum.y);
    smem[pad(2 * k + 1)] = make_float2(sum.z, sum.w);
  }
  if (t == 0)
    smem[pad(kConvBlock)] = cmac(earlier ? acc_row[kConvBlock] : make_float2(0.0f, 0.0f),
                                 x[kConvBlock], __ldg(&h[kConvBlock]));
  __syncthreads();
  real_inverse_pre<kConvBlock, kNarrow, kMacThreads>(smem, t, twiddles);
  const SharedRow s{smem};
  /* the last pass reads all of smem before its barrier, so the stage may overwrite it */
  block_fft<kConvBlock, kNarrow>(s, s, ConvolveStageOut<kKeepPoint>{smem, kKeepPoint}, t, twiddles);
  __syncthreads();
  const float4 *y4 = reinterpret_cast<const float4 *>(smem);
  float4 *o4 = reinterpret_cast<float4 *>(job.tail + c * kTailRow + job.tail_block * kConvBlock);
#pragma unroll
  for (int i = 0; i < kConvBlock / 4 / kMacThreads; ++i)
    o4[t + i * kMacThreads] = y4[t + i * kMacThreads];
}

/* Add: a run of the job's output samples plus wet_gain times the tail's z, a frames back (the
 * run's ring frames wrap at most once: a job is at most B frames of the 2B ring). Adjacent threads
 * read adjacent channels' rows: scattered, but a push reads only its own frames of them. */
__global__ void
__launch_bounds__(kFlatThreads) split_add_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                                 const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const size_t channels = job.channels, samples = job.frames * channels;
  const size_t first = (size_t)u.unit * kSplitRun;
  const float wet_gain = job.wet_gain;
#pragma unroll 4
  for (int j = threadIdx.x; j < kSplitRun; j += kFlatThreads) {
    const size_t i = first + j;
    if (i >= samples)
      break;
    size_t at = job.tail_from + i / channels;
    if (at >= kTailRow)
      at -= kTailRow;
    job.out[i] = fmaf(wet_gain, job.tail[i % channels * kTailRow + at], job.out[i]);
  }
}

/* Fill jobs: row y of thread blocks does job y's ranges, each grid-stride over its elements. */
__global__ void
__launch_bounds__(kFlatThreads) fill_kernel(const CudafftConvolveFillJob *__restrict__ jobs)
{
  const CudafftConvolveFillJob &job = jobs[blockIdx.y];
  const size_t stride = (size_t)gridDim.x * kFlatThreads;
  for (int r = 0; r < CUDAFFT_CONVOLVE_FILL_RANGES; ++r) {
    const CudafftConvolveFillRange range = job.ranges[r];
    for (size_t i = blockIdx.x * (size_t)kFlatThreads + threadIdx.x; i < range.count; i += stride) {
      if (range.op == CUDAFFT_CONVOLVE_FILL_NARROW)
        static_cast<float *>(range.dst)[i] = (float)static_cast<const double *>(range.src)[i];
      else
        static_cast<uint32_t *>(range.dst)[i] = range.op == CUDAFFT_CONVOLVE_FILL_COPY
                                                    ? static_cast<const uint32_t *>(range.src)[i]
                                                    : 0u;
    }
  }
}

/* MAC launches of fewer transforms than this (under two thread blocks per SM on an H100) take the
 * deeper-pipelined variant (Depth 2). */
constexpr size_t kSmallMacLaunch = 256;
/* Fill launches: at most this many thread blocks per job (they stride over the rest). */
constexpr size_t kFillBlocks = 1024;

} // namespace

extern "C" const CudafftTwiddlePlan *
cudafft_convolve_twiddle_plans(int *count)
{
  static const CudafftTwiddlePlan plans[] = {{kConvBlock, kWide}, {kConvBlock, kNarrow}};
  *count = 2;
  return plans;
}

extern "C" cudaError_t
cudafft_convolve_spectra_launch(const CudafftConvolveSpectraJob *jobs,
                                const CudafftConvolveUnit *units, size_t count,
                                const float2 *twiddles, cudaStream_t stream)
{
  return launch_units(spectra_kernel, count, kThreads, stream, jobs, units, twiddles);
}

extern "C" cudaError_t
cudafft_convolve_deinterleave_launch(const CudafftConvolveBlocksJob *jobs,
                                     const CudafftConvolveUnit *units, size_t count,
                                     cudaStream_t stream)
{
  return launch_units(deinterleave_kernel, count, kFlatThreads, stream, jobs, units);
}

extern "C" cudaError_t
cudafft_convolve_forward_launch(const CudafftConvolveBlocksJob *jobs,
                                const CudafftConvolveUnit *units, size_t count,
                                const float2 *twiddles, cudaStream_t stream)
{
  return launch_units(forward_kernel, count, kThreads, stream, jobs, units, twiddles);
}

extern "C" cudaError_t
cudafft_convolve_mac_launch(const CudafftConvolveBlocksJob *jobs, const CudafftConvolveUnit *units,
                            size_t count, const float2 *twiddles, cudaStream_t stream)
{
  return launch_units(count < kSmallMacLaunch ? mac_kernel<2> : mac_kernel<1>, count, kMacThreads,
                      stream, jobs, units, twiddles + kWideTwiddles);
}

extern "C" cudaError_t
cudafft_convolve_fused_launch(const CudafftConvolveBlocksJob *jobs,
                              const CudafftConvolveUnit *units, size_t count,
                              const float2 *twiddles, cudaStream_t stream)
{
  return launch_units(fused_kernel, count, kThreads, stream, jobs, units, twiddles);
}

extern "C" cudaError_t
cudafft_convolve_fused_planar_launch(const float *in, size_t in_hop, size_t blocks,
                                     const float2 *spectrum, float *out, size_t out_hop,
                                     size_t keep_from, const float2 *twiddles, cudaStream_t stream)
{
  if (blocks == 0 || !launchable(blocks) || in_hop % 4 != 0 || out_hop % 2 != 0 ||
      keep_from % 2 != 0 || keep_from >= CUDAFFT_CONVOLVE_FFT_SIZE)
    return cudaErrorInvalidValue;
  const unsigned grid = (unsigned)blocks;
  const int keep = (int)keep_from;
  const bool staged =
      keep_from % 4 == 0 && out_hop % 4 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  /* the benchmark's two cuttings get the kept half's start as a constant */
  if (keep_from == 0) {
    if (staged)
      fused_planar_kernel<true, 0>
          <<<grid, kThreads, 0, stream>>>(in, in_hop, spectrum, out, out_hop, keep, twiddles);
    else
      fused_planar_kernel<false, 0>
          <<<grid, kThreads, 0, stream>>>(in, in_hop, spectrum, out, out_hop, keep, twiddles);
  } else if (keep_from == kConvBlock) {
    if (staged)
      fused_planar_kernel<true, kKeepPoint>
          <<<grid, kThreads, 0, stream>>>(in, in_hop, spectrum, out, out_hop, keep, twiddles);
    else
      fused_planar_kernel<false, kKeepPoint>
          <<<grid, kThreads, 0, stream>>>(in, in_hop, spectrum, out, out_hop, keep, twiddles);
  } else if (staged) {
    fused_planar_kernel<true, -1>
        <<<grid, kThreads, 0, stream>>>(in, in_hop, spectrum, out, out_hop, keep, twiddles);
  } else {
    fused_planar_kernel<false, -1>
        <<<grid, kThreads, 0, stream>>>(in, in_hop, spectrum, out, out_hop, keep, twiddles);
  }
  return cudaGetLastError();
}

extern "C" cudaError_t
cudafft_convolve_split_launch(const CudafftConvolveSplitJob *jobs,
                              const CudafftConvolveUnit *run_units, size_t runs,
                              const CudafftConvolveUnit *head_units, size_t heads,
                              const CudafftConvolveUnit *mac_units, size_t macs,
                              const CudafftConvolveUnit *transform_units, size_t transforms,
                              const float2 *twiddles, cudaStream_t stream)
{
  cudaError_t status =
      launch_units(split_gather_kernel, runs, kFlatThreads, stream, jobs, run_units);
  if (status == cudaSuccess)
    status = launch_units(split_head_kernel, heads, kThreads, stream, jobs, head_units, twiddles);
  if (status == cudaSuccess)
    status = launch_units(split_mac_kernel, macs, kSplitMacThreads, stream, jobs, mac_units);
  if (status == cudaSuccess)
    status = launch_units(split_forward_kernel, transforms, kThreads, stream, jobs, transform_units,
                          twiddles);
  if (status == cudaSuccess)
    status = launch_units(split_finish_kernel, transforms, kMacThreads, stream, jobs,
                          transform_units, twiddles + kWideTwiddles);
  if (status == cudaSuccess)
    status = launch_units(split_add_kernel, runs, kFlatThreads, stream, jobs, run_units);
  return status;
}

extern "C" cudaError_t
cudafft_convolve_split_mac_launch(const CudafftConvolveSplitJob *jobs,
                                  const CudafftConvolveUnit *units, size_t count,
                                  cudaStream_t stream)
{
  return launch_units(split_mac_kernel, count, kSplitMacThreads, stream, jobs, units);
}

extern "C" cudaError_t
cudafft_convolve_fill_launch(const CudafftConvolveFillJob *jobs, size_t count, size_t longest,
                             cudaStream_t stream)
{
  if (count > 65535)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;
  const size_t wanted = (longest + kFlatThreads - 1) / kFlatThreads;
  const dim3 grid((unsigned)(wanted < 1             ? 1
                             : wanted < kFillBlocks ? wanted
                                                    : kFillBlocks),
                  (unsigned)count);
  fill_kernel<<<grid, kFlatThreads, 0, stream>>>(jobs);
  return cudaGetLastError();
}
