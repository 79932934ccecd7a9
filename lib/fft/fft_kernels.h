/* fft_kernels.h: the FFT engine's kernels (one thread block holds whole transforms), one per
 * transform kind and size, and how a call launches one. Internal to the library (it speaks CUDA
 * types). */
#ifndef CUDAFFT_FFT_KERNELS_H
#define CUDAFFT_FFT_KERNELS_H

#include "kernel_launch.h"

#include <cudafft/fft.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel of one (kind, size). */
typedef struct {
  const void *entry; /* the kernel's host-side entry */
  int block_threads; /* threads per block */
  int per_block;     /* transforms per block */
  size_t smem_bytes; /* dynamic shared memory per block */
} CudafftFftKernel;

/* The kernel for (kind, n); 0 when there is none (n not a listed size). */
int cudafft_fft_kernel(CudafftKind kind, size_t n, CudafftFftKernel *kernel);

/* Raises the kernel's dynamic shared-memory limit where it needs more than the default 48 KB; call
 * once per device before the first launch. */
cudaError_t cudafft_fft_kernel_prepare(const CudafftFftKernel *kernel);

/* The kernel's twiddle table for (kind, n): how many complex values, and the values themselves,
 * to be copied to the device (twiddles.h). */
size_t cudafft_fft_twiddle_count(CudafftKind kind, size_t n);
void cudafft_fft_twiddles(CudafftKind kind, size_t n, float *table);

/* The argument values every FFT kernel takes, in their order; padding zeroed, so that the launch
 * cache can compare them byte by byte. */
typedef struct {
  const void *in;
  void *out;
  int batch;
  float sign; /* the inverse runs as the forward transform of conjugates */
  float scale;
  const float2 *twiddles;
} CudafftFftArgs;

/* One launch of batch transforms over device memory in the layouts of cudafft/fft.h (in, out
 * 16-byte aligned), ready for cudafft_graph_run() or cudafft_launch_run(). launch and params point
 * into the struct itself: fill it in place with cudafft_fft_launch_init() and do not copy it. */
typedef struct {
  CudafftFftArgs args;
  void *params[6];
  CudafftLaunch launch;
} CudafftFftLaunch;

void cudafft_fft_launch_init(CudafftFftLaunch *launch, const CudafftKernel *resolved,
                             const CudafftFftKernel *kernel, CudafftDirection direction,
                             const void *in, void *out, int batch, float scale,
                             const float2 *twiddles);

/* data[i] *= scale for count floats (the cuFFT fallback's normalisation). */
cudaError_t cudafft_scale_launch(float *data, size_t count, float scale, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
