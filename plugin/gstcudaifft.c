/* gstcudaifft.c: cudaifft inverse-transforms complex audio/x-fft frames on the GPU, applies the
 * synthesis window and overlap-adds them (cudafft/stft.h: the weighted overlap-add is
 * normalised so that cudafft ! cudaifft is the identity), and pushes F32 audio.
 *
 * It reads fft-size, hop and window from the caps, and honours GstAudioClippingMeta: cudafft
 * marks the zeros it put before and after a run's samples, and cudaifft drops exactly those, so
 * that its output has the input's samples and timestamps. A buffer whose meta has an end marks
 * the end of a run: its frames and the overlap-add tail go out together. Frames without the meta
 * (an application's copies) are read by cudafft's framing: fft-size - hop zeros lead each run,
 * and the run's samples end where the buffers' timestamps (PTS + duration) end. */
/**
 * SECTION:element-cudaifft
 * @title: cudaifft
 *
 * cudaifft turns complex audio/x-fft frames (as cudafft makes them) back into interleaved F32
 * audio on an NVIDIA GPU, or on the CPU (FFTW) with backend=cpu (backend=auto falls back to it
 * where no GPU is usable, saying why in an INFO message): inverse FFT, synthesis window and
 * weighted overlap-add, normalised so that cudafft ! cudaifft gives back the input's samples and
 * timestamps. The frames' fft-size, hop and window come from the caps.
 *
 * Frames an application made (cudafft ! appsink, its own processing, appsrc ! cudaifft) come back
 * exact as long as each buffer keeps its PTS, duration and offsets and the caps stay cudafft's:
 * the GstAudioClippingMeta, which an application cannot always carry, is not needed (the lead
 * comes from the framing, the end from the timestamps). Frames without timestamps are
 * synthesised too, with a WARNING at the end of the run: where the audio ends is then not known.
 *
 * Window and hop pairs that cannot be inverted accurately (the overlapping windows' squares adding
 * up to less than 1% of their peak somewhere, e.g. hann at hop = fft-size) are refused at caps
 * time with a message naming them, and so are frames of another representation than complex.
 *
 * On the GPU both pads also take CUDA memory (`audio/x-fft(memory:CUDAMemory)` in,
 * `audio/x-raw(memory:CUDAMemory)` out): the frames are read and the samples written there by its
 * kernels. The samples go out in CUDA memory where downstream names it (cudaconvolve,
 * cudaspectrum, an appsink with such caps), in system memory otherwise; into another element of
 * this plugin as soon as their device work is queued (that element's work is queued after it on
 * the device), into anything else once they are complete (and at the end of a run, whose tail the
 * last buffer carries).
 *
 * ## Example pipeline
 * |[
 * gst-launch-1.0 filesrc location=in.wav ! wavparse ! audioconvert ! cudafft ! cudaifft ! \
 *     audioconvert ! autoaudiosink
 * ]| gives back the input's samples; frequency-domain processing goes between the two.
 */
#include "gstcudaifft.h"

#include <cudafft/stft.h>
#include "gstcudafftcaps.h"
#include "gstcudafftcudamemory.h"

#include <gst/audio/audio.h>

GST_DEBUG_CATEGORY_STATIC(gst_cuda_ifft_debug);
#define GST_CAT_DEFAULT gst_cuda_ifft_debug

struct _GstCudaIfft {
  GstCudafftAudioFilter parent;

  /* streaming thread only */
  GstCudafftFrameInfo info;
  gboolean cuda_out; /* the src caps carry memory:CUDAMemory */
  /* the base class's run: run.samples, frames received x hop; run.produced, samples pushed */
  guint64 to_skip;   /* samples still to drop from the start of the run (the clipping start) */
  guint64 end;       /* the run's last output sample + 1 where known (G_MAXUINT64: not known) */
  gboolean end_told; /* the end was marked (a clipping end) or read from a timestamp */
  gboolean untimed;  /* a buffer of the run without PTS or duration: its end may be lost */
  gboolean warned_untimed; /* said once per start */
};

#define SRC_CAPS                                                                                   \
  "audio/x-raw, format = (string) F32LE, layout = (string) interleaved, rate = (int) [ 1, MAX "    \
  "], " GST_CUDAFFT_CHANNELS_FIELD

