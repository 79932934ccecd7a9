/* gstcudafftaudiofilter.c: see the header. */
#include "gstcudafftaudiofilter.h"

#include "gstcudaffthostmemory.h"

GST_DEBUG_CATEGORY_STATIC(gst_cudafft_audio_filter_debug);
#define GST_CAT_DEFAULT gst_cudafft_audio_filter_debug

enum { PROP_0, PROP_BACKEND, PROP_CUDA_DEVICE_ID };

typedef struct {
  GstCudafftBackend backend; /* both under the object lock */
  gint device_id;

  /* streaming thread only (and stop, once streaming has stopped) */
  const GstCudafftEngineClass *engine_class;
  gpointer engine;
  CudafftBackend engine_backend; /* the backend the engine runs on */
  GstCudafftOutputPool pool;     /* output buffers: page-locked for the CUDA backend */
  GstAllocator
      *upstream_allocator; /* offered upstream for input buffers, kept for the next query */
  GstCudafftRun run;
  guint64 tolerance; /* samples a timestamp may be off and still continue the run */
} GstCudafftAudioFilterPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_CODE(GstCudafftAudioFilter, gst_cudafft_audio_filter,
                                 GST_TYPE_BASE_TRANSFORM,
                                 G_ADD_PRIVATE(GstCudafftAudioFilter)
                                     GST_DEBUG_CATEGORY_INIT(gst_cudafft_audio_filter_debug,
                                                             "cudafftaudiofilter", 0,
                                                             "gst-cudafft element base class"))

#define PRIV(filter)                                                                               \
  ((GstCudafftAudioFilterPrivate *)gst_cudafft_audio_filter_get_instance_private(filter))

/* Properties --------------------------------------------------------------------------------- */

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

/* The engine --------------------------------------------------------------------------------- */

gpointer
gst_cudafft_audio_filter_get_engine(GstCudafftAudioFilter *filter)
{
  return PRIV(filter)->engine;
}

gboolean
gst_cudafft_audio_filter_uses_gpu(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  return priv->engine && priv->engine_backend == CUDAFFT_BACKEND_CUDA;
}

void
gst_cudafft_audio_filter_close_engine(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  gst_cudafft_output_pool_clear(&priv->pool);
  if (priv->engine)
    priv->engine_class->destroy(priv->engine);
  priv->engine = NULL;
  priv->engine_class = NULL;
  gst_cudafft_run_reset(&priv->run);
}

gboolean
gst_cudafft_audio_filter_open_engine(GstCudafftAudioFilter *filter,
                                     const GstCudafftEngineClass *engine_class,
                                     gconstpointer config)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  GST_OBJECT_LOCK(filter);
  const CudafftBackend requested = (CudafftBackend)priv->backend;
  const int device_id = priv->device_id;
  GST_OBJECT_UNLOCK(filter);

  CudafftBackend actual = CUDAFFT_BACKEND_AUTO;
  const gpointer made =
      gst_cudafft_engine_new(GST_ELEMENT(filter), engine_class, requested, device_id, config,
                             GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter)->memory_hint, &actual);
  if (!made)
    return FALSE;
  gst_cudafft_output_pool_clear(&priv->pool);
  if (priv->engine)
    priv->engine_class->destroy(priv->engine);
  priv->engine_class = engine_class;
  priv->engine = made;
  priv->engine_backend = actual;
  return TRUE;
}

gboolean
gst_cudafft_audio_filter_read_audio_caps(GstCudafftAudioFilter *filter, GstCaps *caps,
                                         GstAudioInfo *info)
{
  if (gst_audio_info_from_caps(info, caps))
    return TRUE;
  GST_ELEMENT_ERROR(filter, CORE, NEGOTIATION, ("Cannot read the input caps."),
                    ("%" GST_PTR_FORMAT, caps));
  return FALSE;
}

