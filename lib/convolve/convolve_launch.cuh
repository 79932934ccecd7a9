/* convolve_launch.cuh: the batched launch that every convolution kernel file uses: one thread
 * block per work unit (convolve_kernels.h). */
#ifndef CUDAFFT_CONVOLVE_LAUNCH_CUH
#define CUDAFFT_CONVOLVE_LAUNCH_CUH

#include <climits>
#include <cstddef>
#include <cuda_runtime.h>

namespace {

/* The element-wise kernels' thread block (deinterleave, fill, the split and F64 paths' flat steps).
 */
constexpr int kFlatThreads = 256;

/* A batched launch's grid: one thread block per unit, within int (and so the grid's x limit). */
bool
launchable(size_t units)
{
  return units <= (size_t)INT_MAX;
}

/* A batched launch: `count` units, one thread block of `threads` each; nothing for none. */
template <typename... Params, typename... Args>
cudaError_t
launch_units(void (*kernel)(Params...), size_t count, int threads, cudaStream_t stream,
             Args... args)
{
  if (!launchable(count))
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;
  kernel<<<(unsigned)count, threads, 0, stream>>>(args...);
  return cudaGetLastError();
}

} // namespace

#endif
