/* gstcudaspectrum.c: cudaspectrum, a drop-in replacement for GStreamer's `spectrum` that runs the
 * analysis (cudafft/spectrum.h) on an NVIDIA GPU, or on the CPU with backend=cpu. */
/**
 * SECTION:element-cudaspectrum
 * @title: cudaspectrum
 *
 * cudaspectrum analyses the frequency spectrum of an audio stream exactly as `spectrum` does
 * (same properties, same analysis, same messages), with the FFTs on the GPU; the audio passes
 * through untouched. Replacing `spectrum` by `cudaspectrum` in a pipeline is all it takes.
 *
 * If #GstCudaSpectrum:post-messages is %TRUE, it posts an element message named `spectrum`
 * after each interval of #GstCudaSpectrum:interval nanoseconds. Its fields, in this order:
 *
 * * #GstClockTime `endtime`: stream-time + duration (kept for compatibility).
 * * #guint64 `timestamp`: the time of the interval's first sample.
 * * #guint64 `stream-time`: the stream time of the interval's first sample.
 * * #guint64 `running-time`: the running time of the interval's first sample.
 * * #guint64 `duration`: the #GstCudaSpectrum:interval, or the real length of a partial interval
 *   (see below).
 * * `magnitude`: the mean level of each band in dB, raised to #GstCudaSpectrum:threshold where
 *   below it. A #GST_TYPE_LIST of #gfloat, or with #GstCudaSpectrum:multi-channel a
 *   #GST_TYPE_ARRAY holding a #GST_TYPE_ARRAY of #gfloat per channel. Only when
 *   #GstCudaSpectrum:message-magnitude is %TRUE.
 * * `phase`: the mean phase of each band in radians (-pi to pi), shaped like `magnitude`. Only
 *   when #GstCudaSpectrum:message-phase is %TRUE.
 *
 * and then fields of its own, which `spectrum` has not:
 *
 * * #GBytes `magnitude-data` (with `magnitude`) and `phase-data` (with `phase`): the same values
 *   as native float32, `channels` rows of `bands` values, channel 0 first. One read gives them all
 *   (in Python: `numpy.frombuffer(s.get_value("magnitude-data").get_data(), numpy.float32)`),
 *   instead of one GValue per band.
 * * #guint `bands`: values per row.
 * * #guint `channels`: rows in the data: the channels with multi-channel, else 1.
 *
 * With #GstCudaSpectrum:message-lists %FALSE (default %TRUE) the `magnitude` and `phase` lists are
 * left out and only the float32 fields are posted: building a GValue per band is most of a
 * message's cost, and a display reads the float32 fields anyway.
 *
 * The messages of all cudaspectrum instances in one pipeline are posted one at a time: hundreds
 * of streaming threads posting on one bus at once can stall each other in GStreamer's lock-free
 * bus queue, where a writer spins until every writer before it has finished. A streaming thread
 * that finds another posting leaves its message to that one, which posts it next (its sync
 * handlers then run there), and goes on with its audio; every message of an instance is on the bus
 * before its EOS goes downstream, in the order of its intervals.
 *
 * Where cudaspectrum differs from `spectrum` 1.22 (each time because `spectrum` is defective):
 *
 * * At EOS, and before a new segment or new caps, a partial interval is posted, its `duration`
 *   its real length (frames / rate); `spectrum` drops it.
 * * A DISCONT buffer starts the analysis afresh: the open interval, the interval carry and the
 *   sample history are forgotten, and the next interval starts at that buffer's timestamp.
 *   `spectrum` forgets only the frame counts and keeps the old sums, which leak into the next
 *   interval.
 * * Untimestamped buffers get times counted in samples from the last timestamp seen (from the
 *   segment's start when there was none since it began, as cudafft and cudaconvolve count them),
 *   so every time field is valid; `spectrum` posts wrapped values. `endtime`
 *   never wraps: it is #GST_CLOCK_TIME_NONE when the interval lies outside the segment and
 *   saturates instead of overflowing.
 * * S24 input without multi-channel is mixed correctly; `spectrum` forgets to reset its sum per
 *   frame, so its S24 mono-mix spectra are wrong.
 * * Changing #GstCudaSpectrum:bands or #GstCudaSpectrum:multi-channel while playing applies at
 *   the next interval boundary: the open interval is completed and posted with the old settings.
 *   #GstCudaSpectrum:interval, #GstCudaSpectrum:threshold and #GstCudaSpectrum:message-phase
 *   also apply from the next interval. `spectrum` drops the open interval and its history on a
 *   change of bands, multi-channel or interval, and applies threshold and message-phase in the
 *   middle of an interval (mixing FFTs with and without them).
 * * A buffer that does not hold a whole number of frames is analysed up to its last whole frame
 *   and the rest is kept for the next buffer (with a warning in the debug log); `spectrum` fails
 *   an assertion.
 *
 * ## Band layouts
 *
 * Five properties of its own, off by default, give the bands a display wants:
 * #GstCudaSpectrum:frequency-scale (linear, log, mel or IEC 61260-1 octave bands),
 * #GstCudaSpectrum:bands-per-octave, #GstCudaSpectrum:min-frequency,
 * #GstCudaSpectrum:max-frequency and #GstCudaSpectrum:weighting (IEC 61672-1 A or C). With their
 * defaults (linear, z) cudaspectrum is `spectrum`: the same bands and messages. Otherwise the
 * analysis is spectrum's (its window, FFTs and intervals), of nfft = 2 bands - 2 points for the
 * linear scale as in spectrum, and of #GstCudaSpectrum:fft-size points of its own for log, mel
 * and octave (whose bins are rate / fft-size apart: a band resolves a tone where it is about two
 * bins wide), and each interval's spectrum becomes the layout's bands before it is posted:
 *
 * * Bands: linear, log and mel give #GstCudaSpectrum:bands bands with centres evenly spaced on
 *   that axis from min-frequency to max-frequency; octave gives the IEC 61260-1 bands whose
 *   midband lies in that range (cudafft/bands.h states the formulas).
 * * Levels: a bin's interval level L_k is spectrum's (the mean of its FFTs' levels in dB),
 *   without the threshold's floor; a band's level is 10 log10(sum_k a_k g_k 10^(L_k / 10)), with
 *   a_k the fraction of bin k inside the band (a band narrower than a bin: the density
 *   interpolated at its centre, times its width) and g_k the weighting's gain at the bin's
 *   frequency; then raised to #GstCudaSpectrum:threshold. A band's phase is that of the bin
 *   nearest its centre.
 * * The message is the same, with `bands` values per row, and one field more: #GBytes
 *   `frequencies`, the band centres in Hz as float32, so that an application can label its axis.
 *
 * The layout properties may change while playing and apply from the next interval, as threshold
 * does; they are checked together when they apply, so that they may be set in any order. A layout
 * without bands at the stream's rate (min-frequency above the Nyquist frequency, an octave range
 * without a midband) is an ERROR at the start naming the values and what would work; while
 * playing it is refused with a WARNING, the layout in force stays and its properties read it back
 * (as cudaspectrumscope does).
 *
 * Like `spectrum`, it adds no latency. The GPU pays off for many bands, many channels or short
 * intervals. It runs on the CPU (FFTW) with backend=cpu, and backend=auto falls back to it where
 * no GPU is usable, saying why in an INFO message.
 *
 * On the GPU it also passes audio in CUDA memory through (`audio/x-raw(memory:CUDAMemory)`, laid
 * out as docs/elements.md says), analysing the samples where they are: after a
 * cudaconvolve that writes CUDA memory, nothing crosses the bus. backend=cpu offers system memory
 * only.
 *
 * ## Example pipeline
 * |[
 * gst-launch-1.0 -m audiotestsrc wave=sine freq=1000 ! audioconvert ! \
 *     cudaspectrum bands=1024 interval=50000000 multi-channel=true ! fakesink
 * ]| posts the spectrum of a 1 kHz tone every 50 ms.
 */
