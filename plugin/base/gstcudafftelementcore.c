/* gstcudafftelementcore.c: see the header. */
#include "gstcudafftelementcore.h"

#include "gstcudafftcudamemory.h"
#include "gstcudafftproperties.h"

void
gst_cudafft_element_core_install_properties(GObjectClass *klass, guint prop_backend,
                                            guint prop_device_id)
{
  gst_cudafft_backend_install_properties(klass, prop_backend, prop_device_id);
}

void
gst_cudafft_element_core_init(GstCudafftElementCore *core, GstElement *element, GstPad *sinkpad,
                              GstPad *srcpad, guint prop_backend, guint prop_device_id)
{
  core->element = element;
  core->prop_backend = prop_backend;
  core->prop_device_id = prop_device_id;
  core->backend = GST_CUDAFFT_DEFAULT_BACKEND;
  core->device_id = GST_CUDAFFT_DEFAULT_DEVICE_ID;
  core->fallback_said = FALSE;
  core->running = FALSE;
  core->gives_cuda_memory = NULL;
  core->cuda_only_as_system = FALSE;
  gst_cudafft_context_init(&core->context);
  gst_cudafft_errors_init(&core->errors, sinkpad, srcpad);
}

void
gst_cudafft_element_core_finalize(GstCudafftElementCore *core)
{
  gst_cudafft_errors_clear(&core->errors);
  gst_cudafft_context_finalize(&core->context);
}

/* Properties --------------------------------------------------------------------------------- */

gboolean
gst_cudafft_element_core_set_property(GstCudafftElementCore *core, guint prop_id,
                                      const GValue *value, GParamSpec *pspec)
{
  if (prop_id != core->prop_backend && prop_id != core->prop_device_id)
    return FALSE;
  /* both take effect at the start: refused once started (reading back gives the value in effect) */
  const gboolean backend = prop_id == core->prop_backend;
  GST_OBJECT_LOCK(core->element);
  const gboolean changes = backend ? g_value_get_enum(value) != (gint)core->backend
                                   : g_value_get_int(value) != core->device_id;
  gchar *in_effect = backend
                         ? g_strdup(gst_cudafft_enum_nick(GST_TYPE_CUDAFFT_BACKEND, core->backend))
                         : g_strdup_printf("%d", core->device_id);
  GST_OBJECT_UNLOCK(core->element);
  const gboolean refused =
      gst_cudafft_refuse_while_started(core->element, pspec, changes, in_effect);
  g_free(in_effect);
  if (refused)
    return TRUE;
  GST_OBJECT_LOCK(core->element);
  if (backend)
    core->backend = g_value_get_enum(value);
  else
    core->device_id = g_value_get_int(value);
  GST_OBJECT_UNLOCK(core->element);
  return TRUE;
}

gboolean
gst_cudafft_element_core_get_property(GstCudafftElementCore *core, guint prop_id, GValue *value)
{
  if (prop_id != core->prop_backend && prop_id != core->prop_device_id)
    return FALSE;
  GST_OBJECT_LOCK(core->element);
  if (prop_id == core->prop_backend)
    g_value_set_enum(value, core->backend);
  else
    g_value_set_int(value, core->device_id);
  GST_OBJECT_UNLOCK(core->element);
  return TRUE;
}

CudafftBackend
gst_cudafft_element_core_backend(GstCudafftElementCore *core, gint *device_id)
{
  GST_OBJECT_LOCK(core->element);
  const CudafftBackend backend = (CudafftBackend)core->backend;
  if (device_id)
    *device_id = core->device_id;
  GST_OBJECT_UNLOCK(core->element);
  return backend;
}

/* The engine --------------------------------------------------------------------------------- */

