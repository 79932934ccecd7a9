/* gstcudafft.c: cudafft frames streaming audio, analyses the frames on the GPU (window, FFT and
 * the chosen representation in one kernel, all frames of a buffer in one launch chain) and pushes
 * audio/x-fft frames (gstcudafftcaps.h).
 *
 * Framing, so that no sample is lost and cudaifft can give every one back: each run (the stream
 * from its start, or from a flush, discontinuity, EOS or settings change) begins with
 * lead = fft-size - hop zero samples, so that every input sample lies in fft-size / hop frames.
 * Frame k covers input samples [k hop - lead, k hop - lead + fft-size). Its PTS is the time of
 * input sample k hop, which is the frame's first sample on the zero-padded timeline (and the
 * first of the hop samples it completes), so frames tile the timeline: duration = hop, clipped to
 * the input at the run's end (the frames only the appended zeros complete last 0). At the
 * end of a run zeros complete every frame that holds an input sample. The run's first buffer
 * carries a GstAudioClippingMeta with start = lead and its last one end = the zeros appended, the
 * way audio encoders mark their priming and padding; cudaifft drops exactly those. */
/**
 * SECTION:element-cudafft
 * @title: cudafft
 *
 * cudafft frames audio (#GstCudaFft:fft-size samples every #GstCudaFft:hop samples), windows each
 * frame (#GstCudaFft:window) and computes its spectrum on an NVIDIA GPU, or on the CPU (FFTW) with
 * backend=cpu (backend=auto falls back to it where no GPU is usable, saying why in an INFO
 * message), and pushes audio/x-fft
 * frames: per frame, each channel's fft-size/2+1 bins in turn, as #GstCudaFft:representation says
 * (complex (re, im) pairs, magnitude, power or dB). Only complex frames can be turned back into
 * audio, by cudaifft.
 *
 * No sample is lost: each run (the stream, or the part after a flush, discontinuity, timestamp
 * gap of more than half a hop, new segment or settings change) starts with fft-size - hop zero
 * samples, so that every input sample lies in fft-size / hop frames, and at its end zeros complete
 * every frame that holds an input sample. The run's first buffer carries a GstAudioClippingMeta
 * whose start is the zeros before, its last one whose end is the zeros after; cudaifft drops
 * exactly those. Frame k is stamped with the time of input sample k hop and lasts hop samples (at
 * a run's end, up to the input's last sample: the frames that only the appended zeros complete
 * last 0), so that an application that keeps each buffer's PTS, duration and offsets but not the
 * meta still tells cudaifft where the audio ends. The latency is hop / rate.
 *
 * On the GPU both pads also take CUDA memory (`audio/x-raw(memory:CUDAMemory)` in,
 * `audio/x-fft(memory:CUDAMemory)` out; the layout in docs/elements.md): the samples
 * are read and the frames written there by its kernels. The frames go out in CUDA memory where
 * downstream names it (cudaifft, an appsink with such caps), in system memory otherwise; into
 * cudaifft as soon as their device work is queued (cudaifft's is queued after it on the device),
 * into anything else once they are complete.
 *
 * ## Example pipeline
 * |[
 * gst-launch-1.0 audiotestsrc ! audio/x-raw,channels=2 ! cudafft fft-size=4096 hop=1024 \
 *     representation=db ! fakesink
 * ]| frames of 4096 samples every 1024 samples, each bin in dB.
 */
#include "gstcudafft.h"

#include <cudafft/stft.h>
#include "gstcudafftcaps.h"
#include "gstcudafftcudamemory.h"
#include "gstcudafftproperties.h"

#include <gst/audio/audio.h>

GST_DEBUG_CATEGORY_STATIC(gst_cuda_fft_debug);
#define GST_CAT_DEFAULT gst_cuda_fft_debug

enum { PROP_0, PROP_FFT_SIZE, PROP_HOP, PROP_WINDOW, PROP_REPRESENTATION };

#define DEFAULT_HOP 0 /* fft-size / 2 */
#define DEFAULT_WINDOW GST_CUDAFFT_WINDOW_HANN
#define DEFAULT_REPRESENTATION GST_CUDAFFT_REPRESENTATION_COMPLEX