/* The pad templates, made in class_init: any audio/x-fft (set_caps explains what it cannot take,
 * rather than a bare not-negotiated) and SRC_CAPS, each in system memory and, where the build has
 * it, in CUDA memory. */

G_DEFINE_TYPE_WITH_CODE(GstCudaIfft, gst_cuda_ifft, GST_TYPE_CUDAFFT_AUDIO_FILTER,
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_ifft_debug, "cudaifft", 0,
                                                "GPU short-time Fourier synthesis"));
GST_ELEMENT_REGISTER_DEFINE(cudaifft, "cudaifft", GST_RANK_NONE, GST_TYPE_CUDA_IFFT);

GST_CUDAFFT_DEFINE_ENGINE(istft_engine, istft, CudafftIstft, CudafftStftConfig,
                          "the STFT synthesiser");

static GstCaps *
gst_cuda_ifft_transform_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                             GstCaps *filter)
{
  GstCaps *result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(caps); i++) {
    const GstStructure *in = gst_caps_get_structure(caps, i);
    GstStructure *out = direction == GST_PAD_SINK
                            ? gst_structure_new("audio/x-raw", "format", G_TYPE_STRING, "F32LE",
                                                "layout", G_TYPE_STRING, "interleaved", NULL)
                            /* any representation: set_caps refuses the others with a message saying
                             * why, which a link refused for its caps would never show */
                            : gst_structure_new(GST_CUDAFFT_FRAMES_MEDIA_TYPE, "format",
                                                G_TYPE_STRING, "F32LE", NULL);
    gst_cudafft_copy_rate_and_channels(in, out);
    gint channels = 0;
    /* raw audio of more than 2 channels needs a channel mask; frames carry no positions */
    if (direction == GST_PAD_SINK && gst_structure_get_int(in, "channels", &channels) &&
        channels > 2)
      gst_structure_set(out, "channel-mask", GST_TYPE_BITMASK,
                        gst_audio_channel_get_fallback_mask(channels), NULL);
    result = gst_caps_merge_structure(result, out);
  }
  /* either side in system memory, and in CUDA memory after it where the GPU runs */
  result = gst_cudafft_audio_filter_offer_cuda_memory(GST_CUDAFFT_AUDIO_FILTER(trans), result);
  return gst_cudafft_audio_filter_filter_caps(GST_CUDAFFT_AUDIO_FILTER(trans), direction, caps,
                                              result, filter);
}

/* Reads and checks the frames caps, with a message naming what cannot be used. */
static gboolean
read_frames_caps(GstCudaIfft *self, GstCaps *caps, GstCudafftFrameInfo *info)
{
  gchar *why = NULL;
  if (!gst_cudafft_frames_caps_to_info(caps, info, &why)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("cudaifft cannot use these frames: %s.", why),
                      ("caps %" GST_PTR_FORMAT, caps));
    g_free(why);
    return FALSE;
  }
  if (info->config.representation != CUDAFFT_REPRESENTATION_COMPLEX) {
    GST_ELEMENT_ERROR(
        self, CORE, NEGOTIATION,
        ("cudaifft needs representation=complex frames, but these carry %s (the "
         "phase is gone); set representation=complex on cudafft.",
         gst_cudafft_representation_nick((GstCudafftRepresentation)info->config.representation)),
        ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (cudafft_stft_check_synthesis(info->config.window, info->config.fft_size, info->config.hop,
                                   NULL) != CUDAFFT_STATUS_OK) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("cudaifft cannot reconstruct: %s.", cudafft_last_error_message()),
                      ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  return TRUE;
}

static gboolean
gst_cuda_ifft_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaIfft *self = GST_CUDA_IFFT(trans);
  GstCudafftFrameInfo info;
  if (!read_frames_caps(self, incaps, &info))
    return FALSE;
  self->cuda_out = gst_cudafft_caps_is_cuda_memory(outcaps);
  if (istft_engine_of(self) && memcmp(&info, &self->info, sizeof info) == 0)
    return gst_cudafft_audio_filter_check_memory(GST_CUDAFFT_AUDIO_FILTER(self), incaps, outcaps);
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  gst_cudafft_audio_filter_close_engine(filter);
  self->info = info;
  if (!gst_cudafft_audio_filter_open_engine(filter, &istft_engine, &self->info.config))
    return FALSE;
  gst_cudafft_audio_filter_set_run_format(filter, info.rate, info.config.hop / 2);
  gst_cudafft_audio_filter_set_frame_bytes(filter, gst_cudafft_frame_bytes(&self->info));
  return gst_cudafft_audio_filter_check_memory(GST_CUDAFFT_AUDIO_FILTER(self), incaps, outcaps);
}