#include "gstcudaspectrum.h"

#include <cudafft/spectrum.h>
#include "gstcudafftbands.h"
#include "gstcudafftcaps.h"
#include "gstcudafftcudamemory.h"
#include "gstcudafftfence.h"
#include "gstcudaspectrumbands.h"
#include "gstcudaspectrummessages.h"
#include "gstcudaspectrumpost.h"
#include "gstcudaspectrumproperties.h"

#include <gst/audio/audio.h>
#include <string.h>

/* shared with gstcudaspectrummessages.c, whose work is this element's */
GST_DEBUG_CATEGORY(gst_cuda_spectrum_debug);
#define GST_CAT_DEFAULT gst_cuda_spectrum_debug

struct _GstCudaSpectrum {
  GstCudafftAudioFilter parent;

  GstCudaSpectrumSettings settings; /* the properties (gstcudaspectrumproperties.h), locked */

  /* streaming thread only */
  GstAudioInfo info;
  CudafftSpectrumConfig config; /* what the engine runs: made with, options last given */
  guint64 interval_now;         /* interval_ns of the open interval, for `duration` */
  guint64 interval_next;        /* and of the intervals after it (set_options waits for those) */
  GstCudaSpectrumLayout layout_now, layout_next; /* the same for the band layout */
  GstCudaSpectrumBandMap band_map;
  GstClockTime message_ts;   /* start of the open interval, computed as spectrum does */
  GstClockTime time_base;    /* the last timestamp seen (the segment's start before any) ... */
  guint64 frames_since_base; /* ... and the frames since, for untimestamped buffers */
  GstCudaSpectrumMessages messages; /* the builders of its messages, freed at close */
};

#define CAPS                                                                                       \
  "audio/x-raw, format = (string) { S16LE, S24LE, S32LE, F32LE, F64LE }, "                         \
  "rate = (int) [ 1, MAX ], layout = (string) interleaved, " GST_CUDAFFT_CHANNELS_FIELD

/* The pad templates: CAPS in system memory and, where the build has it, in CUDA memory (made in
 * class_init). */

