/* gstcudamelspectrogramtensor.c: see gstcudamelspectrogramtensor.h. The GstTensorMeta part is
 * built where plugin/meson.build finds gstreamer-analytics-1.0 1.26 or later
 * (GST_CUDAFFT_HAVE_TENSOR_META). */
#include "gstcudamelspectrogramtensor.h"

#include "gstcudamelspectrogramproperties.h"

#ifdef GST_CUDAFFT_HAVE_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

#include <stdlib.h>
#include <string.h>

#define TYPE_F32 "float32"
#define TYPE_F16 "float16"

GstCaps *
gst_cuda_mel_spectrogram_tensor_template_caps(void)
{
  return gst_caps_new_full(gst_cuda_mel_spectrogram_tensor_structure_any(), NULL);
}

GstStructure *
gst_cuda_mel_spectrogram_tensor_structure_any(void)
{
  return gst_structure_from_string(GST_CUDA_MEL_SPECTROGRAM_TENSOR_MEDIA_TYPE
                                   ", format=(string)static, num_tensors=(int)1, "
                                   "types=(string){ " TYPE_F32 ", " TYPE_F16 " }, "
                                   "framerate=(fraction)[ 0/1, 2147483647/1 ]",
                                   NULL);
}

void
gst_cuda_mel_spectrogram_tensor_shape(const CudafftFeaturesConfig *config,
                                      const CudafftFeaturesShape *shape, gsize dims[3])
{
  const gboolean feature_major = config->layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
  dims[0] = config->channels;
  dims[1] = feature_major ? shape->features : shape->frames;
  dims[2] = feature_major ? shape->frames : shape->features;
}

/* Samples from one output's position to the next's. */
static guint64
output_step(const CudafftFeaturesConfig *c)
{
  switch (c->output) {
  case CUDAFFT_FEATURES_OUTPUT_WINDOWS:
    return (guint64)c->hop * c->window_stride;
  case CUDAFFT_FEATURES_OUTPUT_CHUNKS:
    return c->chunk_samples;
  default:
    return c->hop;
  }
}

GstStructure *
gst_cuda_mel_spectrogram_tensor_structure(const CudafftFeaturesConfig *config,
                                          const CudafftFeaturesShape *shape)
{
  gsize dims[3];
  gst_cuda_mel_spectrogram_tensor_shape(config, shape, dims);
  gchar *text = g_strdup_printf("%zu:%zu:%zu", dims[2], dims[1], dims[0]);
  GstStructure *s = gst_cuda_mel_spectrogram_tensor_structure_any();
  /* outputs per second, rate / step, reduced (a fraction's parts are gints) */
  guint64 num = (guint64)config->sample_rate, den = output_step(config), a = num, b = den;
  while (b != 0) {
    const guint64 r = a % b;
    a = b;
    b = r;
  }
  num /= MAX(a, 1);
  den /= MAX(a, 1);
  while (num > G_MAXINT || den > G_MAXINT) {
    num /= 2;
    den = MAX(den / 2, 1);
  }
  gst_structure_set(s, "dimensions", G_TYPE_STRING, text, "framerate", GST_TYPE_FRACTION, (gint)num,
                    (gint)den, NULL);
  g_free(text);
  return s;
}

gboolean
gst_cuda_mel_spectrogram_tensor_precision(const GstCaps *caps, CudafftFeaturesPrecision *precision,
                                          gchar **why)
{
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const gchar *type = s ? gst_structure_get_string(s, "types") : NULL;
  if (type && strcmp(type, TYPE_F32) == 0) {
    *precision = CUDAFFT_FEATURES_F32;
    return TRUE;
  }
  if (type && strcmp(type, TYPE_F16) == 0) {
    *precision = CUDAFFT_FEATURES_F16;
    return TRUE;
  }
  *why =
      g_strdup_printf("the tensor type is %s; cudamelspectrogram makes " TYPE_F32 " or " TYPE_F16,
                      type ? type : "not given");
  return FALSE;
}

gboolean
gst_cuda_mel_spectrogram_tensor_dims(const GstCaps *caps, gsize dims[3])
{
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const gchar *text = s ? gst_structure_get_string(s, "dimensions") : NULL;
  if (!text)
    return FALSE;
  gchar **parts = g_strsplit(text, ":", -1);
  gboolean ok = g_strv_length(parts) == 3;
  for (guint i = 0; ok && i < 3; i++) {
    gchar *end = NULL;
    const guint64 v = g_ascii_strtoull(parts[i], &end, 10);
    ok = end && *end == '\0' && end != parts[i] && v > 0;
    dims[2 - i] = (gsize)v;
  }
  g_strfreev(parts);
  return ok;
}

#ifdef GST_CUDAFFT_HAVE_TENSOR_META

gboolean
gst_cuda_mel_spectrogram_has_tensor_meta(void)
{
  return TRUE;
}

gboolean
gst_cuda_mel_spectrogram_add_tensor_meta(GstBuffer *buffer, const CudafftFeaturesConfig *config,
                                         const CudafftFeaturesShape *shape)
{
  gsize dims[3];
  gst_cuda_mel_spectrogram_tensor_shape(config, shape, dims);
  /* the tensor's data is the buffer's own memory, shared: no copy, and no reference to the buffer
   * itself (which holds the meta) */
  GstBuffer *data = gst_buffer_new();
  for (guint i = 0; i < gst_buffer_n_memory(buffer); i++)
    gst_buffer_append_memory(data, gst_memory_ref(gst_buffer_peek_memory(buffer, i)));
  gchar *id =
      g_strdup_printf("cudamelspectrogram/%s", gst_cuda_mel_spectrogram_kind_nick(config->kind));
  GstTensor *tensor = gst_tensor_new_simple(g_quark_from_string(id),
                                            config->precision == CUDAFFT_FEATURES_F16
                                                ? GST_TENSOR_DATA_TYPE_FLOAT16
                                                : GST_TENSOR_DATA_TYPE_FLOAT32,
                                            data, GST_TENSOR_DIM_ORDER_ROW_MAJOR, 3, dims);
  g_free(id);
  if (!tensor) {
    gst_buffer_unref(data);
    return FALSE;
  }
  GstTensorMeta *meta = gst_buffer_add_tensor_meta(buffer);
  if (!meta) {
    gst_tensor_free(tensor);
    return FALSE;
  }
  GstTensor **tensors = g_new(GstTensor *, 1);
  tensors[0] = tensor;
  gst_tensor_meta_set(meta, 1, tensors);
  return TRUE;
}

#else

gboolean
gst_cuda_mel_spectrogram_has_tensor_meta(void)
{
  return FALSE;
}

gboolean
gst_cuda_mel_spectrogram_add_tensor_meta(GstBuffer *buffer, const CudafftFeaturesConfig *config,
                                         const CudafftFeaturesShape *shape)
{
  (void)buffer;
  (void)config;
  (void)shape;
  return TRUE;
}

#endif
