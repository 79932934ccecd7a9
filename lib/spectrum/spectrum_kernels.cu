/* spectrum_kernels.cu: the spectrum's kernels, the fused one built from the block FFT's device
 * functions. */
#include "block_fft.cuh"
#include "block_fft_io.cuh"
#include "block_kernels.cuh"
#include "fft_sizes.cuh"
#include "sample_dispatch.cuh"
#include "spectrum_kernels.h"
#include "spectrum_values.h"

#include <climits>
#include <cstdint>

using namespace cudafft;

namespace {

constexpr int kWide = kPlanWide;

/* Enough blocks for 1024 threads per multiprocessor, as for the C2C kernels: the register cap this
 * sets (for the 128-thread blocks of nfft 4096; a few bytes spill with phase) lets one more block
 * in (then shared memory limits), which keeps more loads in flight in this latency-bound kernel.
 * Raising the shared-memory carveout as well made it slower: the window and twiddles lose L1. The
 * measurements (spectrum-kernel-bench) are in bench/HISTORY.md. */
template <int BlockThreads>
constexpr int kFusedMinBlocks = BlockThreads >= 1024 ? 1 : 1024 / BlockThreads;

/* Adds v into a band's sum, or stores it where the FFT is its slot's only contribution (which
 * spares zeroing the slot first). */
__device__ __forceinline__ void
put(float *sum, float v, bool store)
{
  if (store)
    *sum = v;
  else
    atomicAdd(sum, v);
}

/* One block row per (FFT, spectrum) pair: transform t is FFT t / spectra of spectrum t % spectra.
 * Window on load, the half-length complex FFT in shared memory, then each bin once from
 * real_forward_post straight into its slot: consecutive bands from consecutive threads. */
template <int N, bool Phase>
__global__ void
__launch_bounds__(FftShape<N, kWide>::kBlockThreads,
                  kFusedMinBlocks<FftShape<N, kWide>::kBlockThreads>)
    fused_kernel(const float *__restrict__ signal, size_t pitch, int spectra,
                 const CudafftSpectrumLaunchFft *__restrict__ ffts, int count,
                 const float *__restrict__ window, float norm_db, int threshold,
                 float *__restrict__ magnitude, float *__restrict__ phase,
                 const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, kWide>;
  extern __shared__ float2 smem[];
  BlockRow<N, kWide> ctx(smem, count);
  const int s = ctx.transform % spectra;
  const CudafftSpectrumLaunchFft fft = ffts[ctx.transform / spectra];
  const WindowedRealIn from{signal + (size_t)s * pitch + fft.end, window};
  block_fft<N, kWide>(from, ctx.smem, ctx.smem, ctx.t, twiddles);
  if (!ctx.active)
    return;
  const size_t row = ((size_t)fft.slot * (size_t)spectra + (size_t)s) * (N + 1);
  float *level_row = magnitude + row;
  float *phase_row = Phase ? phase + row : nullptr;
  const bool store = fft.store != 0;
  real_forward_post<N, kWide, S::kThreads>(ctx.smem.s, ctx.t, twiddles, [&](int k, float2 x) {
    put(&level_row[k], cudafft_spectrum_level(x.x * x.x + x.y * x.y, norm_db, threshold), store);
    if constexpr (Phase)
      put(&phase_row[k], cudafft_spectrum_phase(x.x, x.y), store);
  });
}

/* The flat kernels below index with Index: unsigned where the launch's indices (and their last
 * grid stride) fit in 32 bits, which spares 64-bit divisions, else size_t. */
template <typename Index>
bool
fits(size_t total, size_t extra)
{
  return total <= (size_t)(Index)-1 - extra;
}

constexpr int kFlatThreads = 256;
constexpr unsigned kFlatMaxBlocks = 65536;
/* the most one flat launch's grid stride adds to an index */
constexpr size_t kFlatMaxStride = (size_t)kFlatThreads * kFlatMaxBlocks;

unsigned
flat_blocks(size_t total)
{
  const size_t wanted = (total + kFlatThreads - 1) / kFlatThreads;
  return (unsigned)(wanted < kFlatMaxBlocks ? (wanted > 0 ? wanted : 1) : kFlatMaxBlocks);
}

/* One thread per (frame, spectrum), the spectra of a frame on adjacent threads, which read
 * adjacent samples of the frame; the writes scatter over the rows, which costs little next to the
 * transforms. */
template <int Format, typename Index>
__global__ void
convert_kernel(const uint8_t *__restrict__ raw, Index total, unsigned channels, int multi_channel,
               Index spectra, size_t frame_bytes, float *__restrict__ signal, size_t pitch)
{
  for (Index i = blockIdx.x * (Index)blockDim.x + threadIdx.x; i < total;
       i += (Index)gridDim.x * blockDim.x) {
    const Index j = i / spectra, s = i - j * spectra;
    signal[(size_t)s * pitch + j] =
        cudafft_spectrum_frame_value((CudafftSampleFormat)Format, raw + (size_t)j * frame_bytes,
                                     channels, multi_channel, (unsigned)s);
  }
}

/* Pairs are numbered from the launch's first one: local pair p is pair first_pair + p, whose FFT
 * is first_fft + (first_s + p) / spectra (first_pair = first_fft spectra + first_s), so that the
 * divisions stay in Index. One thread per value, consecutive values on consecutive threads. */
template <typename Index>
__global__ void
gather_kernel(Index n, const float *__restrict__ signal, size_t pitch, Index spectra,
              const CudafftSpectrumLaunchFft *__restrict__ ffts, Index first_s, Index total,
              const float *__restrict__ window, float *__restrict__ frames)
{
  for (Index i = blockIdx.x * (Index)blockDim.x + threadIdx.x; i < total;
       i += (Index)gridDim.x * blockDim.x) {
    const Index r = i / n, k = i - r * n;
    const Index p = first_s + r, f = p / spectra, s = p - f * spectra;
    frames[i] = signal[(size_t)s * pitch + ffts[f].end + k] * __ldg(&window[k]);
  }
}

template <typename Index, bool Phase>
__global__ void
accumulate_kernel(Index bands, Index spectra, const CudafftSpectrumLaunchFft *__restrict__ ffts,
                  Index first_s, Index total, const float2 *__restrict__ bins, float norm_db,
                  int threshold, float *__restrict__ magnitude, float *__restrict__ phase)
{
  for (Index i = blockIdx.x * (Index)blockDim.x + threadIdx.x; i < total;
       i += (Index)gridDim.x * blockDim.x) {
    const Index r = i / bands, k = i - r * bands;
    const Index p = first_s + r, f = p / spectra, s = p - f * spectra;
    const CudafftSpectrumLaunchFft fft = ffts[f];
    const size_t at = ((size_t)fft.slot * spectra + s) * bands + k;
    float2 x = bins[i];
    /* The DC and Nyquist bins of a real signal are real; cuFFT may leave -0 or a rounding error in
     * their imaginary parts, whose phase would read -pi or noise where spectrum's is 0 or pi. */
    if (k == 0 || k == bands - 1)
      x.y = 0.0f;
    const bool store = fft.store != 0;
    put(&magnitude[at], cudafft_spectrum_level(x.x * x.x + x.y * x.y, norm_db, threshold), store);
    if (Phase)
      put(&phase[at], cudafft_spectrum_phase(x.x, x.y), store);
  }
}

using FusedFn = void (*)(dim3, int, size_t, cudaStream_t, const float *, size_t, int,
                         const CudafftSpectrumLaunchFft *, int, const float *, float, int, float *,
                         float *, const float2 *);

struct FusedKernels {
  CudafftBlockKernels shape; /* without, with phase */
  FusedFn launch[2];
};

template <int N, bool Phase>
void
launch_fused(dim3 grid, int threads, size_t smem, cudaStream_t stream, const float *signal,
             size_t pitch, int spectra, const CudafftSpectrumLaunchFft *ffts, int count,
             const float *window, float norm_db, int threshold, float *magnitude, float *phase,
             const float2 *twiddles)
{
  fused_kernel<N, Phase><<<grid, threads, smem, stream>>>(
      signal, pitch, spectra, ffts, count, window, norm_db, threshold, magnitude, phase, twiddles);
}

/* The kernels of each size nfft: the real transforms of nfft points run the block FFT of
 * nfft / 2. */
struct FusedTable {
  template <int nfft>
  static FusedKernels
  entry()
  {
    constexpr int N = nfft / 2;
    return {cudafft_block_kernels<N, kWide>((const void *)fused_kernel<N, false>,
                                            (const void *)fused_kernel<N, true>),
            {launch_fused<N, false>, launch_fused<N, true>}};
  }
};

} // namespace

