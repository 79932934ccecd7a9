/* gstcudafftaudiofilter.h: the abstract base of every element in this plugin. It owns what they all
 * have, so that an element's file holds only its own properties and behaviour:
 *
 * - what every element of the plugin is whatever its base class (gstcudafftelementcore.h, which
 *   cudaspectrumscope shares): the backend and cuda-device-id properties, the making of engines on
 *   them, the shared CUDA context and one ERROR per failure;
 * - the engine object (one of the cudafft library's), made through the core and released at stop on
 *   every path;
 * - the output buffers (a pool, page-locked where the engine runs on the GPU) and the page-locked
 *   memory offered upstream in the ALLOCATION query;
 * - the run (gstcudafftrun.h): where it starts, where a discontinuity ends it;
 * - the bytes of a frame split between input buffers, held until the rest of it comes;
 * - the stream events every element treats alike (drain, flush, latency);
 * - the one mapping of GStreamer's sample formats to the library's, and the way to the one place
 *   where an engine status becomes an error a user can act on (gstcudafftbackend.h);
 * - the backend probe (once per start: a backend=cuda that cannot run fails the start with one
 *   ERROR, instead of an error at every caps retry). */
#ifndef GST_CUDAFFT_AUDIO_FILTER_H
#define GST_CUDAFFT_AUDIO_FILTER_H

#include "gstcudafftbackend.h"
#include "gstcudafftrun.h"

#include <cudafft/common.h>

#include <gst/audio/audio.h>
#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* The caps field every element's audio and frames have. Any count links and negotiates, so that a
 * stream of more than CUDAFFT_MAX_CHANNELS is refused by the element with a message naming the
 * limit (a CAPS event the base class checks with gst_cudafft_check_channels) instead of a bare
 * "could not link". */
#define GST_CUDAFFT_CHANNELS_FIELD "channels = (int) [ 1, MAX ]"

/* The largest output buffer an element makes (at least one frame where a frame is larger): longer
 * output goes out in several buffers. */
#define GST_CUDAFFT_MAX_OUTPUT_BYTES ((gsize)64 << 20)

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
   * buffer's whole frames (gst_cudafft_audio_filter_take_frames: a frame split between buffers
   * is completed from the next one), which puts its output in *outbuf or pushes it. The map holds
   * whole frames only, possibly none; only its data and size are set. Where `takes_cuda_memory`
   * is set and the buffer is CUDA memory, the map's data is its device pointer
   * (gst_cudafft_audio_filter_input_on_device() says so during the call), and the buffer must hold
   * whole frames (a frame split between CUDA-memory buffers is an error). */
  GstFlowReturn (*prepare)(GstCudafftAudioFilter *filter);
  GstFlowReturn (*begin_run)(GstCudafftAudioFilter *filter, GstBuffer *first);
  GstFlowReturn (*process)(GstCudafftAudioFilter *filter, GstBuffer *inbuf, const GstMapInfo *map,
                           GstBuffer **outbuf);
  gboolean takes_cuda_memory;

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

/* Reads raw audio caps into *info; if they cannot be read, posts a NEGOTIATION error (the channel
 * limit is checked before, at the CAPS event). */
gboolean gst_cudafft_audio_filter_read_audio_caps(GstCudafftAudioFilter *filter, GstCaps *caps,
                                                  GstAudioInfo *info);

/* Ends a transform_caps: `result` (taken) intersected with `filter_caps` (may be NULL), logged.
 * Before the start, where the element's src template has CUDA memory, a src side in system memory
 * alone is offered in CUDA memory too (gst_cudafft_audio_filter_started). */
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
 * when out of memory: no allocation here aborts. */
GstBuffer *gst_cudafft_audio_filter_output_buffer(GstCudafftAudioFilter *filter, gsize bytes,
                                                  gsize spare);

/* An output buffer mapped for writing into *map: with `cuda`, CUDA memory of exactly `bytes` bytes
 * (gst_cudafft_audio_filter_cuda_output) mapped on the device, map->data its device pointer;
 * otherwise gst_cudafft_audio_filter_output_buffer's, map->data in host memory. Unmap with
 * gst_cudafft_audio_filter_unmap_output. NULL, with a GST_ELEMENT_ERROR posted, where it cannot
 * be had. */
