/* gstcudaconvolve.c: cudaconvolve filters audio with a long FIR kernel (a filter, or the impulse
 * response of a room) on an NVIDIA GPU, or on the CPU with backend=cpu, through the engine of
 * cudafft/convolve.h. A drop-in for audiofirfilter: the same properties, signal and samples. This
 * file is the element's properties, caps and events; the kernel in force, the engine made from it
 * and its latency are gstcudaconvolvekernel.c's, the runs through the engine (pushes, drains, the
 * tail, settings applied at buffer boundaries) gstcudaconvolverun.c's. The ir-location file is
 * decoded by base/gstcudafftresponsefile.c, as cudamatrixconvolve's. */
/**
 * SECTION:element-cudaconvolve
 * @title: cudaconvolve
 *
 * cudaconvolve convolves every channel of an audio stream with a kernel: the
 * #GstCudaConvolve:kernel property (one row of taps for every channel, as audiofirfilter takes it)
 * or an audio file named by #GstCudaConvolve:ir-location (an impulse response: mono for every
 * channel, or one channel per stream channel). Kernels of 64 taps and more add
 * #GstCudaConvolve:block-size samples of latency: at the default, 2048, a uniformly partitioned FFT
 * convolution (2048-sample partitions, 4096-point FFTs); below it, the head of the kernel in the
 * time domain and the rest in FFT partitions, down to 0 (zero latency: output sample n leaves with
 * input sample n). Shorter kernels run in the time domain without latency at any block size.
 * It runs on an NVIDIA GPU, or on the CPU (FFTW) with backend=cpu (backend=auto falls back to it
 * where no GPU is usable, saying why in an INFO message). A drop-in for audiofirfilter: the same
 * properties, rate-changed signal and samples, with the differences listed below.
 *
 * #GstCudaConvolve:block-size may change while playing: the new size takes over like a new kernel,
 * at a block boundary of the larger of the two sizes, crossfaded over that many samples, without a
 * lost sample. The LATENCY query answers block-size samples (0 below 64 taps), and a LATENCY
 * message is posted when that changes (when the crossover to a smaller size has ended, or at once
 * for a larger one), so that a live pipeline adjusts its latency.
 *
 * Like audiofirfilter, #GstCudaConvolve:latency samples are dropped from the start of the output
 * (the filter's own delay, so that a linear-phase filter lines up with its input), and output
 * sample n is stamped as input sample n. The rate-changed signal is emitted before the first
 * buffer of every rate, so that an application can set a kernel for it.
 *
 * An #GstCudaConvolve:ir-location file is decoded on a worker thread as soon as the stream's rate
 * is known, and again when the file is set or the rate changes; the first buffer waits for the
 * decode where it has not finished. A file set while playing takes effect once decoded (at the
 * next block boundary, crossfaded like a kernel change); the previous kernel filters meanwhile.
 * Each decode posts GST_MESSAGE_PROGRESS messages with the code "ir-location": START, then
 * COMPLETE, ERROR (the file cannot be used) or CANCELED. A path that is not a regular file (a
 * FIFO, a device) is refused without being opened.
 *
 * Where it differs from audiofirfilter:
 *
 * * Latency: #GstCudaConvolve:block-size samples (2048 by default, down to 0; 0 below 64 taps)
 *   whatever the kernel length; audiofirfilter's block is 4 times the kernel length (3 s for a
 *   48000-tap kernel at 48 kHz).
 * * EOS: with #GstCudaConvolve:drain-tail (the default) the whole response is pushed, input length
 *   + kernel length - 1 samples in all (minus #GstCudaConvolve:latency); drain-tail=false gives the
 *   input's length, as audiofirfilter.
 * * Kernel changes while playing, of any length, take effect at the next block boundary with a
 *   linear crossfade of one block (block-size samples; 32 for block-size 0): no click, no lost
 *   samples (audiofirfilter aborts on a length change).
 * * A DISCONT buffer or a timestamp gap of more than 1024 samples ends the run at its last input
 *   sample (no tail: the tail would overlap the new run's timestamps) and starts a new one;
 *   audiofirfilter's threshold is 5 ms.
 * * #GstCudaConvolve:latency, changed while playing, applies from the next run (after a flush, a
 *   discontinuity or EOS).
 * * low-latency and drain-on-changes are accepted and have no effect.
 *
 * On the GPU, either pad also takes audio in CUDA memory (`audio/x-raw(memory:CUDAMemory)`, laid
 * out as docs/elements.md says): where a neighbour asks for it (another cudaconvolve,
 * cudaspectrum, an appsink with such caps) the samples stay on the device, read and written in
 * place by the filter. Each side is negotiated on its own, so one side may be CUDA memory and the
 * other system memory. Into another element of this plugin, output in CUDA memory goes on as soon
 * as its device work is queued (that element's work is queued after it on the device); into
 * anything else, once it is complete. backend=cpu offers system memory only.
 *
 * ## Example pipelines
 * |[
 * gst-launch-1.0 filesrc location=dry.wav ! decodebin ! audioconvert ! \
 *     cudaconvolve ir-location=hall.wav ! audioconvert ! autoaudiosink
 * ]|
 * A live reverb for monitoring: 64 samples (1.3 ms at 48 kHz) of latency from the reverb, whatever
 * the response's length; the sound card's buffers set the rest.
 * |[
 * gst-launch-1.0 alsasrc buffer-time=4000 latency-time=1333 ! audioconvert ! \
 *     audio/x-raw,format=F32LE,rate=48000 ! cudaconvolve ir-location=hall.wav block-size=64 ! \
 *     audioconvert ! alsasink buffer-time=4000 latency-time=1333
 * ]|
 */
