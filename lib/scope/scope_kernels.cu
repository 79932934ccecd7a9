/* scope_kernels.cu: the spectrum scope's kernels (scope_kernels.h). The FFT kernels read their
 * window straight from the history ring: the powers of two from CUDAFFT_FUSED_MIN_SIZE run the
 * block FFT of block_fft.cuh, every other size one mixed-radix kernel (scope_fft_math.cuh on
 * mixed_fft.cuh, the size's plan an argument). Every other kernel is a flat grid-stride loop with
 * one thread per value, cell, row or pixel, applying scope_values.h. */
#include "block_fft.cuh"
#include "block_kernels.cuh"
#include "fft_sizes.cuh"
#include "scope_fft_math.cuh"
#include "scope_kernels.h"
#include "scope_values.h"
#include "twiddles.h"

#include <cstdint>

namespace cudafft {

/* The windowed frame of a history ring as the block FFT's first pass reads it: point m is
 * (x[2m] w[2m], x[2m + 1] w[2m + 1]), x[i] the ring's sample (start + i) mod (mask + 1). A frame
 * may wrap around the ring's end, so the reads are scalar; the scope runs a few transforms a
 * frame, whose cost is in the drawing. */
struct RingWindowIn {
  const float *ring;
  size_t start, mask;
  const float *w;
};

template <int P, int B, int Stride>
__device__ __forceinline__ void
read_points(float2 *v, RingWindowIn from, int j0)
{
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const size_t i = 2 * (size_t)(j0 + b + r * Stride);
      v[b * P + r] =
          make_float2(from.ring[(from.start + i) & from.mask] * __ldg(&from.w[i]),
                      from.ring[(from.start + i + 1) & from.mask] * __ldg(&from.w[i + 1]));
    }
}

} // namespace cudafft

using namespace cudafft;

