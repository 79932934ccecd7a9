/* block_kernels.cu: see the header. */
#include "block_kernels.h"

extern "C" cudaError_t
cudafft_block_kernels_prepare(const CudafftBlockKernels *kernels)
{
  if (kernels->smem_bytes <= 48 * 1024)
    return cudaSuccess;
  for (const void *entry : kernels->entries) {
    if (!entry)
      break;
    const cudaError_t error = cudaFuncSetAttribute(
        entry, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kernels->smem_bytes);
    if (error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}