G_DEFINE_TYPE_WITH_CODE(GstCudaSpectrum, gst_cuda_spectrum, GST_TYPE_CUDAFFT_AUDIO_FILTER,
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_spectrum_debug, "cudaspectrum", 0,
                                                "GPU audio spectrum analyser"));
GST_ELEMENT_REGISTER_DEFINE(cudaspectrum, "cudaspectrum", GST_RANK_NONE, GST_TYPE_CUDA_SPECTRUM);

GST_CUDAFFT_DEFINE_ENGINE(spectrum_engine, spectrum, CudafftSpectrum, CudafftSpectrumConfig,
                          "the spectrum analyser");

static GstCudaSpectrumSettings
current_settings(GstCudaSpectrum *self)
{
  GST_OBJECT_LOCK(self);
  const GstCudaSpectrumSettings s = self->settings;
  GST_OBJECT_UNLOCK(self);
  return s;
}

/* The engine's options; with a band layout the threshold applies to the bands, after the engine
 * (gstcudaspectrumbands.h). */
static CudafftSpectrumOptions
options_of(const GstCudaSpectrumSettings *s, const GstCudaSpectrumLayout *layout)
{
  const CudafftSpectrumOptions options = {
      .interval_ns = s->interval,
      .threshold = layout->active ? GST_CUDA_SPECTRUM_LAYOUT_THRESHOLD : s->threshold,
      .phase = s->message_phase ? 1 : 0};
  return options;
}

static GstCudaSpectrumLayout
layout_of(const GstCudaSpectrumSettings *s)
{
  const GstCudaSpectrumLayout layout = {
      .active = s->scale != CUDAFFT_SCALE_LINEAR || s->weighting != CUDAFFT_WEIGHTING_Z,
      .scale = s->scale,
      .bands_per_octave = s->bands_per_octave,
      .min_frequency = s->min_frequency,
      .max_frequency = s->max_frequency,
      .weighting = s->weighting,
      .threshold = s->threshold,
      .bands = s->bands,
      .fft_size = s->fft_size,
  };
  return layout;
}

static GstCudafftBandSettings
band_settings_of(const GstCudaSpectrumLayout *layout)
{
  const GstCudafftBandSettings b = {layout->scale, layout->bands_per_octave, layout->min_frequency,
                                    layout->max_frequency, layout->weighting};
  return b;
}

static void
set_band_settings(GstCudaSpectrumLayout *layout, const GstCudafftBandSettings *b)
{
  layout->scale = b->scale;
  layout->bands_per_octave = b->bands_per_octave;
  layout->min_frequency = b->min_frequency;
  layout->max_frequency = b->max_frequency;
  layout->weighting = b->weighting;
  layout->active = b->scale != CUDAFFT_SCALE_LINEAR || b->weighting != CUDAFFT_WEIGHTING_Z;
}

/* The layout properties go back to `kept` where they still hold what was refused (`asked`): a
 * value set since then is the next interval's to check. */
static void
revert_band_settings(GstCudaSpectrum *self, const GstCudafftBandSettings *asked,
                     const GstCudafftBandSettings *kept)
{
  GST_OBJECT_LOCK(self);
  GstCudaSpectrumSettings *s = &self->settings;
  const GstCudafftBandSettings now = {s->scale, s->bands_per_octave, s->min_frequency,
                                      s->max_frequency, s->weighting};
  if (gst_cudafft_band_settings_equal(&now, asked)) {
    s->scale = kept->scale;
    s->bands_per_octave = kept->bands_per_octave;
    s->min_frequency = kept->min_frequency;
    s->max_frequency = kept->max_frequency;
    s->weighting = kept->weighting;
  }
  GST_OBJECT_UNLOCK(self);
}

/* The layout the properties ask for, as it can take effect at this rate (in *out). Its five
 * properties are checked together here, not when each is set, so that they may be set in any
 * order (gstcudafftbands.h): where the layout has no bands, with none in force (in_force NULL: the
 * first analyser for this format) an ERROR, and FALSE; while playing a WARNING, and the layout in
 * force stays, its properties put back. */
static gboolean
accepted_layout(GstCudaSpectrum *self, const GstCudaSpectrumSettings *s,
                const GstCudaSpectrumLayout *in_force, GstCudaSpectrumLayout *out)
{
  *out = layout_of(s);
  if (!out->active)
    return TRUE;
  const GstCudafftBandSettings asked = band_settings_of(out);
  gchar *problem =
      gst_cudafft_band_settings_problem(&asked, (guint)GST_AUDIO_INFO_RATE(&self->info));
  if (!problem)
    return TRUE;
  const GstCudafftBandSettings kept = in_force ? band_settings_of(in_force) : asked;
  gst_cudafft_band_settings_refuse(GST_ELEMENT(self), problem, in_force ? &kept : NULL);
  g_free(problem);
  if (!in_force)
    return FALSE;
  set_band_settings(out, &kept);
  revert_band_settings(self, &asked, &kept);
  return TRUE;
}

