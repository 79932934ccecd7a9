/* driver_entry.cuh: a CUDA driver function found through the runtime (cuda_context.cu's context
 * calls, kernel_launch.cu's cuLaunchKernel; the tests' and benchmarks' driver calls), so that
 * nothing links libcuda, which machines without the driver lack. Internal; for .cu files only. */
#ifndef CUDAFFT_DRIVER_ENTRY_CUH
#define CUDAFFT_DRIVER_ENTRY_CUH

#include <cuda_runtime_api.h>

/* The driver's `symbol` at the ABI of CUDA `version` (the number in its PFN_..._v<version> type)
 * into *entry, and what the lookup found into *found. cudaGetDriverEntryPointByVersion, which names
 * the version, came with CUDA 12.5; CUDA 12.0 to 12.4 have only cudaGetDriverEntryPoint, which
 * gives the symbol's newest ABI up to the runtime's own CUDA version. That is the same function
 * wherever `version` is the symbol's newest ABI as of CUDA 12.4, as for every symbol the library
 * asks for; a caller that wants a later ABI (cuCtxCreate's of 12.5) chooses by CUDART_VERSION
 * itself. */
static inline cudaError_t
cudafft_driver_entry(const char *symbol, unsigned version, void **entry,
                     cudaDriverEntryPointQueryResult *found)
{
#if CUDART_VERSION >= 12050
  return cudaGetDriverEntryPointByVersion(symbol, entry, version, cudaEnableDefault, found);
#else
  (void)version;
  return cudaGetDriverEntryPoint(symbol, entry, cudaEnableDefault, found);
#endif
}

#endif
