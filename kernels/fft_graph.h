/* fft_graph.h: launching a plan's kernel through executable CUDA graphs, kept per plan and reused
 * for calls with the same arguments. Internal to kernels/ (it speaks CUDA types).
 *
 * Why: on the project's H100 machine, cudaGraphLaunch of a one-kernel graph costs the host about
 * 2 us where cuLaunchKernel of the same kernel costs about 4 us, and at small batches that host
 * time is most of a call's latency (bench/RESULTS.md, "Launch through cached CUDA graphs"). */
#ifndef CUDAFFT_FFT_GRAPH_H
#define CUDAFFT_FFT_GRAPH_H

#include "fft_launch.h"

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel launch's arguments: a call matches a cached graph when all of them agree. */
typedef struct {
  const CudafftKernel *kernel;
  CudafftDirection direction;
  const void *in;
  void *out;
  int batch;
  float scale;
  const float2 *twiddles;
} CudafftGraphKey;

typedef struct {
  CudafftGraphKey key;
  cudaGraph_t graph; /* NULL while the entry is unused */
  cudaGraphExec_t exec;
  cudaGraphNode_t node;    /* the graph's one kernel node */
  unsigned long long used; /* the cache's clock at the entry's last use: the oldest is replaced */
} CudafftGraphEntry;

/* A handful of entries covers the usual callers: a benchmark's one pair of buffers, the host entry
 * point's two staging slots, a stream of buffers that cycles through a small pool. A call that
 * matches none rewrites the least recently used entry's kernel arguments in place
 * (cudaGraphExecKernelNodeSetParams), which costs far less than instantiating a graph. */
#define CUDAFFT_GRAPH_ENTRIES 4

typedef struct {
  CudafftGraphEntry entries[CUDAFFT_GRAPH_ENTRIES];
  unsigned long long clock;
} CudafftGraphCache;

/* Queues what cudafft_kernel_run() queues, on stream, through the cache's graph for these
 * arguments (made or updated first where none matches). Two cases get the plain launch
 * (cudafft_kernel_run) instead: a stream that is being captured, so that the capture records the
 * kernel itself, and a call for which no graph could be made. The kernel's device must be
 * current. */
cudaError_t cudafft_graph_run(CudafftGraphCache *cache, const CudafftKernel *kernel,
                              CudafftDirection direction, const void *in, void *out, int batch,
                              float scale, const float2 *twiddles, cudaStream_t stream);

/* Destroys the cache's graphs (the caller makes sure none still runs); the cache is empty after. */
void cudafft_graph_cache_clear(CudafftGraphCache *cache);

#ifdef __cplusplus
}
#endif

#endif