typedef struct {
  guint fft_size;
  guint hop; /* 0: fft_size / 2 */
  GstCudafftWindow window;
  GstCudafftRepresentation representation;
} Settings;

struct _GstCudaFft {
  GstCudafftAudioFilter parent;

  Settings settings; /* the properties, under the object lock */

  /* streaming thread only */
  GstAudioInfo in_info;
  GstCudafftFrameInfo out_info; /* what the engine and the src caps were made for */
  gboolean cuda_out;            /* the src caps carry memory:CUDAMemory */
  guint hop_in_force;           /* the hop property the frames in force follow (0: fft-size / 2) */
  guint64 input_end;            /* while draining: the run's input samples; else G_MAXUINT64 */
};

#define SINK_CAPS                                                                                  \
  "audio/x-raw, format = (string) { S16LE, S32LE, F32LE, F64LE }, layout = (string) "              \
  "interleaved, rate = (int) [ 1, MAX ], " GST_CUDAFFT_CHANNELS_FIELD

#define FFT_SIZE_BLURB                                                                             \
  "Samples per frame: " GST_CUDAFFT_MIN_SIZE_TEXT " to " GST_CUDAFFT_MAX_SIZE_TEXT                 \
  " with no prime factor above 7 (400, 1000, 4096, ...); a change applies at the next input "      \
  "buffer"

/* The pad templates (made in class_init): SINK_CAPS, and every audio/x-fft caps we make
 * (gst_cudafft_frames_template_caps()), each in system memory and, where the build has it, in CUDA
 * memory. */
static GstStaticCaps sink_caps = GST_STATIC_CAPS(SINK_CAPS);

G_DEFINE_TYPE_WITH_CODE(GstCudaFft, gst_cuda_fft, GST_TYPE_CUDAFFT_AUDIO_FILTER,
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_fft_debug, "cudafft", 0,
                                                "GPU short-time Fourier analysis"));
GST_ELEMENT_REGISTER_DEFINE(cudafft, "cudafft", GST_RANK_NONE, GST_TYPE_CUDA_FFT);

GST_CUDAFFT_DEFINE_ENGINE(stft_engine, stft, CudafftStft, CudafftStftConfig, "the STFT analyser");

static guint
effective_hop(const Settings *s)
{
  return s->hop ? s->hop : s->fft_size / 2;
}

/* `base` with the framing the properties ask for. */
static CudafftStftConfig
config_for(const Settings *s, CudafftStftConfig base)
{
  base.fft_size = s->fft_size;
  base.hop = effective_hop(s);
  base.window = (CudafftWindow)s->window;
  base.representation = (CudafftRepresentation)s->representation;
  return base;
}

/* Whether two configs frame and represent alike (channels and format come from the input). */
static gboolean
same_framing(const CudafftStftConfig *a, const CudafftStftConfig *b)
{
  return a->fft_size == b->fft_size && a->hop == b->hop && a->window == b->window &&
         a->representation == b->representation;
}

static Settings
current_settings(GstCudaFft *self)
{
  GST_OBJECT_LOCK(self);
  const Settings s = self->settings;
  GST_OBJECT_UNLOCK(self);
  return s;
}

/* Properties --------------------------------------------------------------------------------- */

static void
gst_cuda_fft_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstCudaFft *self = GST_CUDA_FFT(object);
  switch (prop_id) {
  case PROP_FFT_SIZE: { /* GObject has checked the range */
    const guint size = g_value_get_uint(value);
    if (!gst_cudafft_fft_size_check(GST_ELEMENT(self), size, FALSE))
      break;
    GST_OBJECT_LOCK(self);
    self->settings.fft_size = size;
    GST_OBJECT_UNLOCK(self);
    break;
  }
  case PROP_HOP:
    GST_OBJECT_LOCK(self);
    self->settings.hop = g_value_get_uint(value);
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_WINDOW:
    GST_OBJECT_LOCK(self);
    self->settings.window = g_value_get_enum(value);
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_REPRESENTATION:
    GST_OBJECT_LOCK(self);
    self->settings.representation = g_value_get_enum(value);
    GST_OBJECT_UNLOCK(self);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}

