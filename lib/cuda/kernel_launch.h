/* kernel_launch.h: launching a kernel as cheaply as the host can: through the driver's
 * cuLaunchKernel with the function resolved once, or through executable CUDA graphs kept in a
 * small cache and reused for calls with the same arguments. Internal to the library (it speaks
 * CUDA types).
 *
 * Why: launching a one-kernel graph costs the host about half what cuLaunchKernel of the same
 * kernel does (and the runtime's <<<>>> more), and at small batches that host time is most of a
 * call's latency (bench/HISTORY.md, "Launch through cached CUDA graphs"). */
#ifndef CUDAFFT_KERNEL_LAUNCH_H
#define CUDAFFT_KERNEL_LAUNCH_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel resolved on one device. */
typedef struct {
  cudaFunction_t function; /* the kernel in the context of the device current at resolve time */
  const void *entry;       /* the kernel's host-side entry, as the runtime and graph APIs take it */
  void *driver_launch;     /* the driver's cuLaunchKernel */
} CudafftKernel;

/* Resolves the kernel whose host-side entry is `entry` on the current device. */
cudaError_t cudafft_kernel_resolve(const void *entry, CudafftKernel *kernel);

/* The most bytes of argument values one launch may take. */
#define CUDAFFT_LAUNCH_ARGS_MAX 64

/* One launch: a resolved kernel, its shape, and its arguments. `args` holds the argument values
 * packed in one struct whose padding is zeroed (the cache compares them byte by byte); params
 * points at each value, as cuLaunchKernel and kernel nodes take them. */
typedef struct {
  const CudafftKernel *kernel;
  unsigned grid, block, smem;
  const void *args;
  size_t args_bytes; /* <= CUDAFFT_LAUNCH_ARGS_MAX */
  void **params;
} CudafftLaunch;

/* Queues the launch through the driver's cuLaunchKernel. The kernel's device must be current. */
cudaError_t cudafft_launch_run(const CudafftLaunch *launch, cudaStream_t stream);

typedef struct {
  const CudafftKernel *kernel;
  unsigned grid, block, smem;
  unsigned char args[CUDAFFT_LAUNCH_ARGS_MAX];
  size_t args_bytes;
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

/* Queues the launch on stream through the cache's graph for it (made or updated first where none
 * matches). Two cases get the plain launch (cudafft_launch_run) instead: a stream that is being
 * captured, so that the capture records the kernel itself, and a call for which no graph could be
 * made. The kernel's device must be current. */
cudaError_t cudafft_graph_run(CudafftGraphCache *cache, const CudafftLaunch *launch,
                              cudaStream_t stream);

/* Destroys the cache's graphs (the caller makes sure none still runs); the cache is empty after. */
void cudafft_graph_cache_clear(CudafftGraphCache *cache);

#ifdef __cplusplus
}
#endif

#endif
