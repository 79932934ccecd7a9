/* stft_kernels.cu: the STFT's fused kernels, built from the block FFT's device functions. */
#include "block_fft.cuh"
#include "block_fft_io.cuh"
#include "block_kernels.cuh"
#include "fft_sizes.cuh"
#include "sample_dispatch.cuh"
#include "stft_kernels.h"
#include "stft_values.h"

#include <cstdint>

namespace cudafft {

/* The last pass's destination for synthesis: the conjugate of the points (see
 * real_inverse_pre), times the synthesis window g, as real samples. */
struct WindowedRealOut {
  float2 *row; /* nullptr: a row past the batch, which computes but never writes */
  const float2 *g;
};

template <int P, int B, int Ns>
__device__ __forceinline__ void
write_points(WindowedRealOut to, const float2 *v, int j0)
{
  if (!to.row)
    return;
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const int m = j0 + b + r * Ns;
      const float2 g = __ldg(&to.g[m]);
      to.row[m] = make_float2(v[b * P + r].x * g.x, -v[b * P + r].y * g.y);
    }
}

} // namespace cudafft

using namespace cudafft;

namespace {

constexpr int kWide = kPlanWide;

template <int N>
__global__ void
__launch_bounds__(FftShape<N, kWide>::kBlockThreads)
    analysis_kernel(const float *__restrict__ signal, size_t pitch, int channels, int count,
                    int hop, const float *__restrict__ window, int representation,
                    float *__restrict__ out, const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, kWide>;
  extern __shared__ float2 smem[];
  BlockRow<N, kWide> ctx(smem, count);
  const int frame = ctx.transform / channels, channel = ctx.transform % channels;
  const WindowedRealIn from{signal + channel * pitch + (size_t)frame * hop, window};
  block_fft<N, kWide>(from, ctx.smem, ctx.smem, ctx.t, twiddles);
  if (!ctx.active)
    return;
  float *row = out + (size_t)ctx.transform * (N + 1) *
                         (representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1);
  real_forward_post<N, kWide, S::kThreads>(ctx.smem.s, ctx.t, twiddles, [&](int k, float2 x) {
    if (representation == CUDAFFT_REPRESENTATION_COMPLEX)
      reinterpret_cast<float2 *>(row)[k] = x;
    else
      row[k] = cudafft_bin_value((CudafftRepresentation)representation, x.x * x.x + x.y * x.y);
  });
}

template <int N>
__global__ void
__launch_bounds__(FftShape<N, kWide>::kBlockThreads)
    synthesis_kernel(const float2 *__restrict__ bins, int count, const float2 *__restrict__ g,
                     float2 *__restrict__ frames_out, const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, kWide>;
  extern __shared__ float2 smem[];
  BlockRow<N, kWide> ctx(smem, count);
  load_real_bins<N, S::kThreads>(ctx.smem.s, bins + (size_t)ctx.transform * (N + 1), ctx.t);
  __syncthreads();
  real_inverse_pre<N, kWide, S::kThreads>(ctx.smem.s, ctx.t, twiddles);
  const WindowedRealOut to{ctx.active ? frames_out + (size_t)ctx.transform * N : nullptr, g};
  block_fft<N, kWide>(ctx.smem, ctx.smem, to, ctx.t, twiddles);
}

/* Reads stay in the interleaved order (coalesced); the planar writes scatter over channels, which
 * costs little next to the transforms. */
template <int Format>
__global__ void
deinterleave_kernel(const void *__restrict__ raw, size_t total, unsigned channels,
                    float *__restrict__ signal, size_t pitch)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x)
    signal[(i % channels) * pitch + i / channels] =
        cudafft_sample_float((CudafftSampleFormat)Format, raw, i, CUDAFFT_INT_SCALE_POW2);
}

/* One thread per output sample of one channel, consecutive samples on consecutive threads (the
 * frame rows are read in order). It sums the frames that cover the sample, oldest first. */
__global__ void
overlap_add_kernel(int n, int hop, int channels, int frames, const float *__restrict__ rows,
                   const float *__restrict__ tail_in, float *__restrict__ tail_out,
                   float *__restrict__ out)
{
  const int carried = n - hop;
  const size_t length = (size_t)frames * hop + carried; /* per channel */
  const size_t total = length * channels;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    const int c = (int)(i / length);
    const size_t p = i % length;
    float sum = p < (size_t)carried ? tail_in[(size_t)c * carried + p] : 0.0f;
    const size_t first = p >= (size_t)n ? (p - n) / hop + 1 : 0;
    size_t last = p / hop;
    if (last > (size_t)frames - 1)
      last = frames - 1;
    for (size_t f = first; f <= last; ++f)
      sum += rows[(f * channels + c) * n + (p - f * hop)];
    if (p < (size_t)frames * hop)
      out[p * channels + c] = sum;
    else
      tail_out[(size_t)c * carried + (p - (size_t)frames * hop)] = sum;
  }
}

