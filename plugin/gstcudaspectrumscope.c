/* gstcudaspectrumscope.c: cudaspectrumscope, a spectrum display drawn on the GPU: audio in, video
 * out, a GstAudioVisualizer over the cudafft library's scope engine (cudafft/scope.h). Its parts
 * beside it: its property specs and settings (gstcudaspectrumscopeproperties.c), where its frames
 * go (gstcudaspectrumscopeframes.c); what it shares with every element of the plugin (backend
 * properties, CUDA context, one ERROR per failure) is the element core's (gstcudafftelementcore.c).
 * This file: the framing, the engine and its settings applied at frame boundaries, QoS. */
/**
 * SECTION:element-cudaspectrumscope
 * @title: cudaspectrumscope
 *
 * cudaspectrumscope draws the spectrum of its audio as video: a scrolling spectrogram (a column a
 * frame, the newest at the right, low frequencies at the bottom) or bars with peak markers, each
 * channel in its own lane (stacked from the top) or all channels in one, in a perceptual colormap
 * (viridis, magma) or grey. On the GPU the analysis and the drawing both happen on the device and
 * only the finished frame leaves the device: into page-locked frame memory from the element's own
 * pool, or, where downstream takes video/x-raw(memory:CUDAMemory) (cudadownload, an application's
 * appsink), into GStreamer's CUDA memory, where it never crosses the bus; backend=cpu draws the
 * same pixels on the CPU (the analysis on FFTW), and backend=auto falls back to it where no GPU is
 * usable, saying why in an INFO message.
 *
 * CUDA memory and contexts: the src pad offers each format in system memory first and in CUDA
 * memory second, so a peer that takes anything gets system memory and one that prefers CUDA
 * memory gets it. CUDA-memory frames are GstCudaMemory of the pipeline's shared GstCudaContext,
 * pitched as GStreamer's CUDA buffer pool lays them out (a GstVideoMeta gives the pitch); a
 * frame is complete in device memory when it is pushed (the element waits for its device work).
 * The element takes part in GStreamer's CUDA context sharing (a context set on it, a neighbour's,
 * or the application's answer to need-context; else it shares its device's primary context), so
 * that it and GStreamer's CUDA elements run in one context per device. backend=cpu never makes
 * CUDA memory: caps that allow nothing else fail with an error saying so.
 *
 * As a GstAudioVisualizer it takes its frame size, frame rate and pixel format from downstream
 * (default 320x200 at 25 fps) and reports its latency. Frames come exactly at the negotiated
 * rate: frame k holds the samples from floor(k rate / frame rate) on, counted from the start of
 * the stream (or of the run after a flush or a discontinuity), and is stamped with the time of
 * its first sample, computed from sample counts, lasting until the next frame; frames that QoS
 * says would be late are skipped. (The element gathers the samples itself instead of through the
 * base class, whose adapter re-renders the last frame's samples whenever a buffer ends within a
 * frame: 93 frames a second with uneven timestamps for 60/1 caps and 1024-sample buffers.) Each
 * frame analyses its own samples with the fft-size samples before:
 *
 * * Window: periodic Hann. One FFT per channel ending at the newest sample; where a frame brings
 *   more than fft-size / 2 samples, FFTs every fft-size / 2 samples back (at most 64), their
 *   powers averaged, so that every sample is seen.
 * * Levels: bin power |X|^2 4 / (fft-size sum w^2), so a sine of amplitude A reads 20 log10 A dB
 *   in a band that holds it (0 dB: a full-scale sine); with #GstCudaSpectrumScope:weighting each
 *   bin's power is weighted (IEC 61672-1 A or C) before the bins are summed into bands. Without
 *   #GstCudaSpectrumScope:multi-channel the channels' powers are averaged into one lane.
 * * Bands: #GstCudaSpectrumScope:frequency-scale from #GstCudaSpectrumScope:min-frequency to
 *   #GstCudaSpectrumScope:max-frequency: linear, log and mel give one band per pixel row of a lane
 *   (spectrogram) or per pixel column (bars); octave gives the IEC 61260-1 bands of
 *   #GstCudaSpectrumScope:bands-per-octave, a block of rows or a bar (with a gap) each. A band
 *   sums the power of the FFT bins it covers, edge bins by the fraction of their width inside it;
 *   a band narrower than a bin takes the power density interpolated between the nearest bins at
 *   its centre, times its width.
 * * Time: #GstCudaSpectrumScope:smoothing averages each band's power exponentially with that
 *   time constant (a sound level meter's time weighting); bars hold every level for
 *   #GstCudaSpectrumScope:peak-hold, then let it fall at #GstCudaSpectrumScope:peak-decay, and
 *   the peak marker (white) shows the highest.
 * * Colour: a level maps to (level - db-min) / (db-max - db-min), clamped to 0..1, and that to
 *   the colormap (linear between the 256 entries of matplotlib's tables). Bars are anti-aliased
 *   at their tops, coloured by height.
 *
 * The formulas are stated exactly in cudafft/scope.h and cudafft/bands.h.
 *
 * Shading: GstAudioVisualizer's #GstAudioVisualizer:shader runs on the CPU over whole frames in
 * the base class's own framing. This element draws every pixel of every frame itself and scrolls
 * the spectrogram on the device, so no frame passes through the CPU before it is pushed: the
 * shader and shade-amount properties are accepted and have no effect, and shader is `none` here
 * (the base class's default is `fade`).
 *
 * Properties may change while playing: style, frequency-scale, bands-per-octave, the
 * frequencies, weighting, multi-channel and peak-hold start the display afresh at the next frame;
 * db-min, db-max and colormap recolour the whole display, the spectrogram's history included;
 * smoothing and peak-decay apply from the next frame; fft-size makes a new analyser (the display
 * starts afresh). db-min and db-max, and the band layout, are checked together when they take
 * effect, so that they may be set in any order: db-min not below db-max, or a layout without bands
 * at the stream's rate, is an ERROR at the start naming the values and what would work; while
 * playing it is refused with a WARNING, the values in force stay and the properties read them
 * back (as cudaspectrum does). A DISCONT buffer or a flush starts the analysis afresh.
 *
 * ## Example pipelines
 * |[
 * gst-launch-1.0 audiotestsrc wave=pink-noise ! audioconvert ! cudaspectrumscope \
 *     frequency-scale=log colormap=magma ! video/x-raw,width=1280,height=720,framerate=60/1 ! \
 *     videoconvert ! autovideosink
 * ]| a log-frequency spectrogram of pink noise.
 * |[
 * gst-launch-1.0 filesrc location=music.flac ! decodebin ! audioconvert ! cudaspectrumscope \
 *     style=bars frequency-scale=octave bands-per-octave=3 weighting=a smoothing=125 ! \
 *     videoconvert ! autovideosink
 * ]| an A-weighted third-octave analyser with the time weighting of a sound level meter's F.
 */