gpointer
gst_cudafft_element_core_make_engine(GstCudafftElementCore *core,
                                     const GstCudafftEngineClass *engine_class,
                                     CudafftBackend chosen, gconstpointer config,
                                     const gchar *memory_hint, CudafftBackend *actual)
{
  gint device_id;
  const CudafftBackend requested = gst_cudafft_element_core_backend(core, &device_id);
  if (chosen == CUDAFFT_BACKEND_AUTO)
    chosen = requested;
  /* on the GPU, in the context the pipeline shares where there is one */
  const gint device =
      chosen == CUDAFFT_BACKEND_CPU
          ? device_id
          : gst_cudafft_context_engine_device(&core->context, core->element, device_id);
  gchar *fell_back = NULL;
  const gpointer made = gst_cudafft_engine_new(core->element, engine_class, requested, chosen,
                                               device, config, memory_hint, actual, &fell_back);
  if (fell_back)
    gst_cudafft_element_core_say_cpu_fallback(core, fell_back);
  g_free(fell_back);
  if (made && *actual == CUDAFFT_BACKEND_CUDA)
    gst_cudafft_context_publish(&core->context, core->element, engine_class->get_device(made));
  return made;
}

void
gst_cudafft_element_core_say_cpu_fallback(GstCudafftElementCore *core, const gchar *why)
{
  if (g_atomic_int_compare_and_exchange(&core->fallback_said, FALSE, TRUE))
    gst_cudafft_say_cpu_fallback(core->element, why);
}

/* Context sharing ---------------------------------------------------------------------------- */

gboolean
gst_cudafft_element_core_shares_context(GstCudafftElementCore *core, gint *device_id)
{
  const gboolean cpu = gst_cudafft_element_core_backend(core, device_id) == CUDAFFT_BACKEND_CPU;
  return !cpu && gst_cudafft_context_available();
}

void
gst_cudafft_element_core_set_context(GstCudafftElementCore *core, GstContext *context)
{
  gint device_id;
  if (gst_cudafft_element_core_shares_context(core, &device_id))
    gst_cudafft_context_set(&core->context, core->element, context, device_id);
}

void
gst_cudafft_element_core_change_state_begin(GstCudafftElementCore *core, GstStateChange transition)
{
  gint device_id;
  if (transition == GST_STATE_CHANGE_NULL_TO_READY &&
      gst_cudafft_element_core_shares_context(core, &device_id))
    gst_cudafft_context_find(&core->context, core->element, device_id);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    gst_cudafft_errors_reset(&core->errors);
    g_atomic_int_set(&core->fallback_said, FALSE);
    g_atomic_int_set(&core->running, TRUE);
  }
}

void
gst_cudafft_element_core_change_state_end(GstCudafftElementCore *core, GstStateChange transition)
{
  /* READY to NULL too: after a start that failed (no PAUSED to READY then) */
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY ||
      transition == GST_STATE_CHANGE_READY_TO_NULL)
    g_atomic_int_set(&core->running, FALSE);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL)
    gst_cudafft_context_clear(&core->context);
}

gboolean
gst_cudafft_element_core_query(GstCudafftElementCore *core, GstQuery *query)
{
  gint device_id;
  return GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT &&
         gst_cudafft_element_core_shares_context(core, &device_id) &&
         gst_cudafft_context_query(&core->context, core->element, query, device_id);
}

/* CUDA memory downstream -------------------------------------------------------------------- */

gboolean
gst_cudafft_element_core_running(GstCudafftElementCore *core)
{
  return g_atomic_int_get(&core->running);
}

gchar *
gst_cudafft_element_core_why_no_cuda_memory(GstCudafftElementCore *core)
{
  if (gst_cudafft_element_core_backend(core, NULL) == CUDAFFT_BACKEND_CPU)
    return g_strdup("it runs on the CPU (backend=cpu)");
  char reason[256];
  if (cudafft_cuda_unavailable_reason(reason, sizeof reason) > 0)
    return g_strdup_printf("it runs on the CPU, as backend=auto does where no GPU is usable (%s)",
                           reason);
  if (!gst_cudafft_context_available())
    return g_strdup("this build or host has no GStreamer CUDA library (gstreamer-cuda-1.0) to "
                    "share CUDA memory through");
  return g_strdup("its settings run on the CPU");
}

/* Whether downstream's `theirs` takes CUDA memory and nothing else. */
static gboolean
only_cuda_memory(const GstCaps *theirs)
{
  if (!theirs || gst_caps_is_any(theirs) || gst_caps_is_empty(theirs))
    return FALSE;
  GstCaps *system = gst_cudafft_caps_without_cuda_memory(theirs);
  const gboolean none = gst_caps_is_empty(system);
  gst_caps_unref(system);
  return none;
}