/* Times saturate at the largest valid clock time: spectrum's wrapped values are worse than a
 * clamped one, and NONE would read as "unknown". */
static GstClockTime
add_time(GstClockTime a, guint64 b)
{
  return b >= GST_CLOCK_TIME_NONE - 1 - a ? GST_CLOCK_TIME_NONE - 1 : a + b;
}

static guint64
frames_to_time(const GstCudaSpectrum *self, guint64 frames)
{
  const gint rate = GST_AUDIO_INFO_RATE(&self->info);
  return rate > 0 ? gst_util_uint64_scale(frames, GST_SECOND, rate) : 0;
}

/* The time of the next frame to arrive, counted from the last timestamp seen. */
static GstClockTime
time_now(const GstCudaSpectrum *self)
{
  return add_time(self->time_base, frames_to_time(self, self->frames_since_base));
}

/* Properties --------------------------------------------------------------------------------- */

static void
gst_cuda_spectrum_set_property(GObject *object, guint prop_id, const GValue *value,
                               GParamSpec *pspec)
{
  gst_cuda_spectrum_properties_set(object, &GST_CUDA_SPECTRUM(object)->settings, prop_id, value,
                                   pspec);
}

static void
gst_cuda_spectrum_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  const GstCudaSpectrumSettings s = current_settings(GST_CUDA_SPECTRUM(object));
  gst_cuda_spectrum_properties_get(object, &s, prop_id, value, pspec);
}

/* Engine ------------------------------------------------------------------------------------- */

static void
close_engine(GstCudaSpectrum *self)
{
  gst_cudafft_audio_filter_close_engine(GST_CUDAFFT_AUDIO_FILTER(self));
}

/* Makes an analyser for the caps, `s` and `layout` (accepted: accepted_layout), and only then
 * lets go of the old one, which stays in place (and an error is posted) when the new one cannot be
 * made. */
static gboolean
open_engine(GstCudaSpectrum *self, const GstCudaSpectrumSettings *s,
            const GstCudaSpectrumLayout *layout)
{
  const CudafftSpectrumConfig config = {
      .bands = gst_cuda_spectrum_layout_bins(layout, s->bands),
      .channels = (unsigned)GST_AUDIO_INFO_CHANNELS(&self->info),
      .rate = (unsigned)GST_AUDIO_INFO_RATE(&self->info),
      .format = gst_cudafft_sample_format(GST_AUDIO_INFO_FORMAT(&self->info)),
      .multi_channel = s->multi_channel ? 1 : 0,
      .options = options_of(s, layout),
      /* a message holds each value twice: a GValue in the list or array, a float in the bytes */
      .result_value_bytes = sizeof(GValue) + sizeof(float),
  };
  GST_DEBUG_OBJECT(
      self,
      "making the analyser: %zu bins, %u channels (%s), %u Hz, %s, interval %" G_GUINT64_FORMAT
      " ns, threshold %d dB%s",
      config.bands, config.channels, config.multi_channel ? "each" : "mixed", config.rate,
      GST_AUDIO_INFO_NAME(&self->info), s->interval, s->threshold,
      s->message_phase ? ", with phase" : "");
  if (!gst_cudafft_audio_filter_open_engine(GST_CUDAFFT_AUDIO_FILTER(self), &spectrum_engine,
                                            &config))
    return FALSE;
  self->config = config;
  self->interval_now = self->interval_next = config.options.interval_ns;
  self->layout_now = self->layout_next = *layout;
  return TRUE;
}

/* The first analyser for this format: no layout is in force yet. */
static gboolean
open_first_engine(GstCudaSpectrum *self, const GstCudaSpectrumSettings *s)
{
  GstCudaSpectrumLayout layout;
  return accepted_layout(self, s, NULL, &layout) && open_engine(self, s, &layout);
}

/* A new analyser for other bins (bands, or fft-size and a layout's scale, from the layout the next
 * interval takes) or multi-channel. */
static gboolean
needs_new_engine(const GstCudaSpectrum *self, const GstCudaSpectrumSettings *s)
{
  return gst_cuda_spectrum_layout_bins(&self->layout_next, s->bands) != self->config.bands ||
         !s->multi_channel != !self->config.multi_channel;
}