#include "gstcudaspectrumscope.h"

#include "gstcudafftaudiofilter.h" /* gst_cudafft_sample_format(): the one format mapping */
#include "gstcudafftbands.h"
#include "gstcudafftcaps.h"
#include "gstcudafftelementcore.h"
#include "gstcudafftproperties.h"
#include "gstcudaspectrumscopeframes.h"
#include "gstcudaspectrumscopeproperties.h"

#include <cudafft/scope.h>

#include <gst/video/video.h>

/* shared with gstcudaspectrumscopeframes.c */
GST_DEBUG_CATEGORY(gst_cuda_spectrum_scope_debug);
#define GST_CAT_DEFAULT gst_cuda_spectrum_scope_debug

typedef GstCudaSpectrumScopeSettings Settings;

struct _GstCudaSpectrumScope {
  GstAudioVisualizer parent;

  Settings settings; /* the element's own properties, under the object lock */
  /* the backend properties, the shared CUDA context and one failure, one ERROR, as every element
   * of the plugin has them (gstcudafftelementcore.h) */
  GstCudafftElementCore core;

  /* streaming thread only: the sink pad's chain and serialized events (setup and
   * decide_allocation run from the caps event) */
  CudafftScope *scope;
  Settings applied;                  /* what the scope runs with */
  guint applied_rate;                /* the audio rate it was made for */
  gboolean restart;                  /* the next frame starts the display afresh (a flush) */
  GstCudaSpectrumScopeFrames output; /* where frames go */
  GstPad *srcpad;                    /* the base class's, for the streaming thread */
  GstPadEventFunction base_sink_event, base_src_event; /* the base class's handlers */
  GstPadQueryFunction base_sink_query, base_src_query;
  GstAdapter *adapter;  /* samples of the frame being gathered */
  GstCudafftRun run;    /* the timeline: times from sample counts */
  GstSegment segment;   /* for QoS's running times */
  guint64 frame_origin; /* run sample where frame 0 of the current frame rate starts */
  guint64 frames;       /* frames since frame_origin */
  guint64 next_sample;  /* run sample where the next frame starts */

  /* QoS, under the object lock */
  GstClockTime earliest_time;
  gdouble proportion;
  guint processed, dropped;
};

#define MEMORY_HINT                                                                                \
  "use a smaller frame, fewer channels (or multi-channel=false) or a smaller fft-size"

/* Little-endian BGRx first: GStreamer's xRGB word, what the base class's shaders expect. */
#define SRC_CAPS                                                                                   \
  "video/x-raw, format = (string) { BGRx, RGBx, xRGB, xBGR, RGB, BGR }, "                          \
  "width = (int) [ 16, 16384 ], height = (int) [ 16, 16384 ], "                                    \
  "framerate = (fraction) [ 1/10, 1000/1 ]"
#define SINK_CAPS                                                                                  \
  "audio/x-raw, format = (string) { S16LE, S24LE, S32LE, F32LE, F64LE }, "                         \
  "rate = (int) [ 1, MAX ], layout = (string) interleaved, " GST_CUDAFFT_CHANNELS_FIELD

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(SINK_CAPS));

G_DEFINE_TYPE_WITH_CODE(GstCudaSpectrumScope, gst_cuda_spectrum_scope, GST_TYPE_AUDIO_VISUALIZER,
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_spectrum_scope_debug, "cudaspectrumscope",
                                                0, "GPU spectrum display"));
GST_ELEMENT_REGISTER_DEFINE(cudaspectrumscope, "cudaspectrumscope", GST_RANK_NONE,
                            GST_TYPE_CUDA_SPECTRUM_SCOPE);

GST_CUDAFFT_DEFINE_ENGINE_CLASS(scope_engine, scope, CudafftScope, CudafftScopeConfig,
                                "the spectrum display");

/* Properties --------------------------------------------------------------------------------- */

