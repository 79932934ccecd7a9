/* errors.c: the statuses' names and the per-thread text of the last failure. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

CudafftStatus
cudafft_fail(CudafftStatus status, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  vsnprintf(last_error, sizeof last_error, format, args);
  va_end(args);
  return status;
}

const char *
cudafft_last_error_message(void)
{
  return last_error;
}

const char *
cudafft_status_name(CudafftStatus status)
{
  static const char *const names[CUDAFFT_STATUS_COUNT_] = {
      [CUDAFFT_STATUS_OK] = "ok",
      [CUDAFFT_STATUS_INVALID_SIZE] = "invalid transform size",
      [CUDAFFT_STATUS_INVALID_BATCH] = "invalid batch count",
      [CUDAFFT_STATUS_NULL_POINTER] = "NULL pointer",
      [CUDAFFT_STATUS_INVALID_VALUE] = "invalid argument",
      [CUDAFFT_STATUS_UNSUPPORTED] = "not supported by this backend",
      [CUDAFFT_STATUS_NO_DEVICE] = "no usable CUDA device",
      [CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY] = "out of GPU memory",
      [CUDAFFT_STATUS_HOST_OUT_OF_MEMORY] = "out of host memory",
      [CUDAFFT_STATUS_CUDA_ERROR] = "CUDA error",
      [CUDAFFT_STATUS_BACKEND_UNAVAILABLE] = "backend not built in",
      [CUDAFFT_STATUS_WRONG_DEVICE_MEMORY] = "memory of another device or context",
  };
  if ((unsigned)status >= CUDAFFT_STATUS_COUNT_)
    return "unknown status";
  return names[status];
}
