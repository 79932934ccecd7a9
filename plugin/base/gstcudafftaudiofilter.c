/* gstcudafftaudiofilter.c: see the header. */
#include "gstcudafftaudiofilterprivate.h"

#include "gstcudafftfence.h"

#include <string.h>

GST_DEBUG_CATEGORY(gst_cudafft_audio_filter_debug);
#define GST_CAT_DEFAULT gst_cudafft_audio_filter_debug

enum { PROP_0, PROP_BACKEND, PROP_CUDA_DEVICE_ID };

G_DEFINE_ABSTRACT_TYPE_WITH_CODE(GstCudafftAudioFilter, gst_cudafft_audio_filter,
                                 GST_TYPE_BASE_TRANSFORM,
                                 G_ADD_PRIVATE(GstCudafftAudioFilter)
                                     GST_DEBUG_CATEGORY_INIT(gst_cudafft_audio_filter_debug,
                                                             "cudafftaudiofilter", 0,
                                                             "gst-cudafft element base class"))

GstCudafftAudioFilterPrivate *
gst_cudafft_audio_filter_private(GstCudafftAudioFilter *filter)
{
  return gst_cudafft_audio_filter_get_instance_private(filter);
}

#define PRIV(filter) gst_cudafft_audio_filter_private(filter)

/* Properties --------------------------------------------------------------------------------- */