static void
gst_cuda_fft_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstCudaFft *self = GST_CUDA_FFT(object);
  const Settings s = current_settings(self);
  switch (prop_id) {
  case PROP_FFT_SIZE:
    g_value_set_uint(value, s.fft_size);
    break;
  case PROP_HOP:
    g_value_set_uint(value, s.hop);
    break;
  case PROP_WINDOW:
    g_value_set_enum(value, s.window);
    break;
  case PROP_REPRESENTATION:
    g_value_set_enum(value, s.representation);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}

/* Caps --------------------------------------------------------------------------------------- */

static GstCaps *
frames_caps_for(const Settings *s, GstCaps *raw)
{
  GstCaps *result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(raw); i++) {
    const GstStructure *in = gst_caps_get_structure(raw, i);
    GstStructure *out = gst_cudafft_frames_structure_new(s->fft_size, effective_hop(s), s->window,
                                                         s->representation);
    gst_cudafft_copy_rate_and_channels(in, out);
    result = gst_caps_merge_structure(result, out);
  }
  return result;
}

static GstCaps *
raw_caps_for(GstCaps *frames)
{
  GstCaps *result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(frames); i++) {
    const GstStructure *in = gst_caps_get_structure(frames, i);
    GstCaps *templ = gst_static_caps_get(&sink_caps);
    GstStructure *out = gst_structure_copy(gst_caps_get_structure(templ, 0));
    gst_caps_unref(templ);
    gst_cudafft_copy_rate_and_channels(in, out);
    result = gst_caps_merge_structure(result, out);
  }
  return result;
}

static GstCaps *
gst_cuda_fft_transform_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                            GstCaps *filter)
{
  GstCudaFft *self = GST_CUDA_FFT(trans);
  const Settings s = current_settings(self);
  GstCudafftAudioFilter *base = GST_CUDAFFT_AUDIO_FILTER(self);
  /* either side in system memory, and in CUDA memory after it where the GPU runs */
  GstCaps *result = gst_cudafft_audio_filter_offer_cuda_memory(
      base, direction == GST_PAD_SINK ? frames_caps_for(&s, caps) : raw_caps_for(caps));
  return gst_cudafft_audio_filter_filter_caps(base, direction, caps, result, filter);
}

/* Makes the analyser for in_info and the frames caps in `caps`. The old one goes first, whether or
 * not a new one can be made: none is better than one for another format. */
static gboolean
open_engine(GstCudaFft *self, GstCaps *caps)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  gst_cudafft_audio_filter_close_engine(filter);
  gchar *why = NULL;
  GstCudafftFrameInfo info;
  if (!gst_cudafft_frames_caps_to_info(caps, &info, &why)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Invalid cudafft settings: %s.", why),
                      ("output caps %" GST_PTR_FORMAT, caps));
    g_free(why);
    return FALSE;
  }
  info.config.format = gst_cudafft_sample_format(GST_AUDIO_INFO_FORMAT(&self->in_info));
  self->out_info = info;
  if (!gst_cudafft_audio_filter_open_engine(filter, &stft_engine, &self->out_info.config))
    return FALSE;
  gst_cudafft_audio_filter_set_run_format(filter, GST_AUDIO_INFO_RATE(&self->in_info),
                                          MAX(info.config.hop / 2, 1));
  gst_cudafft_audio_filter_set_frame_bytes(filter, GST_AUDIO_INFO_BPF(&self->in_info));
  return TRUE;
}

static gboolean
gst_cuda_fft_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaFft *self = GST_CUDA_FFT(trans);
  GstAudioInfo in_info;
  if (!gst_cudafft_audio_filter_read_audio_caps(GST_CUDAFFT_AUDIO_FILTER(self), incaps, &in_info))
    return FALSE;
  /* A renegotiation to what the analyser runs keeps the stream going: the whole input format and
   * the whole frame format, channels and rate included, must agree (after a refused caps change,
   * a retry of other caps must not find the old analyser good enough). */
  GstCudafftFrameInfo out_info;
  gchar *why = NULL;
  const gboolean same = stft_engine_of(self) && gst_audio_info_is_equal(&in_info, &self->in_info) &&
                        gst_cudafft_frames_caps_to_info(outcaps, &out_info, &why) &&
                        same_framing(&out_info.config, &self->out_info.config) &&
                        out_info.config.channels == self->out_info.config.channels &&
                        out_info.rate == self->out_info.rate;
  g_free(why);
  self->cuda_out = gst_cudafft_caps_is_cuda_memory(outcaps);
  if (!same) {
    self->in_info = in_info;
    if (!open_engine(self, outcaps))
      return FALSE;
    /* the properties these caps were made from, where they still are */
    const Settings s = current_settings(self);
    const gboolean made_from = s.fft_size == self->out_info.config.fft_size &&
                               effective_hop(&s) == self->out_info.config.hop;
    self->hop_in_force = made_from ? s.hop : (guint)self->out_info.config.hop;
  }
  /* offered where the GPU was expected; the engine may have fallen back to the CPU */
  return gst_cudafft_audio_filter_check_memory(GST_CUDAFFT_AUDIO_FILTER(self), incaps, outcaps);
}

