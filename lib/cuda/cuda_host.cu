/* cuda_host.cu: the CUDA runtime calls that the library's C code makes (cuda_host.h). */
#include "cuda_check.cuh"
#include "cuda_host.h"

extern "C" int
cudafft_cuda_host_device_count(void)
{
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

extern "C" void *
cudafft_cuda_host_pinned_alloc(size_t bytes)
{
  void *ptr = nullptr;
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

extern "C" void
cudafft_cuda_host_pinned_free(void *ptr)
{
  cudaFreeHost(ptr);
}

extern "C" CudafftStatus
cudafft_cuda_host_alloc(int device, size_t bytes, void **ptr)
{
  CUDAFFT_CHECK(cudafft_use_device(device));
  const cudaError_t error = cudaMallocHost(ptr, bytes);
  if (error != cudaSuccess) {
    *ptr = nullptr;
    cudaGetLastError();
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cudaMallocHost(%zu bytes): %s", bytes,
                        cudaGetErrorString(error));
  }
  return CUDAFFT_STATUS_OK;
}
