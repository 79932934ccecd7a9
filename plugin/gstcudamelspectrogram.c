/* gstcudamelspectrogram.c: cudamelspectrogram computes the features a speech or audio model takes
 * (cudafft/features.h) from each channel of the audio and pushes them as tensors
 * (gstcudamelspectrogramtensor.h), one output of the engine per buffer. Its properties and
 * presets are gstcudamelspectrogramproperties.c's. */
/**
 * SECTION:element-cudamelspectrogram
 * @title: cudamelspectrogram
 *
 * cudamelspectrogram computes, from each channel of the audio, the features a speech or audio
 * model was trained on: a mel spectrogram, log-mel (Whisper), Kaldi's filter-bank energies or
 * MFCC, with deltas, exactly as the library the model was trained with computes them, on an
 * NVIDIA GPU (or on the CPU with backend=cpu; backend=auto falls back to it where no GPU is
 * usable). #GstCudaMelSpectrogram:preset sets every convention of a library (whisper,
 * kaldi-fbank, kaldi-mfcc, librosa, librosa-mfcc, torchaudio, torchaudio-mfcc, nemo); every
 * other property sets one of them, and a property set explicitly wins over the preset whatever
 * the order they were set in. Reading a property gives the value in effect.
 *
 * The output is a tensor stream (`other/tensors`, NNStreamer's format: `types` float32 or
 * float16, as downstream asks; `dimensions` innermost first), one tensor per buffer: a frame, a
 * window of #GstCudaMelSpectrogram:window-frames frames or a chunk of
 * #GstCudaMelSpectrogram:chunk-samples samples (#GstCudaMelSpectrogram:output), each laid out
 * [channel][frame][feature] or [channel][feature][frame] (#GstCudaMelSpectrogram:layout). Built
 * against GStreamer 1.26 or later with its analytics library, every buffer also carries a
 * GstTensorMeta describing the same tensor. A buffer's timestamp is that of the sample its
 * first frame stands for, its duration the time to the next output, its offset the output's
 * number in the run; the latency reported is the most an output waits for its samples.
 *
 * On the GPU both pads also take CUDA memory (`audio/x-raw(memory:CUDAMemory)` in,
 * `other/tensors(memory:CUDAMemory)` out): an inference element or an application's TensorRT or
 * ONNX Runtime binding reads the features where they are, without a copy to the host.
 *
 * ## Example pipelines
 * |[
 * gst-launch-1.0 filesrc location=speech.wav ! wavparse ! audioconvert ! audioresample ! \
 *     audio/x-raw,rate=16000 ! cudamelspectrogram preset=whisper ! fakesink
 * ]| Whisper's 80 x 3000 log-mel of every 30 s of the file.
 * |[
 * gst-launch-1.0 autoaudiosrc ! audioconvert ! audioresample ! audio/x-raw,rate=16000 ! \
 *     cudamelspectrogram preset=kaldi-fbank n-mels=80 ! fakesink
 * ]| Kaldi's 80 filter-bank energies of every 10 ms, as they come.
 */
#include "gstcudamelspectrogram.h"

#include "gstcudafftcaps.h"
#include "gstcudafftcudamemory.h"
#include "gstcudafftproperties.h"
#include "gstcudamelspectrogramproperties.h"
#include "gstcudamelspectrogramtensor.h"

#include <cudafft/features.h>
#include <gst/audio/audio.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC(gst_cuda_mel_spectrogram_debug);
#define GST_CAT_DEFAULT gst_cuda_mel_spectrogram_debug

struct _GstCudaMelSpectrogram {
  GstCudafftAudioFilter parent;

  GstCudaMelSpectrogramSettings settings; /* the properties, under the object lock */
  gint rate;                              /* the stream's rate, for reading back (atomic) */
  GstCudafftLatency latency;

  /* streaming thread only */
  GstAudioInfo in_info;
  CudafftFeaturesConfig config; /* what the engine and the src caps were made for */
  CudafftFeaturesShape shape;
  GstCudaMelSpectrogramSettings in_force; /* the settings `config` was made from */
  guint generation_seen;                  /* the settings' generation last looked at */
  gboolean cuda_out;                      /* the src caps carry memory:CUDAMemory */
  CudafftFeaturesConfig warned_empty;     /* the last config whose empty filters were said */
};

#define SINK_CAPS                                                                                  \
  "audio/x-raw, format = (string) { S16LE, S32LE, F32LE, F64LE }, layout = (string) "              \
  "interleaved, rate = (int) [ 1, MAX ], " GST_CUDAFFT_CHANNELS_FIELD

static GstStaticCaps sink_caps = GST_STATIC_CAPS(SINK_CAPS);

