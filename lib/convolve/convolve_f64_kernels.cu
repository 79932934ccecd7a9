/* convolve_f64_kernels.cu: the F64 partitioned path's kernels around cuFFT's double transforms
 * (convolve_cuda.cu plans them): the deinterleave of interleaved samples to transform frames, the
 * MAC over the partitions, the kept half mixed and interleaved, and the kernel's frames for its
 * spectra. Element-wise kernels of kFlatThreads threads; units as convolve_kernels.h describes. */

#include "convolve_kernels.h"
#include "convolve_launch.cuh"

namespace {

constexpr int kConvBlock = CUDAFFT_CONVOLVE_BLOCK; /* B */
constexpr int kConvPitch = CUDAFFT_CONVOLVE_BIN_PITCH;

__device__ __forceinline__ double
mixed(double y, double x, double wet_gain, double dry_gain)
{
  return dry_gain != 0.0 ? y * wet_gain + x * dry_gain : y * wet_gain;
}

constexpr int kConvN = CUDAFFT_CONVOLVE_FFT_SIZE;

/* A job's interleaved samples [unit B, unit B + B) to its frames: sample (frame i, channel c) of
 * block q is point B + i of frame q channels + c and point i of the next block's frame. Units
 * below `channels` also copy channel `unit`'s previous block to the first half of its frame 0. */
__global__ void
__launch_bounds__(kFlatThreads)
    deinterleave64_kernel(const CudafftConvolveBlocks64Job *__restrict__ jobs,
                          const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveBlocks64Job &job = jobs[u.job];
  const size_t channels = (unsigned)job.channels, first = (size_t)u.unit * kConvBlock;
  const size_t last_block = (size_t)job.blocks - 1;
  for (int j = threadIdx.x; j < kConvBlock; j += kFlatThreads) {
    const size_t i = first + j, frame = i / channels, c = i % channels;
    const size_t q = frame / kConvBlock, at = frame % kConvBlock;
    const double v = job.in[i];
    job.frames[(q * channels + c) * kConvN + kConvBlock + at] = v;
    if (q < last_block)
      job.frames[((q + 1) * channels + c) * kConvN + at] = v;
    else
      job.next_previous[c * kConvBlock + at] = v;
  }
  if (u.unit < channels)
    for (int j = threadIdx.x; j < kConvBlock; j += kFlatThreads)
      job.frames[(size_t)u.unit * kConvN + j] = job.previous[(size_t)u.unit * kConvBlock + j];
}

__device__ __forceinline__ double2
cmac(double2 acc, double2 x, double2 h)
{
  acc.x = fma(x.x, h.x, fma(-x.y, h.y, acc.x));
  acc.y = fma(x.x, h.y, fma(x.y, h.x, acc.y));
  return acc;
}

/* Transform b = q channels + c: its sums over the partitions, p ascending, one bin per thread at a
 * time (adjacent threads adjacent bins: 16-byte loads, coalesced). */
__global__ void
__launch_bounds__(kFlatThreads) mac64_kernel(const CudafftConvolveBlocks64Job *__restrict__ jobs,
                                             const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveBlocks64Job &job = jobs[u.job];
  const int channels = job.channels, slots = job.slots, partitions = job.partitions;
  const int q = (int)u.unit / channels, c = (int)u.unit % channels;
  const int row = job.kernel_rows > 1 ? c : 0;
  int newest = job.first_slot + q;
  if (newest >= slots)
    newest -= slots;
  const double2 *h_rows = job.spectra + (size_t)row * partitions * kConvPitch;
  double2 *sums = job.sums + (size_t)u.unit * kConvPitch;
  for (int k = threadIdx.x; k <= kConvBlock; k += kFlatThreads) {
    double2 acc = make_double2(0.0, 0.0);
    int slot = newest;
    for (int p = 0; p < partitions; ++p) {
      const double2 x = job.ring[((size_t)slot * channels + c) * kConvPitch + k];
      acc = cmac(acc, x, __ldg(&h_rows[(size_t)p * kConvPitch + k]));
      slot = slot == 0 ? slots - 1 : slot - 1;
    }
    sums[k] = acc;
  }
}

/* The kept half of each inverse transform, mixed with the block's input, interleaved: units as the
 * deinterleave's. */
__global__ void
__launch_bounds__(kFlatThreads) output64_kernel(const CudafftConvolveBlocks64Job *__restrict__ jobs,
                                                const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveBlocks64Job &job = jobs[u.job];
  const size_t channels = (unsigned)job.channels, first = (size_t)u.unit * kConvBlock;
  const double wet_gain = job.wet_gain, dry_gain = job.dry_gain;
  for (int j = threadIdx.x; j < kConvBlock; j += kFlatThreads) {
    const size_t i = first + j, frame = i / channels, c = i % channels;
    const size_t at =
        ((frame / kConvBlock) * channels + c) * kConvN + kConvBlock + frame % kConvBlock;
    job.out[i] = mixed(job.time[at], dry_gain != 0.0 ? job.frames[at] : 0.0, wet_gain, dry_gain);
  }
}

__global__ void
__launch_bounds__(kFlatThreads)
    spectra64_frames_kernel(const CudafftConvolveSpectra64Job *__restrict__ jobs,
                            const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSpectra64Job &job = jobs[u.job];
  const size_t first = (size_t)u.unit * kConvBlock;
  double *frame = job.frames + (size_t)u.unit * kConvN;
  for (int j = threadIdx.x; j < kConvN; j += kFlatThreads)
    frame[j] = j < kConvBlock && first + j < job.count ? job.taps[first + j] * (1.0 / kConvN) : 0.0;
}

} // namespace

extern "C" cudaError_t
cudafft_convolve_deinterleave64_launch(const CudafftConvolveBlocks64Job *jobs,
                                       const CudafftConvolveUnit *units, size_t count,
                                       cudaStream_t stream)
{
  return launch_units(deinterleave64_kernel, count, kFlatThreads, stream, jobs, units);
}

extern "C" cudaError_t
cudafft_convolve_mac64_launch(const CudafftConvolveBlocks64Job *jobs,
                              const CudafftConvolveUnit *units, size_t count, cudaStream_t stream)
{
  return launch_units(mac64_kernel, count, kFlatThreads, stream, jobs, units);
}

extern "C" cudaError_t
cudafft_convolve_output64_launch(const CudafftConvolveBlocks64Job *jobs,
                                 const CudafftConvolveUnit *units, size_t count,
                                 cudaStream_t stream)
{
  return launch_units(output64_kernel, count, kFlatThreads, stream, jobs, units);
}

extern "C" cudaError_t
cudafft_convolve_spectra64_frames_launch(const CudafftConvolveSpectra64Job *jobs,
                                         const CudafftConvolveUnit *units, size_t count,
                                         cudaStream_t stream)
{
  return launch_units(spectra64_frames_kernel, count, kFlatThreads, stream, jobs, units);
}