extern "C" const CudafftBlockKernels *
cudafft_spectrum_fused_kernels(size_t nfft)
{
  const FusedKernels *k = size_table_entry<FusedTable>(nfft);
  return k ? &k->shape : nullptr;
}

namespace {

template <int Format>
void
convert(const void *raw, size_t frames, unsigned channels, int multi_channel, size_t spectra,
        float *signal, size_t pitch, cudaStream_t stream)
{
  const size_t total = frames * spectra;
  const size_t frame_bytes = channels * cudafft_sample_size((CudafftSampleFormat)Format);
  const unsigned blocks = flat_blocks(total);
  if (fits<unsigned>(total, kFlatMaxStride))
    convert_kernel<Format, unsigned><<<blocks, kFlatThreads, 0, stream>>>(
        (const uint8_t *)raw, (unsigned)total, channels, multi_channel, (unsigned)spectra,
        frame_bytes, signal, pitch);
  else
    convert_kernel<Format, size_t><<<blocks, kFlatThreads, 0, stream>>>(
        (const uint8_t *)raw, total, channels, multi_channel, spectra, frame_bytes, signal, pitch);
}

} // namespace

extern "C" cudaError_t
cudafft_spectrum_convert_launch(CudafftSampleFormat format, const void *raw, size_t frames,
                                unsigned channels, int multi_channel, size_t spectra, float *signal,
                                size_t pitch, cudaStream_t stream)
{
  if (frames == 0)
    return cudaSuccess;
  const bool known =
      cudafft_sample_dispatch<CUDAFFT_SAMPLE_S16, CUDAFFT_SAMPLE_S24, CUDAFFT_SAMPLE_S32,
                              CUDAFFT_SAMPLE_F32, CUDAFFT_SAMPLE_F64>(format, [&](auto f) {
        convert<decltype(f)::value>(raw, frames, channels, multi_channel, spectra, signal, pitch,
                                    stream);
      });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t
cudafft_spectrum_fused_launch(size_t nfft, const float *signal, size_t pitch, size_t spectra,
                              const CudafftSpectrumLaunchFft *ffts, size_t fft_count,
                              const float *window, float norm_db, int threshold, float *magnitude,
                              float *phase, const float2 *twiddles, cudaStream_t stream)
{
  const FusedKernels *k = size_table_entry<FusedTable>(nfft);
  if (!k || spectra == 0 || spectra > CUDAFFT_MAX_LAUNCH_TRANSFORMS)
    return cudaErrorInvalidValue;
  /* Launches start at whole FFTs, so that a launch's transform t is FFT t / spectra of its own. */
  const FusedFn launch = k->launch[phase ? 1 : 0];
  return cudafft_block_launches(&k->shape, fft_count, spectra,
                                [&](size_t f, int transforms, dim3 grid) {
                                  launch(grid, k->shape.block_threads, k->shape.smem_bytes, stream,
                                         signal, pitch, (int)spectra, ffts + f, transforms, window,
                                         norm_db, threshold, magnitude, phase, twiddles);
                                });
}

extern "C" cudaError_t
cudafft_spectrum_gather_launch(size_t nfft, const float *signal, size_t pitch, size_t spectra,
                               const CudafftSpectrumLaunchFft *ffts, size_t first, size_t count,
                               const float *window, float *frames, cudaStream_t stream)
{
  if (count == 0)
    return cudaSuccess;
  if (spectra == 0 || nfft == 0 || count > SIZE_MAX / nfft)
    return cudaErrorInvalidValue;
  const size_t total = count * nfft;
  const size_t first_s = first % spectra;
  ffts += first / spectra;
  const unsigned blocks = flat_blocks(total);
  if (fits<unsigned>(total, kFlatMaxStride) && fits<unsigned>(first_s + count, spectra))
    gather_kernel<unsigned><<<blocks, kFlatThreads, 0, stream>>>(
        (unsigned)nfft, signal, pitch, (unsigned)spectra, ffts, (unsigned)first_s, (unsigned)total,
        window, frames);
  else
    gather_kernel<size_t><<<blocks, kFlatThreads, 0, stream>>>(nfft, signal, pitch, spectra, ffts,
                                                               first_s, total, window, frames);
  return cudaGetLastError();
}

extern "C" cudaError_t
cudafft_spectrum_accumulate_launch(size_t bands, size_t spectra,
                                   const CudafftSpectrumLaunchFft *ffts, size_t first, size_t count,
                                   const float2 *bins, float norm_db, int threshold,
                                   float *magnitude, float *phase, cudaStream_t stream)
{
  if (count == 0)
    return cudaSuccess;
  if (spectra == 0 || bands == 0 || count > SIZE_MAX / bands)
    return cudaErrorInvalidValue;
  const size_t total = count * bands;
  const size_t first_s = first % spectra;
  ffts += first / spectra;
  const unsigned blocks = flat_blocks(total);
  if (fits<unsigned>(total, kFlatMaxStride) && fits<unsigned>(first_s + count, spectra)) {
    if (phase)
      accumulate_kernel<unsigned, true><<<blocks, kFlatThreads, 0, stream>>>(
          (unsigned)bands, (unsigned)spectra, ffts, (unsigned)first_s, (unsigned)total, bins,
          norm_db, threshold, magnitude, phase);
    else
      accumulate_kernel<unsigned, false><<<blocks, kFlatThreads, 0, stream>>>(
          (unsigned)bands, (unsigned)spectra, ffts, (unsigned)first_s, (unsigned)total, bins,
          norm_db, threshold, magnitude, phase);
  } else {
    if (phase)
      accumulate_kernel<size_t, true><<<blocks, kFlatThreads, 0, stream>>>(
          bands, spectra, ffts, first_s, total, bins, norm_db, threshold, magnitude, phase);
    else
      accumulate_kernel<size_t, false><<<blocks, kFlatThreads, 0, stream>>>(
          bands, spectra, ffts, first_s, total, bins, norm_db, threshold, magnitude, phase);
  }
  return cudaGetLastError();
}
