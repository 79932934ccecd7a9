/* gstcudaspectrumscopeframes.h: where cudaspectrumscope's frames go: the buffers it draws into
 * and how it draws into them. Three ways, chosen at each negotiation:
 * - CUDA memory (video/x-raw(memory:CUDAMemory), where downstream asks for it: cudadownload, an
 *   application's appsink with those caps): GStreamer's CUDA buffer pool in the pipeline's shared
 *   GstCudaContext; the frame is drawn on the device and copied on the device into the buffer,
 *   which never crosses the bus (cudafft_scope_render_device);
 * - system memory with the CUDA backend: page-locked frames from the element's own pool, so that
 *   the one copy of each frame to the host runs at full bus speed;
 * - the CPU backend: the base class's own allocation.
 * CUDA memory only where the engine runs on the GPU: with backend=cpu (or auto without a usable
 * GPU) the caps downstream offers lose their CUDA-memory structures before the base class picks
 * one, and caps that allow nothing else fail with an error saying why (the element core's watch,
 * gst_cudafft_element_core_watch_cuda_memory, as every element of the plugin has it). */
#ifndef GST_CUDA_SPECTRUM_SCOPE_FRAMES_H
#define GST_CUDA_SPECTRUM_SCOPE_FRAMES_H

#include "gstcudafftcudamemory.h"

#include <cudafft/scope.h>

#include <gst/pbutils/gstaudiovisualizer.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

typedef struct {
  GstCudafftContext *context; /* the element's CUDA context shared with the pipeline */
  GstAllocator *allocator;    /* page-locked frame memory, made at the first GPU negotiation */
  GstBufferPool *pool;        /* frame buffers, chosen at negotiation (NULL: plain buffers) */
  gboolean pool_active;
  gboolean cuda_memory; /* the negotiated caps carry memory:CUDAMemory */
  GstElement *element;  /* the element (not a reference: it owns this) */
} GstCudaSpectrumScopeFrames;

/* context: the element's (gstcudafftelementcore.h), which outlives the frames; element: the
 * element, for its messages. */
void gst_cuda_spectrum_scope_frames_init(GstCudaSpectrumScopeFrames *f, GstElement *element,
                                         GstCudafftContext *context);
void gst_cuda_spectrum_scope_frames_clear(GstCudaSpectrumScopeFrames *f);

/* Deactivates and lets go of the pool, if there is one. */
void gst_cuda_spectrum_scope_frames_drop_pool(GstCudaSpectrumScopeFrames *f);

/* decide_allocation for a scope on the GPU (the CPU backend keeps the base class's): a pool of
 * CUDA memory for CUDA-memory caps, of page-locked memory otherwise. FALSE (with an ERROR) where
 * the caps ask for CUDA memory and there is no shared context to allocate it in. */
gboolean gst_cuda_spectrum_scope_frames_decide(GstCudaSpectrumScopeFrames *f, GstElement *element,
                                               GstQuery *query);

/* The frame buffer to draw into next: from the pool, or a plain buffer of `size` bytes. */
GstFlowReturn gst_cuda_spectrum_scope_frames_acquire(GstCudaSpectrumScopeFrames *f,
                                                     GstElement *element, gsize size,
                                                     GstBuffer **out);

/* Draws the frame of `count` samples into out (cudafft_scope_render, or _render_device for CUDA
 * memory); a failure posts its ERROR (memory_hint: what to shrink when memory runs out). */
GstFlowReturn gst_cuda_spectrum_scope_frames_draw(GstCudaSpectrumScopeFrames *f,
                                                  CudafftScope *scope, const GstVideoInfo *vinfo,
                                                  const void *samples, gsize count, GstBuffer *out,
                                                  const gchar *memory_hint);

G_END_DECLS

#endif