/* The base class installs only the backend properties: the element core's. */
static void
gst_cudafft_audio_filter_set_property(GObject *object, guint prop_id, const GValue *value,
                                      GParamSpec *pspec)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(object);
  if (!gst_cudafft_element_core_set_property(&PRIV(filter)->core, prop_id, value, pspec))
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void
gst_cudafft_audio_filter_get_property(GObject *object, guint prop_id, GValue *value,
                                      GParamSpec *pspec)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(object);
  if (!gst_cudafft_element_core_get_property(&PRIV(filter)->core, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

/* The engine --------------------------------------------------------------------------------- */

static void post_status_error(GstCudafftAudioFilter *filter, CudafftStatus status,
                              const gchar *what, const gchar *detail);

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
  gst_cudafft_cuda_buffers_clear(&priv->cuda_buffers);
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
  /* on the backend the start's probe chose, without probing again */
  CudafftBackend actual = CUDAFFT_BACKEND_AUTO;
  const gpointer made = gst_cudafft_element_core_make_engine(
      &priv->core, engine_class, priv->probed, config,
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

/* The start's probe: which backend this start's engines run on. backend=cpu needs no probe;
 * auto takes the GPU where the device exists (else the CPU, saying why in an INFO message);
 * cuda without a usable device fails the start with one ERROR, instead of an error at every
 * caps retry. */
static gboolean
probe_backend(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  int device_id;
  const CudafftBackend requested = gst_cudafft_element_core_backend(&priv->core, &device_id);
  priv->probed = CUDAFFT_BACKEND_CPU;
  if (requested == CUDAFFT_BACKEND_CPU)
    return TRUE;
  const gboolean built = cudafft_has_cuda_backend() != 0;
  const int count = built ? cudafft_cuda_device_count() : 0;
  const int device = device_id < 0 ? 0 : device_id;
  if (device < count) {
    priv->probed = CUDAFFT_BACKEND_CUDA;
    GST_INFO_OBJECT(filter, "CUDA device %d of %d", device, count);
    return TRUE;
  }
  gchar *detail = count == 0 ? gst_cudafft_no_device_reason()
                             : g_strdup_printf("CUDA device %d does not exist: this machine has "
                                               "%d (0 to %d)",
                                               device, count, count - 1);
  if (requested == CUDAFFT_BACKEND_AUTO) {
    /* an INFO, not a WARNING: auto promises to work without a GPU */
    gst_cudafft_element_core_say_cpu_fallback(&priv->core, detail);
    g_free(detail);
    return TRUE;
  }
  post_status_error(filter, built ? CUDAFFT_STATUS_NO_DEVICE : CUDAFFT_STATUS_BACKEND_UNAVAILABLE,
                    "backend=cuda", detail);
  g_free(detail);
  return FALSE;
}

/* Caps ----------------------------------------------------------------------------------------- */

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

gboolean
gst_cudafft_audio_filter_started(GstCudafftAudioFilter *filter)
{
  return gst_cudafft_element_core_running(&PRIV(filter)->core);
}

gboolean
gst_cudafft_audio_filter_check_downstream_memory(GstCudafftAudioFilter *filter)
{
  return gst_cudafft_element_core_check_downstream_memory(&PRIV(filter)->core,
                                                          GST_BASE_TRANSFORM_SRC_PAD(filter));
}

static gboolean
src_template_has_cuda_memory(GstCudafftAudioFilter *filter)
{
  GstCaps *templ = gst_pad_get_pad_template_caps(GST_BASE_TRANSFORM_SRC_PAD(filter));
  GstCaps *system = gst_cudafft_caps_without_cuda_memory(templ);
  const gboolean has = gst_caps_get_size(system) < gst_caps_get_size(templ);
  gst_caps_unref(system);
  gst_caps_unref(templ);
  return has;
}

GstCaps *
gst_cudafft_audio_filter_filter_caps(GstCudafftAudioFilter *filter, GstPadDirection direction,
                                     GstCaps *caps, GstCaps *result, GstCaps *filter_caps)
{
  /* before the start, the src side as its template has it (in CUDA memory too), whatever the
   * backend: a link made then to caps in CUDA memory alone (gst-launch-1.0's) is not refused for
   * what only the start decides; from the start on an element that gives none says why
   * (gst_cudafft_element_core_watch_cuda_memory) */
  if (direction == GST_PAD_SINK && !gst_cudafft_audio_filter_started(filter) &&
      !gst_cudafft_audio_filter_shares_context(filter) && src_template_has_cuda_memory(filter))
    result = gst_cudafft_caps_add_cuda_memory(result);
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
                                    gboolean cuda, GstMapInfo *map)
{
  gpointer device_data = NULL;
  GstBuffer *buffer = cuda ? gst_cudafft_audio_filter_cuda_output(filter, bytes)
                           : gst_cudafft_audio_filter_output_buffer(filter, bytes, spare);
  if (buffer && !(cuda ? gst_cudafft_map_cuda(buffer, GST_MAP_WRITE, map, &device_data, NULL)
                       : gst_buffer_map(buffer, map, GST_MAP_WRITE))) {
    GST_ELEMENT_ERROR(filter, RESOURCE, WRITE,
                      ("Cannot map an output buffer%s.", cuda ? " of CUDA memory" : ""), (NULL));
    gst_buffer_unref(buffer);
    return NULL;
  }
  return buffer;
}

void
gst_cudafft_audio_filter_unmap_output(GstBuffer *buffer, GstMapInfo *map)
{
  /* a device map is of the buffer's one memory (gst_cudafft_map_cuda), a host map of the buffer */
  if (gst_cudafft_map_is_cuda(map))
    gst_memory_unmap(map->memory, map);
  else
    gst_buffer_unmap(buffer, map);
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

/* Split frames --------------------------------------------------------------------------------- */

static void
forget_partial_frame(GstCudafftAudioFilterPrivate *priv)
{
  priv->held_bytes = 0;
}

static void
free_frame_buffers(GstCudafftAudioFilterPrivate *priv)
{
  g_free(priv->held);
  g_free(priv->joined);
  priv->held = priv->joined = NULL;
  priv->held_bytes = priv->joined_capacity = 0;
}

void
gst_cudafft_audio_filter_set_frame_bytes(GstCudafftAudioFilter *filter, gsize frame_bytes)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (frame_bytes == priv->frame_bytes)
    return;
  free_frame_buffers(priv); /* the held ones are as large as the old frames */
  priv->frame_bytes = frame_bytes;
}

void
gst_cudafft_audio_filter_drop_partial_frame(GstCudafftAudioFilter *filter, const gchar *where)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (priv->held_bytes == 0)
    return;
  GST_ELEMENT_WARNING(filter, STREAM, FORMAT,
                      ("Dropped %" G_GSIZE_FORMAT " bytes %s: the start of a %" G_GSIZE_FORMAT
                       "-byte frame whose rest never came.",
                       priv->held_bytes, where, priv->frame_bytes),
                      (NULL));
  forget_partial_frame(priv);
}

/* Keeps `size` bytes (less than a frame) after those held. */
static gboolean
hold(GstCudafftAudioFilter *filter, const guint8 *data, gsize size)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (size == 0)
    return TRUE;
  if (!priv->held && !(priv->held = g_try_malloc(priv->frame_bytes))) {
    GST_ELEMENT_ERROR(filter, RESOURCE, NO_SPACE_LEFT,
                      ("Out of memory for a frame of %" G_GSIZE_FORMAT " bytes split between "
                       "buffers.",
                       priv->frame_bytes),
                      (NULL));
    return FALSE;
  }
  memcpy(priv->held + priv->held_bytes, data, size);
  priv->held_bytes += size;
  return TRUE;
}

gboolean
gst_cudafft_audio_filter_take_frames(GstCudafftAudioFilter *filter, const guint8 *data, gsize size,
                                     const guint8 **frames, gsize *count)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  const gsize fb = priv->frame_bytes;
  *frames = data;
  *count = 0;
  if (fb == 0 && size > 0) {
    GST_ELEMENT_ERROR(filter, CORE, NEGOTIATION, ("Data arrived before its format (caps)."),
                      (NULL));
    return FALSE;
  }
  if (fb == 0)
    return TRUE;
  const gsize held = priv->held_bytes;
  if ((held + size) % fb != 0 && !priv->warned_split) {
    GST_WARNING_OBJECT(filter,
                       "a buffer of %" G_GSIZE_FORMAT " bytes does not end on a %" G_GSIZE_FORMAT
                       "-byte frame; the rest of the frame is taken from the next buffer",
                       size, fb);
    priv->warned_split = TRUE;
  }
  if (held == 0) {
    *count = size / fb;
    return hold(filter, data + *count * fb, size - *count * fb);
  }
  if (size < fb - held)
    return hold(filter, data, size);
  const gsize whole = (held + size) / fb, joined = whole * fb, from_data = joined - held;
  if (joined > priv->joined_capacity) {
    guint8 *bigger = g_try_realloc(priv->joined, joined);
    if (!bigger) {
      GST_ELEMENT_ERROR(filter, RESOURCE, NO_SPACE_LEFT,
                        ("Out of memory for %" G_GSIZE_FORMAT " bytes of input frames split "
                         "between buffers.",
                         joined),
                        (NULL));
      return FALSE;
    }
    priv->joined = bigger;
    priv->joined_capacity = joined;
  }
  memcpy(priv->joined, priv->held, held);
  memcpy(priv->joined + held, data, from_data);
  priv->held_bytes = 0;
  *frames = priv->joined;
  *count = whole;
  return hold(filter, data + from_data, size - from_data);
}

