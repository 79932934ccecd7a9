/* block_kernels.h: the launch shape of kernels whose thread blocks each hold whole block FFTs of
 * one size (block_fft.cuh's FftShape), as every engine's kernel table lists them for each size.
 * Internal to the library (it speaks CUDA types). */
#ifndef CUDAFFT_BLOCK_KERNELS_H
#define CUDAFFT_BLOCK_KERNELS_H

#include "twiddles.h"

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Transforms per launch of such a kernel, which keeps every index in int range. */
#define CUDAFFT_MAX_LAUNCH_TRANSFORMS ((size_t)1 << 20)

/* The kernels an engine launches for one size, all of one shape: an FFT kind's; the STFT's
 * analysis and synthesis; the spectrum's without and with phases. Kernels of the mixed-radix FFT
 * (twiddles.plan_kind kPlanMixed: mixed_fft.cuh) serve every size, with its plan as an argument;
 * a transform's threads are block_threads / per_block. */
typedef struct {
  const void *entries[2];      /* the kernels' host-side entries; NULL past the last */
  int block_threads;           /* threads per block */
  int per_block;               /* transforms per block */
  size_t smem_bytes;           /* dynamic shared memory per block */
  CudafftTwiddlePlan twiddles; /* the block FFT whose twiddle table they read */
} CudafftBlockKernels;

/* Lets every one of the kernels launch with smem_bytes on the current device: a kernel must opt in
 * to more than the default 48 KB, once per device before its first launch. Mixed-radix kernels,
 * which serve every size, opt in to the device's most (the attribute is the kernel's, not the
 * size's: objects of different sizes must not lower it under one another). */
cudaError_t cudafft_block_kernels_prepare(const CudafftBlockKernels *kernels);

#ifdef __cplusplus
}
#endif

#endif
