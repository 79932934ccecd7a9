/* kernel_launch.cu: the driver launch and the per-object cache of one-kernel CUDA graphs
 * (kernel_launch.h). */
#include "kernel_launch.h"

#include "driver_entry.cuh"
#include "driver_errors.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <cstring>

namespace {

/* The driver's cuLaunchKernel, looked up by the first kernel that finds it and kept for the
 * process; a failed lookup is not kept, so that the next one asks again. Kernels may be resolved
 * on several threads at once: both would find the same entry. */
cudaError_t
driver_launch_entry(void **entry)
{
  static std::atomic<void *> kept{nullptr};
  *entry = kept.load(std::memory_order_acquire);
  if (*entry)
    return cudaSuccess;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t error = cudafft_driver_entry("cuLaunchKernel", 4000, entry, &found);
  if (error == cudaSuccess && found != cudaDriverEntryPointSuccess)
    error = cudaErrorSymbolNotFound;
  if (error == cudaSuccess)
    kept.store(*entry, std::memory_order_release);
  return error;
}

CudafftGraphKey
key_of(const CudafftLaunch &launch)
{
  CudafftGraphKey key = {};
  key.kernel = launch.kernel;
  key.grid = launch.grid;
  key.block = launch.block;
  key.smem = launch.smem;
  memcpy(key.args, launch.args, launch.args_bytes);
  key.args_bytes = launch.args_bytes;
  return key;
}

bool
same_key(const CudafftGraphKey &a, const CudafftGraphKey &b)
{
  return a.kernel == b.kernel && a.grid == b.grid && a.block == b.block && a.smem == b.smem &&
         a.args_bytes == b.args_bytes && memcmp(a.args, b.args, a.args_bytes) == 0;
}

/* The kernel node's parameters for a launch. The graph API copies the argument values that
 * kernelParams points at, so this need only outlive the call that takes it. */
cudaKernelNodeParams
node_params(const CudafftLaunch &launch)
{
  cudaKernelNodeParams params = {};
  params.func = const_cast<void *>(launch.kernel->entry);
  params.gridDim = dim3(launch.grid);
  params.blockDim = dim3(launch.block);
  params.sharedMemBytes = launch.smem;
  params.kernelParams = launch.params;
  return params;
}

void
release(CudafftGraphEntry &entry)
{
  if (entry.exec)
    cudaGraphExecDestroy(entry.exec);
  if (entry.graph)
    cudaGraphDestroy(entry.graph);
  entry = CudafftGraphEntry{};
}

/* Makes entry a graph of one kernel node for the launch. */
cudaError_t
build(CudafftGraphEntry &entry, const CudafftLaunch &launch, const CudafftGraphKey &key)
{
  const cudaKernelNodeParams params = node_params(launch);
  cudaError_t error = cudaGraphCreate(&entry.graph, 0);
  if (error == cudaSuccess)
    error = cudaGraphAddKernelNode(&entry.node, entry.graph, nullptr, 0, &params);
  if (error == cudaSuccess)
    error = cudaGraphInstantiate(&entry.exec, entry.graph, 0);
  if (error != cudaSuccess) {
    release(entry);
    return error;
  }
  entry.key = key;
  return cudaSuccess;
}

/* Points entry's kernel node at the launch's arguments; the launches already queued keep theirs. */
cudaError_t
update(CudafftGraphEntry &entry, const CudafftLaunch &launch, const CudafftGraphKey &key)
{
  const cudaKernelNodeParams params = node_params(launch);
  const cudaError_t error = cudaGraphExecKernelNodeSetParams(entry.exec, entry.node, &params);
  if (error != cudaSuccess)
    return error;
  /* the graph itself keeps the node's first arguments: an entry is only ever launched through
   * its exec, so they need not follow */
  entry.key = key;
  return cudaSuccess;
}

/* The entry for the launch: a match, else an unused entry made for it, else the least recently
 * used one updated to it. */
cudaError_t
entry_for(CudafftGraphCache *cache, const CudafftLaunch &launch, CudafftGraphEntry **found)
{
  const CudafftGraphKey key = key_of(launch);
  CudafftGraphEntry *oldest = nullptr, *unused = nullptr;
  for (CudafftGraphEntry &entry : cache->entries) {
    if (!entry.exec) {
      unused = unused ? unused : &entry;
      continue;
    }
    if (same_key(entry.key, key)) {
      *found = &entry;
      return cudaSuccess;
    }
    if (!oldest || entry.used < oldest->used)
      oldest = &entry;
  }
  cudaError_t error;
  if (unused) {
    error = build(*unused, launch, key);
    *found = unused;
  } else {
    error = update(*oldest, launch, key);
    if (error != cudaSuccess) { /* an update the exec refuses: start that entry over */
      release(*oldest);
      cudaGetLastError();
      error = build(*oldest, launch, key);
    }
    *found = oldest;
  }
  return error;
}

} // namespace

extern "C" cudaError_t
cudafft_kernel_resolve(const void *entry, CudafftKernel *kernel)
{
  cudaError_t error = driver_launch_entry(&kernel->driver_launch);
  if (error == cudaSuccess)
    error = cudaGetFuncBySymbol(&kernel->function, entry);
  kernel->entry = entry;
  return error;
}

extern "C" cudaError_t
cudafft_launch_run(const CudafftLaunch *launch, cudaStream_t stream)
{
  const auto driver_launch =
      reinterpret_cast<PFN_cuLaunchKernel_v4000>(launch->kernel->driver_launch);
  const CUresult result =
      driver_launch((CUfunction)launch->kernel->function, launch->grid, 1, 1, launch->block, 1, 1,
                    launch->smem, (CUstream)stream, launch->params, nullptr);
  return cudafft_runtime_error_of(result, cudaErrorLaunchFailure);
}

extern "C" cudaError_t
cudafft_graph_run(CudafftGraphCache *cache, const CudafftLaunch *launch, cudaStream_t stream)
{
  /* a graph launched into a capture would fail it; a plain launch is what the capture wants */
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t error = cudaStreamIsCapturing(stream, &capture);
  if (error != cudaSuccess)
    return error;
  if (capture != cudaStreamCaptureStatusNone)
    return cudafft_launch_run(launch, stream);
  CudafftGraphEntry *entry = nullptr;
  if (entry_for(cache, *launch, &entry) != cudaSuccess) {
    /* no graph for this call (out of memory, say): the plain launch still does the work, and
     * reports the error itself if it is one that stays */
    cudaGetLastError();
    return cudafft_launch_run(launch, stream);
  }
  entry->used = ++cache->clock;
  return cudaGraphLaunch(entry->exec, stream);
}

extern "C" void
cudafft_graph_cache_clear(CudafftGraphCache *cache)
{
  for (CudafftGraphEntry &entry : cache->entries)
    release(entry);
  cache->clock = 0;
}