/* What the peer of `pad` takes, asked of the peer itself (past this pad's probes). */
static GstCaps *
peer_caps(GstPad *pad)
{
  GstPad *peer = gst_pad_get_peer(pad);
  if (!peer)
    return NULL;
  GstCaps *caps = gst_pad_query_caps(peer, NULL);
  gst_object_unref(peer);
  return caps;
}

static void
post_cuda_only(GstCudafftElementCore *core, const GstCaps *theirs)
{
  GstElementFactory *factory = gst_element_get_factory(core->element);
  gchar *why = gst_cudafft_element_core_why_no_cuda_memory(core);
  GST_ELEMENT_ERROR(core->element, CORE, NEGOTIATION,
                    ("Downstream takes only CUDA memory (memory:CUDAMemory), which %s cannot give "
                     "here: %s. Use backend=cuda on a machine with a usable GPU, or let downstream "
                     "take system memory.",
                     factory ? GST_OBJECT_NAME(factory) : GST_OBJECT_NAME(core->element), why),
                    ("downstream caps: %" GST_PTR_FORMAT, theirs));
  g_free(why);
}

static GstPadProbeReturn
watch_caps_answer(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GstCudafftElementCore *core = data;
  GstQuery *query = GST_PAD_PROBE_INFO_QUERY(info);
  /* before the start nothing is decided (links made then describe what could be) */
  if (GST_QUERY_TYPE(query) != GST_QUERY_CAPS || !gst_cudafft_element_core_running(core) ||
      core->gives_cuda_memory(core->element))
    return GST_PAD_PROBE_OK;
  GstCaps *answer = NULL, *filter = NULL;
  gst_query_parse_caps_result(query, &answer);
  gst_query_parse_caps(query, &filter);
  if (!answer || gst_caps_is_any(answer))
    return GST_PAD_PROBE_OK;
  GstCaps *kept = gst_cudafft_caps_without_cuda_memory(answer);
  if (gst_caps_is_empty(kept)) {
    /* an empty answer to a filtered query (our own caps, without CUDA memory, as the filter):
     * what downstream takes at all says whether memory is the reason */
    GstCaps *theirs = !gst_caps_is_empty(answer)           ? gst_caps_ref(answer)
                      : filter && !gst_caps_is_any(filter) ? peer_caps(pad)
                                                           : NULL;
    if (only_cuda_memory(theirs)) {
      post_cuda_only(core, theirs);
      if (core->cuda_only_as_system) {
        GstCaps *system = gst_cudafft_caps_in_system_memory(theirs);
        gst_caps_unref(kept);
        kept = filter ? gst_caps_intersect_full(filter, system, GST_CAPS_INTERSECT_FIRST)
                      : gst_caps_ref(system);
        gst_caps_unref(system);
      }
    }
    gst_clear_caps(&theirs);
  }
  gst_query_set_caps_result(query, kept);
  gst_caps_unref(kept);
  return GST_PAD_PROBE_OK;
}

gboolean
gst_cudafft_element_core_check_downstream_memory(GstCudafftElementCore *core, GstPad *srcpad)
{
  if (!gst_cudafft_element_core_running(core) || !core->gives_cuda_memory ||
      core->gives_cuda_memory(core->element))
    return TRUE;
  GstCaps *theirs = peer_caps(srcpad);
  const gboolean refused = only_cuda_memory(theirs);
  if (refused)
    post_cuda_only(core, theirs);
  gst_clear_caps(&theirs);
  return !refused;
}

void
gst_cudafft_element_core_watch_cuda_memory(GstCudafftElementCore *core, GstPad *srcpad,
                                           gboolean (*gives_cuda_memory)(GstElement *),
                                           gboolean as_system)
{
  core->gives_cuda_memory = gives_cuda_memory;
  core->cuda_only_as_system = as_system;
  gst_pad_add_probe(srcpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM | GST_PAD_PROBE_TYPE_PULL,
                    watch_caps_answer, core, NULL);
}

/* One failure, one ERROR ------------------------------------------------------------------- */

gboolean
gst_cudafft_element_core_admit_message(GstCudafftElementCore *core, GstMessage *message)
{
  return gst_cudafft_errors_admit(&core->errors, core->element, message);
}