/* Frames ------------------------------------------------------------------------------------- */

static gsize
lead_samples(const GstCudaFft *self)
{
  return self->out_info.config.fft_size - self->out_info.config.hop;
}

/* Stamps `frames` new frames of the run and marks the run's first and last buffers. A buffer's
 * time is the input samples its frames complete, clipped to the input: the frames that the zeros
 * appended at a run's end complete lie beyond it and last 0, so that the last buffer's PTS +
 * duration that reaches furthest is the input's end, which an application that keeps timestamps
 * (and not the clipping meta) hands on to cudaifft. */
static void
finish_frames(GstCudaFft *self, GstBuffer *buffer, guint64 frames, guint64 end_padding)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  const guint64 hop = self->out_info.config.hop;
  const guint64 first = run->produced * hop, end = MIN(first + frames * hop, self->input_end);
  gst_cudafft_run_stamp(run, buffer, first, end > first ? end - first : 0);
  GST_BUFFER_OFFSET(buffer) = run->produced;
  GST_BUFFER_OFFSET_END(buffer) = run->produced + frames;
  const guint64 start_padding = run->produced == 0 ? lead_samples(self) : 0;
  if (run->produced == 0)
    GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  if (start_padding || end_padding)
    gst_buffer_add_audio_clipping_meta(buffer, GST_FORMAT_DEFAULT, start_padding, end_padding);
  run->produced += frames;
}

/* Runs the analyser over `samples` samples at `data` (NULL: zeros) and pushes the frames they
 * complete, in buffers of at most GST_CUDAFFT_MAX_OUTPUT_BYTES (one frame where a frame is larger):
 * a hop of 1 makes fft-size / 2 + 1 bins per channel of every input sample, far more than one
 * buffer should hold. The last buffer carries `end_padding` (the zeros appended) in its clipping
 * meta. */
static GstFlowReturn
analyse(GstCudaFft *self, const guint8 *data, gsize samples, guint64 end_padding)
{
  CudafftStft *stft = stft_engine_of(self);
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  /* samples in CUDA memory are read, and frames in CUDA memory written, in place on the device */
  const unsigned on_device =
      (data && gst_cudafft_audio_filter_input_on_device(filter) ? CUDAFFT_IN_DEVICE : 0) |
      (self->cuda_out ? CUDAFFT_OUT_DEVICE : 0);
  const gsize n = self->out_info.config.fft_size, hop = self->out_info.config.hop;
  const gsize bpf = GST_AUDIO_INFO_BPF(&self->in_info);
  const gsize frame_bytes = gst_cudafft_frame_bytes(&self->out_info);
  const gsize most = MAX(GST_CUDAFFT_MAX_OUTPUT_BYTES / frame_bytes, 1);
  GstFlowReturn ret = GST_FLOW_OK;
  do {
    /* the samples that complete at most `most` frames: the next frame completes once the held
     * samples reach n, each later one a hop after it */
    const gsize chunk = MIN(samples, n - cudafft_stft_held(stft) + most * hop - 1);
    const size_t frames = cudafft_stft_frames_for(stft, chunk);
    GstBuffer *buffer = NULL;
    GstMapInfo map = GST_MAP_INFO_INIT;
    size_t done = 0;
    CudafftStatus status;
    /* in CUDA memory the frames are written on the device: nothing crosses the bus; in system
     * memory equal input buffers complete this many frames or one more: the pool keeps one to
     * spare */
    if (frames > 0 && !(buffer = gst_cudafft_audio_filter_map_output(
                            filter, frames * frame_bytes, frame_bytes, self->cuda_out, &map)))
      return GST_FLOW_ERROR; /* posted */
    /* into one of our elements, the frames go on before the device has written them */
    status = cudafft_stft_push_device(
        stft, data, chunk, (float *)map.data, &done, on_device,
        data ? gst_cudafft_audio_filter_input_fence(filter) : NULL,
        buffer ? gst_cudafft_audio_filter_output_fence(filter, self->cuda_out) : NULL);
    if (buffer)
      gst_cudafft_audio_filter_unmap_output(buffer, &map);
    if (status != CUDAFFT_STATUS_OK) {
      gst_cudafft_audio_filter_post_error(filter, status, "cudafft_stft_push");
      if (buffer)
        gst_buffer_unref(buffer);
      return GST_FLOW_ERROR;
    }
    if (done != frames) { /* cudafft_stft_frames_for() promises they agree */
      GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Internal error: frame counts disagree."),
                        ("expected %zu frames, got %zu", frames, done));
      if (buffer)
        gst_buffer_unref(buffer);
      return GST_FLOW_ERROR;
    }
    samples -= chunk;
    if (data)
      data += chunk * bpf;
    if (buffer && !gst_cudafft_audio_filter_fence_output(filter, buffer)) {
      gst_buffer_unref(buffer);
      return GST_FLOW_ERROR;
    }
    if (buffer) {
      finish_frames(self, buffer, frames, samples == 0 ? end_padding : 0);
      ret = gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), buffer);
    }
  } while (ret == GST_FLOW_OK && samples > 0);
  return ret;
}