#include "gstcudaconvolve.h"
#include "gstcudaconvolveprivate.h"

#include <cudafft/convolve.h>
#include "gstcudafftresponsefile.h"
#include "gstcudafftcudamemory.h"
#include "gstcudafftproperties.h"

#include <gst/audio/audio.h>
#include <float.h>
#include <math.h>

GST_DEBUG_CATEGORY(gst_cuda_convolve_debug);
#define GST_CAT_DEFAULT gst_cuda_convolve_debug

enum {
  PROP_0,
  PROP_KERNEL,
  PROP_LATENCY,
  PROP_IR_LOCATION,
  PROP_MIX,
  PROP_DRAIN_TAIL,
  PROP_LOW_LATENCY,
  PROP_DRAIN_ON_CHANGES,
  PROP_BLOCK_SIZE
};

enum { SIGNAL_RATE_CHANGED, LAST_SIGNAL };
static guint signals[LAST_SIGNAL];

#define DEFAULT_LATENCY 0
#define DEFAULT_MIX 1.0
#define DEFAULT_DRAIN_TAIL TRUE
#define DEFAULT_BLOCK_SIZE CUDAFFT_CONVOLVE_BLOCK /* today's latency and speed */

#define CAPS                                                                                       \
  "audio/x-raw, format = (string) { F32LE, F64LE }, layout = (string) interleaved, "               \
  "rate = (int) [ 1, MAX ], " GST_CUDAFFT_CHANNELS_FIELD

/* The pad templates: CAPS in system memory and, where the build has it, in CUDA memory (made in
 * class_init). */

G_DEFINE_TYPE_WITH_CODE(GstCudaConvolve, gst_cuda_convolve, GST_TYPE_CUDAFFT_AUDIO_FILTER,
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_convolve_debug, "cudaconvolve", 0,
                                                "GPU FIR filter and convolution reverb"));
GST_ELEMENT_REGISTER_DEFINE(cudaconvolve, "cudaconvolve", GST_RANK_NONE, GST_TYPE_CUDA_CONVOLVE);

/* Properties --------------------------------------------------------------------------------- */

/* Reads a GValueArray of doubles; FALSE (with the reason) for an empty kernel or a tap that is not
 * a finite number within the float range: the engine filters in single precision (cudafft/
 * convolve.h), where a tap beyond it is Inf and spoils every output sample, F64 streams included
 * (double-precision filtering of F64 streams, issue 16, will lift that bound for them). */