GstCaps *
gst_cudafft_audio_filter_filter_caps(GstCudafftAudioFilter *filter, GstPadDirection direction,
                                     GstCaps *caps, GstCaps *result, GstCaps *filter_caps)
{
  if (filter_caps) {
    GstCaps *both = gst_caps_intersect_full(filter_caps, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = both;
  }
  GST_LOG_OBJECT(filter, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
                 direction == GST_PAD_SINK ? "sink" : "src", caps, result);
  return result;
}

CudafftSampleFormat
gst_cudafft_sample_format(GstAudioFormat format)
{
  switch (format) {
  case GST_AUDIO_FORMAT_S16LE:
    return CUDAFFT_SAMPLE_S16;
  case GST_AUDIO_FORMAT_S24LE:
    return CUDAFFT_SAMPLE_S24;
  case GST_AUDIO_FORMAT_S32LE:
    return CUDAFFT_SAMPLE_S32;
  case GST_AUDIO_FORMAT_F32LE:
    return CUDAFFT_SAMPLE_F32;
  case GST_AUDIO_FORMAT_F64LE:
    return CUDAFFT_SAMPLE_F64;
  default:
    return CUDAFFT_SAMPLE_COUNT_;
  }
}

/* Output buffers ----------------------------------------------------------------------------- */

GstBuffer *
gst_cudafft_audio_filter_output_buffer(GstCudafftAudioFilter *filter, gsize bytes, gsize spare)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  GstBuffer *buffer =
      gst_cudafft_output_pool_acquire(&priv->pool, GST_BASE_TRANSFORM_SRC_PAD(filter),
                                      gst_cudafft_audio_filter_uses_gpu(filter), bytes, spare);
  if (!buffer)
    GST_ELEMENT_ERROR(filter, RESOURCE, NO_SPACE_LEFT,
                      ("Out of memory for an output buffer of %" G_GSIZE_FORMAT " bytes; %s.",
                       bytes, GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter)->memory_hint),
                      (NULL));
  return buffer;
}

GstBuffer *
gst_cudafft_audio_filter_map_output(GstCudafftAudioFilter *filter, gsize bytes, gsize spare,
                                    GstMapInfo *map)
{
  GstBuffer *buffer = gst_cudafft_audio_filter_output_buffer(filter, bytes, spare);
  if (buffer && !gst_buffer_map(buffer, map, GST_MAP_WRITE)) {
    GST_ELEMENT_ERROR(filter, RESOURCE, WRITE, ("Cannot map an output buffer."), (NULL));
    gst_buffer_unref(buffer);
    return NULL;
  }
  return buffer;
}

/* Upstream may allocate its buffers from page-locked memory, which the GPU reads at full speed. In
 * passthrough (cudaspectrum) upstream's buffers are downstream's: the query goes on there. */
static gboolean
gst_cudafft_audio_filter_propose_allocation(GstBaseTransform *trans, GstQuery *decide_query,
                                            GstQuery *query)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (gst_base_transform_is_passthrough(trans))
    return GST_BASE_TRANSFORM_CLASS(gst_cudafft_audio_filter_parent_class)
        ->propose_allocation(trans, decide_query, query);
  if (gst_cudafft_audio_filter_uses_gpu(filter))
    gst_cudafft_host_allocator_propose(&priv->upstream_allocator, query);
  return TRUE;
}

/* The run ------------------------------------------------------------------------------------ */

GstCudafftRun *
gst_cudafft_audio_filter_get_run(GstCudafftAudioFilter *filter)
{
  return &PRIV(filter)->run;
}

void
gst_cudafft_audio_filter_set_run_format(GstCudafftAudioFilter *filter, gint rate, guint64 tolerance)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  priv->run.rate = rate;
  priv->tolerance = tolerance;
}

void
gst_cudafft_audio_filter_reset_run(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (priv->engine)
    priv->engine_class->reset(priv->engine);
  gst_cudafft_run_reset(&priv->run);
}