static Settings
current_settings(GstCudaSpectrumScope *self)
{
  GST_OBJECT_LOCK(self);
  const Settings s = self->settings;
  GST_OBJECT_UNLOCK(self);
  return s;
}

static gboolean
same_options(const CudafftScopeOptions *a, const CudafftScopeOptions *b)
{
  return a->style == b->style && !a->multi_channel == !b->multi_channel && a->scale == b->scale &&
         a->bands_per_octave == b->bands_per_octave && a->min_frequency == b->min_frequency &&
         a->max_frequency == b->max_frequency && a->weighting == b->weighting &&
         a->db_min == b->db_min && a->db_max == b->db_max && a->colormap == b->colormap &&
         a->smoothing_ms == b->smoothing_ms && a->peak_hold_ms == b->peak_hold_ms &&
         a->peak_decay_db_per_s == b->peak_decay_db_per_s;
}

static void
gst_cuda_spectrum_scope_set_property(GObject *object, guint prop_id, const GValue *value,
                                     GParamSpec *pspec)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(object);
  if (!gst_cudafft_element_core_set_property(&self->core, prop_id, value, pspec))
    gst_cuda_spectrum_scope_properties_set(object, &self->settings, prop_id, value, pspec);
}

static void
gst_cuda_spectrum_scope_get_property(GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(object);
  if (gst_cudafft_element_core_get_property(&self->core, prop_id, value))
    return;
  const Settings s = current_settings(self);
  gst_cuda_spectrum_scope_properties_get(object, &s, prop_id, value, pspec);
}

/* The engine -------------------------------------------------------------------------------- */

static void
close_engine(GstCudaSpectrumScope *self)
{
  cudafft_scope_destroy(self->scope);
  self->scope = NULL;
}

static CudafftPixelFormat
pixel_format(GstVideoFormat format)
{
  switch (format) {
  case GST_VIDEO_FORMAT_RGBx:
    return CUDAFFT_PIXELS_RGBX;
  case GST_VIDEO_FORMAT_BGRx:
    return CUDAFFT_PIXELS_BGRX;
  case GST_VIDEO_FORMAT_xRGB:
    return CUDAFFT_PIXELS_XRGB;
  case GST_VIDEO_FORMAT_xBGR:
    return CUDAFFT_PIXELS_XBGR;
  case GST_VIDEO_FORMAT_RGB:
    return CUDAFFT_PIXELS_RGB;
  case GST_VIDEO_FORMAT_BGR:
    return CUDAFFT_PIXELS_BGR;
  default:
    return CUDAFFT_PIXELS_COUNT_;
  }
}

/* The run sample where frame k (of the current frame rate) starts: frames cover rate / frame
 * rate samples on average, exactly, without drift. */
static guint64
frame_start(GstCudaSpectrumScope *self, guint64 k)
{
  GstAudioVisualizer *vis = GST_AUDIO_VISUALIZER(self);
  const GstVideoInfo *v = &vis->vinfo;
  return self->frame_origin +
         gst_util_uint64_scale(k,
                               (guint64)GST_AUDIO_INFO_RATE(&vis->ainfo) * GST_VIDEO_INFO_FPS_D(v),
                               (guint64)GST_VIDEO_INFO_FPS_N(v));
}

/* The most samples a frame brings: rate / frame rate, rounded up. */
static size_t
most_samples(GstAudioVisualizer *vis)
{
  const guint64 n = (guint64)GST_AUDIO_INFO_RATE(&vis->ainfo) * GST_VIDEO_INFO_FPS_D(&vis->vinfo);
  const guint64 d = (guint64)GST_VIDEO_INFO_FPS_N(&vis->vinfo);
  return (size_t)MAX((n + d - 1) / d, 1);
}

/* Makes a scope for the negotiated formats and `s`; the old one (if any) goes first. On failure
 * an error is posted and there is none. */
static gboolean
open_engine(GstCudaSpectrumScope *self, const Settings *s)
{
  GstAudioVisualizer *vis = GST_AUDIO_VISUALIZER(self);
  close_engine(self);
  const GstVideoInfo *v = &vis->vinfo;
  const gint channels = GST_AUDIO_INFO_CHANNELS(&vis->ainfo);
  if (s->options.multi_channel && channels > GST_VIDEO_INFO_HEIGHT(v)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("%d channels in lanes of their own need a pixel row each and the frame has "
                       "%d rows: set multi-channel=false or make the frame taller.",
                       channels, GST_VIDEO_INFO_HEIGHT(v)),
                      (NULL));
    return FALSE;
  }
  const CudafftScopeConfig config = {
      .channels = (unsigned)GST_AUDIO_INFO_CHANNELS(&vis->ainfo),
      .rate = (unsigned)GST_AUDIO_INFO_RATE(&vis->ainfo),
      .format = gst_cudafft_sample_format(GST_AUDIO_INFO_FORMAT(&vis->ainfo)),
      .fft_size = s->fft_size,
      .max_frames = most_samples(vis),
      .width = (unsigned)GST_VIDEO_INFO_WIDTH(v),
      .height = (unsigned)GST_VIDEO_INFO_HEIGHT(v),
      .pixels = pixel_format(GST_VIDEO_INFO_FORMAT(v)),
      .stride = (size_t)GST_VIDEO_INFO_PLANE_STRIDE(v, 0),
      .frame_seconds = (double)GST_VIDEO_INFO_FPS_D(v) / (double)GST_VIDEO_INFO_FPS_N(v),
      .options = s->options,
  };
  GST_DEBUG_OBJECT(self,
                   "making the display: %u channels at %u Hz, %ux%u %s, %.6g s a frame, %zu "
                   "samples a frame, fft-size %u",
                   config.channels, config.rate, config.width, config.height,
                   gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(v)), config.frame_seconds,
                   config.max_frames, s->fft_size);
  /* no start probe here: the backend the property asks for */
  CudafftBackend actual;
  self->scope = gst_cudafft_element_core_make_engine(
      &self->core, &scope_engine, CUDAFFT_BACKEND_AUTO, &config, MEMORY_HINT, &actual);
  if (!self->scope)
    return FALSE;
  self->applied = *s;
  self->applied_rate = config.rate;
  self->restart = FALSE;
  return TRUE;
}