static gboolean
kernel_from_value(const GValue *value, gdouble **taps, guint *n, gchar **why)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GValueArray *array = g_value_get_boxed(value);
  const guint count = array ? array->n_values : 0;
  if (count == 0) {
    *why = g_strdup("an empty kernel has no taps");
    return FALSE;
  }
  gdouble *values = g_new(gdouble, count);
  for (guint i = 0; i < count; i++) {
    const GValue *v = g_value_array_get_nth(array, i);
    values[i] = G_VALUE_HOLDS_DOUBLE(v) ? g_value_get_double(v) : NAN;
    if (!isfinite(values[i]) || fabs(values[i]) > FLT_MAX) {
      *why = !isfinite(values[i]) ? g_strdup_printf("tap %u is not a finite number", i)
                                  : g_strdup_printf("tap %u is %g, beyond the float range (at "
                                                    "most %g in magnitude)",
                                                    i, values[i], (double)FLT_MAX);
      g_free(values);
      return FALSE;
    }
  }
  G_GNUC_END_IGNORE_DEPRECATIONS
  *taps = values;
  *n = count;
  return TRUE;
}

/* The block sizes the engine takes (cudafft/convolve.h): 0, or a power of two from
 * CUDAFFT_CONVOLVE_MIN_BLOCK to CUDAFFT_CONVOLVE_BLOCK. The param spec's range cannot say "power of
 * two", so the rest is checked here, before the value is stored, where the old one can stay. */
static gboolean
block_size_valid(guint size)
{
  return size == 0 || (size >= CUDAFFT_CONVOLVE_MIN_BLOCK && size <= CUDAFFT_CONVOLVE_BLOCK &&
                       (size & (size - 1)) == 0);
}

static void
gst_cuda_convolve_set_property(GObject *object, guint prop_id, const GValue *value,
                               GParamSpec *pspec)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(object);
  Settings *s = &self->settings;
  switch (prop_id) {
  case PROP_KERNEL: {
    gdouble *taps = NULL;
    guint n = 0;
    gchar *why = NULL;
    if (!kernel_from_value(value, &taps, &n, &why)) {
      gst_cudafft_refuse_value(GST_ELEMENT(self),
                               "Kernel refused (%s); keeping the previous kernel.", why);
      g_free(why);
      break;
    }
    GST_OBJECT_LOCK(self);
    g_free(s->kernel);
    s->kernel = taps;
    s->taps = n;
    s->serial++;
    GST_OBJECT_UNLOCK(self);
    break;
  }
  case PROP_LATENCY:
    GST_OBJECT_LOCK(self);
    s->latency = g_value_get_uint64(value);
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_IR_LOCATION: /* decoded at once where the stream's rate is known */
    gst_cudafft_response_file_set_location(self->ir, g_value_get_string(value));
    break;
  case PROP_MIX:
    GST_OBJECT_LOCK(self);
    s->mix = g_value_get_double(value);
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_DRAIN_TAIL:
    GST_OBJECT_LOCK(self);
    s->drain_tail = g_value_get_boolean(value);
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_LOW_LATENCY:
    GST_OBJECT_LOCK(self);
    s->low_latency = g_value_get_boolean(value);
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_DRAIN_ON_CHANGES:
    GST_OBJECT_LOCK(self);
    s->drain_on_changes = g_value_get_boolean(value);
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_BLOCK_SIZE: {
    const guint size = g_value_get_uint(value);
    GST_OBJECT_LOCK(self);
    const guint old = s->block_size;
    const gboolean valid = block_size_valid(size);
    if (valid)
      s->block_size = size; /* the streaming thread gives it to the engine at the next buffer */
    GST_OBJECT_UNLOCK(self);
    if (!valid)
      gst_cudafft_refuse_value(GST_ELEMENT(self),
                               "block-size %u refused: use 0 (zero latency) or a power of two "
                               "from %d to %d. Keeping block-size=%u.",
                               size, CUDAFFT_CONVOLVE_MIN_BLOCK, CUDAFFT_CONVOLVE_BLOCK, old);
    break;
  }
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}

static void
gst_cuda_convolve_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(object);
  const Settings *s = &self->settings;
  GST_OBJECT_LOCK(self);
  switch (prop_id) {
  case PROP_KERNEL: {
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    GValueArray *array = g_value_array_new(s->taps);
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_DOUBLE);
    for (guint i = 0; i < s->taps; i++) {
      g_value_set_double(&v, s->kernel[i]);
      g_value_array_append(array, &v);
    }
    g_value_unset(&v);
    g_value_take_boxed(value, array);
    G_GNUC_END_IGNORE_DEPRECATIONS
    break;
  }
  case PROP_LATENCY:
    g_value_set_uint64(value, s->latency);
    break;
  case PROP_IR_LOCATION:
    g_value_take_string(value, gst_cudafft_response_file_dup_location(self->ir));
    break;
  case PROP_MIX:
    g_value_set_double(value, s->mix);
    break;
  case PROP_DRAIN_TAIL:
    g_value_set_boolean(value, s->drain_tail);
    break;
  case PROP_LOW_LATENCY:
    g_value_set_boolean(value, s->low_latency);
    break;
  case PROP_DRAIN_ON_CHANGES:
    g_value_set_boolean(value, s->drain_on_changes);
    break;
  case PROP_BLOCK_SIZE:
    g_value_set_uint(value, s->block_size);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