G_DEFINE_TYPE_WITH_CODE(GstCudaMelSpectrogram, gst_cuda_mel_spectrogram,
                        GST_TYPE_CUDAFFT_AUDIO_FILTER,
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_mel_spectrogram_debug,
                                                "cudamelspectrogram", 0,
                                                "GPU mel spectrograms, filter banks and MFCC"));
GST_ELEMENT_REGISTER_DEFINE(cudamelspectrogram, "cudamelspectrogram", GST_RANK_NONE,
                            GST_TYPE_CUDA_MEL_SPECTROGRAM);

GST_CUDAFFT_DEFINE_ENGINE(features_engine, features, CudafftFeatures, CudafftFeaturesConfig,
                          "the features engine");

static GstCudaMelSpectrogramSettings
current_settings(GstCudaMelSpectrogram *self)
{
  GST_OBJECT_LOCK(self);
  const GstCudaMelSpectrogramSettings s = self->settings;
  GST_OBJECT_UNLOCK(self);
  return s;
}

/* Properties --------------------------------------------------------------------------------- */

static void
gst_cuda_mel_spectrogram_set_property(GObject *object, guint prop_id, const GValue *value,
                                      GParamSpec *pspec)
{
  gst_cuda_mel_spectrogram_properties_set(object, &GST_CUDA_MEL_SPECTROGRAM(object)->settings,
                                          prop_id, value, pspec);
}

/* The value in effect: the configuration at the stream's rate (16000 Hz before there is one, or
 * where the preset does not take the stream's: the stream has none in effect then). */
static void
gst_cuda_mel_spectrogram_get_property(GObject *object, guint prop_id, GValue *value,
                                      GParamSpec *pspec)
{
  GstCudaMelSpectrogram *self = GST_CUDA_MEL_SPECTROGRAM(object);
  const GstCudaMelSpectrogramSettings s = current_settings(self);
  const gint rate = g_atomic_int_get(&self->rate);
  CudafftFeaturesConfig effective;
  CudafftStatus status;
  gchar *why = NULL;
  if (rate <= 0 || !gst_cuda_mel_spectrogram_settings_config(&s, rate, &effective, &status, &why)) {
    g_free(why);
    why = NULL;
    gst_cuda_mel_spectrogram_settings_config(&s, GST_CUDA_MEL_SPECTROGRAM_DEFAULT_RATE, &effective,
                                             &status, &why);
  }
  g_free(why);
  gst_cuda_mel_spectrogram_properties_get(object, &s, &effective, prop_id, value, pspec);
}

/* Configurations ------------------------------------------------------------------------------ */

/* The configuration `s` asks for on this stream (the input's rate, channels and format; the
 * precision negotiated), validated by the engine's rules, into *config and *shape. FALSE where it
 * cannot be, with *status and *why (g_free) saying why. */
static gboolean
make_config(GstCudaMelSpectrogram *self, const GstCudaMelSpectrogramSettings *s,
            CudafftFeaturesPrecision precision, CudafftFeaturesConfig *config,
            CudafftFeaturesShape *shape, CudafftStatus *status, gchar **why)
{
  if (!gst_cuda_mel_spectrogram_settings_config(s, GST_AUDIO_INFO_RATE(&self->in_info), config,
                                                status, why))
    return FALSE;
  config->channels = (unsigned)GST_AUDIO_INFO_CHANNELS(&self->in_info);
  config->format = gst_cudafft_sample_format(GST_AUDIO_INFO_FORMAT(&self->in_info));
  config->precision = precision;
  *status = cudafft_features_shape(config, shape);
  if (*status == CUDAFFT_STATUS_OK)
    return TRUE;
  *why = g_strdup(cudafft_last_error_message());
  return FALSE;
}

/* The ERROR for settings the stream cannot have: a preset's rate (Whisper's 16 kHz) says what to
 * put before the element. */
