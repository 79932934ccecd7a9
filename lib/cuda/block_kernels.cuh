/* block_kernels.cuh: an engine's kernel table entry (block_kernels.h) from the block FFT's shape.
 * Internal to the library; for the kernels' .cu files. */
#ifndef CUDAFFT_BLOCK_KERNELS_CUH
#define CUDAFFT_BLOCK_KERNELS_CUH

#include "block_fft.cuh"
#include "block_kernels.h"
#include "mixed_fft.cuh"

/* Kernels that run block FFTs of N points by radix plan Kind, kPerBlock transforms a block. */
template <int N, int Kind>
CudafftBlockKernels
cudafft_block_kernels(const void *first, const void *second = nullptr)
{
  using S = cudafft::FftShape<N, Kind>;
  return {{first, second}, S::kBlockThreads, S::kPerBlock, S::kSmemBytes, {N, Kind}};
}

/* Threads a block of mixed-radix kernels aims for: as block_fft.cuh's kBlockThreadsAim, several
 * small transforms share a block; a transform of more threads has a block of its own. */
constexpr int kMixedBlockThreadsAim = 128;
/* The most threads such a block has: one transform's group at its largest. */
constexpr int kMixedMaxBlockThreads = cudafft::kMixedMaxGroupThreads > kMixedBlockThreadsAim
                                          ? cudafft::kMixedMaxGroupThreads
                                          : kMixedBlockThreadsAim;

/* Kernels that run mixed-radix block FFTs (mixed_fft.cuh) of n_complex points: each transform
 * mixed_group_threads() threads and its two buffers, as many transforms a block as make about
 * kMixedBlockThreadsAim threads. */
inline CudafftBlockKernels
cudafft_mixed_block_kernels(int n_complex, const void *first, const void *second = nullptr)
{
  const cudafft::MixedPlan plan = cudafft::mixed_plan(n_complex);
  const int threads = cudafft::mixed_group_threads(plan);
  const int per_block = threads >= kMixedBlockThreadsAim ? 1 : kMixedBlockThreadsAim / threads;
  const size_t smem = sizeof(float2) * 2 * (size_t)cudafft::mixed_buffer_points(n_complex);
  return {{first, second},
          threads * per_block,
          per_block,
          smem * per_block,
          {n_complex, cudafft::kPlanMixed}};
}

/* What a mixed-radix kernel takes besides its data: the plan and its group's threads. */
struct CudafftMixedArgs {
  cudafft::MixedPlan plan;
  int threads;
};

inline CudafftMixedArgs
cudafft_mixed_args(const CudafftBlockKernels *kernels)
{
  return {cudafft::mixed_plan(kernels->twiddles.n_complex),
          kernels->block_threads / kernels->per_block};
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