GstBuffer *gst_cudafft_audio_filter_map_output(GstCudafftAudioFilter *filter, gsize bytes,
                                               gsize spare, gboolean cuda, GstMapInfo *map);
void gst_cudafft_audio_filter_unmap_output(GstBuffer *buffer, GstMapInfo *map);

/* CUDA memory (gstcudafftcudamemory.h) --------------------------------------------------------- */

/* Whether the element takes part in the pipeline's CUDA context and may exchange CUDA memory: not
 * with backend=cpu, nor without a usable GPU or GStreamer's CUDA library. Any thread. */
gboolean gst_cudafft_audio_filter_shares_context(GstCudafftAudioFilter *filter);

/* Whether the element has started (READY to PAUSED, until PAUSED to READY): before, its caps
 * answers describe what it can do in some configuration, as its pad templates do, so that links
 * made before the start (gst-launch-1.0's) do not fail on CUDA memory, which only the start
 * decides; from the start on they are exact, and downstream that takes only CUDA memory where the
 * element gives none gets an ERROR saying why (gst_cudafft_element_core_watch_cuda_memory).
 * Any thread. */
gboolean gst_cudafft_audio_filter_started(GstCudafftAudioFilter *filter);

/* At a CAPS event (the base class's, and an element's own check before it): FALSE, after the
 * ERROR saying why, where downstream takes only CUDA memory and the element gives none
 * (gst_cudafft_element_core_check_downstream_memory). */
gboolean gst_cudafft_audio_filter_check_downstream_memory(GstCudafftAudioFilter *filter);

/* caps (taken) with every structure offered again in CUDA memory after it, where the element
 * shares the context (gst_cudafft_caps_add_cuda_memory); caps as they are otherwise. */
GstCaps *gst_cudafft_audio_filter_offer_cuda_memory(GstCudafftAudioFilter *filter, GstCaps *caps);

/* Whether an input buffer of CUDA memory of `bytes` bytes holds whole frames, with no part of a
 * frame from earlier buffers waiting: a frame split between CUDA-memory buffers is an error,
 * posted here (FALSE). For an element that reads CUDA memory itself (cudaspectrum, in place). */
gboolean gst_cudafft_audio_filter_whole_cuda_frames(GstCudafftAudioFilter *filter, gsize bytes);

/* Whether the input `process` is given now is device memory (see `process`). */
gboolean gst_cudafft_audio_filter_input_on_device(GstCudafftAudioFilter *filter);

/* Whether the engine may read buffer where it is: one memory, CUDA memory of the element's own
 * context (gst_cudafft_context_holds_memory). CUDA memory of another context (another device's, or
 * another pipeline's or application's) is read through GStreamer's host copy instead, never handed
 * to a kernel: that is logged (a warning, once a run), since it costs a copy each way. */
gboolean gst_cudafft_audio_filter_reads_in_place(GstCudafftAudioFilter *filter, GstBuffer *buffer);

/* Device order between our elements (gstcudafftfence.h): the fence the device input `process` is
 * given now is complete at, for the engine's push_device `after`; NULL where it is complete (or in
 * host memory). */
const CudafftFence *gst_cudafft_audio_filter_input_fence(GstCudafftAudioFilter *filter);

/* Waits for the device work that writes buffer (its fence), where the host or another stream
 * reads it or it leaves our elements; FALSE (an ERROR posted, naming `whose` work: "the input's")
 * where that failed. */
gboolean gst_cudafft_audio_filter_wait_fence(GstCudafftAudioFilter *filter, GstBuffer *buffer,
                                             const gchar *whose);

/* Whether pad's peer belongs to an element of ours (which orders its device work after a buffer's
 * fence, or waits for it), directly or through capsfilters: only then may a buffer go out before
 * its device work is done. */
gboolean gst_cudafft_pad_feeds_ours(GstPad *pad);

/* For an engine push whose output goes out in CUDA memory (cuda_out) to an element of ours: the
 * place for its `done` fence, so that the push does not wait for the device; NULL otherwise (the
 * push waits: the output must be complete when it leaves our elements). */
CudafftFence *gst_cudafft_audio_filter_output_fence(GstCudafftAudioFilter *filter,
                                                    gboolean cuda_out);

/* After that push, on its output buffer: the fence it gave, and the input buffer of CUDA memory
 * (which the work reads in place) kept with it until the work is done. Nothing where the push
 * waited. FALSE (posted) where neither the fence could be attached nor waited for. */
