/* gstcudafftaudiofilter.h: the abstract base of every element in this plugin. It owns what they all
 * have, so that an element's file holds only its own properties and behaviour:
 *
 * - the backend and cuda-device-id properties, and the rule for falling back to the CPU (both
 *   written once in gstcudafftbackend.h, which cudaspectrumscope shares);
 * - the engine object (one of the cudafft library's), made by that rule and released at stop on
 *   every path;
 * - the output buffers (a pool, page-locked where the engine runs on the GPU) and the page-locked
 *   memory offered upstream in the ALLOCATION query;
 * - the run (gstcudafftrun.h): where it starts, where a discontinuity ends it;
 * - the stream events every element treats alike (drain, flush, latency);
 * - the one mapping of GStreamer's sample formats to the library's, and the way to the one place
 *   where an engine status becomes an error a user can act on (gstcudafftbackend.h). */
#ifndef GST_CUDAFFT_AUDIO_FILTER_H
#define GST_CUDAFFT_AUDIO_FILTER_H

#include "gstcudafftbackend.h"
#include "gstcudafftrun.h"

#include <cudafft/common.h>

#include <gst/audio/audio.h>
#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* The caps field every element's raw audio has: channels up to the library's limit. */
#define GST_CUDAFFT_CHANNELS_FIELD "channels = (int) [ 1, " G_STRINGIFY(CUDAFFT_MAX_CHANNELS) " ]"

/* Defines the engine class `var` (GST_CUDAFFT_DEFINE_ENGINE_CLASS, gstcudafftbackend.h) and
 * `var_of(element)`, the element's engine as a `Type *` (NULL while it has none). */
#define GST_CUDAFFT_DEFINE_ENGINE(var, engine, Type, Config, label)                                \
  GST_CUDAFFT_DEFINE_ENGINE_CLASS(var, engine, Type, Config, label)                                \
  static G_GNUC_UNUSED Type *var##_of(gpointer element)                                            \
  {                                                                                                \
    return gst_cudafft_audio_filter_get_engine(GST_CUDAFFT_AUDIO_FILTER(element));                 \
  }

#define GST_TYPE_CUDAFFT_AUDIO_FILTER (gst_cudafft_audio_filter_get_type())
G_DECLARE_DERIVABLE_TYPE(GstCudafftAudioFilter, gst_cudafft_audio_filter, GST, CUDAFFT_AUDIO_FILTER,
                         GstBaseTransform)

struct _GstCudafftAudioFilterClass {
  GstBaseTransformClass parent_class;

  /* Releases what the subclass holds besides the engine, which the base class releases. Called
   * from stop (so on every way to NULL), may be called again; must tolerate having nothing to
   * release. Optional. */
  void (*close)(GstCudafftAudioFilter *filter);

  /* The stream events every element here treats alike, from the base class's sink_event: `drain`
   * ends the current run, pushing what it still holds (before EOS, a new segment or caps that
   * differ; and, with `process`, before a buffer that does not continue the run); `flush` forgets
   * what the element holds besides the engine and the run, which the base class resets
   * (FLUSH_STOP; optional). Segments other than TIME are refused before either is called. */
  GstFlowReturn (*drain)(GstCudafftAudioFilter *filter);
  void (*flush)(GstCudafftAudioFilter *filter);

  /* The element's own algorithmic latency, which the base class adds to upstream's in the
   * LATENCY query. */
  GstClockTime (*get_latency)(GstCudafftAudioFilter *filter);

  /* Elements that make output of their own from each input buffer (not in place) set `process`;
   * the base class's generate_output then takes each input buffer through, in order: `prepare`
   * (optional: apply property changes made while playing); `drain` when the buffer does not
   * continue the run (see gst_cudafft_audio_filter_set_run_format); when no run is active, a new
   * one starts at the buffer and `begin_run` (optional) is called; then `process` with the
   * buffer mapped for reading, which puts its output in *outbuf or pushes it. */
  GstFlowReturn (*prepare)(GstCudafftAudioFilter *filter);
  GstFlowReturn (*begin_run)(GstCudafftAudioFilter *filter, GstBuffer *first);
  GstFlowReturn (*process)(GstCudafftAudioFilter *filter, GstBuffer *inbuf, const GstMapInfo *map,
                           GstBuffer **outbuf);

