/* twiddles.h: the twiddle tables the block FFT's device functions (block_fft.cuh) read, computed
 * on the host in double precision and rounded once, for every kernel of every engine, and put on
 * the device. Internal to the library (it speaks CUDA types). */
#ifndef CUDAFFT_TWIDDLES_H
#define CUDAFFT_TWIDDLES_H

#include <cudafft/common.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Complex values in the table of a block FFT of n_complex points split by radix plan kind
 * plan_kind (block_fft.cuh's RadixPlanKind; kPlanMixed: mixed_fft.cuh's plan of n_complex, a
 * 2^a 3^b 5^c 7^d): the pass twiddles, then W_2N^k for k = 0..N/2, the real transforms' post- and
 * pre-processing. */
size_t cudafft_twiddle_count(int n_complex, int plan_kind);

/* Fills table (2 floats a value) with those values, in the order block_fft.cuh reads them. */
void cudafft_twiddle_table(int n_complex, int plan_kind, float *table);

/* One block FFT whose table a kernel reads. */
typedef struct {
  int n_complex, plan_kind;
} CudafftTwiddlePlan;

/* Complex values in the tables of plans[0..count-1]. */
size_t cudafft_twiddles_count(const CudafftTwiddlePlan *plans, int count);

/* The tables of plans[0..count-1], one after another (a kernel that runs two plans reads the
 * second's table behind the first's), computed on the host and copied into a fresh device buffer
 * on stream (cudafft_device_copy: waited for; *table NULL on failure). */
CudafftStatus cudafft_twiddles_upload(const CudafftTwiddlePlan *plans, int count,
                                      cudaStream_t stream, float2 **table);

#ifdef __cplusplus
}
#endif

#endif