static gsize
tail_samples(const GstCudaIfft *self)
{
  return self->info.config.fft_size - self->info.config.hop;
}

/* Learns where the run's samples end from a buffer's timestamps: cudafft stamps its frames with
 * the input samples they complete, clipped to the input, so a buffer that lasts less than its
 * frames' hops ends the input there (the frames after it last 0). An application that keeps each
 * buffer's PTS and duration, but cannot keep the clipping meta, keeps that. */
static void
learn_end(GstCudaIfft *self, GstBuffer *buffer, guint64 frames)
{
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  if (!GST_BUFFER_PTS_IS_VALID(buffer) || !GST_BUFFER_DURATION_IS_VALID(buffer)) {
    self->untimed = TRUE;
    return;
  }
  const GstClockTime ends = GST_BUFFER_PTS(buffer) + GST_BUFFER_DURATION(buffer);
  const guint64 full = run->samples + frames * self->info.config.hop;
  /* half a sample of slack: the times are rounded to nanoseconds */
  const GstClockTime half = gst_util_uint64_scale_int(GST_SECOND, 1, 2 * self->info.rate);
  if (frames == 0 || ends + half >= gst_cudafft_run_time(run, full) || ends < run->start)
    return;
  const guint64 end =
      gst_util_uint64_scale_int_round(ends - run->start, self->info.rate, GST_SECOND);
  if (end < self->end) {
    GST_DEBUG_OBJECT(self, "the run's samples end at %" G_GUINT64_FORMAT " (a buffer's timestamps)",
                     end);
    self->end = end;
  }
  self->end_told = TRUE;
}

/* Drops what the clipping meta says from `buffer` (samples of all channels), stamps what is left
 * and pushes it; takes the buffer. */
static GstFlowReturn
push_samples(GstCudaIfft *self, GstBuffer *buffer, guint64 samples, guint64 end_clip)
{
  const gsize bpf = self->info.config.channels * sizeof(float);
  const guint64 skip = MIN(self->to_skip, samples);
  self->to_skip -= skip;
  samples -= skip;
  const guint64 cut = MIN(end_clip, samples);
  samples -= cut;
  GstCudafftRun *run = GST_CUDAFFT_AUDIO_FILTER_RUN(self);
  /* nothing past the run's end where the timestamps told it */
  samples = MIN(samples, self->end > run->produced ? self->end - run->produced : 0);
  if (samples == 0) {
    gst_buffer_unref(buffer);
    return GST_FLOW_OK;
  }
  buffer = gst_cudafft_audio_filter_trim_output(GST_CUDAFFT_AUDIO_FILTER(self), buffer, skip * bpf,
                                                samples * bpf);
  if (!buffer)
    return GST_FLOW_ERROR; /* posted */
  gst_cudafft_run_stamp(run, buffer, run->produced, samples);
  GST_BUFFER_OFFSET(buffer) = run->produced;
  GST_BUFFER_OFFSET_END(buffer) = run->produced + samples;
  if (run->produced == 0)
    GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  run->produced += samples;
  return gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), buffer);
}

/* Synthesises `frames` frames, plus the overlap-add tail when the run ends here (`ends`), and
 * pushes the samples, in buffers of at most GST_CUDAFFT_MAX_OUTPUT_BYTES (one frame's hop where
 * that is larger). */
