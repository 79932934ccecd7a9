/* block_kernels.cu: see the header. */
#include "block_fft.cuh"
#include "block_kernels.h"

extern "C" cudaError_t
cudafft_block_kernels_prepare(const CudafftBlockKernels *kernels)
{
  if (kernels->smem_bytes <= 48 * 1024)
    return cudaSuccess;
  int bytes = (int)kernels->smem_bytes;
  if (kernels->twiddles.plan_kind == cudafft::kPlanMixed) {
    int device = 0;
    cudaError_t error = cudaGetDevice(&device);
    if (error == cudaSuccess)
      error = cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (error != cudaSuccess)
      return error;
  }
  for (const void *entry : kernels->entries) {
    if (!entry)
      break;
    const cudaError_t error =
        cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}
