/* convolve_kernels.cu: what the convolution's kernel files share at launch: the fill that every
 * path uses (CudafftConvolveFillJob) and the twiddle plans of the F32 FFT paths' kernels. The
 * kernels are kept by path, each file a path's: convolve_partitioned_kernels.cu (the partitioned
 * path, with its fused one-partition kernel), convolve_split_kernels.cu (the split path), both over
 * convolve_fft_device.cuh; convolve_f64_kernels.cu (the F64 path around cuFFT) and
 * convolve_direct_kernels.cu (the direct path); all launch through convolve_launch.cuh and share
 * the job layouts of convolve_kernels.h. */

#include "convolve_fft_device.cuh"
#include "convolve_launch.cuh"

#include <cstdint>

namespace {

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
