/* gstcudafftcudamemory.h: CUDA memory (memory:CUDAMemory) between elements: the caps that offer
 * it, pools of it in the element's context, maps on the device and cuts. Written with GStreamer's
 * CUDA library in gstcudafftcudamemory.c; without it (gstcudafftcudamemorystub.c) every call says
 * "no" and elements keep to system memory. No CUDA types here, so every element includes it. The
 * context these buffers live in is gstcudafftcontext.h's. */
#ifndef GST_CUDAFFT_CUDA_MEMORY_H
#define GST_CUDAFFT_CUDA_MEMORY_H

#include "gstcudafftcontext.h"

G_BEGIN_DECLS

/* caps with each structure offered twice: in system memory first, then with the
 * memory:CUDAMemory feature, where the build has CUDA memory (else caps as they are). System
 * memory first, so that a peer that takes anything (fakesink, appsink without caps) gets what it
 * always got, and one that lists CUDA memory first (cudadownload) gets CUDA memory. Transfer full
 * (caps is taken). */
GstCaps *gst_cudafft_caps_add_cuda_memory(GstCaps *caps);

/* Whether memory is GStreamer's CUDA memory (gst_is_cuda_memory). */
gboolean gst_cudafft_is_cuda_memory(GstMemory *memory);

/* Whether memory is CUDA memory of the element's context, which its engines' kernels may read and
 * write in place. CUDA memory of any other context (another device's, or another context on the
 * same device: two pipelines' contexts meeting, an application's buffer) is not: a kernel given
 * its address would fault, and a fault ends CUDA work in the whole process. The elements read such
 * memory through GStreamer's host copy instead. */
gboolean gst_cudafft_context_holds_memory(GstCudafftContext *c, GstMemory *memory);

/* caps (taken) with memory:CUDAMemory on every structure. */
GstCaps *gst_cudafft_caps_in_cuda_memory(GstCaps *caps);

/* Whether caps' first structure carries memory:CUDAMemory. */
gboolean gst_cudafft_caps_is_cuda_memory(const GstCaps *caps);

/* caps without the structures that carry memory:CUDAMemory (a copy). */
GstCaps *gst_cudafft_caps_without_cuda_memory(const GstCaps *caps);

/* caps with those structures in system memory instead (a copy, simplified). */
GstCaps *gst_cudafft_caps_in_system_memory(const GstCaps *caps);

/* For a fixate_caps on the src side: of `candidates` (taken; offered in system and CUDA memory),
 * keeps the CUDA-memory ones where the peer of `srcpad` names CUDA memory itself (our own elements,
 * an appsink with such caps: the GPU path preferred where both sides take it), else the
 * system-memory ones (a peer that takes anything keeps what it always got). Candidates of one
 * kind only are returned as they are. */
GstCaps *gst_cudafft_caps_prefer_memory(GstCaps *candidates, GstPad *srcpad);

/* A buffer pool of CUDA memory of the element's context for video `caps` (GStreamer's CUDA
 * buffer pool: pitched frames with a GstVideoMeta giving the pitch); NULL without a context. */
GstBufferPool *gst_cudafft_context_video_pool(GstCudafftContext *c, GstCaps *caps, guint min,
                                              guint max);

/* Maps buffer's only memory on the device for flags (GST_MAP_READ or GST_MAP_WRITE): *device_data
 * is its device pointer, *pitch (may be NULL) the bytes from one row to the next. FALSE where it
 * is not CUDA memory of one piece. Unmap with gst_memory_unmap(info->memory, info). */
gboolean gst_cudafft_map_cuda(GstBuffer *buffer, GstMapFlags flags, GstMapInfo *info,
                              gpointer *device_data, gsize *pitch);

/* Whether info is a map on the device (gst_cudafft_map_cuda's), not on the host. */
gboolean gst_cudafft_map_is_cuda(const GstMapInfo *info);

/* Audio and frames in CUDA memory: buffers of one GstCudaMemory each in the element's context,
 * described as GStreamer 1.22 describes CUDA memory, by a GstVideoInfo: RGBA, one row of
 * bytes / 4 "pixels" (1.22's allocator takes only video formats; bytes must be a multiple of 4:
 * floats). The bytes are those of the same buffer in system memory (interleaved samples, or frames
 * one after another), contiguous from the device pointer on. From pools of buffers of exactly the
 * size asked for (a CUDA memory cannot be resized), a few sizes at once: the frames of equal input
 * buffers come in two sizes (n or n + 1 frames), the last of a run in a third. */
#define GST_CUDAFFT_CUDA_BUFFER_SIZES 4
typedef struct {
  GstBufferPool *pools[GST_CUDAFFT_CUDA_BUFFER_SIZES];
  gsize sizes[GST_CUDAFFT_CUDA_BUFFER_SIZES]; /* each pool's buffers' bytes */
  guint next;                                 /* the pool the next new size replaces */
} GstCudafftCudaBuffers;

/* A buffer of `bytes` bytes (> 0, a multiple of 4) of CUDA memory of the element's context; NULL
 * where there is no context or the memory cannot be had (the debug log says why). */
GstBuffer *gst_cudafft_cuda_buffer(GstCudafftContext *c, GstCudafftCudaBuffers *b, gsize bytes);

/* A buffer of `bytes` bytes of CUDA memory holding those of `buffer` (one CUDA memory of the
 * element's context) from `offset` on, copied on the device: for output whose first or last
 * samples are dropped, since GStreamer 1.22's CUDA memory cannot be cut in place (its host copy
 * takes the whole allocation). NULL where it cannot be had (the debug log says why). */
GstBuffer *gst_cudafft_cuda_buffer_cut(GstCudafftContext *c, GstCudafftCudaBuffers *b,
                                       GstBuffer *buffer, gsize offset, gsize bytes);

/* Lets go of the pools. */
void gst_cudafft_cuda_buffers_clear(GstCudafftCudaBuffers *b);

G_END_DECLS

#endif