/* Ends the run: zeros complete every frame holding an input sample, and those frames go out
 * marked with how many zeros were appended. */
static GstFlowReturn
drain(GstCudaFft *self)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  GstFlowReturn ret = GST_FLOW_OK;
  if (run->active && run->samples > 0) {
    const guint64 n = self->out_info.config.fft_size, hop = self->out_info.config.hop;
    const guint64 lead = lead_samples(self), length = run->samples;
    const guint64 total_frames = (length - 1 + lead) / hop + 1;
    const guint64 zeros = (total_frames - 1) * hop + n - lead - length;
    self->input_end = length;
    ret = analyse(self, NULL, zeros, zeros);
    self->input_end = G_MAXUINT64;
    GST_DEBUG_OBJECT(self,
                     "drained the run: %" G_GUINT64_FORMAT " samples in %" G_GUINT64_FORMAT
                     " frames, %" G_GUINT64_FORMAT " zeros appended",
                     length, total_frames, zeros);
  }
  gst_cudafft_audio_filter_reset_run(GST_CUDAFFT_AUDIO_FILTER(self));
  return ret;
}

/* hop and fft-size, a pair, are checked together when they take effect (here, or at the start,
 * where the caps refuse them), never one against the other's old value when it is set, so that
 * they may be set in either order. While streaming a pair that cannot be is refused with a
 * WARNING and the frames in force go on: the two properties go back to what is in force where
 * they still hold what was refused (a value set since then is the next buffer's to check), so
 * that they read back what is in force. */
static void
refuse_framing(GstCudaFft *self, const Settings *asked)
{
  const guint fft_size = (guint)self->out_info.config.fft_size;
  gchar *hop = self->hop_in_force ? g_strdup_printf("%u", self->hop_in_force)
                                  : g_strdup_printf("0 (fft-size / 2)");
  gst_cudafft_refuse_value(GST_ELEMENT(self),
                           "hop=%u and fft-size=%u refused: the hop must not be larger than "
                           "fft-size. Keeping hop=%s and fft-size=%u.",
                           asked->hop, asked->fft_size, hop, fft_size);
  g_free(hop);
  GST_OBJECT_LOCK(self);
  if (self->settings.hop == asked->hop && self->settings.fft_size == asked->fft_size) {
    self->settings.hop = self->hop_in_force;
    self->settings.fft_size = fft_size;
  }
  GST_OBJECT_UNLOCK(self);
}

/* Applies property changes made while streaming: the old run ends on a frame boundary (drained,
 * with its caps), then new caps and a new analyser take over. */