gboolean
gst_cudafft_audio_filter_whole_cuda_frames(GstCudafftAudioFilter *filter, gsize bytes)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (priv->held_bytes == 0 && (priv->frame_bytes <= 1 || bytes % priv->frame_bytes == 0))
    return TRUE;
  GST_ELEMENT_ERROR(filter, STREAM, FORMAT,
                    ("A buffer of CUDA memory holds part of a frame (%" G_GSIZE_FORMAT
                     " bytes, frames of %" G_GSIZE_FORMAT "): CUDA-memory buffers must hold "
                     "whole frames.",
                     bytes, priv->frame_bytes),
                    (NULL));
  return FALSE;
}

/* process over a buffer of CUDA memory: its device pointer, whole frames only. */
static GstFlowReturn
process_on_device(GstCudafftAudioFilter *filter, GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  GstMapInfo map;
  gpointer device_data = NULL;
  if (!gst_cudafft_map_cuda(inbuf, GST_MAP_READ, &map, &device_data, NULL)) {
    GST_ELEMENT_ERROR(filter, RESOURCE, READ, ("Cannot map an input buffer of CUDA memory."),
                      (NULL));
    return GST_FLOW_ERROR;
  }
  GstFlowReturn ret = GST_FLOW_OK;
  if (!gst_cudafft_audio_filter_whole_cuda_frames(filter, map.size)) {
    ret = GST_FLOW_ERROR;
  } else {
    GstMapInfo whole = GST_MAP_INFO_INIT;
    whole.data = device_data;
    whole.size = map.size;
    priv->input_on_device = TRUE;
    priv->input_buffer = inbuf;
    priv->input_fence = gst_cudafft_buffer_get_fence(inbuf);
    ret = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter)->process(filter, inbuf, &whole, outbuf);
    priv->input_on_device = FALSE;
    priv->input_buffer = NULL;
    priv->input_fence = (CudafftFence){0, 0};
  }
  gst_memory_unmap(map.memory, &map);
  return ret;
}

/* process over a buffer in host memory (CUDA memory too, for an element that does not take it:
 * GStreamer copies it down), frames split between buffers joined. */