static void
post_config_error(GstCudaMelSpectrogram *self, const GstCudaMelSpectrogramSettings *s,
                  CudafftStatus status, const gchar *why)
{
  const gint rate = GST_AUDIO_INFO_RATE(&self->in_info);
  const gint preset_rate = gst_cuda_mel_spectrogram_preset_rate(s->preset);
  const gchar *preset = gst_cudafft_enum_nick(GST_TYPE_CUDA_MEL_SPECTROGRAM_PRESET, s->preset);
  if (preset_rate > 0 && rate != preset_rate) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("preset=%s takes %d Hz audio only; this stream is %d Hz. Put audioresample "
                       "before cudamelspectrogram (... ! audioresample ! audio/x-raw,rate=%d ! "
                       "cudamelspectrogram preset=%s).",
                       preset, preset_rate, rate, preset_rate, preset),
                      ("%s", why));
    return;
  }
  switch (status) {
  case CUDAFFT_STATUS_INVALID_SIZE:
  case CUDAFFT_STATUS_INVALID_VALUE:
  case CUDAFFT_STATUS_UNSUPPORTED:
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("cudamelspectrogram%s%s cannot run at %d Hz with %d channels: %s.",
                       s->preset ? " preset=" : "", s->preset ? preset : "", rate,
                       GST_AUDIO_INFO_CHANNELS(&self->in_info), why),
                      (NULL));
    break;
  default:
    gst_cudafft_audio_filter_post_error(GST_CUDAFFT_AUDIO_FILTER(self), status,
                                        "cudafft_features_shape");
    break;
  }
}

/* Mel filters with no weight (more bands than the bins between f-min and f-max separate): a
 * WARNING naming them, as librosa warns, once per configuration. */
static void
warn_empty_filters(GstCudaMelSpectrogram *self, const CudafftFeaturesConfig *config)
{
  if (gst_cuda_mel_spectrogram_config_equal(config, &self->warned_empty))
    return;
  self->warned_empty = *config;
  unsigned list[16], count = 0;
  if (cudafft_features_empty_filters(config, list, G_N_ELEMENTS(list), &count) !=
          CUDAFFT_STATUS_OK ||
      count == 0)
    return;
  GString *names = g_string_new(NULL);
  for (unsigned i = 0; i < MIN(count, G_N_ELEMENTS(list)); i++)
    g_string_append_printf(names, "%s%u", i ? ", " : "", list[i]);
  if (count > G_N_ELEMENTS(list))
    g_string_append_printf(names, " and %u more", count - (unsigned)G_N_ELEMENTS(list));
  GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS,
                      ("%u of the %u mel filters are empty (filters %s: always 0, or the log's "
                       "floor): n-mels=%u is more bands than the %zu bins of fft-size=%zu "
                       "separate between f-min and f-max. Use fewer n-mels or a larger fft-size.",
                       count, config->n_mels, names->str, config->n_mels, config->fft_size / 2 + 1,
                       config->fft_size),
                      (NULL));
  g_string_free(names, TRUE);
}

/* Makes the engine for `config` (validated) and takes it as the one in force. */
static gboolean
open_engine(GstCudaMelSpectrogram *self, const CudafftFeaturesConfig *config,
            const CudafftFeaturesShape *shape, const GstCudaMelSpectrogramSettings *from)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  gst_cudafft_audio_filter_close_engine(filter);
  if (!gst_cudafft_audio_filter_open_engine(filter, &features_engine, config))
    return FALSE;
  self->config = *config;
  self->shape = *shape;
  self->in_force = *from;
  self->generation_seen = from->generation;
  warn_empty_filters(self, config);
  const gint rate = GST_AUDIO_INFO_RATE(&self->in_info);
  gst_cudafft_audio_filter_set_run_format(filter, rate, MAX(config->hop / 2, 1));
  gst_cudafft_audio_filter_set_frame_bytes(filter, GST_AUDIO_INFO_BPF(&self->in_info));
  const guint64 latency = cudafft_features_latency(features_engine_of(self));
  gst_cudafft_latency_update(&self->latency, GST_ELEMENT(self), (gint)MIN(latency, G_MAXINT), rate);
  GST_INFO_OBJECT(self,
                  "%s, %u channels at %d Hz: %zu features x %zu frames per output, %zu bytes, "
                  "latency %" G_GUINT64_FORMAT " samples",
                  gst_cuda_mel_spectrogram_kind_nick(config->kind), config->channels, rate,
                  shape->features, shape->frames, shape->bytes, latency);
  return TRUE;
}

/* Caps --------------------------------------------------------------------------------------- */

/* The tensor caps for raw caps: the shape where rate and channels are fixed and the settings
 * valid there, any shape otherwise (set_caps then says what is wrong). */
static GstCaps *
tensor_caps_for(GstCudaMelSpectrogram *self, GstCaps *raw)
{
  const GstCudaMelSpectrogramSettings s = current_settings(self);
  GstCaps *result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(raw); i++) {
    const GstStructure *in = gst_caps_get_structure(raw, i);
    gint rate = 0, channels = 0;
    CudafftFeaturesConfig config;
    CudafftFeaturesShape shape;
    CudafftStatus status;
    gchar *why = NULL;
    GstStructure *out = NULL;
    if (gst_structure_get_int(in, "rate", &rate) &&
        gst_structure_get_int(in, "channels", &channels) && channels > 0 &&
        gst_cuda_mel_spectrogram_settings_config(&s, rate, &config, &status, &why)) {
      config.channels = (unsigned)channels;
      if (cudafft_features_shape(&config, &shape) == CUDAFFT_STATUS_OK)
        out = gst_cuda_mel_spectrogram_tensor_structure(&config, &shape);
    }
    g_free(why);
    result = gst_caps_merge_structure(result,
                                      out ? out : gst_cuda_mel_spectrogram_tensor_structure_any());
  }
  return result;
}