namespace {

constexpr int kKind = kPlanWide;
constexpr int kFlatThreads = 256;

/* Transform t of a launch is FFT t % ffts of channel t / ffts. */
template <int N>
__global__ void
__launch_bounds__(FftShape<N, kKind>::kBlockThreads)
    fft_kernel(const float *__restrict__ history, size_t history_size, size_t newest, size_t frames,
               unsigned ffts, int count, const float *__restrict__ window, float norm,
               const float2 *__restrict__ twiddles, float *__restrict__ power)
{
  using S = FftShape<N, kKind>;
  extern __shared__ float2 smem[];
  BlockRow<N, kKind> ctx(smem, count);
  const unsigned c = (unsigned)ctx.transform / ffts, j = (unsigned)ctx.transform % ffts;
  const size_t mask = history_size - 1;
  const RingWindowIn from{history + (size_t)c * history_size,
                          cudafft_scope_fft_start(newest, frames, ffts, j, 2 * N, mask), mask,
                          window};
  block_fft<N, kKind>(from, ctx.smem, ctx.smem, ctx.t, twiddles);
  if (!ctx.active)
    return;
  float *row = power + (size_t)ctx.transform * (N + 1);
  real_forward_post<N, kKind, S::kThreads>(ctx.smem.s, ctx.t, twiddles, [&](int k, float2 x) {
    row[k] = cudafft_scope_bin_power(x.x, x.y, norm);
  });
}

/* The mixed-radix kernel of every other size: transform t of a launch, as fft_kernel's, by a group
 * of m.threads threads (MixedBlockRow). Odd: an odd real size, m.plan.n points of (x w, 0); else
 * m.plan.n pairs of samples and the real split. */
template <bool Odd>
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_fft_kernel(const float *__restrict__ history, size_t history_size, size_t newest,
                     size_t frames, unsigned ffts, int count, const float *__restrict__ window,
                     float norm, const float2 *__restrict__ twiddles, float *__restrict__ power,
                     CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int points = m.plan.n;
  const MixedBlockRow ctx(smem, points, m.threads, count);
  const unsigned c = (unsigned)ctx.transform / ffts, j = (unsigned)ctx.transform % ffts;
  const size_t n = Odd ? (size_t)points : 2 * (size_t)points, mask = history_size - 1;
  scope_mixed_frame<Odd>(m.plan, history + (size_t)c * history_size,
                         cudafft_scope_fft_start(newest, frames, ffts, j, n, mask), mask, window,
                         norm, twiddles, ctx.a, ctx.b, ctx.t, m.threads, ctx.active,
                         power + (size_t)ctx.transform * (n / 2 + 1), MixedBlockBarrier{});
}

/* Launches a size's kernel: grid blocks of the shape's threads and shared memory. */
struct FftArgs {
  const float *history;
  size_t history_size, newest, frames;
  unsigned ffts;
  int count;
  const float *window;
  float norm;
  const float2 *twiddles;
  float *power;
};
using FftFn = void (*)(dim3, const CudafftBlockKernels &, cudaStream_t, const FftArgs &);

template <int N>
void
launch_fft(dim3 grid, const CudafftBlockKernels &shape, cudaStream_t stream, const FftArgs &a)
{
  fft_kernel<N><<<grid, shape.block_threads, shape.smem_bytes, stream>>>(
      a.history, a.history_size, a.newest, a.frames, a.ffts, a.count, a.window, a.norm, a.twiddles,
      a.power);
}

template <bool Odd>
void
launch_mixed(dim3 grid, const CudafftBlockKernels &shape, cudaStream_t stream, const FftArgs &a)
{
  mixed_fft_kernel<Odd><<<grid, shape.block_threads, shape.smem_bytes, stream>>>(
      a.history, a.history_size, a.newest, a.frames, a.ffts, a.count, a.window, a.norm, a.twiddles,
      a.power, cudafft_mixed_args(&shape));
}

/* A size's kernel: its launch shape (and the block FFT whose twiddles it reads) and launcher. */
struct FftKernel {
  CudafftBlockKernels shape;
  FftFn launch;
};

/* The fused kernels by real size n: the block FFT of n / 2 complex points. */
struct FusedFftKernels {
  template <int n>
  static FftKernel
  entry()
  {
    return {cudafft_block_kernels<n / 2, kKind>((const void *)fft_kernel<n / 2>),
            launch_fft<n / 2>};
  }
};

/* The mixed-radix kernel by real size n (scope_fft_math.cuh's points). */
struct MixedFftKernels {
  static FftKernel
  entry(size_t n)
  {
    if (n % 2)
      return {
          cudafft_mixed_block_kernels(scope_mixed_points(n), (const void *)mixed_fft_kernel<true>),
          launch_mixed<true>};
    return {
        cudafft_mixed_block_kernels(scope_mixed_points(n), (const void *)mixed_fft_kernel<false>),
        launch_mixed<false>};
  }
};

/* The kernel of a supported size; nullptr for another. */
const FftKernel *
kernel_for(size_t fft_size)
{
  return cudafft_is_fused_size(fft_size) ? size_table_entry<FusedFftKernels>(fft_size)
                                         : supported_table_entry<MixedFftKernels>(fft_size);
}

__global__ void
append_kernel(CudafftSampleFormat format, const uint8_t *__restrict__ raw, size_t total,
              unsigned channels, float *__restrict__ history, size_t history_size, size_t newest)
{
  const size_t mask = history_size - 1;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    const size_t j = i / channels, c = i - j * channels;
    history[c * history_size + ((newest + j) & mask)] =
        cudafft_sample_float(format, raw, i, CUDAFFT_INT_SCALE_POW2);
  }
}

__global__ void
bands_kernel(CudafftScopeBandArgs a, const float *__restrict__ power, float *__restrict__ smoothed,
             float *__restrict__ level, float *__restrict__ window, float *__restrict__ decayed,
             float *__restrict__ peak)
{
  const size_t cells = (size_t)a.lanes * a.bands;
  const unsigned count = a.per_lane * a.ffts;
  for (size_t cell = blockIdx.x * (size_t)blockDim.x + threadIdx.x; cell < cells;
       cell += (size_t)gridDim.x * blockDim.x) {
    const size_t lane = cell / a.bands, b = cell - lane * a.bands;
    const float p = cudafft_scope_lane_power(
        &a.band_bins[b], a.gains, power + lane * count * a.bins, a.bins, count, a.inv_count);
    const float s = cudafft_scope_smooth(smoothed[cell], p, a.alpha);
    smoothed[cell] = s;
    const float l = cudafft_scope_level(s);
    level[cell] = l;
    if (a.bars)
      peak[cell] =
          cudafft_scope_peak(l, window + cell, cells, a.hold, a.slot, &decayed[cell], a.decay);
  }
}

__global__ void
fill_kernel(float *__restrict__ p, size_t n, float v)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = v;
}

