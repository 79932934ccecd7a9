/* fft_graph.cu: the per-plan cache of one-kernel CUDA graphs (fft_graph.h). */
#include "fft_graph.h"

namespace {

bool
same_key(const CudafftGraphKey &a, const CudafftGraphKey &b)
{
  return a.kernel == b.kernel && a.direction == b.direction && a.in == b.in && a.out == b.out &&
         a.batch == b.batch && a.scale == b.scale && a.twiddles == b.twiddles;
}

/* The kernel node's parameters for key. The graph API copies the argument values that
 * params.kernelParams points at, so this need only outlive the call that takes it. */
struct NodeParams {
  CudafftKernelArgs args;
  cudaKernelNodeParams params;

  explicit NodeParams(const CudafftGraphKey &key) : params()
  {
    const CudafftKernel &kernel = *key.kernel;
    cudafft_kernel_args(&args, key.direction, key.in, key.out, key.batch, key.scale, key.twiddles);
    params.func = const_cast<void *>(kernel.entry);
    params.gridDim = dim3(cudafft_kernel_blocks(&kernel.shape, key.batch));
    params.blockDim = dim3((unsigned)kernel.shape.block_threads);
    params.sharedMemBytes = (unsigned)kernel.shape.smem_bytes;
    params.kernelParams = args.params;
  }
  NodeParams(const NodeParams &) = delete; /* params point into args */
  NodeParams &operator=(const NodeParams &) = delete;
};

void
release(CudafftGraphEntry &entry)
{
  if (entry.exec)
    cudaGraphExecDestroy(entry.exec);
  if (entry.graph)
    cudaGraphDestroy(entry.graph);
  entry = CudafftGraphEntry{};
}

/* Makes entry a graph of one kernel node for key. */
cudaError_t
build(CudafftGraphEntry &entry, const CudafftGraphKey &key)
{
  NodeParams node(key);
  cudaError_t error = cudaGraphCreate(&entry.graph, 0);
  if (error == cudaSuccess)
    error = cudaGraphAddKernelNode(&entry.node, entry.graph, nullptr, 0, &node.params);
  if (error == cudaSuccess)
    error = cudaGraphInstantiate(&entry.exec, entry.graph, 0);
  if (error != cudaSuccess) {
    release(entry);
    return error;
  }
  entry.key = key;
  return cudaSuccess;
}

/* Points entry's kernel node at key's arguments; the launches already queued keep theirs. */
cudaError_t
update(CudafftGraphEntry &entry, const CudafftGraphKey &key)
{
  NodeParams node(key);
  const cudaError_t error = cudaGraphExecKernelNodeSetParams(entry.exec, entry.node, &node.params);
  if (error != cudaSuccess)
    return error;
  /* the graph itself keeps the node's first arguments: an entry is only ever launched through
   * its exec, so they need not follow */
  entry.key = key;
  return cudaSuccess;
}

/* The entry for key: a match, else an unused entry made for it, else the least recently used one
 * updated to it. */
cudaError_t
entry_for(CudafftGraphCache *cache, const CudafftGraphKey &key, CudafftGraphEntry **found)
{
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
    error = build(*unused, key);
    *found = unused;
  } else {
    error = update(*oldest, key);
    if (error != cudaSuccess) { /* an update the exec refuses: start that entry over */
      release(*oldest);
      cudaGetLastError();
      error = build(*oldest, key);
    }
    *found = oldest;
  }
  return error;
}

} // namespace

extern "C" cudaError_t
cudafft_graph_run(CudafftGraphCache *cache, const CudafftKernel *kernel, CudafftDirection direction,
                  const void *in, void *out, int batch, float scale, const float2 *twiddles,
                  cudaStream_t stream)
{
  /* a graph launched into a capture would fail it; a plain launch is what the capture wants */
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t error = cudaStreamIsCapturing(stream, &capture);
  if (error != cudaSuccess)
    return error;
  if (capture != cudaStreamCaptureStatusNone)
    return cudafft_kernel_run(kernel, direction, in, out, batch, scale, twiddles, stream);
  const CudafftGraphKey key = {kernel, direction, in, out, batch, scale, twiddles};
  CudafftGraphEntry *entry = nullptr;
  if (entry_for(cache, key, &entry) != cudaSuccess) {
    /* no graph for this call (out of memory, say): the plain launch still does the work, and
     * reports the error itself if it is one that stays */
    cudaGetLastError();
    return cudafft_kernel_run(kernel, direction, in, out, batch, scale, twiddles, stream);
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
