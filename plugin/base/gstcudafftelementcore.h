/* gstcudafftelementcore.h: what every element of the plugin is, whatever its base class
 * (GstCudafftAudioFilter for the audio filters, GstAudioVisualizer for cudaspectrumscope), written
 * once so that a change to it is made once:
 *
 * - the backend and cuda-device-id properties (gstcudafftbackend.h), refused once the element has
 *   started, since both take effect at the start;
 * - the making of an engine on them, in the pipeline's shared CUDA context where there is one,
 *   and the publishing of that context for the elements that start after it; where backend=auto
 *   ends on the CPU, an INFO message saying why, once per start;
 * - GStreamer's CUDA context sharing (gstcudafftcontext.h): the element's set_context, its
 *   context queries on every pad, the search at NULL to READY and the release at READY to NULL;
 * - one failure, one ERROR (gstcudaffterrors.h): the element's post_message, the gate on its sink
 *   pad, the errors forgotten at each start;
 * - downstream that takes only CUDA memory where the element cannot give it: an ERROR that says
 *   why, the same in every element.
 *
 * An element embeds a GstCudafftElementCore in its instance and its vfuncs call the functions
 * here; everything else (its engine, its framing, its own properties) stays the element's. */
#ifndef GST_CUDAFFT_ELEMENT_CORE_H
#define GST_CUDAFFT_ELEMENT_CORE_H

#include "gstcudafftbackend.h"
#include "gstcudafftcontext.h"
#include "gstcudaffterrors.h"

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct {
  GstElement *element; /* the element that embeds this (not a reference: it owns the core) */
  guint prop_backend, prop_device_id; /* the element's ids of the two properties */
  GstCudafftBackend backend;          /* both under the element's object lock */
  gint device_id;
  GstCudafftContext context; /* the CUDA context shared with the pipeline */
  GstCudafftErrors errors;   /* one failure, one ERROR */
  gint fallback_said;        /* this start has said it runs on the CPU (atomic) */
  gint running;              /* from READY to PAUSED until PAUSED to READY (atomic) */
  /* the CUDA-memory watch on the src pad (gst_cudafft_element_core_watch_cuda_memory) */
  gboolean (*gives_cuda_memory)(GstElement *element);
  gboolean cuda_only_as_system;
} GstCudafftElementCore;

/* Installs the backend and cuda-device-id properties on klass under the element's ids; its
 * set_property and get_property hand them to gst_cudafft_element_core_set_property and _get. */
void gst_cudafft_element_core_install_properties(GObjectClass *klass, guint prop_backend,
                                                 guint prop_device_id);

/* From the element's instance init, once its sink pad's chain and event functions are set (the
 * errors' gate wraps them as they are then): the properties' defaults, no context, no errors. */
void gst_cudafft_element_core_init(GstCudafftElementCore *core, GstElement *element,
                                   GstPad *sinkpad, GstPad *srcpad, guint prop_backend,
                                   guint prop_device_id);

/* From the element's finalize, its engines gone. */
void gst_cudafft_element_core_finalize(GstCudafftElementCore *core);

/* set_property and get_property of the two properties: FALSE where prop_id is neither (the
 * element's own property). A change once started is refused with a warning naming the value that
 * stays (gst_cudafft_refuse_while_started). */
gboolean gst_cudafft_element_core_set_property(GstCudafftElementCore *core, guint prop_id,
                                               const GValue *value, GParamSpec *pspec);
gboolean gst_cudafft_element_core_get_property(GstCudafftElementCore *core, guint prop_id,
                                               GValue *value);

/* The backend the property asks for, and in *device_id (may be NULL) the cuda-device-id. Any
 * thread. */
CudafftBackend gst_cudafft_element_core_backend(GstCudafftElementCore *core, gint *device_id);

/* Whether the element takes part in the pipeline's CUDA context and may exchange CUDA memory: not
 * with backend=cpu, nor without a usable GPU or GStreamer's CUDA library; *device_id (may be NULL)
 * receives its cuda-device-id. Any thread. */
gboolean gst_cudafft_element_core_shares_context(GstCudafftElementCore *core, gint *device_id);