gboolean gst_cudafft_audio_filter_fence_output(GstCudafftAudioFilter *filter, GstBuffer *buffer);

/* For class_init: the "sink" and "src" pad templates, each of caps (taken) in system memory and,
 * where the build has CUDA memory, in CUDA memory after it (gst_cudafft_caps_add_cuda_memory). */
void gst_cudafft_audio_filter_class_add_pad_templates(GstElementClass *klass, GstCaps *sink,
                                                      GstCaps *src);

/* For a set_caps, after the engine is made: where incaps or outcaps carry CUDA memory, the engine
 * must run on the GPU (an `auto` element fallen back to the CPU cannot take or make it). FALSE
 * with a NEGOTIATION ERROR saying so; TRUE where that holds or there is no engine yet. The base
 * class's fixate_caps takes CUDA memory for the output where downstream names it. */
gboolean gst_cudafft_audio_filter_check_memory(GstCudafftAudioFilter *filter, GstCaps *incaps,
                                               GstCaps *outcaps);

/* An output buffer of `bytes` bytes of CUDA memory of the element's context (one GstCudaMemory,
 * laid out as gstcudafftcudamemory.h says). NULL, with a GST_ELEMENT_ERROR posted, where there is
 * none. */
GstBuffer *gst_cudafft_audio_filter_cuda_output(GstCudafftAudioFilter *filter, gsize bytes);

/* An output buffer (taken) cut to its `bytes` bytes from `offset` on, for output whose first or
 * last samples are dropped: system memory in place (gst_buffer_resize); CUDA memory (from
 * gst_cudafft_audio_filter_cuda_output) by a copy on the device into a buffer of its own, since
 * GStreamer 1.22's CUDA memory cannot be cut in place (its host copy takes the whole allocation).
 * NULL, with a GST_ELEMENT_ERROR posted, where the copy cannot be had. */
GstBuffer *gst_cudafft_audio_filter_trim_output(GstCudafftAudioFilter *filter, GstBuffer *buffer,
                                                gsize offset, gsize bytes);

/* The run ------------------------------------------------------------------------------------ */

/* The element's run. */
GstCudafftRun *gst_cudafft_audio_filter_get_run(GstCudafftAudioFilter *filter);
#define GST_CUDAFFT_AUDIO_FILTER_RUN(obj)                                                          \
  (gst_cudafft_audio_filter_get_run(GST_CUDAFFT_AUDIO_FILTER(obj)))

/* The run's sample rate, and how many samples a buffer's timestamp may be off from where the run's
 * samples end before generate_output takes it as a discontinuity (see `process`). */
void gst_cudafft_audio_filter_set_run_format(GstCudafftAudioFilter *filter, gint rate,
                                             guint64 tolerance);

/* Ends the run without pushing anything: resets the engine (if any) and the run. A partial frame
 * held stays: it continues the stream (dropped only at the events and discontinuities below). */
void gst_cudafft_audio_filter_reset_run(GstCudafftAudioFilter *filter);

/* Split frames --------------------------------------------------------------------------------- */

/* The bytes of one input frame (an audio frame, or one audio/x-fft frame), from the caps. A change
 * forgets a partial frame held. */
void gst_cudafft_audio_filter_set_frame_bytes(GstCudafftAudioFilter *filter, gsize frame_bytes);

/* The whole frames of an input buffer's `size` bytes at `data`, after the start of a frame held
 * from the buffers before: *frames points at them (into data, or into a copy that joins the held
 * bytes to data's first ones) and *count is their number, possibly 0; the bytes after the last
 * whole frame are held for the next buffer. The copy is valid until the next call. FALSE, with a
 * GST_ELEMENT_ERROR posted, when there is no memory for the copy. */
gboolean gst_cudafft_audio_filter_take_frames(GstCudafftAudioFilter *filter, const guint8 *data,
                                              gsize size, const guint8 **frames, gsize *count);

/* Forgets the partial frame held, if any, with a WARNING message (its bytes are lost) naming
 * `where` ("at the end of the stream", "before a discontinuity"). The base class calls it before
 * draining for EOS, a new segment or new caps, and at a discontinuity in generate_output; an
 * in-place element calls it at its own discontinuities. */
void gst_cudafft_audio_filter_drop_partial_frame(GstCudafftAudioFilter *filter, const gchar *where);

G_END_DECLS

#endif
