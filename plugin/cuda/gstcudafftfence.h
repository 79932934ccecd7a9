/* gstcudafftfence.h: a buffer of CUDA memory whose bytes device work of this plugin still writes
 * carries that work's fence (CudafftFence, cudafft/common.h: Fences) in a meta of its own, so that
 * the next element of ours orders its device work after it instead of waiting on the host (issue
 * 30). Only our elements see such buffers: an element hands one on only to a peer of ours (and
 * waits for its work first otherwise). The meta waits for its fence when the buffer is freed or
 * goes back to its pool, so that no memory the work writes or reads is reused before it is done. */
#ifndef GST_CUDAFFT_FENCE_H
#define GST_CUDAFFT_FENCE_H

#include <cudafft/common.h>

#include <gst/gst.h>

G_BEGIN_DECLS

GType gst_cudafft_fence_meta_api_get_type(void);

/* Marks buffer's bytes complete only at `fence` (a zeroed fence adds nothing), and keeps `reads`
 * (NULL: none), a buffer whose memory the same work reads in place, until the fence is reached and
 * buffer is done with. FALSE where the meta cannot be added: the caller then waits for the fence.
 */
gboolean gst_cudafft_buffer_set_fence(GstBuffer *buffer, CudafftFence fence, GstBuffer *reads);

/* The fence buffer's bytes are complete at; zeroed where they are complete now. */
CudafftFence gst_cudafft_buffer_get_fence(GstBuffer *buffer);

G_END_DECLS

#endif