/* interval, threshold and message-phase: the engine takes them at its next interval. */
static GstFlowReturn
update_options(GstCudaSpectrum *self, const GstCudaSpectrumSettings *s)
{
  GstCudaSpectrumLayout layout;
  accepted_layout(self, s, &self->layout_next, &layout);
  if (!gst_cuda_spectrum_layout_equal(&layout, &self->layout_next)) {
    if (cudafft_spectrum_frames_pending(spectrum_engine_of(self)) == 0)
      self->layout_now = layout;
    self->layout_next = layout;
  }
  const CudafftSpectrumOptions want = options_of(s, &layout);
  const CudafftSpectrumOptions *have = &self->config.options;
  if (want.interval_ns == have->interval_ns && want.threshold == have->threshold &&
      want.phase == have->phase)
    return GST_FLOW_OK;
  const CudafftStatus status = cudafft_spectrum_set_options(spectrum_engine_of(self), &want);
  if (status != CUDAFFT_STATUS_OK) {
    gst_cudafft_audio_filter_post_error(GST_CUDAFFT_AUDIO_FILTER(self), status,
                                        "cudafft_spectrum_set_options");
    return GST_FLOW_ERROR;
  }
  if (cudafft_spectrum_frames_pending(spectrum_engine_of(self)) == 0)
    self->interval_now = want.interval_ns;
  self->interval_next = want.interval_ns;
  self->config.options = want;
  GST_DEBUG_OBJECT(self,
                   "from the next interval: interval %" G_GUINT64_FORMAT " ns, threshold %d dB, "
                   "phase %s",
                   want.interval_ns, want.threshold, want.phase ? "on" : "off");
  return GST_FLOW_OK;
}

/* Intervals to messages ---------------------------------------------------------------------- */

/* A job's result in the band layout of its interval (gstcudaspectrumbands.h). */
static void
map_to_bands(GstCudaSpectrum *self, GstCudaSpectrumMessage *job, size_t spectra)
{
  gsize count = 0;
  gfloat *phase = NULL, *centres = NULL;
  gfloat *mapped = gst_cuda_spectrum_bands_map(&self->band_map, &self->layout_now,
                                               (guint)self->config.bands, self->config.rate,
                                               &job->result, spectra, &count, &phase, &centres);
  if (!mapped) /* cannot happen: accepted layouts have bands */
    return;
  job->mapped = mapped;
  job->result.magnitude = mapped;
  job->result.phase = phase;
  job->bands = count;
  job->centres = centres;
}

/* Posts the `count` results the last push or finish returned. A full interval lasts `interval`
 * as in spectrum; a partial one (from finish) as long as its frames. post-messages and
 * message-magnitude are read here, so that a change shows in the next push's messages. Everything
 * a message holds is computed here, in order; the messages are then built, in parallel where they
 * are many and large, and posted from this thread in order, each before this returns
 * (gstcudaspectrummessages.h). */
static void
post_results(GstCudaSpectrum *self, size_t count, gboolean partial)
{
  if (count == 0)
    return;
  const GstSegment *segment = &GST_BASE_TRANSFORM(self)->segment;
  /* Data without a segment (after a flush that reset it) has no running or stream time. */
  const gboolean timed = segment->format == GST_FORMAT_TIME;
  GST_OBJECT_LOCK(self);
  const gboolean post = self->settings.post_messages;
  const gboolean with_magnitude = self->settings.message_magnitude;
  const gboolean with_lists = self->settings.message_lists;
  GST_OBJECT_UNLOCK(self);

  GstCudaSpectrumMessage *jobs = g_new(GstCudaSpectrumMessage, count);
  const size_t spectra = cudafft_spectrum_spectra(spectrum_engine_of(self));
  guint n = 0;
  for (size_t i = 0; i < count; i++) {
    CudafftSpectrumResult result;
    if (cudafft_spectrum_result(spectrum_engine_of(self), i, &result) != CUDAFFT_STATUS_OK)
      break; /* cannot happen: i is below the count the engine gave */
    const GstClockTime timestamp = self->message_ts;
    const GstClockTime duration =
        partial ? frames_to_time(self, result.frames) : self->interval_now;
    GST_LOG_OBJECT(self,
                   "interval at %" GST_TIME_FORMAT
                   ": %zu frames, %zu FFTs, duration %" GST_TIME_FORMAT "%s",
                   GST_TIME_ARGS(timestamp), result.frames, result.ffts, GST_TIME_ARGS(duration),
                   partial ? " (partial)" : "");
    if (post) {
      GstCudaSpectrumMessage *job = &jobs[n++];
      job->result = result;
      job->timestamp = timestamp;
      job->running_time = timed ? gst_segment_to_running_time(segment, GST_FORMAT_TIME, timestamp)
                                : GST_CLOCK_TIME_NONE;
      job->stream_time = timed ? gst_segment_to_stream_time(segment, GST_FORMAT_TIME, timestamp)
                               : GST_CLOCK_TIME_NONE;
      job->duration = duration;
      job->endtime = GST_CLOCK_TIME_IS_VALID(job->stream_time)
                         ? add_time(job->stream_time, duration)
                         : GST_CLOCK_TIME_NONE;
      job->with_magnitude = with_magnitude;
      job->with_lists = with_lists;
      job->message = NULL;
      job->bands = self->config.bands;
      job->mapped = NULL;
      job->centres = NULL;
      if (self->layout_now.active)
        map_to_bands(self, job, spectra);
    }
    /* spectrum's own stepping (truncating per interval), so that timestamps match it */
    self->message_ts = add_time(self->message_ts, frames_to_time(self, result.frames));
    self->interval_now = self->interval_next;
    self->layout_now = self->layout_next;
  }

  gst_cuda_spectrum_messages_post(&self->messages, GST_ELEMENT(self), jobs, n, spectra,
                                  self->config.multi_channel != 0);
  for (guint i = 0; i < n; i++)
    g_free(jobs[i].mapped);
  g_free(jobs);
}