gboolean
gst_cudafft_audio_filter_check_frames(GstCudafftAudioFilter *filter, gsize size, gsize frame_bytes)
{
  if (frame_bytes > 0 && size % frame_bytes == 0)
    return TRUE;
  GST_ELEMENT_ERROR(filter, STREAM, FORMAT,
                    ("A buffer of %" G_GSIZE_FORMAT
                     " bytes does not hold whole frames of %" G_GSIZE_FORMAT " bytes.",
                     size, frame_bytes),
                    (NULL));
  return FALSE;
}

static GstFlowReturn
gst_cudafft_audio_filter_generate_output(GstBaseTransform *trans, GstBuffer **outbuf)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCudafftAudioFilterClass *klass = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter);
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (!klass->process) /* in place (transform_ip) */
    return GST_BASE_TRANSFORM_CLASS(gst_cudafft_audio_filter_parent_class)
        ->generate_output(trans, outbuf);

  GstBuffer *inbuf = trans->queued_buf;
  trans->queued_buf = NULL;
  *outbuf = NULL;
  if (!inbuf)
    return GST_FLOW_OK;
  GstFlowReturn ret = klass->prepare ? klass->prepare(filter) : GST_FLOW_OK;
  if (ret == GST_FLOW_OK && priv->run.active &&
      !gst_cudafft_run_continues(&priv->run, inbuf, priv->tolerance)) {
    GST_DEBUG_OBJECT(filter, "discontinuity at %" GST_TIME_FORMAT "; ending the run",
                     GST_TIME_ARGS(GST_BUFFER_PTS(inbuf)));
    ret = klass->drain(filter);
  }
  if (ret == GST_FLOW_OK && !priv->run.active) {
    gst_cudafft_run_start(&priv->run, inbuf, trans->segment.start, priv->run.rate);
    if (klass->begin_run)
      ret = klass->begin_run(filter, inbuf);
  }
  GstMapInfo map;
  if (ret == GST_FLOW_OK && gst_buffer_map(inbuf, &map, GST_MAP_READ)) {
    ret = klass->process(filter, inbuf, &map, outbuf);
    gst_buffer_unmap(inbuf, &map);
  } else if (ret == GST_FLOW_OK) {
    GST_ELEMENT_ERROR(filter, RESOURCE, READ, ("Cannot read an input buffer."), (NULL));
    ret = GST_FLOW_ERROR;
  }
  gst_buffer_unref(inbuf);
  return ret;
}

/* Lifetime ------------------------------------------------------------------------------------ */

static gboolean
gst_cudafft_audio_filter_stop(GstBaseTransform *trans)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCudafftAudioFilterClass *klass = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter);
  if (klass->close)
    klass->close(filter);
  gst_cudafft_audio_filter_close_engine(filter);
  return TRUE;
}

static void
gst_cudafft_audio_filter_finalize(GObject *object)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(object);
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  gst_cudafft_audio_filter_close_engine(filter);
  if (priv->upstream_allocator)
    gst_object_unref(priv->upstream_allocator);
  G_OBJECT_CLASS(gst_cudafft_audio_filter_parent_class)->finalize(object);
}

/* Events and queries ------------------------------------------------------------------------- */

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
    gst_cudafft_audio_filter_reset_run(filter);
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
  gobject_class->finalize = gst_cudafft_audio_filter_finalize;
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_query);
  trans_class->generate_output = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_generate_output);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_propose_allocation);
  klass->memory_hint = "use a smaller fft-size or fewer channels";

  gst_cudafft_backend_install_properties(gobject_class, PROP_BACKEND, PROP_CUDA_DEVICE_ID);
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_AUDIO_FILTER, 0);
}

static void
gst_cudafft_audio_filter_init(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  priv->backend = GST_CUDAFFT_DEFAULT_BACKEND;
  priv->device_id = GST_CUDAFFT_DEFAULT_DEVICE_ID;
  gst_cudafft_run_reset(&priv->run);
}

/* Errors ------------------------------------------------------------------------------------- */

void
gst_cudafft_audio_filter_post_error(GstCudafftAudioFilter *filter, CudafftStatus status,
                                    const gchar *what)
{
  gst_cudafft_post_engine_error(GST_ELEMENT(filter), status, what,
                                GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter)->memory_hint);
}
