/* driver_errors.cuh: the runtime error a CUDA driver error stands for, for the library's few
 * driver calls (kernel_launch.cu's cuLaunchKernel, cuda_context.cu's context calls), so that their
 * failures become statuses and messages through cuda_check.cuh like every runtime call's. Internal
 * to the library; for .cu files only. */
#ifndef CUDAFFT_DRIVER_ERRORS_CUH
#define CUDAFFT_DRIVER_ERRORS_CUH

#include <cuda.h>
#include <cuda_runtime.h>

/* The codes of the two enums are not promised to agree: the errors these calls meet, mapped one
 * by one, and `otherwise` for the rest (the caller's best word: a launch failure for a launch). */
static inline cudaError_t
cudafft_runtime_error_of(CUresult result, cudaError_t otherwise)
{
  switch (result) {
  case CUDA_SUCCESS:
    return cudaSuccess;
  case CUDA_ERROR_INVALID_VALUE:
    return cudaErrorInvalidValue;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return cudaErrorMemoryAllocation;
  case CUDA_ERROR_NOT_INITIALIZED:
    return cudaErrorInitializationError;
  case CUDA_ERROR_DEINITIALIZED:
    return cudaErrorCudartUnloading;
  case CUDA_ERROR_NO_DEVICE:
    return cudaErrorNoDevice;
  case CUDA_ERROR_INVALID_DEVICE:
    return cudaErrorInvalidDevice;
  case CUDA_ERROR_INVALID_HANDLE:
    return cudaErrorInvalidResourceHandle;
  case CUDA_ERROR_INVALID_CONTEXT:
    return cudaErrorDeviceUninitialized;
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    return cudaErrorContextIsDestroyed;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return cudaErrorLaunchOutOfResources;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return cudaErrorIllegalAddress;
  case CUDA_ERROR_LAUNCH_FAILED:
    return cudaErrorLaunchFailure;
  default:
    return otherwise;
  }
}

#endif
