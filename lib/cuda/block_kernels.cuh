/* block_kernels.cuh: an engine's kernel table entry (block_kernels.h) from the block FFT's shape.
 * Internal to the library; for the kernels' .cu files. */
#ifndef CUDAFFT_BLOCK_KERNELS_CUH
#define CUDAFFT_BLOCK_KERNELS_CUH

#include "block_fft.cuh"
#include "block_kernels.h"

/* Kernels that run block FFTs of N points by radix plan Kind, kPerBlock transforms a block. */
template <int N, int Kind>
CudafftBlockKernels
cudafft_block_kernels(const void *first, const void *second = nullptr)
{
  using S = cudafft::FftShape<N, Kind>;
  return {{first, second}, S::kBlockThreads, S::kPerBlock, S::kSmemBytes, {N, Kind}};
}

/* Queues `groups` groups of `group` transforms each (a frame's channels, an FFT's spectra) in
 * launches of at most CUDAFFT_MAX_LAUNCH_TRANSFORMS transforms (and at least one group) that start
 * at whole groups, so that each launch's transforms are group-major too: launch(first, transforms,
 * grid) queues groups first.. as its `transforms` transforms, on `grid` thread blocks of
 * kernels. Returns the first launch's error. */
template <typename Launch>
cudaError_t
cudafft_block_launches(const CudafftBlockKernels *kernels, size_t groups, size_t group,
                       Launch &&launch)
{
  const size_t most = CUDAFFT_MAX_LAUNCH_TRANSFORMS / group;
  const size_t per_launch = most > 0 ? most : 1;
  for (size_t first = 0; first < groups; first += per_launch) {
    const size_t count = groups - first < per_launch ? groups - first : per_launch;
    const int transforms = (int)(count * group);
    launch(first, transforms,
           dim3((unsigned)((transforms + kernels->per_block - 1) / kernels->per_block)));
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}

#endif