/* The audio a tensor caps can come from: any, and a preset's own rate first (Whisper's 16 kHz),
 * so that an audioresample or a source before the element picks it. */
static GstCaps *
raw_caps_for(GstCudaMelSpectrogram *self)
{
  GstCaps *any = gst_static_caps_get(&sink_caps);
  const gint rate = gst_cuda_mel_spectrogram_preset_rate(current_settings(self).preset);
  if (rate == 0)
    return any;
  GstCaps *preferred = gst_caps_copy(any);
  gst_caps_set_simple(preferred, "rate", G_TYPE_INT, rate, NULL);
  return gst_caps_merge(preferred, any);
}

static GstCaps *
gst_cuda_mel_spectrogram_transform_caps(GstBaseTransform *trans, GstPadDirection direction,
                                        GstCaps *caps, GstCaps *filter)
{
  GstCudaMelSpectrogram *self = GST_CUDA_MEL_SPECTROGRAM(trans);
  GstCudafftAudioFilter *base = GST_CUDAFFT_AUDIO_FILTER(self);
  /* either side in system memory, and in CUDA memory after it where the GPU runs */
  GstCaps *result = gst_cudafft_audio_filter_offer_cuda_memory(
      base, direction == GST_PAD_SINK ? tensor_caps_for(self, caps) : raw_caps_for(self));
  return gst_cudafft_audio_filter_filter_caps(base, direction, caps, result, filter);
}

static gboolean
gst_cuda_mel_spectrogram_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaMelSpectrogram *self = GST_CUDA_MEL_SPECTROGRAM(trans);
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  GstAudioInfo in_info;
  if (!gst_cudafft_audio_filter_read_audio_caps(filter, incaps, &in_info))
    return FALSE;
  CudafftFeaturesPrecision precision;
  gchar *why = NULL;
  if (!gst_cuda_mel_spectrogram_tensor_precision(outcaps, &precision, &why)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot negotiate: %s.", why),
                      ("output caps %" GST_PTR_FORMAT, outcaps));
    g_free(why);
    return FALSE;
  }
  self->in_info = in_info;
  g_atomic_int_set(&self->rate, GST_AUDIO_INFO_RATE(&in_info));
  const GstCudaMelSpectrogramSettings s = current_settings(self);
  CudafftFeaturesConfig config;
  CudafftFeaturesShape shape;
  CudafftStatus status;
  if (!make_config(self, &s, precision, &config, &shape, &status, &why)) {
    gst_cudafft_audio_filter_close_engine(filter);
    post_config_error(self, &s, status, why);
    g_free(why);
    return FALSE;
  }
  /* the caps were made from these settings, unless they changed meanwhile */
  gsize dims[3], want[3];
  gst_cuda_mel_spectrogram_tensor_shape(&config, &shape, want);
  if (!gst_cuda_mel_spectrogram_tensor_dims(outcaps, dims) || memcmp(dims, want, sizeof dims)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("Cannot negotiate: the output caps do not have the tensor's dimensions "
                       "(%zu x %zu x %zu).",
                       want[0], want[1], want[2]),
                      ("output caps %" GST_PTR_FORMAT, outcaps));
    return FALSE;
  }
  self->cuda_out = gst_cudafft_caps_is_cuda_memory(outcaps);
  if (self->cuda_out && shape.bytes % 4 != 0) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("A float16 tensor of an odd number of values (%zu) cannot go out in CUDA "
                       "memory, which holds whole 4-byte words: use float32, or an even count.",
                       shape.values),
                      (NULL));
    return FALSE;
  }
  if (!features_engine_of(self) || !gst_cuda_mel_spectrogram_config_equal(&config, &self->config)) {
    if (!open_engine(self, &config, &shape, &s))
      return FALSE;
  }
  /* offered where the GPU was expected; the engine may have fallen back to the CPU */
  return gst_cudafft_audio_filter_check_memory(filter, incaps, outcaps);
}

