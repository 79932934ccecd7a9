/* executor_test_kind.h: kinds of work with real CUDA kernels for tests/test_executor_cuda.c, built
 * the way the engines' kinds will be: per-job descriptors and a map from each work unit (a block
 * of 256 floats) to its job in the batch's auxiliary data, one launch for every job of a batch, and
 * per-owner state in the executor's device memory.
 *
 * The affine kind: job j of an owner, with n = in_bytes / 4 = out_bytes / 4 floats, writes
 *     out[i] = a * in[i] + offset + count,
 * count being the number of the owner's jobs run since its last reset job (a reset job reads 0),
 * and then counts itself. So every output tells whether the owner's earlier jobs ran, in order,
 * and in earlier batches (two jobs of one owner in one batch would read the same count). A job
 * with no state (state NULL) reads 0 and counts nothing. */
#ifndef CUDAFFT_EXECUTOR_TEST_KIND_H
#define CUDAFFT_EXECUTOR_TEST_KIND_H

#include "executor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  CudafftJob job; /* first: the kinds cast the CudafftJob pointers back */
  float *state;   /* the owner's count: one float of executor memory, or NULL */
  float a, offset;
  int reset; /* the job counts from 0 */
} AffineJob;

/* Floats of work per unit (and threads per block). */
#define AFFINE_UNIT 256

extern const CudafftWorkKind executor_test_affine_kind;

/* Launches with more threads a block than any GPU has: cudaErrorInvalidConfiguration, an error
 * that is not sticky (later work runs). Jobs as the affine kind's. */
extern const CudafftWorkKind executor_test_bad_launch_kind;

/* The affine kind's auxiliary bytes for one job of n floats alone. */
size_t executor_test_affine_aux_bytes(size_t n);

#ifdef __cplusplus
}
#endif

#endif
