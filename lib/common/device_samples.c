/* device_samples.c: see the header. */
#include "device_samples.h"

#include "cudafft_config.h"
#include "cuda_host.h"
#include "errors.h"

CudafftStatus
cudafft_device_samples_alloc(int device, size_t bytes, void **ptr)
{
#if CUDAFFT_HAVE_CUDA
  return cudafft_cuda_host_device_alloc(device, bytes, ptr);
#else
  (void)device;
  *ptr = NULL;
  return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                      "cannot allocate %zu bytes of device memory: "
                      "this build has no CUDA backend",
                      bytes);
#endif
}

void
cudafft_device_samples_free(int device, void *ptr)
{
#if CUDAFFT_HAVE_CUDA
  cudafft_cuda_host_device_free(device, ptr);
#else
  (void)device;
  (void)ptr;
#endif
}

CudafftStatus
cudafft_device_samples_check_flags(unsigned on_device, CudafftBackend backend, const char *name)
{
  if (on_device & ~(unsigned)(CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: unknown memory flags 0x%x", name,
                        on_device);
  if (on_device && backend != CUDAFFT_BACKEND_CUDA)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED, "%s: the CPU backend has no device memory",
                        name);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_device_samples_copy(int device, void *dst, const void *src, size_t bytes)
{
#if CUDAFFT_HAVE_CUDA
  return cudafft_cuda_host_copy(device, dst, src, bytes);
#else
  (void)device;
  (void)dst;
  (void)src;
  return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                      "cannot copy %zu bytes of device memory: this "
                      "build has no CUDA backend",
                      bytes);
#endif
}
