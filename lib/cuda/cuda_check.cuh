/* cuda_check.cuh: how the CUDA backends turn a failed CUDA call into a status and a message.
 * Internal to the library; for .cu files only. */
#ifndef CUDAFFT_CUDA_CHECK_CUH
#define CUDAFFT_CUDA_CHECK_CUH

#include "errors.h"

#include <cuda_runtime.h>

/* The status a CUDA error stands for, with the call, the place and CUDA's own words recorded for
 * cudafft_last_error_message(). A non-sticky error is cleared so that the caller's next CUDA call
 * is not blamed for it. */
static inline CudafftStatus
cudafft_cuda_failure(cudaError_t error, const char *call, const char *file, int line)
{
  CudafftStatus status = CUDAFFT_STATUS_CUDA_ERROR;
  switch (error) {
  case cudaErrorMemoryAllocation:
    status = CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY;
    break;
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorInvalidDevice:
  case cudaErrorDevicesUnavailable:
  case cudaErrorCallRequiresNewerDriver:
    status = CUDAFFT_STATUS_NO_DEVICE;
    break;
  default:
    break;
  }
  cudaGetLastError();
  return cudafft_fail(status, "%s failed (%s:%d): %s (%s)", call, file, line,
                      cudaGetErrorString(error), cudaGetErrorName(error));
}

/* Returns the status from the enclosing function when `call` fails. */
#define CUDAFFT_CHECK(call)                                                                        \
  do {                                                                                             \
    const cudaError_t cudafft_error_ = (call);                                                     \
    if (cudafft_error_ != cudaSuccess)                                                             \
      return cudafft_cuda_failure(cudafft_error_, #call, __FILE__, __LINE__);                      \
  } while (0)

/* Makes the context of device id `device` current on the calling thread: the device's primary
 * context for a device ordinal (as cudaSetDevice does), the application's context for an attached
 * context id (contexts.h); cudaErrorInvalidDevice for a context id that is not attached. Skips the
 * switch when that context is current already, since this runs on every call into a backend object
 * and small batches feel every microsecond. Defined in cuda_context.cu. */
extern "C" cudaError_t cudafft_use_device(int device);

/* The calling thread's current context (a CUcontext; NULL for none), and making one current: for
 * a call that must leave the caller's context as it found it. */
extern "C" cudaError_t cudafft_cuda_current_context(void **context);
extern "C" cudaError_t cudafft_cuda_set_context(void *context);

/* Whether ptr is page-locked host memory (cudaHostAlloc'd or registered), which copies reach by
 * DMA directly: the backends then skip their own pinned staging. */
static inline bool
cudafft_is_pinned(const void *ptr)
{
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

#endif
