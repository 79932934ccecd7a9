/* device_memory.cu: see the header. */
#include "cuda_check.cuh"
#include "device_memory.h"
#include "size_math.h"

#include <cstdio>

namespace {

/* The status and message of a failed allocation: the sizes for want of memory, else CUDA's own
 * words. */
CudafftStatus
allocation_failure(cudaError_t error, const char *call, CudafftStatus out_of_memory, size_t bytes,
                   const char *memory, const char *what)
{
  if (error != cudaErrorMemoryAllocation)
    return cudafft_cuda_failure(error, call, __FILE__, __LINE__);
  cudaGetLastError();
  return cudafft_fail(out_of_memory, "cannot allocate %zu MB of %s for %s", megabytes(bytes),
                      memory, what);
}

} // namespace

extern "C" CudafftStatus
cudafft_device_alloc(void **ptr, size_t bytes, const char *what)
{
  const cudaError_t error = cudaMalloc(ptr, bytes > 0 ? bytes : 1);
  if (error == cudaSuccess)
    return CUDAFFT_STATUS_OK;
  *ptr = nullptr;
  int device = 0;
  char memory[32];
  snprintf(memory, sizeof memory, "GPU %d memory",
           cudaGetDevice(&device) == cudaSuccess ? device : -1);
  return allocation_failure(error, "cudaMalloc", CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY, bytes, memory,
                            what);
}

extern "C" CudafftStatus
cudafft_pinned_host_alloc(void **ptr, size_t bytes, const char *what)
{
  const cudaError_t error = cudaMallocHost(ptr, bytes > 0 ? bytes : 1);
  if (error == cudaSuccess)
    return CUDAFFT_STATUS_OK;
  *ptr = nullptr;
  return allocation_failure(error, "cudaMallocHost", CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, bytes,
                            "pinned host memory", what);
}

extern "C" CudafftStatus
cudafft_device_copy(void **ptr, const void *host, size_t bytes, const char *what,
                    cudaStream_t stream)
{
  const CudafftStatus status = cudafft_device_alloc(ptr, bytes, what);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  cudaError_t error = cudaMemcpyAsync(*ptr, host, bytes, cudaMemcpyHostToDevice, stream);
  if (error == cudaSuccess)
    error = cudaStreamSynchronize(stream);
  if (error == cudaSuccess)
    return CUDAFFT_STATUS_OK;
  cudaFree(*ptr);
  *ptr = nullptr;
  char call[128];
  snprintf(call, sizeof call, "copying %s to the device", what);
  return cudafft_cuda_failure(error, call, __FILE__, __LINE__);
}