/* Downstream must take our tensors before the run goes on: a refusal is said here, by name. */
static gboolean
check_downstream(GstCudaMelSpectrogram *self, GstCaps *incaps)
{
  if (!gst_cudafft_audio_filter_check_downstream_memory(GST_CUDAFFT_AUDIO_FILTER(self)))
    return FALSE;
  GstCaps *ours =
      gst_cuda_mel_spectrogram_transform_caps(GST_BASE_TRANSFORM(self), GST_PAD_SINK, incaps, NULL);
  GstCaps *peer = gst_pad_peer_query_caps(GST_BASE_TRANSFORM_SRC_PAD(self), ours);
  gboolean ok = TRUE;
  if (!gst_caps_is_empty(ours) && gst_caps_is_empty(peer)) {
    gchar *why = gst_cudafft_caps_describe_refusal(GST_BASE_TRANSFORM_SRC_PAD(self), ours,
                                                   "cudamelspectrogram", "other/tensors");
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot negotiate: %s.", why),
                      ("our caps %" GST_PTR_FORMAT, ours));
    g_free(why);
    ok = FALSE;
  }
  gst_caps_unref(peer);
  gst_caps_unref(ours);
  return ok;
}

/* Output ------------------------------------------------------------------------------------- */

/* Stamps output `index` of the run from the engine's stamp and pushes it (taken). */
static GstFlowReturn
push_output(GstCudaMelSpectrogram *self, GstBuffer *buffer, guint64 index)
{
  CudafftFeaturesStamp stamp;
  const CudafftStatus status = cudafft_features_stamp(features_engine_of(self), index, &stamp);
  if (status != CUDAFFT_STATUS_OK) {
    gst_buffer_unref(buffer);
    gst_cudafft_audio_filter_post_error(GST_CUDAFFT_AUDIO_FILTER(self), status,
                                        "cudafft_features_stamp");
    return GST_FLOW_ERROR;
  }
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  gst_cudafft_run_stamp(run, buffer, stamp.position, stamp.duration);
  GST_BUFFER_OFFSET(buffer) = stamp.index;
  GST_BUFFER_OFFSET_END(buffer) = stamp.index + 1;
  if (stamp.index == 0)
    GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  if (!gst_cuda_mel_spectrogram_add_tensor_meta(buffer, &self->config, &self->shape))
    GST_WARNING_OBJECT(self, "cannot add a GstTensorMeta to output %" G_GUINT64_FORMAT, index);
  run->produced = stamp.index + 1;
  return gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), buffer);
}

/* Pushes the `count` outputs the engine wrote one after another into `buffer` (taken), the first
 * of them output `first`: one tensor per buffer. In system memory the first stays in `buffer` and
 * the others are copied into buffers of their own (a few hundred bytes each for frames); in CUDA
 * memory each is cut on the device. */
static GstFlowReturn
push_outputs(GstCudaMelSpectrogram *self, GstBuffer *buffer, guint64 first, gsize count)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  const gsize bytes = self->shape.bytes;
  if (count <= 1)
    return count ? push_output(self, buffer, first) : GST_FLOW_OK;
  GstBuffer **parts = g_new0(GstBuffer *, count);
  gboolean ok = TRUE;
  if (self->cuda_out) {
    for (gsize i = 0; ok && i < count; i++)
      ok = (parts[i] = gst_cudafft_audio_filter_trim_output(filter, gst_buffer_ref(buffer),
                                                            i * bytes, bytes)) != NULL;
    gst_buffer_unref(buffer);
  } else {
    GstMapInfo all = GST_MAP_INFO_INIT;
    const gboolean mapped = gst_buffer_map(buffer, &all, GST_MAP_READ);
    if (!mapped)
      GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot read an output buffer."), (NULL));
    ok = mapped;
    /* plain memory: the pool's buffers are as large as the whole push's output */
    for (gsize i = 1; ok && i < count; i++) {
      guint8 *copy = g_try_malloc(bytes);
      if (copy) {
        memcpy(copy, all.data + i * bytes, bytes);
        parts[i] = gst_buffer_new_wrapped(copy, bytes);
      } else {
        GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                          ("Out of memory for a tensor of %" G_GSIZE_FORMAT " bytes.", bytes),
                          (NULL));
        ok = FALSE;
      }
    }
    if (mapped)
      gst_buffer_unmap(buffer, &all);
    gst_buffer_resize(buffer, 0, (gssize)bytes);
    parts[0] = buffer;
  }
  GstFlowReturn ret = ok ? GST_FLOW_OK : GST_FLOW_ERROR; /* posted */
  for (gsize i = 0; i < count; i++) {
    if (parts[i] && ret == GST_FLOW_OK)
      ret = push_output(self, parts[i], first + i);
    else if (parts[i])
      gst_buffer_unref(parts[i]);
  }
  g_free(parts);
  return ret;
}

