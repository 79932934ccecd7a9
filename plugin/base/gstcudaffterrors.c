/* gstcudaffterrors.c: see the header. */
#include "gstcudaffterrors.h"

GST_DEBUG_CATEGORY_STATIC(gst_cudafft_errors_debug);
#define GST_CAT_DEFAULT gst_cudafft_errors_debug

/* What GstBaseSrc, queue and the others post an ERROR for. */
static gboolean
is_fatal(GstFlowReturn ret)
{
  return ret == GST_FLOW_NOT_LINKED || ret <= GST_FLOW_NOT_NEGOTIATED;
}

static gboolean
posted_since_start(GstCudafftErrors *errors)
{
  g_mutex_lock(&errors->lock);
  const gboolean any = g_hash_table_size(errors->posted) > 0;
  g_mutex_unlock(&errors->lock);
  return any;
}

static GstFlowReturn
gst_cudafft_errors_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer)
{
  GstCudafftErrors *errors = pad->chaindata;
  const gint before = g_atomic_int_get(&errors->seen);
  const GstFlowReturn ret = errors->chain(pad, parent, buffer);
  if (!is_fatal(ret))
    return ret;
  /* ours: an ERROR in this call, or one earlier in this start where downstream did not answer
   * this (the engine that failed at the caps is missing now) */
  const gboolean ours =
      g_atomic_int_get(&errors->seen) != before ||
      (posted_since_start(errors) && gst_pad_get_last_flow_return(errors->srcpad) != ret);
  if (!ours)
    return ret;
  GST_DEBUG_OBJECT(parent, "%s after our own ERROR: answering flushing", gst_flow_get_name(ret));
  return GST_FLOW_FLUSHING;
}

static GstFlowReturn
gst_cudafft_errors_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
  GstCudafftErrors *errors = pad->eventdata;
  const GstEventType type = GST_EVENT_TYPE(event);
  const gint before = g_atomic_int_get(&errors->seen);
  if (errors->event(pad, parent, event))
    return GST_FLOW_OK;
  if (g_atomic_int_get(&errors->seen) != before) {
    GST_DEBUG_OBJECT(parent, "%s refused with our own ERROR: answering flushing",
                     gst_event_type_get_name(type));
    return GST_FLOW_FLUSHING;
  }
  /* what GstPad makes of a plain event function's FALSE */
  return type == GST_EVENT_CAPS ? GST_FLOW_NOT_NEGOTIATED : GST_FLOW_ERROR;
}

void
gst_cudafft_errors_init(GstCudafftErrors *errors, GstPad *sinkpad, GstPad *srcpad)
{
  static gsize category = 0;
  if (g_once_init_enter(&category)) {
    GST_DEBUG_CATEGORY_INIT(gst_cudafft_errors_debug, "cudaffterrors", 0,
                            "gst-cudafft: one failure, one ERROR");
    g_once_init_leave(&category, 1);
  }
  errors->srcpad = srcpad;
  errors->chain = GST_PAD_CHAINFUNC(sinkpad);
  errors->event = GST_PAD_EVENTFUNC(sinkpad);
  errors->seen = 0;
  g_mutex_init(&errors->lock);
  errors->posted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_assert(errors->chain && errors->event);
  gst_pad_set_chain_function_full(sinkpad, GST_DEBUG_FUNCPTR(gst_cudafft_errors_chain), errors,
                                  NULL);
  gst_pad_set_event_full_function_full(sinkpad, GST_DEBUG_FUNCPTR(gst_cudafft_errors_event), errors,
                                       NULL);
}

void
gst_cudafft_errors_clear(GstCudafftErrors *errors)
{
  g_hash_table_unref(errors->posted);
  errors->posted = NULL;
  g_mutex_clear(&errors->lock);
}

void
gst_cudafft_errors_reset(GstCudafftErrors *errors)
{
  g_mutex_lock(&errors->lock);
  g_hash_table_remove_all(errors->posted);
  g_mutex_unlock(&errors->lock);
}

gboolean
gst_cudafft_errors_admit(GstCudafftErrors *errors, GstElement *element, GstMessage *message)
{
  if (GST_MESSAGE_TYPE(message) != GST_MESSAGE_ERROR ||
      GST_MESSAGE_SRC(message) != GST_OBJECT_CAST(element))
    return TRUE;
  g_atomic_int_inc(&errors->seen);
  GError *error = NULL;
  gst_message_parse_error(message, &error, NULL);
  gchar *key = g_strdup_printf("%s %d %s", error ? g_quark_to_string(error->domain) : "",
                               error ? error->code : 0, error ? error->message : "");
  g_clear_error(&error);
  g_mutex_lock(&errors->lock);
  const gboolean again = !g_hash_table_add(errors->posted, key);
  g_mutex_unlock(&errors->lock);
  if (!again)
    return TRUE;
  GST_DEBUG_OBJECT(element, "the same error again; not posted: %" GST_PTR_FORMAT, message);
  gst_message_unref(message);
  return FALSE;
}
