/* gstcudafftelementcore.c: see the header. */
#include "gstcudafftelementcore.h"

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
  }
}

void
gst_cudafft_element_core_change_state_end(GstCudafftElementCore *core, GstStateChange transition)
{
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

/* One failure, one ERROR ------------------------------------------------------------------- */

gboolean
gst_cudafft_element_core_admit_message(GstCudafftElementCore *core, GstMessage *message)
{
  return gst_cudafft_errors_admit(&core->errors, core->element, message);
}