/* Makes an engine of `engine_class` for `config` (gst_cudafft_engine_new) with the backend and
 * device the properties ask for: on `chosen` where the element's start probed for one (AUTO: on
 * the property's), on the device of the shared context where there is one; an engine on the GPU
 * then has its device's context published. NULL after posting the GST_ELEMENT_ERROR. */
gpointer gst_cudafft_element_core_make_engine(GstCudafftElementCore *core,
                                              const GstCudafftEngineClass *engine_class,
                                              CudafftBackend chosen, gconstpointer config,
                                              const gchar *memory_hint, CudafftBackend *actual);

/* Says, once per start, that backend=auto runs the element on the CPU and why
 * (gst_cudafft_say_cpu_fallback: an INFO message on the bus, a WARNING in the debug log). Any
 * thread. */
void gst_cudafft_element_core_say_cpu_fallback(GstCudafftElementCore *core, const gchar *why);

/* Whether the element has started (READY to PAUSED, until PAUSED to READY). Before, its caps
 * answers may describe what it can do in any configuration, as its pad templates do, so that links
 * made before the start (gst-launch-1.0's) do not fail on what only the start decides (CUDA
 * memory); from the start on they are exact. Any thread. */
gboolean gst_cudafft_element_core_running(GstCudafftElementCore *core);

/* Why the element puts no CUDA memory on its pads now, for messages (g_free): backend=cpu, the
 * library's reason for a host without a usable GPU (cudafft_cuda_unavailable_reason), no
 * GStreamer CUDA library, or settings that run on the CPU. Any thread. */
gchar *gst_cudafft_element_core_why_no_cuda_memory(GstCudafftElementCore *core);

/* Watches the answers of downstream to the element's caps queries through srcpad: where
 * gives_cuda_memory(element) says it puts no CUDA memory there, they lose their CUDA-memory
 * structures; where downstream takes nothing but CUDA memory (memory:CUDAMemory), the element
 * posts an ERROR saying so and why (gst_cudafft_element_core_why_no_cuda_memory), and the answer
 * is then empty, or (as_system) the same caps in system memory, so that the negotiation goes on
 * to the element's own CAPS event, where downstream's refusal of the caps fails it with that one
 * ERROR (gstcudaffterrors.h) instead of a second "not-negotiated" one from upstream. From the
 * element's instance init. */
void gst_cudafft_element_core_watch_cuda_memory(GstCudafftElementCore *core, GstPad *srcpad,
                                                gboolean (*gives_cuda_memory)(GstElement *),
                                                gboolean as_system);

/* FALSE, after the watch's ERROR (posted again, which the errors' gate counts as this call's:
 * gstcudaffterrors.h), where the element has started, gives no CUDA memory and downstream of
 * srcpad takes nothing else: for the element's CAPS event, which basetransform would otherwise
 * fail with a negotiation of its own that the watch does not see. */
gboolean gst_cudafft_element_core_check_downstream_memory(GstCudafftElementCore *core,
                                                          GstPad *srcpad);

/* The element's set_context, before its parent class's. */
void gst_cudafft_element_core_set_context(GstCudafftElementCore *core, GstContext *context);

/* The element's change_state: `begin` before its parent class's (NULL to READY looks for a context
 * in the pipeline, READY to PAUSED forgets the errors posted and the fallback said and starts),
 * `end` after it (PAUSED to READY stops, READY to NULL lets the context go). */
void gst_cudafft_element_core_change_state_begin(GstCudafftElementCore *core,
                                                 GstStateChange transition);
void gst_cudafft_element_core_change_state_end(GstCudafftElementCore *core,
                                               GstStateChange transition);

/* The element's query handling, on every pad: TRUE where the query was a CUDA context query and
 * is answered; FALSE for the element's own handling. */
gboolean gst_cudafft_element_core_query(GstCudafftElementCore *core, GstQuery *query);

/* The element's post_message: TRUE where `message` goes on to its parent class's; FALSE, with the
 * message taken, where it is an ERROR already posted since the start. */
gboolean gst_cudafft_element_core_admit_message(GstCudafftElementCore *core, GstMessage *message);

G_END_DECLS

#endif