/* The samples of `samples` whose push completes at most `most` outputs (at least one sample). */
static gsize
samples_for_outputs(const CudafftFeatures *engine, gsize samples, gsize most)
{
  if (cudafft_features_outputs_for(engine, samples) <= most)
    return samples;
  gsize lo = 1, hi = samples; /* outputs_for grows with the samples */
  while (lo < hi) {
    const gsize mid = lo + (hi - lo + 1) / 2;
    if (cudafft_features_outputs_for(engine, mid) <= most)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* Runs the engine over `samples` samples at `data` (device memory where the input is) and pushes
 * every output they complete, in buffers of at most GST_CUDAFFT_MAX_OUTPUT_BYTES per engine call
 * (one output in CUDA memory, where a buffer cannot be cut in place). */
static GstFlowReturn
analyse(GstCudaMelSpectrogram *self, const guint8 *data, gsize samples)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  CudafftFeatures *engine = features_engine_of(self);
  const gsize bytes = self->shape.bytes, bpf = GST_AUDIO_INFO_BPF(&self->in_info);
  const gsize most = self->cuda_out ? 1 : MAX(GST_CUDAFFT_MAX_OUTPUT_BYTES / bytes, 1);
  const unsigned in_device =
      gst_cudafft_audio_filter_input_on_device(filter) ? CUDAFFT_IN_DEVICE : 0;
  GstFlowReturn ret = GST_FLOW_OK;
  while (ret == GST_FLOW_OK && samples > 0) {
    const gsize chunk = samples_for_outputs(engine, samples, most);
    const gsize count = cudafft_features_outputs_for(engine, chunk);
    const guint64 first = cudafft_features_outputs_done(engine);
    GstMapInfo map = GST_MAP_INFO_INIT;
    GstBuffer *buffer = NULL;
    if (count > 0 && !(buffer = gst_cudafft_audio_filter_map_output(filter, count * bytes, bytes,
                                                                    self->cuda_out, &map)))
      return GST_FLOW_ERROR; /* posted */
    const unsigned on_device = in_device | (buffer && self->cuda_out ? CUDAFFT_OUT_DEVICE : 0);
    size_t done = 0;
    /* into one of our elements, the tensors go on before the device has written them */
    const CudafftStatus status =
        on_device
            ? cudafft_features_push_device(
                  engine, data, chunk, map.data, &done, on_device,
                  gst_cudafft_audio_filter_input_fence(filter),
                  buffer ? gst_cudafft_audio_filter_output_fence(filter, self->cuda_out) : NULL)
            : cudafft_features_push(engine, data, chunk, map.data, &done);
    if (buffer)
      gst_cudafft_audio_filter_unmap_output(buffer, &map);
    if (status != CUDAFFT_STATUS_OK || done != count) {
      if (status != CUDAFFT_STATUS_OK)
        gst_cudafft_audio_filter_post_error(filter, status, "cudafft_features_push");
      else /* cudafft_features_outputs_for() promises they agree */
        GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Internal error: output counts disagree."),
                          ("expected %zu outputs, got %zu", count, done));
      if (buffer)
        gst_buffer_unref(buffer);
      return GST_FLOW_ERROR;
    }
    if (buffer && !gst_cudafft_audio_filter_fence_output(filter, buffer)) {
      gst_buffer_unref(buffer);
      return GST_FLOW_ERROR;
    }
    samples -= chunk;
    data += chunk * bpf;
    if (buffer)
      ret = push_outputs(self, buffer, first, count);
  }
  return ret;
}

/* Ends the run (the engine's finish: the last frames, the padded last chunk or window) and
 * pushes what it completes. */