static GstFlowReturn
process_on_host(GstCudafftAudioFilter *filter, GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstCudafftAudioFilterClass *klass = GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter);
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  GstFlowReturn ret = GST_FLOW_OK;
  GstMapInfo map;
  /* CUDA memory whose bytes our device work still writes: the host copy reads them */
  if (!gst_cudafft_audio_filter_wait_fence(filter, inbuf, "the input's"))
    return GST_FLOW_ERROR;
  if (gst_buffer_map(inbuf, &map, GST_MAP_READ)) {
    const guint8 *frames = NULL;
    gsize count = 0;
    if (gst_cudafft_audio_filter_take_frames(filter, map.data, map.size, &frames, &count)) {
      GstMapInfo whole = GST_MAP_INFO_INIT;
      whole.data = (guint8 *)frames;
      whole.size = count * priv->frame_bytes;
      ret = klass->process(filter, inbuf, &whole, outbuf);
    } else {
      ret = GST_FLOW_ERROR;
    }
    gst_buffer_unmap(inbuf, &map);
  } else {
    GST_ELEMENT_ERROR(filter, RESOURCE, READ, ("Cannot read an input buffer."), (NULL));
    ret = GST_FLOW_ERROR;
  }
  return ret;
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
  if (ret == GST_FLOW_OK && !priv->engine) {
    /* the engine for these caps could not be made; that was posted when it failed */
    GST_DEBUG_OBJECT(filter, "no engine: not negotiated");
    ret = GST_FLOW_NOT_NEGOTIATED;
  }
  if (ret == GST_FLOW_OK && priv->run.active &&
      !gst_cudafft_run_continues(&priv->run, inbuf, priv->tolerance)) {
    GST_DEBUG_OBJECT(filter, "discontinuity at %" GST_TIME_FORMAT "; ending the run",
                     GST_TIME_ARGS(GST_BUFFER_PTS(inbuf)));
    gst_cudafft_audio_filter_drop_partial_frame(filter, "before a discontinuity");
    ret = klass->drain(filter);
  } else if (ret == GST_FLOW_OK && GST_BUFFER_IS_DISCONT(inbuf)) {
    gst_cudafft_audio_filter_drop_partial_frame(filter, "before a discontinuity");
  }
  if (ret == GST_FLOW_OK && !priv->run.active) {
    gst_cudafft_run_start(&priv->run, inbuf, trans->segment.start, priv->run.rate);
    if (klass->begin_run)
      ret = klass->begin_run(filter, inbuf);
  }
  if (ret == GST_FLOW_OK && klass->takes_cuda_memory &&
      gst_cudafft_audio_filter_reads_in_place(filter, inbuf))
    ret = process_on_device(filter, inbuf, outbuf);
  else if (ret == GST_FLOW_OK)
    ret = process_on_host(filter, inbuf, outbuf);
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
  free_frame_buffers(PRIV(filter));
  return TRUE;
}

/* The output in CUDA memory where downstream names it (our elements, an appsink with those caps),
 * in system memory where downstream takes anything (gstcudafftcudamemory.h); caps of one kind only
 * (an element on the CPU, a passthrough) stay as they are. */
static GstCaps *
gst_cudafft_audio_filter_fixate_caps(GstBaseTransform *trans, GstPadDirection direction,
                                     GstCaps *caps, GstCaps *othercaps)
{
  if (direction == GST_PAD_SINK)
    othercaps = gst_cudafft_caps_prefer_memory(othercaps, GST_BASE_TRANSFORM_SRC_PAD(trans));
  return GST_BASE_TRANSFORM_CLASS(gst_cudafft_audio_filter_parent_class)
      ->fixate_caps(trans, direction, caps, othercaps);
}

static void
gst_cudafft_audio_filter_set_context(GstElement *element, GstContext *context)
{
  gst_cudafft_element_core_set_context(&PRIV(GST_CUDAFFT_AUDIO_FILTER(element))->core, context);
  GST_ELEMENT_CLASS(gst_cudafft_audio_filter_parent_class)->set_context(element, context);
}

/* Each start probes the backend once (failing there, with one ERROR, where backend=cuda cannot
 * run) and forgets the errors posted before; the CUDA context is looked for at NULL to READY
 * and let go at READY to NULL. */
static GstStateChangeReturn
gst_cudafft_audio_filter_change_state(GstElement *element, GstStateChange transition)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(element);
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  gst_cudafft_element_core_change_state_begin(&priv->core, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    priv->warned_split = FALSE;
    priv->warned_foreign = FALSE;
    forget_partial_frame(priv);
    if (!probe_backend(filter))
      return GST_STATE_CHANGE_FAILURE;
  }
  const GstStateChangeReturn ret =
      GST_ELEMENT_CLASS(gst_cudafft_audio_filter_parent_class)->change_state(element, transition);
  gst_cudafft_element_core_change_state_end(&priv->core, transition);
  return ret;
}

