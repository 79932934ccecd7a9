/* gstcudafftcontext.h: the CUDA context an element's engines share with the pipeline. With CUDA
 * memory (gstcudafftcudamemory.h) the plugin's one place that speaks GStreamer's CUDA library
 * (gstreamer-cuda-1.0: gstcudafftcontext.c and gstcudafftcudamemory.c, the only plugin files that
 * see CUDA's headers). This header has no CUDA types, so every element includes it.
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

G_END_DECLS

#endif