/* The stream format the element runs: its frames, run timing and the impulse response's rate. */
static void
use_format(GstCudaConvolve *self, const GstAudioInfo *info)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  self->info = *info;
  gst_cudafft_audio_filter_set_run_format(filter, GST_AUDIO_INFO_RATE(info),
                                          CUDAFFT_CONVOLVE_BLOCK / 2);
  gst_cudafft_audio_filter_set_frame_bytes(filter, GST_AUDIO_INFO_BPF(info));
}

/* The same audio on the other side, in system memory and, where the GPU runs, in CUDA memory after
 * it: each side is negotiated on its own (a side in system memory costs that side's copy). */
static GstCaps *
gst_cuda_convolve_transform_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                 GstCaps *filter)
{
  GstCudafftAudioFilter *base = GST_CUDAFFT_AUDIO_FILTER(trans);
  GstCaps *result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(caps); i++) /* without caps features: system memory */
    result = gst_caps_merge_structure(result, gst_structure_copy(gst_caps_get_structure(caps, i)));
  result = gst_cudafft_audio_filter_offer_cuda_memory(base, result);
  return gst_cudafft_audio_filter_filter_caps(base, direction, caps, result, filter);
}

static gboolean
gst_cuda_convolve_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(trans);
  GstAudioInfo info;
  if (!gst_cudafft_audio_filter_read_audio_caps(GST_CUDAFFT_AUDIO_FILTER(self), incaps, &info))
    return FALSE;
  self->cuda_out = gst_cudafft_caps_is_cuda_memory(outcaps);
  if (GST_AUDIO_INFO_RATE(&info) != self->signalled_rate) {
    /* before the kernel is read, so that a handler can set one for this rate */
    self->signalled_rate = GST_AUDIO_INFO_RATE(&info);
    g_signal_emit(self, signals[SIGNAL_RATE_CHANGED], 0, self->signalled_rate);
  }
  gst_cudafft_response_file_set_rate(self->ir, GST_AUDIO_INFO_RATE(&info)); /* decodes for it */
  if (gst_cuda_convolve_engine(self) && gst_audio_info_is_equal(&info, &self->info))
    return gst_cudafft_audio_filter_check_memory(GST_CUDAFFT_AUDIO_FILTER(self), incaps,
                                                 outcaps); /* the same format keeps going */
  const GstAudioInfo previous = self->info;
  use_format(self, &info);
  gst_cudafft_audio_filter_close_engine(GST_CUDAFFT_AUDIO_FILTER(self));
  GstCudafftResponseSource source;
  GstCudafftResponseFileResult *ir = NULL;
  if (gst_cuda_convolve_kernel_source(self, FALSE, &source, &ir) ==
      GST_CUDAFFT_RESPONSE_FILE_PENDING) {
    GST_DEBUG_OBJECT(self, "the engine is made at the first buffer, once the impulse response "
                           "is decoded");
    return TRUE;
  }
  const gboolean ok = gst_cuda_convolve_open_engine(self, &source, ir);
  gst_cudafft_response_file_result_unref(ir);
  if (!ok) {
    /* GstBaseTransform keeps the caps it had before these, and does not call set_caps again when
     * they come back: the element keeps their format too, its engine made for it at the next
     * buffer. Left at the refused format, it filtered that next buffer in it, and its output
     * went out under the old caps (frames of another size). */
    GST_DEBUG_OBJECT(self, "caps refused: back to the format before them");
    use_format(self, &previous);
    if (GST_AUDIO_INFO_RATE(&previous) > 0)
      gst_cudafft_response_file_set_rate(self->ir, GST_AUDIO_INFO_RATE(&previous));
  }
  return ok &&
         gst_cudafft_audio_filter_check_memory(GST_CUDAFFT_AUDIO_FILTER(self), incaps, outcaps);
}

