/* host_memory.h: host memory for an engine object's backend: page-locked (cudaMallocHost) for the
 * CUDA backend, 64-byte aligned for the CPU backend. Internal to the library; the public functions
 * are cudafft_pinned_alloc()/free() (cudafft/common.h). */
#ifndef CUDAFFT_HOST_MEMORY_H
#define CUDAFFT_HOST_MEMORY_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* bytes > 0; HOST_OUT_OF_MEMORY with the size in the message, *ptr NULL, where it cannot be had.
 * device: the CUDA device of a CUDA-backend object. */
CudafftStatus cudafft_host_memory_alloc(CudafftBackend backend, int device, size_t bytes,
                                        void **ptr);
void cudafft_host_memory_free(CudafftBackend backend, void *ptr);

#ifdef __cplusplus
}
#endif

#endif
