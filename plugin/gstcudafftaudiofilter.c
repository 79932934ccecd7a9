/* gstcudafftaudiofilter.c: see the header. */
#include "gstcudafftaudiofilter.h"

GST_DEBUG_CATEGORY_STATIC(gst_cudafft_audio_filter_debug);
#define GST_CAT_DEFAULT gst_cudafft_audio_filter_debug

enum { PROP_0, PROP_BACKEND, PROP_CUDA_DEVICE_ID };

#define DEFAULT_BACKEND GST_CUDAFFT_BACKEND_AUTO
#define DEFAULT_CUDA_DEVICE_ID -1

typedef struct {
  GstCudafftBackend backend; /* both under the object lock */
  gint device_id;
} GstCudafftAudioFilterPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_CODE(GstCudafftAudioFilter, gst_cudafft_audio_filter,
                                 GST_TYPE_BASE_TRANSFORM,
                                 G_ADD_PRIVATE(GstCudafftAudioFilter)
                                     GST_DEBUG_CATEGORY_INIT(gst_cudafft_audio_filter_debug,
                                                             "cudafftaudiofilter", 0,
                                                             "gst-cudafft element base class"))

GType
gst_cudafft_backend_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDAFFT_BACKEND_AUTO, "The GPU when one is usable, otherwise the CPU", "auto"},
      {GST_CUDAFFT_BACKEND_CUDA, "The GPU (CUDA); fail if there is none", "cuda"},
      {GST_CUDAFFT_BACKEND_CPU, "The CPU (FFTW)", "cpu"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudafftBackend", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

static void
gst_cudafft_audio_filter_set_property(GObject *object, guint prop_id, const GValue *value,
                                      GParamSpec *pspec)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(object);
  GstCudafftAudioFilterPrivate *priv = gst_cudafft_audio_filter_get_instance_private(filter);
  GST_OBJECT_LOCK(filter);
  switch (prop_id) {
  case PROP_BACKEND:
    priv->backend = g_value_get_enum(value);
    break;
  case PROP_CUDA_DEVICE_ID:
    priv->device_id = g_value_get_int(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(filter);
}

static void
gst_cudafft_audio_filter_get_property(GObject *object, guint prop_id, GValue *value,
                                      GParamSpec *pspec)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(object);
  GstCudafftAudioFilterPrivate *priv = gst_cudafft_audio_filter_get_instance_private(filter);
  GST_OBJECT_LOCK(filter);
  switch (prop_id) {
  case PROP_BACKEND:
    g_value_set_enum(value, priv->backend);
    break;
  case PROP_CUDA_DEVICE_ID:
    g_value_set_int(value, priv->device_id);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(filter);
}

static gboolean
gst_cudafft_audio_filter_stop(GstBaseTransform *trans)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCudafftAudioFilterClass *klass = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter);
  if (klass->close)
    klass->close(filter);
  return TRUE;
}

/* Whether a CAPS event changes the pad's caps (a repeat of the same caps keeps the run). */
static gboolean
caps_change(GstPad *pad, GstEvent *event)
{
  GstCaps *caps;
  gst_event_parse_caps(event, &caps);
  GstCaps *current = gst_pad_get_current_caps(pad);
  const gboolean changes = !current || !gst_caps_is_equal(current, caps);
  if (current)
    gst_caps_unref(current);
  return changes;
}

static gboolean
gst_cudafft_audio_filter_sink_event(GstBaseTransform *trans, GstEvent *event)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCudafftAudioFilterClass *klass = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter);
  gboolean drain = FALSE;
  switch (GST_EVENT_TYPE(event)) {
  case GST_EVENT_CAPS:
    drain = caps_change(GST_BASE_TRANSFORM_SINK_PAD(trans), event);
    break;
  case GST_EVENT_SEGMENT: {
    const GstSegment *segment;
    gst_event_parse_segment(event, &segment);
    if (segment->format != GST_FORMAT_TIME) {
      GST_ELEMENT_ERROR(filter, STREAM, FORMAT,
                        ("%s needs a TIME segment, got a %s one; put it after a parser or decoder "
                         "that outputs timed audio.",
                         GST_OBJECT_NAME(filter), gst_format_get_name(segment->format)),
                        (NULL));
      gst_event_unref(event);
      return FALSE;
    }
    drain = TRUE;
    break;
  }
  case GST_EVENT_EOS:
    drain = TRUE;
    break;
  case GST_EVENT_FLUSH_STOP:
    if (klass->flush)
      klass->flush(filter);
    break;
  default:
    break;
  }
  if (drain && klass->drain) {
    const GstFlowReturn ret = klass->drain(filter);
    if (ret != GST_FLOW_OK)
      GST_DEBUG_OBJECT(filter, "draining before %s: %s", GST_EVENT_TYPE_NAME(event),
                       gst_flow_get_name(ret));
  }
  return GST_BASE_TRANSFORM_CLASS(gst_cudafft_audio_filter_parent_class)->sink_event(trans, event);
}

static gboolean
gst_cudafft_audio_filter_query(GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCudafftAudioFilterClass *klass = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter);
  if (direction != GST_PAD_SRC || GST_QUERY_TYPE(query) != GST_QUERY_LATENCY || !klass->get_latency)
    return GST_BASE_TRANSFORM_CLASS(gst_cudafft_audio_filter_parent_class)
        ->query(trans, direction, query);
  if (!gst_pad_peer_query(GST_BASE_TRANSFORM_SINK_PAD(trans), query))
    return FALSE;
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency(query, &live, &min, &max);
  const GstClockTime ours = klass->get_latency(filter);
  GST_DEBUG_OBJECT(filter, "our latency %" GST_TIME_FORMAT, GST_TIME_ARGS(ours));
  gst_query_set_latency(query, live, min + ours, GST_CLOCK_TIME_IS_VALID(max) ? max + ours : max);
  return TRUE;
}