__global__ void
column_kernel(CudafftScopeDrawArgs a, const float *__restrict__ level, float *__restrict__ columns,
              unsigned column)
{
  const unsigned rows = a.lanes * a.lane_height;
  for (unsigned y = blockIdx.x * blockDim.x + threadIdx.x; y < rows; y += gridDim.x * blockDim.x) {
    const unsigned lane = y / a.lane_height;
    const int band = a.map[y - lane * a.lane_height];
    columns[(size_t)y * a.width + column] = level[(size_t)lane * a.bands + (unsigned)band];
  }
}

/* The colormap in shared memory: a warp's pixels read scattered entries, which constant memory
 * would serialise. Every thread of the block must call it. */
__device__ __forceinline__ const float *
load_colormap(const float *__restrict__ global, float *shared)
{
  if (!global)
    return nullptr;
  for (int i = threadIdx.x; i < 768; i += blockDim.x)
    shared[i] = global[i];
  __syncthreads();
  return shared;
}

/* Stores a pixel: 4-byte layouts in one store (rows and pixels are 4-byte aligned then). */
__device__ __forceinline__ void
store_pixel(uint8_t *p, CudafftScopeOffsets o, size_t bpp, const float *rgb)
{
  uint8_t px[4] = {0, 0, 0, 0};
  cudafft_scope_store(px, o, rgb);
  if (bpp == 4) {
    *reinterpret_cast<uchar4 *>(p) = make_uchar4(px[0], px[1], px[2], px[3]);
  } else {
    p[0] = px[0];
    p[1] = px[1];
    p[2] = px[2];
  }
}

__global__ void
spectrogram_kernel(CudafftScopeDrawArgs a, const float *__restrict__ columns, unsigned column,
                   uint8_t *__restrict__ frame)
{
  __shared__ float table[768];
  const float *map = load_colormap(a.colormap, table);
  const CudafftScopeOffsets o = cudafft_scope_offsets(a.pixels);
  const size_t bpp = o.x >= 0 ? 4 : 3;
  const unsigned rows = a.lanes * a.lane_height;
  const size_t total = (size_t)a.width * a.height;
  const float black[3] = {0.0f, 0.0f, 0.0f};
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    const unsigned y = (unsigned)(i / a.width), x = (unsigned)(i - (size_t)y * a.width);
    uint8_t *p = frame + (size_t)y * a.stride + (size_t)x * bpp;
    if (y >= rows) {
      store_pixel(p, o, bpp, black);
      continue;
    }
    unsigned from = column + 1 + x;
    from = from >= a.width ? from - a.width : from;
    float rgb[3];
    cudafft_scope_colour(
        map, cudafft_scope_fraction(columns[(size_t)y * a.width + from], a.db_min, a.db_max), rgb);
    store_pixel(p, o, bpp, rgb);
  }
}

__global__ void
bars_kernel(CudafftScopeDrawArgs a, const float *__restrict__ level, const float *__restrict__ peak,
            uint8_t *__restrict__ frame)
{
  __shared__ float table[768];
  const float *map = load_colormap(a.colormap, table);
  const CudafftScopeOffsets o = cudafft_scope_offsets(a.pixels);
  const size_t bpp = o.x >= 0 ? 4 : 3;
  const unsigned h = a.lane_height;
  const size_t total = (size_t)a.width * a.height;
  const float black[3] = {0.0f, 0.0f, 0.0f};
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    const unsigned y = (unsigned)(i / a.width), x = (unsigned)(i - (size_t)y * a.width);
    uint8_t *p = frame + (size_t)y * a.stride + (size_t)x * bpp;
    const unsigned lane = y / h;
    const int band = a.map[x];
    if (lane >= a.lanes || band < 0) {
      store_pixel(p, o, bpp, black);
      continue;
    }
    const unsigned r = h - 1 - (y - lane * h);
    const size_t cell = (size_t)lane * a.bands + (unsigned)band;
    const float bar = cudafft_scope_fraction(level[cell], a.db_min, a.db_max) * (float)h;
    const float top = cudafft_scope_fraction(peak[cell], a.db_min, a.db_max) * (float)h;
    float row_rgb[3], rgb[3];
    cudafft_scope_colour(map, ((float)r + 0.5f) / (float)h, row_rgb);
    cudafft_scope_bar_rgb(bar, top, a.marker, r, row_rgb, rgb);
    store_pixel(p, o, bpp, rgb);
  }
}

} // namespace

