/* gstcudaffthostmemory.h: a GstAllocator of page-locked host memory (cudafft_pinned_alloc()), and a
 * buffer pool on it. Copies between the GPU and such buffers run at full bus speed without the
 * driver's bounce buffers; pooling also spares each buffer the page faults of fresh memory. */
#ifndef GST_CUDAFFT_HOST_MEMORY_H
#define GST_CUDAFFT_HOST_MEMORY_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDAFFT_HOST_MEMORY_TYPE "CudafftHostMemory"

#define GST_TYPE_CUDAFFT_HOST_ALLOCATOR (gst_cudafft_host_allocator_get_type())
G_DECLARE_FINAL_TYPE(GstCudafftHostAllocator, gst_cudafft_host_allocator, GST,
                     CUDAFFT_HOST_ALLOCATOR, GstAllocator)

/* pinned: page-locked memory where a CUDA device is usable; FALSE gives plain aligned memory. */
GstAllocator *gst_cudafft_host_allocator_new(gboolean pinned);

/* Offers upstream, in an ALLOCATION query, page-locked memory for its buffers (which the GPU reads
 * at full speed). The allocator is made in *allocator on first use and kept there for the next
 * query; its owner unrefs it. */
void gst_cudafft_host_allocator_propose(GstAllocator **allocator, GstQuery *query);

/* An active pool of buffers of `size` bytes from that allocator; NULL on failure. */
GstBufferPool *gst_cudafft_host_pool_new(gboolean pinned, GstCaps *caps, guint size);

/* An element's output buffers: a pool that grows to the largest size asked for (plus `spare`
 * bytes, so that sizes which alternate by a little do not remake it: each remake is a new
 * page-locked allocation, a slow system call), falling back to plain memory if no pool can be
 * had. NULL when out of memory (never an abort). */
typedef struct {
  GstBufferPool *pool;
  gsize size;
} GstCudafftOutputPool;

GstBuffer *gst_cudafft_output_pool_acquire(GstCudafftOutputPool *pool, GstPad *srcpad,
                                           gboolean pinned, gsize bytes, gsize spare);
void gst_cudafft_output_pool_clear(GstCudafftOutputPool *pool);

G_END_DECLS

#endif