/* Analysis ----------------------------------------------------------------------------------- */

/* Completes the open interval on the old analyser and posts it before a new one takes over, so
 * that a change of bands or multi-channel loses no interval. */
static GstFlowReturn
replace_engine(GstCudaSpectrum *self, const GstCudaSpectrumSettings *s)
{
  GST_INFO_OBJECT(self, "bins %zu -> %u, multi-channel %d -> %d: a new analyser from here on",
                  self->config.bands, gst_cuda_spectrum_layout_bins(&self->layout_next, s->bands),
                  self->config.multi_channel != 0, s->multi_channel != 0);
  return open_engine(self, s, &self->layout_next) ? GST_FLOW_OK : GST_FLOW_ERROR;
}

/* Analyses `frames` frames at data (device memory where on_device, complete at `after`: NULL, or a
 * fence the analysis is ordered after on the device). */
static GstFlowReturn
analyse(GstCudaSpectrum *self, const guint8 *data, gboolean on_device, const CudafftFence *after,
        gsize frames, const GstCudaSpectrumSettings *s)
{
  const gsize bpf = GST_AUDIO_INFO_BPF(&self->info);
  while (frames > 0) {
    const gboolean change = needs_new_engine(self, s);
    if (change && cudafft_spectrum_frames_pending(spectrum_engine_of(self)) == 0) {
      const GstFlowReturn ret = replace_engine(self, s);
      if (ret != GST_FLOW_OK)
        return ret;
      continue;
    }
    const size_t limit =
        change ? MIN(frames, cudafft_spectrum_frames_left(spectrum_engine_of(self))) : frames;
    size_t consumed = 0, results = 0;
    CudafftSpectrum *engine = spectrum_engine_of(self);
    const size_t most = cudafft_spectrum_max_results(engine);
    const CudafftStatus status =
        on_device
            ? cudafft_spectrum_push_device(engine, data, limit, most, &consumed, &results, after)
            : cudafft_spectrum_push(engine, data, limit, most, &consumed, &results);
    if (status != CUDAFFT_STATUS_OK) {
      gst_cudafft_audio_filter_post_error(GST_CUDAFFT_AUDIO_FILTER(self), status,
                                          "cudafft_spectrum_push");
      return GST_FLOW_ERROR;
    }
    post_results(self, results, FALSE);
    if (consumed == 0 && results == 0) { /* the engine promises progress; never spin */
      GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Internal error: the analyser took no frames."),
                        ("%zu frames offered", limit));
      return GST_FLOW_ERROR;
    }
    data += consumed * bpf;
    frames -= consumed;
  }
  return GST_FLOW_OK;
}

/* Analyses buffer, of CUDA memory, in place: `bytes` at data on the device, whole frames only (a
 * frame split between CUDA-memory buffers is an error), after the device work that writes it (its
 * fence); *count receives the frames. Where the buffer goes on to an element not of ours, that
 * work is done first (the analysis came after it, so that is no wait). */
static GstFlowReturn
analyse_on_device(GstCudaSpectrum *self, GstBuffer *buffer, const guint8 *data, gsize bytes,
                  const GstCudaSpectrumSettings *s, gsize *count)
{
  *count = bytes / GST_AUDIO_INFO_BPF(&self->info);
  if (!gst_cudafft_audio_filter_whole_cuda_frames(GST_CUDAFFT_AUDIO_FILTER(self), bytes))
    return GST_FLOW_ERROR;
  const CudafftFence fence = gst_cudafft_buffer_get_fence(buffer);
  const GstFlowReturn ret =
      *count > 0 ? analyse(self, data, TRUE, fence.queue ? &fence : NULL, *count, s) : GST_FLOW_OK;
  if (ret != GST_FLOW_OK || gst_cudafft_pad_feeds_ours(GST_BASE_TRANSFORM_SRC_PAD(self)))
    return ret;
  return gst_cudafft_audio_filter_wait_fence(GST_CUDAFFT_AUDIO_FILTER(self), buffer, "the input's")
             ? GST_FLOW_OK
             : GST_FLOW_ERROR;
}