extern "C" size_t
cudafft_scope_fft_smem(size_t fft_size)
{
  const FftKernel *k = kernel_for(fft_size);
  return k ? k->shape.smem_bytes : 0;
}

extern "C" size_t
cudafft_scope_twiddle_count(size_t fft_size)
{
  const FftKernel *k = kernel_for(fft_size);
  return k ? cudafft_twiddle_count(k->shape.twiddles.n_complex, k->shape.twiddles.plan_kind) : 0;
}

extern "C" void
cudafft_scope_twiddles(size_t fft_size, float *table)
{
  const FftKernel *k = kernel_for(fft_size);
  if (k)
    cudafft_twiddle_table(k->shape.twiddles.n_complex, k->shape.twiddles.plan_kind, table);
}

extern "C" cudaError_t
cudafft_scope_fft_prepare(size_t fft_size)
{
  const FftKernel *k = kernel_for(fft_size);
  return k ? cudafft_block_kernels_prepare(&k->shape) : cudaErrorInvalidValue;
}

extern "C" cudaError_t
cudafft_scope_append_launch(CudafftSampleFormat format, const void *raw, size_t frames,
                            unsigned channels, float *history, size_t history_size, size_t newest,
                            cudaStream_t stream)
{
  if (frames == 0)
    return cudaSuccess;
  const size_t total = frames * channels;
  append_kernel<<<grid_for(total, kFlatThreads), kFlatThreads, 0, stream>>>(
      format, (const uint8_t *)raw, total, channels, history, history_size, newest);
  return cudaGetLastError();
}

extern "C" cudaError_t
cudafft_scope_fft_launch(size_t fft_size, const float *history, size_t history_size,
                         unsigned channels, size_t newest, size_t frames, unsigned ffts,
                         const float *window, float norm, const float2 *twiddles, float *power,
                         cudaStream_t stream)
{
  const FftKernel *k = kernel_for(fft_size);
  if (!k || ffts == 0)
    return cudaErrorInvalidValue;
  /* at most 1024 channels x 64 FFTs: int indices */
  const int count = (int)(channels * ffts);
  const FftArgs args = {history, history_size, newest, frames,   ffts,
                        count,   window,       norm,   twiddles, power};
  const dim3 grid((unsigned)((count + k->shape.per_block - 1) / k->shape.per_block));
  k->launch(grid, k->shape, stream, args);
  return cudaGetLastError();
}

extern "C" cudaError_t
cudafft_scope_bands_launch(const CudafftScopeBandArgs *args, const float *power, float *smoothed,
                           float *level, float *window, float *decayed, float *peak,
                           cudaStream_t stream)
{
  const size_t cells = (size_t)args->lanes * args->bands;
  bands_kernel<<<grid_for(cells, kFlatThreads), kFlatThreads, 0, stream>>>(
      *args, power, smoothed, level, window, decayed, peak);
  return cudaGetLastError();
}

extern "C" cudaError_t
cudafft_scope_fill_launch(float *p, size_t n, float v, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  fill_kernel<<<grid_for(n, kFlatThreads), kFlatThreads, 0, stream>>>(p, n, v);
  return cudaGetLastError();
}

extern "C" cudaError_t
cudafft_scope_spectrogram_launch(const CudafftScopeDrawArgs *args, const float *level,
                                 float *columns, unsigned column, uint8_t *frame,
                                 cudaStream_t stream)
{
  const unsigned rows = args->lanes * args->lane_height;
  column_kernel<<<grid_for(rows, kFlatThreads), kFlatThreads, 0, stream>>>(*args, level, columns,
                                                                           column);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    return error;
  const size_t total = (size_t)args->width * args->height;
  spectrogram_kernel<<<grid_for(total, kFlatThreads), kFlatThreads, 0, stream>>>(*args, columns,
                                                                                 column, frame);
  return cudaGetLastError();
}

extern "C" cudaError_t
cudafft_scope_bars_launch(const CudafftScopeDrawArgs *args, const float *level, const float *peak,
                          uint8_t *frame, cudaStream_t stream)
{
  const size_t total = (size_t)args->width * args->height;
  bars_kernel<<<grid_for(total, kFlatThreads), kFlatThreads, 0, stream>>>(*args, level, peak,
                                                                          frame);
  return cudaGetLastError();
}
