/* cufft_check.cuh: how the CUDA backends turn a failed cuFFT call into a status and a message, as
 * cuda_check.cuh does for the runtime's calls. Internal to the library; for .cu files only. */
#ifndef CUDAFFT_CUFFT_CHECK_CUH
#define CUDAFFT_CUFFT_CHECK_CUH

#include "errors.h"

#include <cufft.h>

/* cuFFT has no error strings of its own: the names of the results a backend can meet. */
static inline const char *
cudafft_cufft_result_name(cufftResult result)
{
  switch (result) {
  case CUFFT_INVALID_PLAN:
    return "CUFFT_INVALID_PLAN";
  case CUFFT_ALLOC_FAILED:
    return "CUFFT_ALLOC_FAILED";
  case CUFFT_INVALID_TYPE:
    return "CUFFT_INVALID_TYPE";
  case CUFFT_INVALID_VALUE:
    return "CUFFT_INVALID_VALUE";
  case CUFFT_INTERNAL_ERROR:
    return "CUFFT_INTERNAL_ERROR";
  case CUFFT_EXEC_FAILED:
    return "CUFFT_EXEC_FAILED";
  case CUFFT_SETUP_FAILED:
    return "CUFFT_SETUP_FAILED";
  case CUFFT_INVALID_SIZE:
    return "CUFFT_INVALID_SIZE";
  case CUFFT_INVALID_DEVICE:
    return "CUFFT_INVALID_DEVICE";
  case CUFFT_NO_WORKSPACE:
    return "CUFFT_NO_WORKSPACE";
  case CUFFT_NOT_SUPPORTED:
    return "CUFFT_NOT_SUPPORTED";
  default:
    return "another cuFFT error";
  }
}

/* The status a cuFFT failure stands for, with the call, the place and the result recorded for
 * cudafft_last_error_message(). */
static inline CudafftStatus
cudafft_cufft_failure(cufftResult result, const char *call, const char *file, int line)
{
  CudafftStatus status = CUDAFFT_STATUS_CUDA_ERROR;
  if (result == CUFFT_ALLOC_FAILED)
    status = CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY;
  else if (result == CUFFT_INVALID_SIZE || result == CUFFT_NOT_SUPPORTED)
    status = CUDAFFT_STATUS_UNSUPPORTED;
  return cudafft_fail(status, "%s failed (%s:%d): cuFFT error %d (%s)", call, file, line,
                      (int)result, cudafft_cufft_result_name(result));
}

/* Returns the status from the enclosing function when the cuFFT call `call` fails. */
#define CUDAFFT_CHECK_CUFFT(call)                                                                  \
  do {                                                                                             \
    const cufftResult cudafft_cufft_result_ = (call);                                              \
    if (cudafft_cufft_result_ != CUFFT_SUCCESS)                                                    \
      return cudafft_cufft_failure(cudafft_cufft_result_, #call, __FILE__, __LINE__);              \
  } while (0)

#endif