/* Settings that only make sense together ------------------------------------------------------
 *
 * db-min and db-max, and the band layout (frequency-scale, bands-per-octave, min-frequency,
 * max-frequency, weighting), are taken as they are set and checked together when they take effect,
 * so that they may be set in any order: without options in force (the start, or a new audio rate) a
 * pair that cannot be is an ERROR; while playing it is refused with a WARNING, the pair in force
 * stays and goes back into the properties, which read back what is in force. */

static GstCudafftBandSettings
layout_of(const CudafftScopeOptions *o)
{
  const GstCudafftBandSettings layout = {o->scale, o->bands_per_octave, o->min_frequency,
                                         o->max_frequency, o->weighting};
  return layout;
}

static void
set_layout(CudafftScopeOptions *o, const GstCudafftBandSettings *layout)
{
  o->scale = layout->scale;
  o->bands_per_octave = layout->bands_per_octave;
  o->min_frequency = layout->min_frequency;
  o->max_frequency = layout->max_frequency;
  o->weighting = layout->weighting;
}

/* The properties go back to what is in force (`kept`) where they still hold what was refused
 * (`asked`): a value set since then is the next frame's to check. */
static void
revert_layout(GstCudaSpectrumScope *self, const GstCudafftBandSettings *asked,
              const GstCudafftBandSettings *kept)
{
  GST_OBJECT_LOCK(self);
  const GstCudafftBandSettings now = layout_of(&self->settings.options);
  if (gst_cudafft_band_settings_equal(&now, asked))
    set_layout(&self->settings.options, kept);
  GST_OBJECT_UNLOCK(self);
}

static void
revert_levels(GstCudaSpectrumScope *self, const CudafftScopeOptions *asked,
              const CudafftScopeOptions *kept)
{
  GST_OBJECT_LOCK(self);
  CudafftScopeOptions *now = &self->settings.options;
  if (now->db_min == asked->db_min && now->db_max == asked->db_max) {
    now->db_min = kept->db_min;
    now->db_max = kept->db_max;
  }
  GST_OBJECT_UNLOCK(self);
}

static void
revert_options(GstCudaSpectrumScope *self, const CudafftScopeOptions *asked,
               const CudafftScopeOptions *kept)
{
  GST_OBJECT_LOCK(self);
  if (same_options(&self->settings.options, asked))
    self->settings.options = *kept;
  GST_OBJECT_UNLOCK(self);
}

/* The options `s` asks for as they can take effect (in *out), in_force the options in force (NULL
 * where none are: then a pair that cannot be is an ERROR, and FALSE). */
static gboolean
accepted_options(GstCudaSpectrumScope *self, const Settings *s, const CudafftScopeOptions *in_force,
                 CudafftScopeOptions *out)
{
  GstElement *element = GST_ELEMENT(self);
  const CudafftScopeOptions *asked = &s->options;
  *out = *asked;
  const GstCudafftBandSettings layout = layout_of(asked);
  const guint rate = (guint)GST_AUDIO_INFO_RATE(&GST_AUDIO_VISUALIZER(self)->ainfo);
  gchar *problem = gst_cudafft_band_settings_problem(&layout, rate);
  if (problem) {
    const GstCudafftBandSettings kept = in_force ? layout_of(in_force) : layout;
    gst_cudafft_band_settings_refuse(element, problem, in_force ? &kept : NULL);
    g_free(problem);
    if (!in_force)
      return FALSE;
    set_layout(out, &kept);
    revert_layout(self, &layout, &kept);
  }
  if (!(asked->db_min < asked->db_max)) {
    if (!in_force) {
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                        ("db-min=%g is not below db-max=%g: the levels' range is empty. Set db-min "
                         "below db-max (either may be set first).",
                         asked->db_min, asked->db_max),
                        (NULL));
      return FALSE;
    }
    gst_cudafft_refuse_value(element,
                             "db-min=%g and db-max=%g refused: db-min must be below db-max. "
                             "Keeping db-min=%g and db-max=%g.",
                             asked->db_min, asked->db_max, in_force->db_min, in_force->db_max);
    out->db_min = in_force->db_min;
    out->db_max = in_force->db_max;
    revert_levels(self, asked, in_force);
  }
  return TRUE;
}

