/* gstcudafftcontext.h: the CUDA context an element's engines share with the pipeline, and CUDA
 * memory (memory:CUDAMemory): the plugin's one place that speaks GStreamer's CUDA library
 * (gstreamer-cuda-1.0, gstcudafftcontext.c, the only plugin file that sees CUDA's headers). This
 * header has no CUDA types, so every element includes it.
 *
 * Sharing: GStreamer's CUDA elements (nvcodec's cudaupload, cudadownload, the NVDEC decoders) find
 * a GstCudaContext through GStreamer's context negotiation: a context set on the element, a
 * neighbour's answer to the "gst.cuda.context" query, or the application's or bin's answer to a
 * need-context message; failing those they make one and post it (have-context). Our elements take
 * part in the same way, with one difference: where they make one, it wraps the device's primary
 * context, the one the CUDA runtime and our library use anyway, so that pipelines that share
 * nothing with GStreamer's elements keep running exactly as before. Whichever element starts
 * first, the pipeline's elements on one device end up with one CUcontext:
 * - a context the element finds (set on it, answered by a neighbour or the application) is used
 *   where its device is the one the element's cuda-device-id asks for (-1 takes any): the engines
 *   then run in it (cudafft_cuda_context_attach);
 * - a neighbour's query (cudadownload downstream starts first) is answered at once: the element
 *   wraps its device's primary context then (device by cuda-device-id, or for -1 the device whose
 *   engines hold the least GPU state);
 * - otherwise the element's engines are made as before (for -1 the library picks the device) and
 *   the element then wraps that device's primary context and posts it, for the elements that
 *   start after it.
 *
 * Without GStreamer's CUDA library (a build without gstreamer-cuda-1.0, or libcuda missing at run
 * time) every call here is a no-op that says "no": no context, no CUDA memory, engines as before.
 *
 * Threads: every function that takes a GstCudafftContext takes it under its own lock; set and
 * query may come from any thread (the bin, a neighbour's start), the rest from the element's own
 * state changes and streaming thread. */
#ifndef GST_CUDAFFT_CONTEXT_H
#define GST_CUDAFFT_CONTEXT_H

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct {
  GMutex lock;
  GstObject *context; /* the GstCudaContext (NULL: none yet) */
  gint engine_device; /* with a context: what the element's engines are made with, from
                         cudafft_cuda_context_attach (the ordinal for a primary context, the
                         library's context id for another: cudafft/common.h) */
  gboolean busy;      /* a search is under way (its own queries must not start another) */
} GstCudafftContext;

/* The same with or without GStreamer's CUDA library: written here once. */
static inline void
gst_cudafft_context_init(GstCudafftContext *c)
{
  g_mutex_init(&c->lock);
  c->context = NULL;
  c->engine_device = -1;
  c->busy = FALSE;
}

/* Lets go of the context (the element's engines must be gone); it may be found or made again. */
void gst_cudafft_context_clear(GstCudafftContext *c);
/* clear, and frees what init made. */
void gst_cudafft_context_finalize(GstCudafftContext *c);

/* Whether this build and host can share contexts and use CUDA memory: built with
 * gstreamer-cuda-1.0, and GStreamer's CUDA library found the driver. */
gboolean gst_cudafft_context_available(void);

/* The element's set_context: takes a GstCudaContext of `device_id`'s device (-1: any) from
 * `context` where it holds one. */
void gst_cudafft_context_set(GstCudafftContext *c, GstElement *element, GstContext *context,
                             gint device_id);

/* The element's query handling, for every pad: answers a "gst.cuda.context" query (TRUE), making
 * the context first where the element has none yet; FALSE for any other query, or where the
 * element takes no part (backend cpu, no CUDA). */
gboolean gst_cudafft_context_query(GstCudafftContext *c, GstElement *element, GstQuery *query,
                                   gint device_id);

/* At the element's start (NULL to READY): looks for a context in the pipeline (peers, then
 * need-context) without making one. */
void gst_cudafft_context_find(GstCudafftContext *c, GstElement *element, gint device_id);

/* The device id to make the element's engines on the GPU with: the context's (an ordinal, or the
 * library's id for a context of its own), or device_id where there is none. Where the element
 * holds none yet it looks once more first (gst_cudafft_context_find): GStreamer 1.22's CUDA
 * elements make theirs at READY to PAUSED, after this element's start looked. */
gint gst_cudafft_context_engine_device(GstCudafftContext *c, GstElement *element, gint device_id);

/* After the element made an engine on CUDA device `device` (an ordinal or the id it was made
 * with): where the element holds no context, wraps that device's primary context and posts it
 * (have-context) for the elements that start after it. */
void gst_cudafft_context_publish(GstCudafftContext *c, GstElement *element, gint device);

/* A new reference to the GstCudaContext (NULL: none), for pools of CUDA memory. */
GstObject *gst_cudafft_context_get(GstCudafftContext *c);

/* CUDA memory ------------------------------------------------------------------------------- */

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