static GstFlowReturn
apply_settings(GstCudaFft *self)
{
  const Settings properties = current_settings(self);
  const CudafftStftConfig wanted = config_for(&properties, self->out_info.config);
  if (same_framing(&wanted, &self->out_info.config)) {
    self->hop_in_force = properties.hop; /* 0 or fft-size / 2: the same frames */
    return GST_FLOW_OK;
  }
  if (wanted.hop > wanted.fft_size) {
    refuse_framing(self, &properties);
    return GST_FLOW_OK;
  }
  GstFlowReturn ret = drain(self);
  /* Downstream refused the frames of the old settings (their caps, after an earlier change it
   * could not take: NOT_NEGOTIATED, or FLUSHING from an element that posted that ERROR, while no
   * flush is under way): those frames can never go out, and keeping them would refuse every
   * later change too, the stream stuck for good. They are dropped with the old analyser. */
  const gboolean refused_downstream =
      ret == GST_FLOW_NOT_NEGOTIATED ||
      (ret == GST_FLOW_FLUSHING && !GST_PAD_IS_FLUSHING(GST_BASE_TRANSFORM_SINK_PAD(self)));
  if (refused_downstream)
    GST_INFO_OBJECT(self, "downstream refused the frames of the old settings; dropping them");
  else if (ret != GST_FLOW_OK)
    return ret;
  GstCudafftFrameInfo info = self->out_info;
  info.config = wanted;
  GstCaps *caps = gst_cudafft_frames_caps_from_info(&info);
  if (self->cuda_out) /* the frames stay where they were negotiated */
    caps = gst_cudafft_caps_in_cuda_memory(caps);
  GST_INFO_OBJECT(self, "settings changed; new caps %" GST_PTR_FORMAT, caps);
  gboolean ok =
      open_engine(self, caps) && gst_base_transform_update_src_caps(GST_BASE_TRANSFORM(self), caps);
  gst_caps_unref(caps);
  if (ok)
    self->hop_in_force = properties.hop;
  return ok ? GST_FLOW_OK : GST_FLOW_NOT_NEGOTIATED;
}

static GstFlowReturn
gst_cuda_fft_prepare(GstCudafftAudioFilter *filter)
{
  return apply_settings(GST_CUDA_FFT(filter));
}

/* A run begins with the lead of zeros, which completes no frame. */
static GstFlowReturn
gst_cuda_fft_begin_run(GstCudafftAudioFilter *filter, GstBuffer *first)
{
  GstCudaFft *self = GST_CUDA_FFT(filter);
  (void)first;
  return analyse(self, NULL, lead_samples(self), 0);
}

/* The frames go out from analyse(), in buffers of bounded size. */
static GstFlowReturn
gst_cuda_fft_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf, const GstMapInfo *map,
                     GstBuffer **outbuf)
{
  GstCudaFft *self = GST_CUDA_FFT(filter);
  (void)inbuf;
  (void)outbuf;
  const gsize samples = map->size / GST_AUDIO_INFO_BPF(&self->in_info);
  const GstFlowReturn ret = analyse(self, map->data, samples, 0);
  gst_cudafft_audio_filter_get_run(filter)->samples += samples;
  return ret;
}

/* Events and queries ------------------------------------------------------------------------- */

static gboolean
check_downstream(GstCudaFft *self, GstCaps *incaps)
{
  if (!gst_cudafft_audio_filter_check_downstream_memory(GST_CUDAFFT_AUDIO_FILTER(self)))
    return FALSE;
  GstCaps *ours = gst_cuda_fft_transform_caps(GST_BASE_TRANSFORM(self), GST_PAD_SINK, incaps, NULL);
  gboolean ok = TRUE;
  if (gst_caps_is_fixed(ours) &&
      !gst_pad_peer_query_accept_caps(GST_BASE_TRANSFORM_SRC_PAD(self), ours)) {
    gchar *why = gst_cudafft_caps_describe_refusal(GST_BASE_TRANSFORM_SRC_PAD(self), ours,
                                                   "cudafft", "audio/x-fft frames");
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot negotiate: %s.", why),
                      ("our caps %" GST_PTR_FORMAT, ours));
    g_free(why);
    ok = FALSE;
  }
  gst_caps_unref(ours);
  return ok;
}

