/* device_memory.h: the CUDA backends' allocations, whose failures say how much was wanted and for
 * what: device memory, pinned host memory, and a device copy of host data. Internal to the library
 * (it speaks CUDA types). All of them work on the current device. */
#ifndef CUDAFFT_DEVICE_MEMORY_H
#define CUDAFFT_DEVICE_MEMORY_H

#include <cudafft/common.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cudaMalloc of bytes (at least 1). Out of memory: DEVICE_OUT_OF_MEMORY, "cannot allocate N MB of
 * GPU d memory for <what>"; any other failure as CUDAFFT_CHECK reports it. *ptr is NULL on
 * failure. */
CudafftStatus cudafft_device_alloc(void **ptr, size_t bytes, const char *what);

/* cudaMallocHost of bytes (at least 1), the same way: HOST_OUT_OF_MEMORY where there is none. */
CudafftStatus cudafft_pinned_host_alloc(void **ptr, size_t bytes, const char *what);

/* A fresh device buffer (cudafft_device_alloc) holding a copy of bytes of host data, copied on
 * stream and waited for, so that the host data may be freed at once (and the copy is ordered
 * before work queued on any stream afterwards). On failure nothing is left allocated: *ptr is
 * NULL. */
CudafftStatus cudafft_device_copy(void **ptr, const void *host, size_t bytes, const char *what,
                                  cudaStream_t stream);

#ifdef __cplusplus
}

#include <initializer_list>

/* cudaFree of each buffer (NULL ones included, which CUDA takes as nothing to do), best effort:
 * for releasing an object after any failure. */
static inline void
cudafft_device_free(std::initializer_list<void *> buffers)
{
  for (void *buffer : buffers)
    cudaFree(buffer);
}
#endif

#endif