static GstFlowReturn
gst_cuda_spectrum_transform_ip(GstBaseTransform *trans, GstBuffer *buffer)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(trans);
  const gsize bpf = GST_AUDIO_INFO_BPF(&self->info);
  if (gst_buffer_get_size(buffer) == 0)
    return GST_FLOW_OK;
  if (bpf == 0) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Audio arrived before its format (caps)."), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }

  GST_LOG_OBJECT(self, "buffer of %" G_GSIZE_FORMAT " bytes at %" GST_TIME_FORMAT,
                 gst_buffer_get_size(buffer), GST_TIME_ARGS(GST_BUFFER_PTS(buffer)));
  const GstCudaSpectrumSettings s = current_settings(self);
  if (!spectrum_engine_of(self) && !open_first_engine(self, &s))
    return GST_FLOW_ERROR;
  if (GST_BUFFER_IS_DISCONT(buffer)) {
    GST_DEBUG_OBJECT(self, "discontinuity at %" GST_TIME_FORMAT "; starting the analysis afresh",
                     GST_TIME_ARGS(GST_BUFFER_PTS(buffer)));
    cudafft_spectrum_reset(spectrum_engine_of(self));
    self->interval_now = self->interval_next;
    self->layout_now = self->layout_next;
    gst_cudafft_audio_filter_drop_partial_frame(GST_CUDAFFT_AUDIO_FILTER(self),
                                                "before a discontinuity");
  }
  GstFlowReturn ret = update_options(self, &s);
  if (ret != GST_FLOW_OK)
    return ret;

  if (GST_BUFFER_PTS_IS_VALID(buffer)) {
    self->time_base = GST_BUFFER_PTS(buffer);
    self->frames_since_base = 0;
  }
  if (cudafft_spectrum_frames_pending(spectrum_engine_of(self)) == 0)
    self->message_ts = time_now(self);

  /* CUDA memory is analysed where it is, by an engine on the GPU (one on the CPU reads the host
   * copy GStreamer makes) */
  GstMapInfo map;
  gpointer device_data = NULL;
  if (gst_cudafft_audio_filter_uses_gpu(GST_CUDAFFT_AUDIO_FILTER(self)) &&
      gst_cudafft_audio_filter_reads_in_place(GST_CUDAFFT_AUDIO_FILTER(self), buffer) &&
      gst_cudafft_map_cuda(buffer, GST_MAP_READ, &map, &device_data, NULL)) {
    gsize count = 0;
    ret = analyse_on_device(self, buffer, device_data, map.size, &s, &count);
    gst_memory_unmap(map.memory, &map);
    self->frames_since_base += count;
    return ret;
  }
  /* CUDA memory whose bytes our device work still writes: the host copy reads them */
  if (!gst_cudafft_audio_filter_wait_fence(GST_CUDAFFT_AUDIO_FILTER(self), buffer, "the input's"))
    return GST_FLOW_ERROR;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot read an input buffer."), (NULL));
    return GST_FLOW_ERROR;
  }
  /* a frame split between buffers is completed from the next one (the base class holds it) */
  const guint8 *frames = NULL;
  gsize count = 0;
  if (!gst_cudafft_audio_filter_take_frames(GST_CUDAFFT_AUDIO_FILTER(self), map.data, map.size,
                                            &frames, &count))
    ret = GST_FLOW_ERROR;
  else if (count > 0)
    ret = analyse(self, frames, FALSE, NULL, count, &s);
  gst_buffer_unmap(buffer, &map);
  self->frames_since_base += count;
  return ret;
}

/* Stream events ------------------------------------------------------------------------------ */

/* The same caps on the other side (the audio passes through), CUDA memory among them only where
 * the element shares the pipeline's CUDA context (not with backend=cpu); before the start, in
 * either memory on both sides, as the templates have them (gst_cudafft_audio_filter_started). */
static GstCaps *
gst_cuda_spectrum_transform_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                 GstCaps *filter)
{
  GstCudafftAudioFilter *base = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCaps *result = !gst_cudafft_audio_filter_started(base)
                        ? gst_cudafft_caps_add_cuda_memory(gst_cudafft_caps_in_system_memory(caps))
                    : gst_cudafft_audio_filter_shares_context(base)
                        ? gst_caps_copy(caps)
                        : gst_cudafft_caps_without_cuda_memory(caps);
  return gst_cudafft_audio_filter_filter_caps(base, direction, caps, result, filter);
}

static gboolean
gst_cuda_spectrum_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(trans);
  (void)outcaps;
  GstAudioInfo info;
  if (!gst_cudafft_audio_filter_read_audio_caps(GST_CUDAFFT_AUDIO_FILTER(self), incaps, &info))
    return FALSE;
  if (spectrum_engine_of(self) && gst_audio_info_is_equal(&info, &self->info))
    return TRUE; /* a renegotiation to the same format keeps the analysis going */
  /* Untimestamped times go on from where the old rate left them. */
  self->time_base = time_now(self);
  self->frames_since_base = 0;
  close_engine(self); /* the next buffer makes one for the new format */
  self->info = info;
  gst_cudafft_audio_filter_set_frame_bytes(GST_CUDAFFT_AUDIO_FILTER(self),
                                           GST_AUDIO_INFO_BPF(&info));
  GST_DEBUG_OBJECT(self, "format %" GST_PTR_FORMAT, incaps);
  return TRUE;
}