/* Property changes made while playing, at a frame boundary. */
static gboolean
apply_settings(GstCudaSpectrumScope *self, const Settings *s)
{
  Settings next = *s;
  accepted_options(self, s, &self->applied.options, &next.options);
  if (next.fft_size != self->applied.fft_size) {
    GST_INFO_OBJECT(self, "fft-size %u -> %u: a new analyser", self->applied.fft_size,
                    next.fft_size);
    return open_engine(self, &next);
  }
  if (same_options(&next.options, &self->applied.options))
    return TRUE;
  const CudafftStatus status = cudafft_scope_set_options(self->scope, &next.options);
  if (status == CUDAFFT_STATUS_OK) {
    self->applied.options = next.options;
    return TRUE;
  }
  /* what only the engine knows (a lane per channel that the frame cannot hold) */
  gst_cudafft_refuse_value(GST_ELEMENT(self),
                           "%s; the new settings are refused and the ones in force stay.",
                           cudafft_last_error_message());
  revert_options(self, &next.options, &self->applied.options);
  return TRUE;
}

/* Framing ------------------------------------------------------------------------------------
 *
 * GstAudioVisualizer 1.22 renders from an adapter that always keeps the last frame's samples: a
 * buffer that ends within a frame makes it draw that frame's samples again at an earlier time
 * (with 1024-sample buffers and 60/1 caps, 93 frames a second with uneven timestamps). So the
 * element takes the sink pad's buffers itself: frame k holds the run's samples from
 * floor(k rate / frame rate) on, is stamped with the time of its first sample (from sample counts
 * since the run's start, gstcudafftrun.h) and lasts until the next one, so frames come exactly at
 * the negotiated rate. The base class still negotiates the caps (and calls setup and
 * decide_allocation), answers the latency query (its live flag as upstream's: answer_latency) and
 * forwards QoS upstream; the element reads QoS as the base class does, skipping frames that would
 * be late. */

static gboolean
gst_cuda_spectrum_scope_setup(GstAudioVisualizer *vis)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(vis);
  Settings s = current_settings(self);
  /* a new frame rate numbers frames from the next one on */
  self->frame_origin = self->next_sample;
  self->frames = 0;
  GST_OBJECT_LOCK(self);
  self->earliest_time = GST_CLOCK_TIME_NONE;
  GST_OBJECT_UNLOCK(self);
  /* a new video format keeps the options in force; a new audio rate has none yet */
  const gboolean in_force =
      self->scope && self->applied_rate == (guint)GST_AUDIO_INFO_RATE(&vis->ainfo);
  const Settings asked = s;
  return accepted_options(self, &asked, in_force ? &self->applied.options : NULL, &s.options) &&
         open_engine(self, &s);
}

/* Frames from page-locked memory (or CUDA memory where negotiated) where the scope runs on the
 * GPU (gstcudaspectrumscopeframes.h); the base class's own choice otherwise. */
static gboolean
gst_cuda_spectrum_scope_decide_allocation(GstAudioVisualizer *vis, GstQuery *query)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(vis);
  GstCudaSpectrumScopeFrames *f = &self->output;
  if (self->scope && cudafft_scope_get_backend(self->scope) == CUDAFFT_BACKEND_CUDA)
    return gst_cuda_spectrum_scope_frames_decide(f, GST_ELEMENT(self), query);
  gst_cuda_spectrum_scope_frames_drop_pool(f);
  GstCaps *caps = NULL;
  gst_query_parse_allocation(query, &caps, NULL);
  if (gst_cudafft_caps_is_cuda_memory(caps)) {
    /* the caps filter lets these through only where the GPU was expected: the engine fell back */
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("These settings run on the CPU backend, which cannot make CUDA memory: "
                       "let downstream take system memory, or use settings the GPU can run."),
                      ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (!GST_AUDIO_VISUALIZER_CLASS(gst_cuda_spectrum_scope_parent_class)
           ->decide_allocation(vis, query))
    return FALSE;
  if (gst_query_get_n_allocation_pools(query) > 0)
    gst_query_parse_nth_allocation_pool(query, 0, &f->pool, NULL, NULL, NULL);
  return TRUE;
}

/* Whether the frame at `pts` lasting `duration` would be late (the QoS upstream of the base
 * class's: its running time ends before the earliest time downstream reported); posts the QoS
 * message then. */
static gboolean
frame_is_late(GstCudaSpectrumScope *self, GstClockTime pts, GstClockTime duration)
{
  if (self->segment.format != GST_FORMAT_TIME)
    return FALSE;
  const GstClockTime running = gst_segment_to_running_time(&self->segment, GST_FORMAT_TIME, pts);
  if (!GST_CLOCK_TIME_IS_VALID(running))
    return FALSE;
  const GstClockTime qostime = running + duration;
  GST_OBJECT_LOCK(self);
  const GstClockTime earliest = self->earliest_time;
  const gdouble proportion = self->proportion;
  const gboolean late = GST_CLOCK_TIME_IS_VALID(earliest) && qostime <= earliest;
  if (late)
    self->dropped++;
  else
    self->processed++;
  const guint processed = self->processed, dropped = self->dropped;
  GST_OBJECT_UNLOCK(self);
  if (late) {
    GST_DEBUG_OBJECT(self, "QoS: skipping the frame at %" GST_TIME_FORMAT, GST_TIME_ARGS(pts));
    GstMessage *qos = gst_message_new_qos(
        GST_OBJECT(self), FALSE, qostime,
        gst_segment_to_stream_time(&self->segment, GST_FORMAT_TIME, pts), pts, duration);
    gst_message_set_qos_values(qos, GST_CLOCK_DIFF(qostime, earliest), proportion, 1000000);
    gst_message_set_qos_stats(qos, GST_FORMAT_BUFFERS, processed, dropped);
    gst_element_post_message(GST_ELEMENT(self), qos);
  }
  return late;
}

