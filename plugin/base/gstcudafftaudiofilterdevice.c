/* gstcudafftaudiofilterdevice.c: the base class's share in GPU-resident pipelines (see the
 * header): CUDA memory (context sharing, caps in CUDA memory, output buffers and their cuts on the
 * device) and device order between our elements (the fences of gstcudafftfence.h: the input's, for
 * the engine's `after`; the output's `done`, where the peer is ours; the waits elsewhere). */
#include "gstcudafftaudiofilterprivate.h"

#include "gstcudafftcaps.h"
#include "gstcudafftfence.h"

#define GST_CAT_DEFAULT gst_cudafft_audio_filter_debug
#define PRIV(filter) gst_cudafft_audio_filter_private(filter)

/* CUDA memory -------------------------------------------------------------------------------- */

gboolean
gst_cudafft_audio_filter_shares_context(GstCudafftAudioFilter *filter)
{
  return gst_cudafft_element_core_shares_context(&PRIV(filter)->core, NULL);
}

GstCaps *
gst_cudafft_audio_filter_offer_cuda_memory(GstCudafftAudioFilter *filter, GstCaps *caps)
{
  return gst_cudafft_audio_filter_shares_context(filter) ? gst_cudafft_caps_add_cuda_memory(caps)
                                                         : caps;
}

void
gst_cudafft_audio_filter_class_add_pad_templates(GstElementClass *klass, GstCaps *sink,
                                                 GstCaps *src)
{
  const struct {
    const gchar *name;
    GstPadDirection direction;
    GstCaps *caps;
  } pads[] = {{"sink", GST_PAD_SINK, sink}, {"src", GST_PAD_SRC, src}};
  for (guint i = 0; i < G_N_ELEMENTS(pads); i++) {
    GstCaps *caps = gst_cudafft_caps_add_cuda_memory(pads[i].caps);
    gst_element_class_add_pad_template(
        klass, gst_pad_template_new(pads[i].name, pads[i].direction, GST_PAD_ALWAYS, caps));
    gst_caps_unref(caps);
  }
}

gboolean
gst_cudafft_audio_filter_check_memory(GstCudafftAudioFilter *filter, GstCaps *incaps,
                                      GstCaps *outcaps)
{
  if (!PRIV(filter)->engine || gst_cudafft_audio_filter_uses_gpu(filter) ||
      (!gst_cudafft_caps_is_cuda_memory(incaps) && !gst_cudafft_caps_is_cuda_memory(outcaps)))
    return TRUE;
  GST_ELEMENT_ERROR(filter, CORE, NEGOTIATION,
                    ("These settings run on the CPU backend, which cannot take or make CUDA "
                     "memory: let the neighbours use system memory, or use settings the GPU can "
                     "run."),
                    ("caps %" GST_PTR_FORMAT " to %" GST_PTR_FORMAT, incaps, outcaps));
  return FALSE;
}

GstBuffer *
gst_cudafft_audio_filter_cuda_output(GstCudafftAudioFilter *filter, gsize bytes)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  GstBuffer *buffer = gst_cudafft_cuda_buffer(&priv->core.context, &priv->cuda_buffers, bytes);
  if (!buffer)
    GST_ELEMENT_ERROR(filter, RESOURCE, NO_SPACE_LEFT,
                      ("Cannot get %" G_GSIZE_FORMAT " bytes of CUDA memory for the output "
                       "(GPU memory full, or no CUDA context shared: GST_DEBUG=cudafftcontext:5 "
                       "says which).",
                       bytes),
                      (NULL));
  return buffer;
}

GstBuffer *
gst_cudafft_audio_filter_trim_output(GstCudafftAudioFilter *filter, GstBuffer *buffer, gsize offset,
                                     gsize bytes)
{
  const gboolean whole = offset == 0 && bytes == gst_buffer_get_size(buffer);
  if (whole || gst_buffer_n_memory(buffer) != 1 ||
      !gst_cudafft_is_cuda_memory(gst_buffer_peek_memory(buffer, 0))) {
    gst_buffer_resize(buffer, (gssize)offset, (gssize)bytes);
    return buffer;
  }
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  /* the copy runs on GStreamer's stream: the work that writes the buffer must be done */
  if (!gst_cudafft_audio_filter_wait_fence(filter, buffer, "the output's")) {
    gst_buffer_unref(buffer);
    return NULL;
  }
  GstBuffer *cut =
      gst_cudafft_cuda_buffer_cut(&priv->core.context, &priv->cuda_buffers, buffer, offset, bytes);
  gst_buffer_unref(buffer);
  if (!cut)
    GST_ELEMENT_ERROR(filter, RESOURCE, NO_SPACE_LEFT,
                      ("Cannot copy %" G_GSIZE_FORMAT " bytes of output within CUDA memory (GPU "
                       "memory full, or no CUDA context shared: GST_DEBUG=cudafftcontext:5 says "
                       "which).",
                       bytes),
                      (NULL));
  return cut;
}