static GstFlowReturn
synthesise(GstCudaIfft *self, const float *frames_data, guint64 frames, gboolean ends,
           guint64 end_clip)
{
  /* frames in CUDA memory are read, and samples in CUDA memory written, in place on the device */
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  const unsigned on_device =
      (frames_data && gst_cudafft_audio_filter_input_on_device(filter) ? CUDAFFT_IN_DEVICE : 0) |
      (self->cuda_out ? CUDAFFT_OUT_DEVICE : 0);
  const guint64 hop = self->info.config.hop, tail = tail_samples(self);
  const gsize bpf = self->info.config.channels * sizeof(float);
  const gsize frame_floats = gst_cudafft_frame_bytes(&self->info) / sizeof(float);
  const guint64 most = MAX(GST_CUDAFFT_MAX_OUTPUT_BYTES / (hop * bpf), 1);
  CudafftIstft *istft = istft_engine_of(self);
  GstFlowReturn ret = GST_FLOW_OK;
  do {
    const guint64 chunk = MIN(frames, most);
    const gboolean last = chunk == frames;
    const gboolean drains = last && ends; /* the run's tail goes out in this buffer too */
    const guint64 body = chunk * hop, samples = body + (drains ? tail : 0);
    if (samples == 0)
      break;
    /* buffers of one input buffer's samples differ by the tail at most: the pool keeps that to
     * spare (CUDA memory comes in pools of a few exact sizes) */
    GstMapInfo map;
    GstBuffer *buffer = gst_cudafft_audio_filter_map_output(filter, samples * bpf, tail * bpf,
                                                            self->cuda_out, &map);
    if (!buffer)
      return GST_FLOW_ERROR; /* posted */
    float *out = (float *)map.data;
    float *after = out + body * self->info.config.channels;
    /* into one of our elements, the samples go on before the device has written them; not where
     * the run's tail follows in the same buffer (the drain waits for its samples anyway), so the
     * peer is looked at only where the push may use its fence (the chunk is then not empty) */
    CudafftFence *done =
        drains ? NULL : gst_cudafft_audio_filter_output_fence(filter, self->cuda_out);
    CudafftStatus status =
        chunk > 0 ? cudafft_istft_push_device(istft, frames_data, chunk, out, on_device,
                                              gst_cudafft_audio_filter_input_fence(filter), done)
                  : CUDAFFT_STATUS_OK;
    if (status == CUDAFFT_STATUS_OK && drains)
      status = self->cuda_out ? cudafft_istft_drain_device(istft, after)
                              : cudafft_istft_drain(istft, after);
    gst_cudafft_audio_filter_unmap_output(buffer, &map);
    if (status != CUDAFFT_STATUS_OK) {
      gst_buffer_unref(buffer);
      gst_cudafft_audio_filter_post_error(GST_CUDAFFT_AUDIO_FILTER(self), status,
                                          "cudafft_istft_push");
      return GST_FLOW_ERROR;
    }
    if (!gst_cudafft_audio_filter_fence_output(filter, buffer)) {
      gst_buffer_unref(buffer);
      return GST_FLOW_ERROR; /* posted */
    }
    GST_CUDAFFT_AUDIO_FILTER_RUN(self)->samples += body;
    ret = push_samples(self, buffer, samples, drains ? end_clip : 0);
    frames -= chunk;
    if (frames_data)
      frames_data += chunk * frame_floats;
  } while (ret == GST_FLOW_OK && frames > 0);
  if (ends)
    gst_cudafft_run_reset(GST_CUDAFFT_AUDIO_FILTER_RUN(self));
  return ret;
}

/* Ends the run without a clipping end: the tail goes out up to the end the timestamps told, or
 * all of it (with a warning, once, where untimed frames may have hidden the end). */
static GstFlowReturn
drain(GstCudaIfft *self)
{
  GstFlowReturn ret = GST_FLOW_OK;
  if (GST_CUDAFFT_AUDIO_FILTER_RUN(self)->active && istft_engine_of(self)) {
    if (!self->end_told && self->untimed && !self->warned_untimed) {
      GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                          ("Frames without timestamps (PTS and duration) and without a "
                           "GstAudioClippingMeta end: where the audio ends is not known, and up "
                           "to %" G_GSIZE_FORMAT " samples of the padding cudafft appended may "
                           "follow it. Keep each frame buffer's PTS and duration.",
                           (gsize)(self->info.config.fft_size - 1)),
                          (NULL));
      self->warned_untimed = TRUE;
    }
    ret = synthesise(self, NULL, 0, TRUE, 0);
  }
  gst_cudafft_audio_filter_reset_run(GST_CUDAFFT_AUDIO_FILTER(self));
  self->to_skip = 0;
  return ret;
}