/* Draws a frame from `count` samples the adapter holds: run samples first .. first + count - 1. */
static GstFlowReturn
render_frame(GstCudaSpectrumScope *self, guint64 first, gsize count)
{
  GstAudioVisualizer *vis = GST_AUDIO_VISUALIZER(self);
  const gsize bytes = count * GST_AUDIO_INFO_BPF(&vis->ainfo);
  const GstClockTime pts = gst_cudafft_run_time(&self->run, first);
  const GstClockTime duration = gst_cudafft_run_time(&self->run, first + count) - pts;
  if (frame_is_late(self, pts, duration)) {
    gst_adapter_flush(self->adapter, bytes);
    return GST_FLOW_OK;
  }
  const Settings s = current_settings(self);
  if (!apply_settings(self, &s))
    return GST_FLOW_ERROR;
  if (self->restart) {
    GST_DEBUG_OBJECT(self, "flush or discontinuity: starting the display afresh");
    const CudafftStatus status = cudafft_scope_reset(self->scope);
    if (status != CUDAFFT_STATUS_OK) {
      gst_cudafft_post_engine_error(GST_ELEMENT(self), status, "cudafft_scope_reset", MEMORY_HINT);
      return GST_FLOW_ERROR;
    }
    self->restart = FALSE;
  }
  GstBuffer *out = NULL;
  GstFlowReturn ret = gst_cuda_spectrum_scope_frames_acquire(
      &self->output, GST_ELEMENT(self), GST_VIDEO_INFO_SIZE(&vis->vinfo), &out);
  if (ret != GST_FLOW_OK)
    return ret;
  gst_object_sync_values(GST_OBJECT(self), pts);
  gst_cudafft_run_stamp(&self->run, out, first, count);
  const guint8 *samples = gst_adapter_map(self->adapter, bytes);
  ret = gst_cuda_spectrum_scope_frames_draw(&self->output, self->scope, &vis->vinfo, samples, count,
                                            out, MEMORY_HINT);
  gst_adapter_unmap(self->adapter);
  gst_adapter_flush(self->adapter, bytes);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref(out);
    return ret;
  }
  return gst_pad_push(self->srcpad, out);
}

/* Forgets the samples gathered and the run: the next buffer starts a new one. */
static void
end_run(GstCudaSpectrumScope *self)
{
  gst_adapter_clear(self->adapter);
  gst_cudafft_run_reset(&self->run);
  self->frame_origin = self->next_sample = 0;
  self->frames = 0;
}

/* The base class negotiates again where downstream asked (a RECONFIGURE event): the current caps
 * are handed to it as it takes them from upstream. */
static gboolean
renegotiate(GstCudaSpectrumScope *self, GstPad *sinkpad)
{
  GstCaps *caps = gst_pad_get_current_caps(sinkpad);
  if (!caps)
    return FALSE;
  const gboolean ok = self->base_sink_event(sinkpad, GST_OBJECT(self), gst_event_new_caps(caps));
  gst_caps_unref(caps);
  return ok;
}

static GstFlowReturn
gst_cuda_spectrum_scope_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(parent);
  GstAudioVisualizer *vis = GST_AUDIO_VISUALIZER(self);
  if (gst_pad_check_reconfigure(self->srcpad) && !renegotiate(self, pad)) {
    gst_pad_mark_reconfigure(self->srcpad);
    gst_buffer_unref(buffer);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const gint rate = GST_AUDIO_INFO_RATE(&vis->ainfo);
  const gsize bpf = GST_AUDIO_INFO_BPF(&vis->ainfo);
  if (bpf == 0 || !self->scope) {
    gst_buffer_unref(buffer);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  /* a discontinuity or a timestamp more than half a frame off ends the run */
  const guint64 tolerance = most_samples(vis) / 2;
  if (self->run.active && !gst_cudafft_run_continues(&self->run, buffer, tolerance)) {
    GST_DEBUG_OBJECT(self, "discontinuity at %" GST_TIME_FORMAT "; a new run",
                     GST_TIME_ARGS(GST_BUFFER_PTS(buffer)));
    end_run(self);
    self->restart = TRUE;
  }
  if (!self->run.active)
    gst_cudafft_run_start(&self->run, buffer, self->segment.start, rate);
  self->run.samples += gst_buffer_get_size(buffer) / bpf;
  gst_adapter_push(self->adapter, buffer);
  GstFlowReturn ret = GST_FLOW_OK;
  while (ret == GST_FLOW_OK) {
    const guint64 first = frame_start(self, self->frames);
    const guint64 next = frame_start(self, self->frames + 1);
    const gsize count = (gsize)(next - first);
    if (gst_adapter_available(self->adapter) < count * bpf)
      break;
    ret = render_frame(self, first, count);
    self->frames++;
    self->next_sample = next;
  }
  return ret;
}

static gboolean
gst_cuda_spectrum_scope_sink_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(parent);
  switch (GST_EVENT_TYPE(event)) {
  case GST_EVENT_FLUSH_STOP:
    end_run(self);
    self->restart = TRUE;
    gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
    GST_OBJECT_LOCK(self);
    self->earliest_time = GST_CLOCK_TIME_NONE;
    GST_OBJECT_UNLOCK(self);
    break;
  case GST_EVENT_SEGMENT: {
    /* frames are timed from the audio's running time (QoS, timestamps): a BYTES or other segment
     * has none, so it is refused as the audio elements refuse it, with one ERROR */
    const GstSegment *segment;
    gst_event_parse_segment(event, &segment);
    if (segment->format != GST_FORMAT_TIME) {
      GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                        ("%s needs a TIME segment, got a %s one; put it after a parser or decoder "
                         "that outputs timed audio.",
                         GST_OBJECT_NAME(self), gst_format_get_name(segment->format)),
                        (NULL));
      gst_event_unref(event);
      return FALSE;
    }
    gst_event_copy_segment(event, &self->segment);
    break;
  }
  case GST_EVENT_CAPS: {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    if (!gst_cudafft_check_channels(GST_ELEMENT(self), caps)) {
      gst_event_unref(event);
      return FALSE;
    }
    end_run(self); /* a new audio format: a new run (setup makes a new display) */
    /* the base class negotiates the video caps now, with downstream as it is: a reconfigure
     * flagged before would negotiate again at the first buffer and make the display twice */
    gst_pad_check_reconfigure(self->srcpad);
    break;
  }
  default:
    break;
  }
  return self->base_sink_event(pad, parent, event);
}