struct FusedKernels {
  CudafftBlockKernels shape; /* analysis, synthesis */
  void (*analyse)(dim3, int, size_t, cudaStream_t, const float *, size_t, int, int, int,
                  const float *, int, float *, const float2 *);
  void (*synthesise)(dim3, int, size_t, cudaStream_t, const float2 *, int, const float2 *, float2 *,
                     const float2 *);
};

template <int N>
void
analyse(dim3 grid, int threads, size_t smem, cudaStream_t stream, const float *signal, size_t pitch,
        int channels, int count, int hop, const float *window, int representation, float *out,
        const float2 *twiddles)
{
  analysis_kernel<N><<<grid, threads, smem, stream>>>(signal, pitch, channels, count, hop, window,
                                                      representation, out, twiddles);
}

template <int N>
void
synthesise(dim3 grid, int threads, size_t smem, cudaStream_t stream, const float2 *bins, int count,
           const float2 *g, float2 *frames_out, const float2 *twiddles)
{
  synthesis_kernel<N><<<grid, threads, smem, stream>>>(bins, count, g, frames_out, twiddles);
}

/* The kernels of each size n: the real transforms of n points run the block FFT of n / 2. */
struct FusedTable {
  template <int n>
  static FusedKernels
  entry()
  {
    constexpr int N = n / 2;
    return {cudafft_block_kernels<N, kWide>((const void *)analysis_kernel<N>,
                                            (const void *)synthesis_kernel<N>),
            analyse<N>, synthesise<N>};
  }
};

} // namespace

extern "C" const CudafftBlockKernels *
cudafft_stft_kernels(size_t n)
{
  const FusedKernels *k = size_table_entry<FusedTable>(n);
  return k ? &k->shape : nullptr;
}

extern "C" cudaError_t
cudafft_deinterleave_launch(CudafftSampleFormat format, const void *raw, size_t samples,
                            unsigned channels, float *signal, size_t pitch, cudaStream_t stream)
{
  const size_t total = samples * channels;
  const int threads = 256, blocks = grid_for(total, threads);
  const bool known =
      cudafft_sample_dispatch<CUDAFFT_SAMPLE_S16, CUDAFFT_SAMPLE_S32, CUDAFFT_SAMPLE_F32,
                              CUDAFFT_SAMPLE_F64>(format, [&](auto f) {
        deinterleave_kernel<decltype(f)::value>
            <<<blocks, threads, 0, stream>>>(raw, total, channels, signal, pitch);
      });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t
cudafft_analysis_launch(size_t n, const float *signal, size_t pitch, unsigned channels,
                        size_t frames, size_t hop, const float *window,
                        CudafftRepresentation representation, float *out, const float2 *twiddles,
                        cudaStream_t stream)
{
  const FusedKernels *k = size_table_entry<FusedTable>(n);
  if (!k)
    return cudaErrorInvalidValue;
  const size_t row_floats =
      (n / 2 + 1) * (representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1);
  return cudafft_block_launches(
      &k->shape, frames, channels, [&](size_t f, int transforms, dim3 grid) {
        k->analyse(grid, k->shape.block_threads, k->shape.smem_bytes, stream, signal + f * hop,
                   pitch, (int)channels, transforms, (int)hop, window, (int)representation,
                   out + f * channels * row_floats, twiddles);
      });
}

extern "C" cudaError_t
cudafft_synthesis_launch(size_t n, const float *bins, unsigned channels, size_t frames,
                         const float *synthesis, float *frames_out, const float2 *twiddles,
                         cudaStream_t stream)
{
  const FusedKernels *k = size_table_entry<FusedTable>(n);
  if (!k)
    return cudaErrorInvalidValue;
  return cudafft_block_launches(
      &k->shape, frames * channels, 1, [&](size_t done, int count, dim3 grid) {
        k->synthesise(grid, k->shape.block_threads, k->shape.smem_bytes, stream,
                      (const float2 *)bins + done * (n / 2 + 1), count, (const float2 *)synthesis,
                      (float2 *)frames_out + done * (n / 2), twiddles);
      });
}

extern "C" cudaError_t
cudafft_overlap_add_launch(size_t n, size_t hop, unsigned channels, size_t frames,
                           const float *frames_in, const float *tail_in, float *tail_out,
                           float *out, cudaStream_t stream)
{
  const size_t total = (frames * hop + n - hop) * channels;
  const int threads = 256;
  overlap_add_kernel<<<grid_for(total, threads), threads, 0, stream>>>(
      (int)n, (int)hop, (int)channels, (int)frames, frames_in, tail_in, tail_out, out);
  return cudaGetLastError();
}