/* Events ------------------------------------------------------------------------------------- */

/* The base class drains before EOS, a new segment and new caps: the first two end the stream (the
 * tail as drain-tail says), new caps only the run (no tail, which would overlap the next run). */
static gboolean
gst_cuda_convolve_sink_event(GstBaseTransform *trans, GstEvent *event)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(trans);
  const GstEventType type = GST_EVENT_TYPE(event);
  GST_OBJECT_LOCK(self);
  self->end_tail =
      (type == GST_EVENT_EOS || type == GST_EVENT_SEGMENT) && self->settings.drain_tail;
  GST_OBJECT_UNLOCK(self);
  const gboolean ok =
      GST_BASE_TRANSFORM_CLASS(gst_cuda_convolve_parent_class)->sink_event(trans, event);
  self->end_tail = FALSE;
  return ok;
}

static GstFlowReturn
gst_cuda_convolve_drain(GstCudafftAudioFilter *filter)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(filter);
  const GstFlowReturn ret = gst_cuda_convolve_end_run(self, self->end_tail);
  gst_cuda_convolve_update_latency(self); /* the engine's reset completed a crossover in progress */
  return ret;
}

static void
gst_cuda_convolve_close(GstCudafftAudioFilter *filter)
{
  gst_cudafft_response_file_stop(GST_CUDA_CONVOLVE(filter)->ir);
}

/* A streaming thread that waits for the impulse response at its first buffer is let go, and the
 * decode is stopped, before the pads are deactivated (which waits for the streaming thread). */
static GstStateChangeReturn
gst_cuda_convolve_change_state(GstElement *element, GstStateChange transition)
{
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    gst_cudafft_response_file_stop(GST_CUDA_CONVOLVE(element)->ir);
  return GST_ELEMENT_CLASS(gst_cuda_convolve_parent_class)->change_state(element, transition);
}

/* A missing, unreadable or not regular ir-location file fails the start, with an error naming the
 * file; the file is not opened (a FIFO would block until a writer came). */
static gboolean
gst_cuda_convolve_start(GstBaseTransform *trans)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(trans);
  gst_audio_info_init(&self->info);
  self->signalled_rate = 0;
  self->filtered = 0;
  gst_cudafft_latency_reset(&self->latency);
  gchar *location = gst_cudafft_response_file_dup_location(self->ir);
  GstCudafftResponseFileProblem problem = {0};
  const gboolean ok =
      !location || gst_cudafft_response_file_check(location, "ir-location", &problem);
  if (!ok)
    gst_cudafft_response_file_problem_post(&problem, GST_ELEMENT(self), TRUE);
  gst_cudafft_response_file_problem_clear(&problem);
  g_free(location);
  return ok;
}

static void
gst_cuda_convolve_finalize(GObject *object)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE(object);
  gst_cudafft_response_file_free(self->ir);
  g_free(self->settings.kernel);
  G_OBJECT_CLASS(gst_cuda_convolve_parent_class)->finalize(object);
}