/* QoS as the base class reads it (which forwards the event upstream). */
static gboolean
gst_cuda_spectrum_scope_src_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(parent);
  if (GST_EVENT_TYPE(event) == GST_EVENT_QOS) {
    gdouble proportion;
    GstClockTimeDiff diff;
    GstClockTime timestamp;
    gst_event_parse_qos(event, NULL, &proportion, &diff, &timestamp);
    const GstVideoInfo *v = &GST_AUDIO_VISUALIZER(self)->vinfo;
    const GstClockTime frame = GST_VIDEO_INFO_FPS_N(v) > 0
                                   ? gst_util_uint64_scale_int(GST_SECOND, GST_VIDEO_INFO_FPS_D(v),
                                                               GST_VIDEO_INFO_FPS_N(v))
                                   : 0;
    GST_OBJECT_LOCK(self);
    self->proportion = proportion;
    if (diff >= 0) /* late: this is a good estimate of the next frame that can be shown */
      self->earliest_time = timestamp + MIN(2 * diff, (GstClockTimeDiff)GST_SECOND) + frame;
    else
      self->earliest_time = timestamp + diff;
    GST_OBJECT_UNLOCK(self);
  }
  return self->base_src_event(pad, parent, event);
}

/* Whether frames will be drawn on the GPU (the caps filter, on the streaming thread that
 * negotiates): where the element shares contexts and its engine, if it has one yet, runs there. */
static gboolean
gpu_output(GstElement *element)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(element);
  return gst_cudafft_element_core_shares_context(&self->core, NULL) &&
         (!self->scope || cudafft_scope_get_backend(self->scope) == CUDAFFT_BACKEND_CUDA);
}

/* The base class's answer to the LATENCY query, live as upstream is: GstAudioVisualizer (1.20 to
 * 1.28) answers live whatever upstream is, and an aggregator downstream of a file (compositor)
 * then mixes on a deadline, adding frames of its own past the stream's end on a busy machine. */
static gboolean
answer_latency(GstCudaSpectrumScope *self, GstPad *srcpad, GstQuery *query)
{
  if (!self->base_src_query(srcpad, GST_OBJECT(self), query))
    return FALSE;
  GstPad *sink = gst_element_get_static_pad(GST_ELEMENT(self), "sink");
  GstQuery *upstream = gst_query_new_latency();
  gboolean live = TRUE;
  if (gst_pad_peer_query(sink, upstream))
    gst_query_parse_latency(upstream, &live, NULL, NULL);
  gst_query_unref(upstream);
  gst_object_unref(sink);
  GstClockTime min, max;
  gst_query_parse_latency(query, NULL, &min, &max);
  gst_query_set_latency(query, live, min, max);
  return TRUE;
}

/* GStreamer's CUDA context sharing (gstcudafftcontext.h): on both pads, then the base class's
 * handler of the pad (the latency's live flag corrected). */
static gboolean
gst_cuda_spectrum_scope_query(GstPad *pad, GstObject *parent, GstQuery *query)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(parent);
  if (gst_cudafft_element_core_query(&self->core, query))
    return TRUE;
  if (GST_PAD_IS_SINK(pad))
    return self->base_sink_query(pad, parent, query);
  if (GST_QUERY_TYPE(query) == GST_QUERY_LATENCY)
    return answer_latency(self, pad, query);
  return self->base_src_query(pad, parent, query);
}

static void
gst_cuda_spectrum_scope_set_context(GstElement *element, GstContext *context)
{
  gst_cudafft_element_core_set_context(&GST_CUDA_SPECTRUM_SCOPE(element)->core, context);
  GST_ELEMENT_CLASS(gst_cuda_spectrum_scope_parent_class)->set_context(element, context);
}

