/* global_memory.cuh: pointers into global memory that the kernels read from memory (a batch's job
 * descriptors) rather than take as kernel parameters. Internal to the library; .cu files only.
 *
 * Why: the compiler knows that a kernel's pointer parameters address global memory, but not where
 * a pointer loaded from memory points, so every access through one compiles to the generic form
 * (LD/ST/ATOM in SASS) instead of the global one (LDG/STG/RED): each generic access is resolved
 * at run time, may alias shared memory (so it is not moved across the kernels' shared-memory
 * traffic), and a generic float atomicAdd carries a compare-and-swap loop for the shared-memory
 * case beside the atomic, with the registers that loop needs. Descriptor pointers always address
 * global memory (device allocations), so the kernels say so once, where they read them. */
#ifndef CUDAFFT_GLOBAL_MEMORY_CUH
#define CUDAFFT_GLOBAL_MEMORY_CUH

#include <cuda_runtime.h>

namespace cudafft {

/* p, which must address global memory (NULL does not: the assumption would be false). */
template <typename T>
__device__ __forceinline__ T *
global(T *p)
{
  __builtin_assume(__isGlobal(p));
  return p;
}

} // namespace cudafft

#endif