static GstFlowReturn
drain(GstCudaMelSpectrogram *self)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  CudafftFeatures *engine = features_engine_of(self);
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  GstFlowReturn ret = GST_FLOW_OK;
  if (engine && run->active && run->samples > 0) {
    const gsize count = cudafft_features_finish_outputs(engine);
    const guint64 first = cudafft_features_outputs_done(engine);
    GstMapInfo map = GST_MAP_INFO_INIT;
    GstBuffer *buffer = NULL;
    if (count > 0 &&
        !(buffer = gst_cudafft_audio_filter_map_output(filter, count * self->shape.bytes,
                                                       self->shape.bytes, self->cuda_out, &map))) {
      gst_cudafft_audio_filter_reset_run(filter);
      return GST_FLOW_ERROR; /* posted */
    }
    size_t done = 0;
    const CudafftStatus status =
        buffer && self->cuda_out
            ? cudafft_features_finish_device(
                  engine, map.data, &done, CUDAFFT_OUT_DEVICE,
                  gst_cudafft_audio_filter_output_fence(filter, self->cuda_out))
            : cudafft_features_finish(engine, map.data, &done);
    if (buffer)
      gst_cudafft_audio_filter_unmap_output(buffer, &map);
    if (status != CUDAFFT_STATUS_OK || done != count) {
      if (status != CUDAFFT_STATUS_OK)
        gst_cudafft_audio_filter_post_error(filter, status, "cudafft_features_finish");
      else
        GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Internal error: output counts disagree."),
                          ("expected %zu outputs at the end, got %zu", count, done));
      if (buffer)
        gst_buffer_unref(buffer);
      ret = GST_FLOW_ERROR;
    } else if (buffer && !gst_cudafft_audio_filter_fence_output(filter, buffer)) {
      gst_buffer_unref(buffer);
      ret = GST_FLOW_ERROR;
    } else if (buffer) {
      ret = push_outputs(self, buffer, first, count);
    }
    GST_DEBUG_OBJECT(self, "drained the run: %" G_GUINT64_FORMAT " samples, %zu outputs at the end",
                     run->samples, count);
  }
  gst_cudafft_audio_filter_reset_run(filter);
  return ret;
}

/* Settings changed while streaming ------------------------------------------------------------ */

/* Refuses settings the stream cannot have: a WARNING, and the properties back to those in force
 * (where nothing was set since), so that they read back what is in force. */
static void
refuse_settings(GstCudaMelSpectrogram *self, const GstCudaMelSpectrogramSettings *asked,
                const gchar *why)
{
  gst_cudafft_refuse_value(GST_ELEMENT(self),
                           "New settings refused: %s. Keeping the settings in force.", why);
  GST_OBJECT_LOCK(self);
  if (self->settings.generation == asked->generation) {
    self->settings = self->in_force;
    self->settings.generation = asked->generation;
  }
  GST_OBJECT_UNLOCK(self);
}

/* Applies property changes made while streaming: the run so far ends (drained, with its caps),
 * then new caps and a new engine take over. */
static GstFlowReturn
apply_settings(GstCudaMelSpectrogram *self)
{
  const GstCudaMelSpectrogramSettings s = current_settings(self);
  if (s.generation == self->generation_seen)
    return GST_FLOW_OK;
  self->generation_seen = s.generation;
  CudafftFeaturesConfig config;
  CudafftFeaturesShape shape;
  CudafftStatus status;
  gchar *why = NULL;
  if (!make_config(self, &s, self->config.precision, &config, &shape, &status, &why)) {
    refuse_settings(self, &s, why);
    g_free(why);
    return GST_FLOW_OK;
  }
  if (gst_cuda_mel_spectrogram_config_equal(&config, &self->config)) {
    self->in_force = s;
    return GST_FLOW_OK;
  }
  if (self->cuda_out && shape.bytes % 4 != 0) {
    refuse_settings(self, &s,
                    "a float16 tensor of an odd number of values cannot go out in CUDA "
                    "memory");
    return GST_FLOW_OK;
  }
  GstFlowReturn ret = drain(self);
  /* Downstream refused the tensors of the old settings (NOT_NEGOTIATED, or FLUSHING from an
   * element that posted that ERROR while no flush is under way): they can never go out, and
   * keeping them would refuse every later change too. They are dropped with the old engine. */
  const gboolean refused_downstream =
      ret == GST_FLOW_NOT_NEGOTIATED ||
      (ret == GST_FLOW_FLUSHING && !GST_PAD_IS_FLUSHING(GST_BASE_TRANSFORM_SINK_PAD(self)));
  if (ret != GST_FLOW_OK && !refused_downstream)
    return ret;
  GstCaps *caps =
      gst_caps_new_full(gst_cuda_mel_spectrogram_tensor_structure(&config, &shape), NULL);
  gst_caps_set_simple(caps, "types", G_TYPE_STRING,
                      config.precision == CUDAFFT_FEATURES_F16 ? "float16" : "float32", NULL);
  if (self->cuda_out) /* the tensors stay where they were negotiated */
    caps = gst_cudafft_caps_in_cuda_memory(caps);
  GST_INFO_OBJECT(self, "settings changed; new caps %" GST_PTR_FORMAT, caps);
  const gboolean ok = open_engine(self, &config, &shape, &s) &&
                      gst_base_transform_update_src_caps(GST_BASE_TRANSFORM(self), caps);
  gst_caps_unref(caps);
  return ok ? GST_FLOW_OK : GST_FLOW_NOT_NEGOTIATED;
}

/* The base class's steps ---------------------------------------------------------------------- */

static GstFlowReturn
gst_cuda_mel_spectrogram_prepare(GstCudafftAudioFilter *filter)
{
  return apply_settings(GST_CUDA_MEL_SPECTROGRAM(filter));
}