static GstStateChangeReturn
gst_cuda_spectrum_scope_change_state(GstElement *element, GstStateChange transition)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(element);
  gst_cudafft_element_core_change_state_begin(&self->core, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    end_run(self);
    gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
    GST_OBJECT_LOCK(self);
    self->earliest_time = GST_CLOCK_TIME_NONE;
    self->proportion = 1.0;
    self->processed = self->dropped = 0;
    GST_OBJECT_UNLOCK(self);
  }
  const GstStateChangeReturn ret =
      GST_ELEMENT_CLASS(gst_cuda_spectrum_scope_parent_class)->change_state(element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    /* streaming has stopped: the engine and the pool are ours alone */
    close_engine(self);
    end_run(self);
    gst_cuda_spectrum_scope_frames_drop_pool(&self->output);
  }
  gst_cudafft_element_core_change_state_end(&self->core, transition);
  return ret;
}

/* One ERROR per failure (gstcudaffterrors.h): GstAudioVisualizer negotiates a refused format again
 * at every buffer. */
static gboolean
gst_cuda_spectrum_scope_post_message(GstElement *element, GstMessage *message)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(element);
  if (!gst_cudafft_element_core_admit_message(&self->core, message))
    return FALSE;
  return GST_ELEMENT_CLASS(gst_cuda_spectrum_scope_parent_class)->post_message(element, message);
}

static void
gst_cuda_spectrum_scope_finalize(GObject *object)
{
  GstCudaSpectrumScope *self = GST_CUDA_SPECTRUM_SCOPE(object);
  close_engine(self);
  gst_cuda_spectrum_scope_frames_clear(&self->output);
  g_object_unref(self->adapter);
  gst_cudafft_element_core_finalize(&self->core);
  G_OBJECT_CLASS(gst_cuda_spectrum_scope_parent_class)->finalize(object);
}

static void
gst_cuda_spectrum_scope_class_init(GstCudaSpectrumScopeClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstAudioVisualizerClass *vis_class = GST_AUDIO_VISUALIZER_CLASS(klass);

  gobject_class->set_property = gst_cuda_spectrum_scope_set_property;
  gobject_class->get_property = gst_cuda_spectrum_scope_get_property;
  gobject_class->finalize = gst_cuda_spectrum_scope_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_change_state);
  element_class->post_message = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_post_message);
  element_class->set_context = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_set_context);
  vis_class->setup = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_setup);
  vis_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_decide_allocation);

  gst_cuda_spectrum_scope_properties_install(gobject_class);
  gst_cudafft_element_core_install_properties(gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_BACKEND,
                                              GST_CUDA_SPECTRUM_SCOPE_PROP_CUDA_DEVICE_ID);

  /* video in system memory first, then in CUDA memory where the build has it */
  gst_element_class_add_pad_template(
      element_class,
      gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS,
                           gst_cudafft_caps_add_cuda_memory(gst_caps_from_string(SRC_CAPS))));
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_set_static_metadata(
      element_class, "CUDA spectrum scope", "Visualization/Audio",
      "Draw the spectrum of the audio as video on an NVIDIA GPU or the CPU (backend=cpu, FFTW): "
      "spectrogram or bars",
      "gst-cudafft developers");
}

static void
gst_cuda_spectrum_scope_init(GstCudaSpectrumScope *self)
{
  gst_cuda_spectrum_scope_settings_init(&self->settings);
  /* The element draws every pixel itself (see the docs above): no CPU shading. */
  g_object_set(self, "shader", GST_AUDIO_VISUALIZER_SHADER_NONE, NULL);
  self->adapter = gst_adapter_new();
  gst_cudafft_run_reset(&self->run);
  gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
  self->earliest_time = GST_CLOCK_TIME_NONE;
  self->proportion = 1.0;
  /* The framing (see Framing above): the base class made the pads; its sink chain is replaced
   * and its event handlers wrapped, and the sink pad's answers upstream go through the errors'
   * gate (one failure, one ERROR). */
  GstPad *sink = gst_element_get_static_pad(GST_ELEMENT(self), "sink");
  GstPad *src = gst_element_get_static_pad(GST_ELEMENT(self), "src");
  g_assert(sink && src);
  self->srcpad = src; /* the element holds the pad */
  self->base_sink_event = GST_PAD_EVENTFUNC(sink);
  self->base_src_event = GST_PAD_EVENTFUNC(src);
  /* GstAudioVisualizer 1.22 has no sink query function of its own: the default then */
  self->base_sink_query = GST_PAD_QUERYFUNC(sink) ? GST_PAD_QUERYFUNC(sink) : gst_pad_query_default;
  self->base_src_query = GST_PAD_QUERYFUNC(src);
  gst_pad_set_query_function(sink, GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_query));
  gst_pad_set_query_function(src, GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_query));
  gst_cuda_spectrum_scope_frames_init(&self->output, GST_ELEMENT(self), &self->core.context);
  gst_pad_set_chain_function(sink, GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_chain));
  gst_pad_set_event_function(sink, GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_sink_event));
  gst_pad_set_event_function(src, GST_DEBUG_FUNCPTR(gst_cuda_spectrum_scope_src_event));
  gst_cudafft_element_core_init(&self->core, GST_ELEMENT(self), sink, src,
                                GST_CUDA_SPECTRUM_SCOPE_PROP_BACKEND,
                                GST_CUDA_SPECTRUM_SCOPE_PROP_CUDA_DEVICE_ID);
  /* downstream's answers without CUDA memory where the frames are drawn on the CPU (the base
   * class negotiates from them), and an ERROR where nothing else is left */
  gst_cudafft_element_core_watch_cuda_memory(&self->core, src, gpu_output, FALSE);
  gst_object_unref(sink);
  gst_object_unref(src);
}
