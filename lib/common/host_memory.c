/* host_memory.c: host buffers for fast copies, page-locked where a CUDA device can have them. */
#define _POSIX_C_SOURCE 200809L

#include "host_memory.h"

#include "cudafft_config.h"
#include "cuda_host.h"
#include "errors.h"

#include <stdlib.h>

/* 64 bytes: a cache line, and enough for any SIMD width FFTW uses. */
#define HOST_ALIGNMENT 64

void *
cudafft_pinned_alloc(size_t bytes, int want_pinned, int *pinned)
{
  void *ptr = NULL;
  if (pinned)
    *pinned = 0;
  if (bytes == 0)
    bytes = 1;
#if CUDAFFT_HAVE_CUDA
  if (want_pinned && cudafft_cuda_host_device_count() > 0)
    ptr = cudafft_cuda_host_pinned_alloc(bytes);
  if (ptr) {
    if (pinned)
      *pinned = 1;
    return ptr;
  }
#else
  (void)want_pinned;
#endif
  return posix_memalign(&ptr, HOST_ALIGNMENT, bytes) == 0 ? ptr : NULL;
}

void
cudafft_pinned_free(void *ptr, int pinned)
{
#if CUDAFFT_HAVE_CUDA
  if (pinned) {
    cudafft_cuda_host_pinned_free(ptr);
    return;
  }
#else
  (void)pinned;
#endif
  free(ptr);
}

CudafftStatus
cudafft_host_memory_alloc(CudafftBackend backend, int device, size_t bytes, void **ptr)
{
#if CUDAFFT_HAVE_CUDA
  if (backend == CUDAFFT_BACKEND_CUDA)
    return cudafft_cuda_host_alloc(device, bytes, ptr);
#else
  (void)backend;
  (void)device;
#endif
  if (posix_memalign(ptr, HOST_ALIGNMENT, bytes) != 0) {
    *ptr = NULL;
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate %zu bytes of host memory", bytes);
  }
  return CUDAFFT_STATUS_OK;
}

void
cudafft_host_memory_free(CudafftBackend backend, void *ptr)
{
  cudafft_pinned_free(ptr, backend == CUDAFFT_BACKEND_CUDA);
}