static void
gst_cuda_convolve_class_init(GstCudaConvolveClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstCudafftAudioFilterClass *filter_class = GST_CUDAFFT_AUDIO_FILTER_CLASS(klass);

  gobject_class->set_property = gst_cuda_convolve_set_property;
  gobject_class->get_property = gst_cuda_convolve_get_property;
  gobject_class->finalize = gst_cuda_convolve_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(gst_cuda_convolve_change_state);

  const GParamFlags playing =
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  g_object_class_install_property(
      gobject_class, PROP_KERNEL,
      g_param_spec_value_array("kernel", "Filter kernel",
                               "The FIR filter's taps (impulse response), the same for every "
                               "channel; ignored while ir-location is set",
                               g_param_spec_double("element", "Filter kernel element",
                                                   "One tap of the filter kernel", -G_MAXDOUBLE,
                                                   G_MAXDOUBLE, 0.0,
                                                   G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
                               playing));
  g_object_class_install_property(
      gobject_class, PROP_LATENCY,
      g_param_spec_uint64("latency", "Filter latency",
                          "Samples dropped from the start of the output (the kernel's own delay, "
                          "as audiofirfilter's); applies from the next run",
                          0, G_MAXUINT64, DEFAULT_LATENCY, playing));
  g_object_class_install_property(
      gobject_class, PROP_IR_LOCATION,
      g_param_spec_string("ir-location", "Impulse response file",
                          "An audio file of the impulse response: mono for every channel, or a "
                          "channel per stream channel; takes precedence over kernel",
                          NULL, playing));
  g_object_class_install_property(
      gobject_class, PROP_MIX,
      g_param_spec_double(
          "mix", "Wet/dry mix",
          "Fraction of filtered (wet) signal in the output, 0 to 1; the rest is the input (dry)",
          0.0, 1.0, DEFAULT_MIX, playing));
  g_object_class_install_property(
      gobject_class, PROP_DRAIN_TAIL,
      g_param_spec_boolean("drain-tail", "Drain the tail",
                           "At EOS and a new segment, push the whole response (input + kernel "
                           "length - 1 samples, less latency); FALSE: the input's length",
                           DEFAULT_DRAIN_TAIL, playing));
  g_object_class_install_property(
      gobject_class, PROP_LOW_LATENCY,
      g_param_spec_boolean("low-latency", "Low latency",
                           "Accepted for compatibility with audiofirfilter; no effect: the "
                           "latency is set by block-size (0 for kernels under 64 taps)",
                           FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property(
      gobject_class, PROP_DRAIN_ON_CHANGES,
      g_param_spec_boolean("drain-on-changes", "Drain on changes",
                           "Accepted for compatibility with audiofirfilter; no effect (a kernel "
                           "change crosses over without draining)",
                           TRUE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /* The range is the param spec's; within it, sizes that are not 0 or a power of two from 32 are
   * refused in set_property with a warning, and the old size stays. */
  g_object_class_install_property(
      gobject_class, PROP_BLOCK_SIZE,
      g_param_spec_uint("block-size", "Block size",
                        "Block size in samples, the latency (kernels of 64 taps or more): 0 (zero "
                        "latency) or a power of two from 32 to 2048",
                        0, CUDAFFT_CONVOLVE_BLOCK, DEFAULT_BLOCK_SIZE, playing));

  /**
   * GstCudaConvolve::rate-changed:
   * @filter: the element
   * @rate: the new sample rate
   *
   * Emitted from the streaming thread when the sample rate becomes known or changes, before any
   * buffer at that rate is filtered, so that a handler can set a kernel for it (as
   * audiofirfilter's).
   */
  signals[SIGNAL_RATE_CHANGED] =
      g_signal_new("rate-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                   G_TYPE_NONE, 1, G_TYPE_INT);

  gst_cudafft_audio_filter_class_add_pad_templates(element_class, gst_caps_from_string(CAPS),
                                                   gst_caps_from_string(CAPS));
  gst_element_class_set_static_metadata(
      element_class, "CUDA FIR filter and convolution reverb", "Filter/Effect/Audio",
      "Convolve audio with a long FIR kernel or impulse response on an NVIDIA GPU or the CPU "
      "(backend=cpu, FFTW)",
      "gst-cudafft developers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_convolve_start);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_cuda_convolve_set_caps);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_convolve_transform_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_convolve_sink_event);
  filter_class->close = gst_cuda_convolve_close;
  filter_class->drain = gst_cuda_convolve_drain;
  filter_class->get_latency = gst_cuda_convolve_get_latency;
  filter_class->prepare = gst_cuda_convolve_prepare;
  filter_class->begin_run = gst_cuda_convolve_begin_run;
  filter_class->process = gst_cuda_convolve_process;
  filter_class->takes_cuda_memory = TRUE;
  filter_class->memory_hint = "use a shorter kernel or impulse response, or fewer channels";
}

static void
gst_cuda_convolve_init(GstCudaConvolve *self)
{
  self->settings.kernel = g_new(gdouble, 1);
  self->settings.kernel[0] = 1.0;
  self->settings.taps = 1;
  self->settings.latency = DEFAULT_LATENCY;
  self->settings.mix = DEFAULT_MIX;
  self->settings.drain_tail = DEFAULT_DRAIN_TAIL;
  self->settings.drain_on_changes = TRUE;
  self->settings.block_size = DEFAULT_BLOCK_SIZE;
  self->ir = gst_cudafft_response_file_new(GST_ELEMENT(self));
}