/* Downstream must take our frames before the run goes on; the rest is the base class's. */
static gboolean
gst_cuda_fft_sink_event(GstBaseTransform *trans, GstEvent *event)
{
  GstCudaFft *self = GST_CUDA_FFT(trans);
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
  return GST_BASE_TRANSFORM_CLASS(gst_cuda_fft_parent_class)->sink_event(trans, event);
}

static GstFlowReturn
gst_cuda_fft_drain(GstCudafftAudioFilter *filter)
{
  return drain(GST_CUDA_FFT(filter));
}

/* A frame goes out when its last hop of samples has arrived. */
static GstClockTime
gst_cuda_fft_get_latency(GstCudafftAudioFilter *filter)
{
  GstCudaFft *self = GST_CUDA_FFT(filter);
  const Settings s = current_settings(self);
  const gboolean open = stft_engine_of(self) != NULL;
  const gint rate = open ? self->out_info.rate : GST_AUDIO_INFO_RATE(&self->in_info);
  const guint hop = open ? (guint)self->out_info.config.hop : effective_hop(&s);
  return rate > 0 ? gst_util_uint64_scale_int_round(hop, GST_SECOND, rate) : 0;
}

static gboolean
gst_cuda_fft_start(GstBaseTransform *trans)
{
  GstCudaFft *self = GST_CUDA_FFT(trans);
  gst_audio_info_init(&self->in_info);
  self->input_end = G_MAXUINT64;
  return TRUE;
}

static void
gst_cuda_fft_class_init(GstCudaFftClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstCudafftAudioFilterClass *filter_class = GST_CUDAFFT_AUDIO_FILTER_CLASS(klass);

  gobject_class->set_property = gst_cuda_fft_set_property;
  gobject_class->get_property = gst_cuda_fft_get_property;

  g_object_class_install_property(
      gobject_class, PROP_FFT_SIZE,
      gst_cudafft_fft_size_param(FFT_SIZE_BLURB, GST_CUDAFFT_DEFAULT_FFT_SIZE,
                                 G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                     GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      gobject_class, PROP_HOP,
      g_param_spec_uint("hop", "Hop",
                        "Samples between the starts of consecutive frames, 1 to fft-size; 0 means "
                        "fft-size / 2",
                        0, CUDAFFT_MAX_SIZE, DEFAULT_HOP,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      gobject_class, PROP_WINDOW,
      g_param_spec_enum("window", "Window", "Analysis window applied to each frame",
                        GST_TYPE_CUDAFFT_WINDOW, DEFAULT_WINDOW,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      gobject_class, PROP_REPRESENTATION,
      g_param_spec_enum("representation", "Representation",
                        "What each bin holds: complex, magnitude, power or db of the unnormalised "
                        "DFT (a sine of amplitude A: 20 log10(A sum(w) / 2) dB)",
                        GST_TYPE_CUDAFFT_REPRESENTATION, DEFAULT_REPRESENTATION,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));

  gst_cudafft_audio_filter_class_add_pad_templates(element_class, gst_static_caps_get(&sink_caps),
                                                   gst_cudafft_frames_template_caps());
  gst_element_class_set_static_metadata(
      element_class, "CUDA short-time Fourier transform", "Filter/Converter/Audio/Analyzer",
      "Frame, window and FFT the audio on an NVIDIA GPU or the CPU (backend=cpu, FFTW), output "
      "audio/x-fft frames",
      "gst-cudafft developers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_fft_start);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_fft_transform_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_cuda_fft_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_fft_sink_event);
  filter_class->drain = gst_cuda_fft_drain;
  filter_class->get_latency = gst_cuda_fft_get_latency;
  filter_class->prepare = gst_cuda_fft_prepare;
  filter_class->begin_run = gst_cuda_fft_begin_run;
  filter_class->process = gst_cuda_fft_process;
  filter_class->takes_cuda_memory = TRUE;

  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_WINDOW, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_REPRESENTATION, 0);
}

static void
gst_cuda_fft_init(GstCudaFft *self)
{
  self->settings.fft_size = GST_CUDAFFT_DEFAULT_FFT_SIZE;
  self->settings.hop = DEFAULT_HOP;
  self->settings.window = DEFAULT_WINDOW;
  self->settings.representation = DEFAULT_REPRESENTATION;
  self->input_end = G_MAXUINT64;
}