/* The tensors go out from analyse(), one per buffer. */
static GstFlowReturn
gst_cuda_mel_spectrogram_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf,
                                 const GstMapInfo *map, GstBuffer **outbuf)
{
  GstCudaMelSpectrogram *self = GST_CUDA_MEL_SPECTROGRAM(filter);
  (void)inbuf;
  (void)outbuf;
  const gsize samples = map->size / GST_AUDIO_INFO_BPF(&self->in_info);
  const GstFlowReturn ret = analyse(self, map->data, samples);
  gst_cudafft_audio_filter_get_run(filter)->samples += samples;
  return ret;
}

static GstFlowReturn
gst_cuda_mel_spectrogram_drain(GstCudafftAudioFilter *filter)
{
  return drain(GST_CUDA_MEL_SPECTROGRAM(filter));
}

static GstClockTime
gst_cuda_mel_spectrogram_get_latency(GstCudafftAudioFilter *filter)
{
  return gst_cudafft_latency_get(&GST_CUDA_MEL_SPECTROGRAM(filter)->latency);
}

/* Downstream must take our tensors before the run goes on; the rest is the base class's. */
static gboolean
gst_cuda_mel_spectrogram_sink_event(GstBaseTransform *trans, GstEvent *event)
{
  GstCudaMelSpectrogram *self = GST_CUDA_MEL_SPECTROGRAM(trans);
  if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    /* the channel limit first, with its own message (the base class would refuse those caps the
     * same way, after this) */
    if (!gst_cudafft_check_channels(GST_ELEMENT(self), caps) || !check_downstream(self, caps)) {
      gst_event_unref(event);
      return FALSE;
    }
  }
  return GST_BASE_TRANSFORM_CLASS(gst_cuda_mel_spectrogram_parent_class)->sink_event(trans, event);
}

static gboolean
gst_cuda_mel_spectrogram_start(GstBaseTransform *trans)
{
  GstCudaMelSpectrogram *self = GST_CUDA_MEL_SPECTROGRAM(trans);
  gst_audio_info_init(&self->in_info);
  memset(&self->config, 0, sizeof self->config);
  memset(&self->warned_empty, 0, sizeof self->warned_empty);
  self->cuda_out = FALSE;
  return TRUE;
}

static gboolean
gst_cuda_mel_spectrogram_stop(GstBaseTransform *trans)
{
  GstCudaMelSpectrogram *self = GST_CUDA_MEL_SPECTROGRAM(trans);
  g_atomic_int_set(&self->rate, 0);
  gst_cudafft_latency_reset(&self->latency);
  return GST_BASE_TRANSFORM_CLASS(gst_cuda_mel_spectrogram_parent_class)->stop(trans);
}

static void
gst_cuda_mel_spectrogram_class_init(GstCudaMelSpectrogramClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstCudafftAudioFilterClass *filter_class = GST_CUDAFFT_AUDIO_FILTER_CLASS(klass);

  gobject_class->set_property = gst_cuda_mel_spectrogram_set_property;
  gobject_class->get_property = gst_cuda_mel_spectrogram_get_property;
  gst_cuda_mel_spectrogram_properties_install(gobject_class);

  gst_cudafft_audio_filter_class_add_pad_templates(element_class, gst_static_caps_get(&sink_caps),
                                                   gst_cuda_mel_spectrogram_tensor_template_caps());
  gst_element_class_set_static_metadata(
      element_class, "CUDA mel spectrogram", "Filter/Converter/Audio/Analyzer",
      "Compute a model's input features (log-mel, filter banks, MFCC) from the audio on an NVIDIA "
      "GPU or the CPU (backend=cpu, FFTW), output tensors",
      "gst-cudafft developers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_mel_spectrogram_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cuda_mel_spectrogram_stop);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_mel_spectrogram_transform_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_cuda_mel_spectrogram_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_mel_spectrogram_sink_event);
  filter_class->drain = gst_cuda_mel_spectrogram_drain;
  filter_class->get_latency = gst_cuda_mel_spectrogram_get_latency;
  filter_class->prepare = gst_cuda_mel_spectrogram_prepare;
  filter_class->process = gst_cuda_mel_spectrogram_process;
  filter_class->takes_cuda_memory = TRUE;
  filter_class->memory_hint = "use fewer channels, n-mels or frames per output";
}

static void
gst_cuda_mel_spectrogram_init(GstCudaMelSpectrogram *self)
{
  gst_cuda_mel_spectrogram_settings_init(&self->settings);
  gst_cudafft_latency_reset(&self->latency);
}
