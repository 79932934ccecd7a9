/* fft_kernels.h: the FFT engine's kernels (one thread block holds whole transforms): one per
 * transform kind and power-of-two size from CUDAFFT_FUSED_MIN_SIZE, and one per kind for every
 * other size (the mixed-radix FFT, its plan an argument); and how a call launches one. Internal to
 * the library; for .cu files only (CUDA types). */
#ifndef CUDAFFT_FFT_KERNELS_H
#define CUDAFFT_FFT_KERNELS_H

#include "block_kernels.cuh"
#include "kernel_launch.h"
#include "twiddles.h"

#include <cudafft/fft.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel for (kind, n), alone in its entries: the fused power-of-two kernel, or the kind's
 * mixed-radix kernel (twiddles.plan_kind kPlanMixed) whose block FFT has N = n points for C2C and
 * the real kinds of odd n (run as complex transforms), N = n / 2 for the real kinds of even n. NULL
 * when n is not a supported size. */
const CudafftBlockKernels *cudafft_fft_kernel(CudafftKind kind, size_t n);

/* The argument values every FFT kernel takes, in their order; padding zeroed, so that the launch
 * cache can compare them byte by byte. */
typedef struct {
  const void *in;
  void *out;
  int batch;
  float sign; /* the inverse runs as the forward transform of conjugates */
  float scale;
  const float2 *twiddles;
  CudafftMixedArgs mixed; /* the mixed-radix kernels' plan and group; zeroed for the others */
} CudafftFftArgs;

/* One launch of batch transforms over device memory in the layouts of cudafft/fft.h (in, out
 * 16-byte aligned), ready for cudafft_graph_run() or cudafft_launch_run(). launch and params point
 * into the struct itself: fill it in place with cudafft_fft_launch_init() and do not copy it. */
typedef struct {
  CudafftFftArgs args;
  void *params[7];
  CudafftLaunch launch;
} CudafftFftLaunch;

void cudafft_fft_launch_init(CudafftFftLaunch *launch, const CudafftKernel *resolved,
                             const CudafftBlockKernels *kernel, CudafftDirection direction,
                             const void *in, void *out, int batch, float scale,
                             const float2 *twiddles);

/* data[i] *= scale for count floats (the cuFFT fallback's normalisation). */
cudaError_t cudafft_scale_launch(float *data, size_t count, float scale, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