/* A run's first buffer says, in its clipping meta, how many of its first samples are padding;
 * without one (an application that made new buffers from cudafft's, keeping timestamps, offsets
 * and caps, cannot keep the meta), cudafft's framing says it: fft-size - hop zeros lead every
 * run, and skipping them puts every sample at its time (frame k is stamped with the time of input
 * sample k hop). */
static GstFlowReturn
gst_cuda_ifft_begin_run(GstCudafftAudioFilter *filter, GstBuffer *first)
{
  GstCudaIfft *self = GST_CUDA_IFFT(filter);
  GstAudioClippingMeta *clip = gst_buffer_get_audio_clipping_meta(first);
  const gboolean marked = clip && clip->format == GST_FORMAT_DEFAULT;
  self->to_skip = marked ? clip->start : tail_samples(self);
  if (!marked)
    GST_DEBUG_OBJECT(self,
                     "no clipping meta: skipping cudafft's lead of %" G_GUINT64_FORMAT " samples",
                     self->to_skip);
  self->end = G_MAXUINT64;
  self->end_told = FALSE;
  self->untimed = FALSE;
  return GST_FLOW_OK;
}

/* A buffer whose clipping meta has an end ends the run: its frames and the tail go out. */
static GstFlowReturn
gst_cuda_ifft_process(GstCudafftAudioFilter *filter, GstBuffer *inbuf, const GstMapInfo *map,
                      GstBuffer **outbuf)
{
  GstCudaIfft *self = GST_CUDA_IFFT(filter);
  (void)outbuf; /* everything goes out through push_samples, in order with the drains */
  const gsize frame_bytes = gst_cudafft_frame_bytes(&self->info);
  GstAudioClippingMeta *clip = gst_buffer_get_audio_clipping_meta(inbuf);
  const gboolean ends = clip && clip->format == GST_FORMAT_DEFAULT && clip->end > 0;
  if (ends)
    self->end_told = TRUE;
  learn_end(self, inbuf, map->size / frame_bytes);
  return synthesise(self, (const float *)map->data, map->size / frame_bytes, ends,
                    ends ? clip->end : 0);
}

static GstFlowReturn
gst_cuda_ifft_drain(GstCudafftAudioFilter *filter)
{
  return drain(GST_CUDA_IFFT(filter));
}

/* A sample is complete when the last frame holding it has come. */
static GstClockTime
gst_cuda_ifft_get_latency(GstCudafftAudioFilter *filter)
{
  GstCudaIfft *self = GST_CUDA_IFFT(filter);
  return self->info.rate > 0
             ? gst_util_uint64_scale_int_round(tail_samples(self), GST_SECOND, self->info.rate)
             : 0;
}

static gboolean
gst_cuda_ifft_start(GstBaseTransform *trans)
{
  GstCudaIfft *self = GST_CUDA_IFFT(trans);
  memset(&self->info, 0, sizeof self->info);
  self->to_skip = 0;
  self->end = G_MAXUINT64;
  self->end_told = self->untimed = self->warned_untimed = FALSE;
  return TRUE;
}

static void
gst_cuda_ifft_class_init(GstCudaIfftClass *klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);

  gst_cudafft_audio_filter_class_add_pad_templates(
      element_class, gst_caps_from_string(GST_CUDAFFT_FRAMES_MEDIA_TYPE),
      gst_caps_from_string(SRC_CAPS));
  gst_element_class_set_static_metadata(
      element_class, "CUDA inverse short-time Fourier transform", "Filter/Converter/Audio",
      "Turn complex audio/x-fft frames back into audio (inverse STFT) on an NVIDIA GPU or the CPU "
      "(backend=cpu, FFTW)",
      "gst-cudafft developers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_ifft_start);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_ifft_transform_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_cuda_ifft_set_caps);
  GstCudafftAudioFilterClass *filter_class = GST_CUDAFFT_AUDIO_FILTER_CLASS(klass);
  filter_class->drain = gst_cuda_ifft_drain;
  filter_class->get_latency = gst_cuda_ifft_get_latency;
  filter_class->begin_run = gst_cuda_ifft_begin_run;
  filter_class->process = gst_cuda_ifft_process;
  filter_class->takes_cuda_memory = TRUE;
}

static void
gst_cuda_ifft_init(GstCudaIfft *self)
{
  (void)self;
}
