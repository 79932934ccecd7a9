/* cuda_host.cu: the CUDA runtime calls that the library's C code makes (cuda_host.h). */
#include "caller_context.cuh"
#include "cuda_check.cuh"
#include "cuda_host.h"
#include "device_memory.h"

#include <cstdio>

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

extern "C" void
cudafft_cuda_host_unavailable_reason(char *text, size_t size)
{
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  cudaGetLastError();
  int driver = 0, runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess)
    driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess)
    runtime = 0;
  cudaGetLastError();
  if (error == cudaSuccess && count > 0)
    snprintf(text, size, "%s", "");
  else if (error == cudaSuccess || error == cudaErrorNoDevice)
    snprintf(text, size, "no CUDA device found (the NVIDIA driver sees none)");
  else if (error == cudaErrorInsufficientDriver && driver == 0)
    snprintf(text, size, "no NVIDIA driver found (libcuda.so.1 is not installed)");
  else if (error == cudaErrorInsufficientDriver)
    snprintf(text, size,
             "the NVIDIA driver (for CUDA %d.%d) is older than this build's CUDA runtime (%d.%d)",
             driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  else
    snprintf(text, size, "CUDA cannot use a device: %s", cudaGetErrorString(error));
}

namespace {

CudafftStatus
read_free_memory(int device, size_t *free_bytes)
{
  size_t total = 0;
  CUDAFFT_CHECK(cudafft_use_device(device));
  CUDAFFT_CHECK(cudaMemGetInfo(free_bytes, &total));
  return CUDAFFT_STATUS_OK;
}

} // namespace

extern "C" CudafftStatus
cudafft_cuda_host_free_memory(int device, size_t *free_bytes)
{
  *free_bytes = 0;
  CudafftKeepCaller keep;
  return read_free_memory(device, free_bytes);
}

extern "C" void *
cudafft_cuda_host_pinned_alloc(size_t bytes)
{
  void *ptr = nullptr;
  CudafftKeepCaller keep; /* with no context current, the runtime would make one current */
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

extern "C" void
cudafft_cuda_host_pinned_free(void *ptr)
{
  CudafftKeepCaller keep;
  cudaFreeHost(ptr);
}

extern "C" CudafftStatus
cudafft_cuda_host_alloc(int device, size_t bytes, void **ptr)
{
  CudafftKeepCaller keep;
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

extern "C" CudafftStatus
cudafft_cuda_host_device_alloc(int device, size_t bytes, void **ptr)
{
  *ptr = nullptr;
  CudafftKeepCaller keep;
  CUDAFFT_CHECK(cudafft_use_device(device));
  return cudafft_device_alloc(ptr, bytes, "samples kept on the device");
}

extern "C" void
cudafft_cuda_host_device_free(int device, void *ptr)
{
  if (!ptr)
    return;
  CudafftKeepCaller keep;
  /* best effort, as every release: a device that failed has taken its memory with it */
  if (cudafft_use_device(device) == cudaSuccess)
    cudaFree(ptr);
  cudaGetLastError();
}

extern "C" CudafftStatus
cudafft_cuda_host_copy(int device, void *dst, const void *src, size_t bytes)
{
  if (bytes == 0)
    return CUDAFFT_STATUS_OK;
  CudafftKeepCaller keep;
  CUDAFFT_CHECK(cudafft_use_device(device));
  /* waited for on its stream: a device-to-device cudaMemcpy returns before it is done, and the
   * executor's streams (non-blocking) would not wait for it */
  CUDAFFT_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cudaStreamPerThread));
  CUDAFFT_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  return CUDAFFT_STATUS_OK;
}
