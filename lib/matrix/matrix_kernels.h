/* matrix_kernels.h: the matrix convolution's CUDA kernels, for its CUDA backend (matrix_cuda.cu)
 * and the benchmark. Internal to the library; C++ (CUDA) callers only, but for the benchmark's C
 * entry at the end.
 *
 * Spectra of 2L-point real transforms are kept packed: L complex values, value 0 holding bin 0's
 * real part (re) and bin L's real part (im), both real for real signals; so every spectrum is L
 * values, a power of two, and a warp's loads along the bins are aligned. The delay line is
 * `cap` slots of `inputs` packed spectra (block b's in slot b % cap); a set of responses is its
 * non-empty entries' partitions, packed spectra back to back (entry e's partition p at
 * offset[e] + p), with each output's entries from first[j] to first[j + 1]. */
#ifndef CUDAFFT_MATRIX_KERNELS_H
#define CUDAFFT_MATRIX_KERNELS_H

#include <cudafft/common.h>

#include <stddef.h>

#ifdef __cplusplus
#include "matrix_values.h"

#include <cuda_runtime.h>
#include <type_traits>

/* matrix_values.h's formulas in the precision R. */
template <typename R>
__host__ __device__ inline R
matrix_tap(double h, size_t L)
{
  if constexpr (std::is_same_v<R, float>)
    return cudafft_matrix_tap_f32(h, L);
  else
    return cudafft_matrix_tap_f64(h, L);
}

template <typename R>
__host__ __device__ inline R
matrix_blend(R old_value, R new_value, size_t t, size_t L)
{
  if constexpr (std::is_same_v<R, float>)
    return cudafft_matrix_blend_f32(old_value, new_value, t, L);
  else
    return cudafft_matrix_blend_f64(old_value, new_value, t, L);
}

/* An entry as the kernels read it. */
typedef struct {
  unsigned input;
  unsigned parts;
  size_t offset; /* of its first partition, in spectra */
} MatrixDeviceEntry;

/* One set of responses on the device. */
typedef struct {
  const void *spectra;            /* packed spectra (float2 or double2) */
  const MatrixDeviceEntry *entry; /* by output, then input */
  const unsigned *first;          /* outputs + 1 */
  unsigned parts;                 /* the most of any entry */
} MatrixDeviceSet;

/* R is float (F32 streams) or double (F64). */
template <typename R> struct MatrixKernels {
  /* time[i][0..2L) = prev[i] then this block of input i (interleaved `inputs` channels in `in`,
   * NULL for zeros); prev[i] = this block. */
  static cudaError_t frame_inputs(const R *in, R *prev, R *time, unsigned inputs, size_t L,
                                  cudaStream_t stream);
  /* count spectra of L + 1 bins (cuFFT's R2C output) to packed spectra of L values. */
  static cudaError_t pack(const void *bins, void *packed, size_t count, size_t L,
                          cudaStream_t stream);
  /* The fused multiply-accumulate: for each of `sets` sets (1, or 2 during a crossover) and each
   * output j, partial[split][set * outputs + j] = the sum over j's entries and partitions in this
   * split of X[slot - p] H[p] (packed), splits of the partitions run side by side; then
   * bins[set * outputs + j] (L + 1 bins, cuFFT's C2R input) = the sum of the splits. */
  static cudaError_t accumulate(const void *fdl, size_t cap, size_t slot, unsigned inputs,
                                unsigned outputs, size_t L, const MatrixDeviceSet *sets,
                                unsigned set_count, unsigned splits, void *partial, void *bins,
                                cudaStream_t stream);
  /* out (L interleaved frames of `outputs` channels) = the second half of each output's inverse
   * transform (time: sets x outputs x 2L), crossed over from set 0 to set 1 where fade. */
  static cudaError_t emit(const R *time, R *out, unsigned outputs, size_t L, int fade,
                          cudaStream_t stream);
};

/* Splits of the partitions for `outputs` x L threads per set: enough blocks to fill a large GPU,
 * at most `parts`, at least 1. */
unsigned cudafft_matrix_splits(unsigned outputs, size_t L, unsigned parts);

extern "C" {
#endif

/* The benchmark's measure of the fused multiply-accumulate alone: a dense inputs x outputs matrix
 * of `parts` partitions at block size L, in F32 or F64 (format), on device `device`, run
 * `iterations` times after a warm-up; *seconds the mean time of one run (the kernel and its sum of
 * splits), *bytes the response spectra one run must read (its memory floor). */
CudafftStatus cudafft_matrix_kernel_time(int device, unsigned inputs, unsigned outputs, size_t L,
                                         unsigned parts, CudafftSampleFormat format,
                                         unsigned iterations, double *seconds, double *bytes);

#ifdef __cplusplus
}
#endif

#endif