static void
gst_cudafft_audio_filter_class_init(GstCudafftAudioFilterClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->set_property = gst_cudafft_audio_filter_set_property;
  gobject_class->get_property = gst_cudafft_audio_filter_get_property;
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_query);
  klass->memory_hint = "use a smaller fft-size or fewer channels";

  g_object_class_install_property(
      gobject_class, PROP_BACKEND,
      g_param_spec_enum("backend", "Backend",
                        "Where the DSP runs: auto (the GPU when one is usable, otherwise the CPU, "
                        "with a warning in the debug log), cuda (the GPU or an error) or cpu",
                        GST_TYPE_CUDAFFT_BACKEND, DEFAULT_BACKEND,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property(
      gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int("cuda-device-id", "CUDA device id",
                       "The CUDA device to run on (-1: automatic, the first device)", -1, G_MAXINT,
                       DEFAULT_CUDA_DEVICE_ID,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_BACKEND, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_AUDIO_FILTER, 0);
}

static void
gst_cudafft_audio_filter_init(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = gst_cudafft_audio_filter_get_instance_private(filter);
  priv->backend = DEFAULT_BACKEND;
  priv->device_id = DEFAULT_CUDA_DEVICE_ID;
}

static const gchar *
backend_name(CudafftBackend backend)
{
  return backend == CUDAFFT_BACKEND_CUDA ? "cuda" : backend == CUDAFFT_BACKEND_CPU ? "cpu" : "auto";
}

void
gst_cudafft_audio_filter_post_error(GstCudafftAudioFilter *filter, CudafftStatus status,
                                    const gchar *what)
{
  const gchar *detail = cudafft_last_error_message();
  const gchar *hint = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter)->memory_hint;
  switch (status) {
  case CUDAFFT_STATUS_NO_DEVICE:
    GST_ELEMENT_ERROR(filter, RESOURCE, NOT_FOUND,
                      ("No usable CUDA device found; set backend=cpu, pick another "
                       "cuda-device-id, or check the NVIDIA driver."),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_BACKEND_UNAVAILABLE:
    GST_ELEMENT_ERROR(filter, RESOURCE, NOT_FOUND,
                      ("This build of gst-cudafft has no CUDA support; set backend=cpu, or "
                       "rebuild it with the CUDA toolkit installed."),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY:
    GST_ELEMENT_ERROR(filter, RESOURCE, NO_SPACE_LEFT,
                      ("Out of GPU memory; %s, free the GPU, or set backend=cpu.", hint),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_HOST_OUT_OF_MEMORY:
    GST_ELEMENT_ERROR(filter, RESOURCE, NO_SPACE_LEFT, ("Out of memory; %s.", hint),
                      ("%s: %s", what, detail));
    break;
  case CUDAFFT_STATUS_UNSUPPORTED:
    GST_ELEMENT_ERROR(filter, CORE, NOT_IMPLEMENTED,
                      ("These settings are not supported here: %s", detail), ("%s failed", what));
    break;
  case CUDAFFT_STATUS_INVALID_SIZE:
  case CUDAFFT_STATUS_INVALID_BATCH:
  case CUDAFFT_STATUS_INVALID_VALUE:
  case CUDAFFT_STATUS_NULL_POINTER:
    GST_ELEMENT_ERROR(filter, CORE, NEGOTIATION, ("Invalid settings: %s", detail),
                      ("%s failed", what));
    break;
  default:
    GST_ELEMENT_ERROR(
        filter, RESOURCE, FAILED,
        ("The GPU failed (%s); set backend=cpu to run without it.", cudafft_status_name(status)),
        ("%s: %s", what, detail));
    break;
  }
}

gboolean
gst_cudafft_audio_filter_create_engine(GstCudafftAudioFilter *filter, const gchar *what,
                                       GstCudafftEngineCreate create, gpointer user_data)
{
  GstCudafftAudioFilterPrivate *priv = gst_cudafft_audio_filter_get_instance_private(filter);
  GST_OBJECT_LOCK(filter);
  const CudafftBackend requested = (CudafftBackend)priv->backend;
  const int device_id = priv->device_id;
  GST_OBJECT_UNLOCK(filter);

  CudafftBackend actual = requested;
  CudafftStatus status = create(user_data, requested, device_id, &actual);
  if (status == CUDAFFT_STATUS_UNSUPPORTED && requested == CUDAFFT_BACKEND_AUTO) {
    GST_WARNING_OBJECT(filter, "the GPU cannot run %s (%s); using the CPU backend", what,
                       cudafft_last_error_message());
    status = create(user_data, CUDAFFT_BACKEND_CPU, device_id, &actual);
  }
  if (status != CUDAFFT_STATUS_OK) {
    gst_cudafft_audio_filter_post_error(filter, status, what);
    return FALSE;
  }
  if (requested == CUDAFFT_BACKEND_AUTO && actual == CUDAFFT_BACKEND_CPU)
    /* A warning in the debug log, not on the bus: auto promises to work without a GPU. */
    GST_WARNING_OBJECT(filter, "no usable CUDA device (%s); %s runs on the CPU backend",
                       cudafft_last_error_message(), what);
  GST_INFO_OBJECT(filter, "%s runs on the %s backend (asked for %s, device %d)", what,
                  backend_name(actual), backend_name(requested), device_id);
  return TRUE;
}
