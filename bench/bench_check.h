/* bench_check.h: the benches' checks of CUDA runtime, cuFFT and cudafft calls (C and CUDA C++). A
 * bench has nothing to recover: a failed call prints where it was and exits 1. */
#ifndef CUDAFFT_BENCH_CHECK_H
#define CUDAFFT_BENCH_CHECK_H

#include <cudafft/fft.h>

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define CHECK_CUFFT(call)                                                                          \
  do {                                                                                             \
    const cufftResult r_ = (call);                                                                 \
    if (r_ != CUFFT_SUCCESS) {                                                                     \
      fprintf(stderr, "%s:%d: %s: cuFFT error %d\n", __FILE__, __LINE__, #call, (int)r_);          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define CHECK_OURS(call)                                                                           \
  do {                                                                                             \
    const CudafftStatus s_ = (call);                                                               \
    if (s_ != CUDAFFT_STATUS_OK) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, cudafft_status_name(s_),   \
              cudafft_last_error_message());                                                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#endif