/* The partial interval at EOS (or before a new segment or format) is posted, not dropped. */
static GstFlowReturn
gst_cuda_spectrum_drain(GstCudafftAudioFilter *filter)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(filter);
  GstFlowReturn ret = GST_FLOW_OK;
  if (spectrum_engine_of(self) && cudafft_spectrum_frames_pending(spectrum_engine_of(self)) > 0) {
    size_t results = 0;
    const CudafftStatus status = cudafft_spectrum_finish(spectrum_engine_of(self), &results);
    if (status == CUDAFFT_STATUS_OK) {
      GST_DEBUG_OBJECT(self, "posting the partial interval");
      post_results(self, results, TRUE);
    } else {
      gst_cudafft_audio_filter_post_error(filter, status, "cudafft_spectrum_finish");
      ret = GST_FLOW_ERROR;
    }
  }
  /* every message of this element on the bus before the EOS, segment or caps goes on */
  gst_cuda_spectrum_post_flush(GST_ELEMENT(self));
  return ret;
}

/* Untimestamped buffers are timed from a new TIME segment's start (as cudafft and cudaconvolve time
 * their runs), so that their messages lie inside it, with valid running and stream times. The base
 * class posts the open interval first (the drain before a new segment). */
static gboolean
gst_cuda_spectrum_sink_event(GstBaseTransform *trans, GstEvent *event)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(trans);
  const gboolean segment = GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT;
  const gboolean ok =
      GST_BASE_TRANSFORM_CLASS(gst_cuda_spectrum_parent_class)->sink_event(trans, event);
  if (ok && segment && trans->segment.format == GST_FORMAT_TIME) {
    self->time_base = trans->segment.start;
    self->frames_since_base = 0;
  }
  return ok;
}

/* The base class has reset the engine. */
static void
gst_cuda_spectrum_flush(GstCudafftAudioFilter *filter)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(filter);
  GST_DEBUG_OBJECT(self, "flush: starting the analysis afresh");
  self->interval_now = self->interval_next;
  self->layout_now = self->layout_next;
}

/* An analyser: the audio goes out as it came in. */
static GstClockTime
gst_cuda_spectrum_get_latency(GstCudafftAudioFilter *filter)
{
  (void)filter;
  return 0;
}

static void
gst_cuda_spectrum_close(GstCudafftAudioFilter *filter)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(filter);
  gst_cuda_spectrum_messages_close(&self->messages);
  gst_cuda_spectrum_band_map_clear(&self->band_map);
}

/* After the base class has closed the engine too (its host staging is megabytes), so that the
 * freed memory given back to the system includes it. */
static gboolean
gst_cuda_spectrum_stop(GstBaseTransform *trans)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(trans);
  const gboolean ok = GST_BASE_TRANSFORM_CLASS(gst_cuda_spectrum_parent_class)->stop(trans);
  gst_cuda_spectrum_messages_stop(&self->messages, GST_ELEMENT(self));
  return ok;
}

static gboolean
gst_cuda_spectrum_start(GstBaseTransform *trans)
{
  GstCudaSpectrum *self = GST_CUDA_SPECTRUM(trans);
  close_engine(self);
  gst_audio_info_init(&self->info);
  self->message_ts = 0;
  self->time_base = 0;
  self->frames_since_base = 0;
  return TRUE;
}

static void
gst_cuda_spectrum_finalize(GObject *object)
{
  gst_cuda_spectrum_messages_close(&GST_CUDA_SPECTRUM(object)->messages);
  gst_cuda_spectrum_band_map_clear(&GST_CUDA_SPECTRUM(object)->band_map);
  G_OBJECT_CLASS(gst_cuda_spectrum_parent_class)->finalize(object);
}

static void
gst_cuda_spectrum_class_init(GstCudaSpectrumClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstCudafftAudioFilterClass *filter_class = GST_CUDAFFT_AUDIO_FILTER_CLASS(klass);

  gobject_class->set_property = gst_cuda_spectrum_set_property;
  gobject_class->get_property = gst_cuda_spectrum_get_property;
  gobject_class->finalize = gst_cuda_spectrum_finalize;
  gst_cuda_spectrum_properties_install(gobject_class);

  gst_cudafft_audio_filter_class_add_pad_templates(element_class, gst_caps_from_string(CAPS),
                                                   gst_caps_from_string(CAPS));
  gst_element_class_set_static_metadata(
      element_class, "CUDA spectrum analyzer", "Filter/Analyzer/Audio",
      "Run an FFT on the audio signal on an NVIDIA GPU or the CPU (backend=cpu, FFTW), output "
      "spectrum data",
      "gst-cudafft developers");

  trans_class->passthrough_on_same_caps = TRUE;
  trans_class->transform_ip_on_passthrough = TRUE;
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_set_caps);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_transform_caps);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_transform_ip);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_spectrum_sink_event);
  filter_class->close = gst_cuda_spectrum_close;
  filter_class->drain = gst_cuda_spectrum_drain;
  filter_class->flush = gst_cuda_spectrum_flush;
  filter_class->get_latency = gst_cuda_spectrum_get_latency;
  filter_class->memory_hint =
      "lower the bands property, or fft-size with a log, mel or octave layout (with "
      "multi-channel, memory also grows with the channels)";

  gst_cuda_spectrum_messages_init_names();
}

static void
gst_cuda_spectrum_init(GstCudaSpectrum *self)
{
  gst_cuda_spectrum_settings_init(&self->settings);
  gst_audio_info_init(&self->info);
}
