/* fft_launch.h: the engine's kernels, chosen by transform kind, size and variant. Internal to
 * kernels/ (it speaks CUDA types). */
#ifndef CUDAFFT_FFT_LAUNCH_H
#define CUDAFFT_FFT_LAUNCH_H

#include "cudafft.h"

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The variants of every kernel (see RadixPlanKind in fft_kernels.cuh). */
typedef enum {
  CUDAFFT_VARIANT_WIDE = 0,     /* 16 points per thread, radix 16, twiddles read from the table */
  CUDAFFT_VARIANT_PAIRS = 1,    /* 16 points per thread, radix 8 at the ends: 16-byte accesses */
  CUDAFFT_VARIANT_NARROW = 2,   /* 8 points per thread, twice the threads per transform */
  CUDAFFT_VARIANT_PRODUCTS = 3, /* wide, twiddles made from 4 rows a pass: the plans' choice */
  CUDAFFT_VARIANT_COUNT = 4
} CudafftVariant;

typedef struct {
  int block_threads; /* threads per block */
  int per_block;     /* transforms per block */
  size_t smem_bytes; /* dynamic shared memory per block */
} CudafftKernelShape;

/* Shape of the kernel for (kind, n, variant); 0 when there is none. */
int cudafft_kernel_shape(CudafftKind kind, size_t n, CudafftVariant variant,
                         CudafftKernelShape *shape);

/* Raises the kernel's dynamic shared-memory limit where it needs more than the default 48 KB; call
 * once per device before the first launch. */
cudaError_t cudafft_kernel_prepare(CudafftKind kind, size_t n, CudafftVariant variant);

/* The variant's twiddle table for (kind, n): how many complex values, and the values themselves
 * (computed in double precision, rounded once), to be copied to the device. */
size_t cudafft_kernel_twiddle_count(CudafftKind kind, size_t n, CudafftVariant variant);
void cudafft_kernel_twiddles(CudafftKind kind, size_t n, CudafftVariant variant, float *table);

/* Which table the variant reads: variants of one (kind, n) with the same id read equal tables, so
 * that one upload serves them (wide and products follow the same radix plan). -1 for none. */
int cudafft_kernel_table_id(CudafftKind kind, size_t n, CudafftVariant variant);

/* Queues batch transforms on stream. in, out: 16-byte aligned device memory in the layouts of
 * cudafft.h. twiddles: the device copy of the variant's table. */
cudaError_t cudafft_kernel_launch(CudafftKind kind, size_t n, CudafftVariant variant,
                                  CudafftDirection direction, const void *in, void *out, int batch,
                                  float scale, const float2 *twiddles, cudaStream_t stream);

/* Thread blocks of a launch of batch transforms. */
static inline unsigned
cudafft_kernel_blocks(const CudafftKernelShape *shape, int batch)
{
  return (unsigned)((batch + shape->per_block - 1) / shape->per_block);
}

/* The kernels' sign argument: the inverse runs as the forward transform of conjugates. */
static inline float
cudafft_direction_sign(CudafftDirection direction)
{
  return direction == CUDAFFT_INVERSE ? -1.0f : 1.0f;
}

/* The values of an engine kernel's parameters, in their order (in, out, batch, sign, scale,
 * twiddles), and params pointing at each, as cuLaunchKernel and graph kernel nodes take them.
 * params points into the struct itself: fill it in place with cudafft_kernel_args() and do not
 * copy it. */
typedef struct {
  const void *in;
  void *out;
  int batch;
  float sign, scale;
  const float2 *twiddles;
  void *params[6];
} CudafftKernelArgs;

static inline void
cudafft_kernel_args(CudafftKernelArgs *args, CudafftDirection direction, const void *in, void *out,
                    int batch, float scale, const float2 *twiddles)
{
  args->in = in;
  args->out = out;
  args->batch = batch;
  args->sign = cudafft_direction_sign(direction);
  args->scale = scale;
  args->twiddles = twiddles;
  args->params[0] = &args->in;
  args->params[1] = &args->out;
  args->params[2] = &args->batch;
  args->params[3] = &args->sign;
  args->params[4] = &args->scale;
  args->params[5] = &args->twiddles;
}

/* A kernel resolved on one device, for cudafft_kernel_run() and fft_graph.h. */
typedef struct {
  cudaFunction_t function; /* the kernel in the context of the device current at resolve time */
  const void *entry;       /* the kernel's host-side entry, as the runtime and graph APIs take it */
  void *driver_launch;     /* the driver's cuLaunchKernel */
  CudafftKernelShape shape;
} CudafftKernel;

/* Resolves the kernel for (kind, n, variant) on the current device. */
cudaError_t cudafft_kernel_resolve(CudafftKind kind, size_t n, CudafftVariant variant,
                                   CudafftKernel *kernel);

/* Queues what cudafft_kernel_launch() queues, through the driver's cuLaunchKernel with the
 * resolved function: the runtime's launch looks the function up behind its host stub on every
 * call, which small batches feel. The kernel's device must be current. */
cudaError_t cudafft_kernel_run(const CudafftKernel *kernel, CudafftDirection direction,
                               const void *in, void *out, int batch, float scale,
                               const float2 *twiddles, cudaStream_t stream);

/* data[i] *= scale for count floats (the cuFFT fallback's normalisation). */
cudaError_t cudafft_scale_launch(float *data, size_t count, float scale, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