  /* What the out-of-memory errors tell the user to shrink, naming the element's own properties
   * (the base class sets "use a smaller fft-size or fewer channels"; a subclass may replace it in
   * its class_init). */
  const gchar *memory_hint;
};

/* The engine ---------------------------------------------------------------------------------- */

/* Makes an engine of `engine_class` for `config` with the backend and device the properties ask
 * for (and once more on the CPU where `auto` meets a GPU that cannot run these settings). On
 * success it replaces the element's engine (the old one is destroyed and the output pool emptied:
 * its memory suits the old engine's backend); on failure this posts a GST_ELEMENT_ERROR saying
 * what to do, returns FALSE and leaves the old engine in place. */
gboolean gst_cudafft_audio_filter_open_engine(GstCudafftAudioFilter *filter,
                                              const GstCudafftEngineClass *engine_class,
                                              gconstpointer config);

/* Destroys the engine (if any), empties the output pool and resets the run. */
void gst_cudafft_audio_filter_close_engine(GstCudafftAudioFilter *filter);

/* The engine, or NULL; subclasses cast it to the type of the engine class they opened it with. */
gpointer gst_cudafft_audio_filter_get_engine(GstCudafftAudioFilter *filter);

/* Whether the engine exists and runs on the GPU. */
gboolean gst_cudafft_audio_filter_uses_gpu(GstCudafftAudioFilter *filter);

/* Posts the GST_ELEMENT_ERROR for a failed engine call; `what` says which call. */
void gst_cudafft_audio_filter_post_error(GstCudafftAudioFilter *filter, CudafftStatus status,
                                         const gchar *what);

/* Reads raw audio caps into *info; if they cannot be read, posts a NEGOTIATION error. */
gboolean gst_cudafft_audio_filter_read_audio_caps(GstCudafftAudioFilter *filter, GstCaps *caps,
                                                  GstAudioInfo *info);

/* Ends a transform_caps: `result` (taken) intersected with `filter_caps` (may be NULL), logged. */
GstCaps *gst_cudafft_audio_filter_filter_caps(GstCudafftAudioFilter *filter,
                                              GstPadDirection direction, GstCaps *caps,
                                              GstCaps *result, GstCaps *filter_caps);

/* The library's sample format for GStreamer's (the little-endian ones the caps name);
 * CUDAFFT_SAMPLE_COUNT_ for a format the library does not take. */
CudafftSampleFormat gst_cudafft_sample_format(GstAudioFormat format);

/* Output buffers ----------------------------------------------------------------------------- */

/* An output buffer of `bytes` bytes from the element's pool (page-locked while the engine runs on
 * the GPU). The pool grows to the largest size asked for plus `spare` bytes, so that sizes which
 * differ by a little from buffer to buffer do not remake it. NULL, with a GST_ELEMENT_ERROR posted,
 * when out of memory. */
GstBuffer *gst_cudafft_audio_filter_output_buffer(GstCudafftAudioFilter *filter, gsize bytes,
                                                  gsize spare);

/* The same, mapped for writing into *map. */
GstBuffer *gst_cudafft_audio_filter_map_output(GstCudafftAudioFilter *filter, gsize bytes,
                                               gsize spare, GstMapInfo *map);

/* The run ------------------------------------------------------------------------------------ */

/* The element's run. */
GstCudafftRun *gst_cudafft_audio_filter_get_run(GstCudafftAudioFilter *filter);
#define GST_CUDAFFT_AUDIO_FILTER_RUN(obj)                                                          \
  (gst_cudafft_audio_filter_get_run(GST_CUDAFFT_AUDIO_FILTER(obj)))

/* The run's sample rate, and how many samples a buffer's timestamp may be off from where the run's
 * samples end before generate_output takes it as a discontinuity (see `process`). */
void gst_cudafft_audio_filter_set_run_format(GstCudafftAudioFilter *filter, gint rate,
                                             guint64 tolerance);

/* Ends the run without pushing anything: resets the engine (if any) and the run. */
void gst_cudafft_audio_filter_reset_run(GstCudafftAudioFilter *filter);

/* Whether an input buffer of `size` bytes holds whole frames of `frame_bytes`; if not, posts a
 * STREAM FORMAT error saying so. */
gboolean gst_cudafft_audio_filter_check_frames(GstCudafftAudioFilter *filter, gsize size,
                                               gsize frame_bytes);

G_END_DECLS

#endif