/* One ERROR per failure (gstcudaffterrors.h). */
static gboolean
gst_cudafft_audio_filter_post_message(GstElement *element, GstMessage *message)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(GST_CUDAFFT_AUDIO_FILTER(element));
  if (!gst_cudafft_element_core_admit_message(&priv->core, message))
    return FALSE;
  return GST_ELEMENT_CLASS(gst_cudafft_audio_filter_parent_class)->post_message(element, message);
}

static void
gst_cudafft_audio_filter_finalize(GObject *object)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(object);
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  gst_cudafft_audio_filter_close_engine(filter);
  free_frame_buffers(priv);
  if (priv->upstream_allocator)
    gst_object_unref(priv->upstream_allocator);
  gst_cudafft_element_core_finalize(&priv->core);
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
  const gchar *drop_where = NULL;
  switch (GST_EVENT_TYPE(event)) {
  case GST_EVENT_CAPS: {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    if (!gst_cudafft_check_channels(GST_ELEMENT(filter), caps) ||
        !gst_cudafft_audio_filter_check_downstream_memory(filter)) {
      gst_event_unref(event);
      return FALSE;
    }
    drain = caps_change(GST_BASE_TRANSFORM_SINK_PAD(trans), event);
    drop_where = "before new caps";
    break;
  }
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
    drop_where = "before a new segment";
    break;
  }
  case GST_EVENT_EOS:
    drain = TRUE;
    drop_where = "at the end of the stream";
    break;
  case GST_EVENT_FLUSH_STOP:
    forget_partial_frame(PRIV(filter));
    gst_cudafft_audio_filter_reset_run(filter);
    if (klass->flush)
      klass->flush(filter);
    break;
  default:
    break;
  }
  if (drain)
    gst_cudafft_audio_filter_drop_partial_frame(filter, drop_where);
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
  if (gst_cudafft_element_core_query(&PRIV(filter)->core, query))
    return TRUE;
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
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->set_property = gst_cudafft_audio_filter_set_property;
  gobject_class->get_property = gst_cudafft_audio_filter_get_property;
  gobject_class->finalize = gst_cudafft_audio_filter_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_change_state);
  element_class->post_message = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_post_message);
  element_class->set_context = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_set_context);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_query);
  trans_class->generate_output = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_generate_output);
  trans_class->fixate_caps = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_fixate_caps);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_cudafft_audio_filter_propose_allocation);
  klass->memory_hint = "use a smaller fft-size or fewer channels";

  gst_cudafft_element_core_install_properties(gobject_class, PROP_BACKEND, PROP_CUDA_DEVICE_ID);
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_AUDIO_FILTER, 0);
}

static gboolean
gives_cuda_memory(GstElement *element)
{
  return gst_cudafft_audio_filter_shares_context(GST_CUDAFFT_AUDIO_FILTER(element));
}

static void
gst_cudafft_audio_filter_init(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  priv->probed = CUDAFFT_BACKEND_AUTO;
  gst_cudafft_run_reset(&priv->run);
  gst_cudafft_element_core_init(
      &priv->core, GST_ELEMENT(filter), GST_BASE_TRANSFORM_SINK_PAD(filter),
      GST_BASE_TRANSFORM_SRC_PAD(filter), PROP_BACKEND, PROP_CUDA_DEVICE_ID);
  /* downstream that takes only CUDA memory where the element gives none: one ERROR, at the
   * element's CAPS event */
  gst_cudafft_element_core_watch_cuda_memory(&priv->core, GST_BASE_TRANSFORM_SRC_PAD(filter),
                                             gives_cuda_memory, TRUE);
}

/* Errors ------------------------------------------------------------------------------------- */

/* The ERROR for `status`, from `what` (which call or check), with `detail` (CUDA's or the
 * library's own words) for the debug part. */
static void
post_status_error(GstCudafftAudioFilter *filter, CudafftStatus status, const gchar *what,
                  const gchar *detail)
{
  gst_cudafft_post_status_error(GST_ELEMENT(filter), status, what, detail,
                                GST_CUDAFFT_AUDIO_FILTER_GET_CLASS(filter)->memory_hint);
}

void
gst_cudafft_audio_filter_post_error(GstCudafftAudioFilter *filter, CudafftStatus status,
                                    const gchar *what)
{
  post_status_error(filter, status, what, cudafft_last_error_message());
}
