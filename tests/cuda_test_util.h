/* cuda_test_util.h: for test programs built only with the CUDA backend (tests/meson.build) that
 * call the CUDA runtime themselves (device buffers for the _device calls). */
#ifndef CUDAFFT_CUDA_TEST_UTIL_H
#define CUDAFFT_CUDA_TEST_UTIL_H

#include "test_util.h"

#include <cuda_runtime_api.h>

/* Reports a failed CUDA call as a failed check; successes pass silently (they are not checks). */
static inline int
cuda_ok(cudaError_t error, const char *what)
{
  return error == cudaSuccess || test_check(0, "%s: %s", what, cudaGetErrorString(error));
}

#endif