/* Device order between our elements ------------------------------------------------------------ */

gboolean
gst_cudafft_audio_filter_reads_in_place(GstCudafftAudioFilter *filter, GstBuffer *buffer)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  if (gst_buffer_n_memory(buffer) != 1)
    return FALSE;
  GstMemory *memory = gst_buffer_peek_memory(buffer, 0);
  if (!gst_cudafft_is_cuda_memory(memory))
    return FALSE;
  if (gst_cudafft_context_holds_memory(&priv->core.context, memory))
    return TRUE;
  if (!priv->warned_foreign) {
    GST_WARNING_OBJECT(filter, "CUDA memory of another CUDA context (another GPU's, or another "
                               "pipeline's) comes in: read through host memory, a copy each way; "
                               "share one GstCudaContext to avoid it");
    priv->warned_foreign = TRUE;
  }
  return FALSE;
}

gboolean
gst_cudafft_audio_filter_input_on_device(GstCudafftAudioFilter *filter)
{
  return PRIV(filter)->input_on_device;
}

const CudafftFence *
gst_cudafft_audio_filter_input_fence(GstCudafftAudioFilter *filter)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  return priv->input_on_device && priv->input_fence.queue != 0 ? &priv->input_fence : NULL;
}

/* A capsfilter (what gst-launch-1.0 makes of caps between two elements) pushes the buffer it is
 * given on, as it is, on the same thread: it is looked through. Anything else is not ours. */
static gboolean
is_capsfilter(GstObject *element)
{
  /* looked up once capsfilter's plugin has made its type (a global lock per call otherwise) */
  static GType type = 0;
  GType known = (GType)g_atomic_pointer_get(&type);
  if (!known) {
    known = g_type_from_name("GstCapsFilter");
    g_atomic_pointer_set(&type, known);
  }
  return known && G_TYPE_CHECK_INSTANCE_TYPE(element, known);
}

gboolean
gst_cudafft_pad_feeds_ours(GstPad *pad)
{
  GstPad *peer = gst_pad_get_peer(pad);
  gboolean ours = FALSE;
  for (int hops = 0; peer && hops < 8; hops++) {
    GstObject *parent = gst_pad_get_parent(peer);
    gst_object_unref(peer);
    peer = NULL;
    if (parent && GST_IS_CUDAFFT_AUDIO_FILTER(parent)) {
      ours = TRUE;
    } else if (parent && is_capsfilter(parent)) {
      GstPad *src = gst_element_get_static_pad(GST_ELEMENT(parent), "src");
      if (src) {
        peer = gst_pad_get_peer(src);
        gst_object_unref(src);
      }
    }
    if (parent)
      gst_object_unref(parent);
  }
  if (peer)
    gst_object_unref(peer);
  return ours;
}

CudafftFence *
gst_cudafft_audio_filter_output_fence(GstCudafftAudioFilter *filter, gboolean cuda_out)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  priv->output_fence = (CudafftFence){0, 0};
  if (!cuda_out || !gst_cudafft_pad_feeds_ours(GST_BASE_TRANSFORM_SRC_PAD(filter)))
    return NULL;
  return &priv->output_fence;
}

/* Waits for fence; FALSE (an ERROR posted, naming `whose` work) where that failed. */
static gboolean
wait_for(GstCudafftAudioFilter *filter, CudafftFence fence, const gchar *whose)
{
  const CudafftStatus status = cudafft_fence_wait(fence);
  if (status == CUDAFFT_STATUS_OK)
    return TRUE;
  gchar *what = g_strdup_printf("waiting for %s device work", whose);
  gst_cudafft_audio_filter_post_error(filter, status, what);
  g_free(what);
  return FALSE;
}

gboolean
gst_cudafft_audio_filter_wait_fence(GstCudafftAudioFilter *filter, GstBuffer *buffer,
                                    const gchar *whose)
{
  return wait_for(filter, gst_cudafft_buffer_get_fence(buffer), whose);
}

gboolean
gst_cudafft_audio_filter_fence_output(GstCudafftAudioFilter *filter, GstBuffer *buffer)
{
  GstCudafftAudioFilterPrivate *priv = PRIV(filter);
  const CudafftFence fence = priv->output_fence;
  priv->output_fence = (CudafftFence){0, 0};
  if (fence.queue == 0)
    return TRUE;
  GST_LOG_OBJECT(filter, "output complete at batch %llu of executor %llu, not waited for",
                 fence.mark, fence.queue);
  /* the work also reads the input where it is (device memory): its memory must not go back to
   * its pool, and be written again, before that work is done */
  return gst_cudafft_buffer_set_fence(buffer, fence, priv->input_buffer) ||
         wait_for(filter, fence, "the output's");
}
