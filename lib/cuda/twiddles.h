/* twiddles.h: the twiddle tables the block FFT's device functions (block_fft.cuh) read, computed
 * on the host in double precision and rounded once, for every kernel of every engine. Internal to
 * the library. */
#ifndef CUDAFFT_TWIDDLES_H
#define CUDAFFT_TWIDDLES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Complex values in the table of a block FFT of n_complex points split by radix plan kind
 * plan_kind (block_fft.cuh's RadixPlanKind): the pass twiddles, then W_2N^k for k = 0..N/2, the
 * real transforms' post- and pre-processing. */
size_t cudafft_twiddle_count(int n_complex, int plan_kind);

/* Fills table (2 floats a value) with those values, in the order block_fft.cuh reads them. */
void cudafft_twiddle_table(int n_complex, int plan_kind, float *table);

#ifdef __cplusplus
}
#endif

#endif
