/* gstcudamatrixconvolve.c: cudamatrixconvolve convolves N input channels into M output channels
 * with an N x M matrix of responses (y_j = sum_i h_ij * x_i) on an NVIDIA GPU, or on the CPU with
 * backend=cpu, through the engine of cudafft/matrix.h. This file is the element's properties, caps
 * and events; the responses in force, the engine made from them and its latency are
 * gstcudamatrixconvolveresponses.c's, the runs through the engine (pushes, the drain and tail,
 * changes of responses at buffer boundaries) gstcudamatrixconvolverun.c's, the array properties'
 * values gstcudamatrixconvolvevalues.c's and the HRTF sets gstcudamatrixconvolvesofa*.c's. The
 * ir-location file is decoded by base/gstcudafftresponsefile.c, as cudaconvolve's. */
/**
 * SECTION:element-cudamatrixconvolve
 * @title: cudamatrixconvolve
 *
 * cudamatrixconvolve filters an audio stream of N channels into M channels with a matrix of N x M
 * responses: output channel j is the sum over every input channel i of input i convolved with the
 * response of entry (i, j). A true-stereo reverb is a 2 x 2 matrix (L->L, L->R, R->L, R->R);
 * headphone virtualisation of 7.1 an 8 x 2 one. It runs on an NVIDIA GPU, or on the CPU (FFTW)
 * with backend=cpu (backend=auto falls back to it where no GPU is usable, saying why in an INFO
 * message).
 *
 * The entries are in input-major order: entry (i, j), from input i to output j, is channel
 * i * outputs + j of the #GstCudaMatrixConvolve:ir-location file (an audio file of inputs x
 * outputs channels), of the files of #GstCudaMatrixConvolve:ir-locations put side by side (a mono
 * file per entry, "" for an empty one), or row i * outputs + j of the
 * #GstCudaMatrixConvolve:matrix property (for applications). An entry whose taps are all zero (or
 * an empty row) is empty and costs nothing. The number of outputs is the entries' count divided by
 * the input's channel count, unless #GstCudaMatrixConvolve:outputs names it (then the entries must
 * be inputs x outputs).
 *
 * It is a sibling of cudaconvolve rather than a mode of it: its output has another channel count
 * than its input (cudaconvolve's caps are the same on both sides, as audiofirfilter's), and its
 * properties are a matrix's, not a kernel per channel; cudaconvolve stays a drop-in for
 * audiofirfilter, unchanged.
 *
 * The output is F32LE or F64LE (the input's format), interleaved, at the input's rate, with
 * M channels: stereo positions where M is 2, unpositioned (channel-mask 0) otherwise. Output
 * sample n is stamped as input sample n; the filter lags by up to #GstCudaMatrixConvolve:block-size
 * samples, which the LATENCY query reports; block-size=0 is zero latency (each response's first 32
 * taps filtered in the time domain as each sample comes, the rest in blocks of 32 from past
 * input; the first part's work is on the CPU, inputs x outputs x 32 multiply-adds a sample).
 * At EOS (and a new segment) the rest is pushed: with
 * #GstCudaMatrixConvolve:drain-tail (the default) the whole response, input length + response
 * length - 1 samples in all; without it, as many samples as came in. A flush forgets the input; a
 * DISCONT buffer or a timestamp gap of more than 1024 samples ends the run (without the tail) and
 * starts a new one.
 *
 * The responses may change while playing (a new matrix, or a new ir-location file once decoded):
 * the new matrix takes over at the next block boundary, crossfaded linearly over one block (32
 * samples at block-size=0), with no lost sample. A change that would change the number of outputs
 * while playing is refused with a WARNING and the matrix in force stays (and is what the property
 * reads back): set such a matrix in the READY state (or renegotiate by a caps change). Bad input:
 * entries whose count is not a multiple of the input's channel count are an ERROR at start naming
 * both counts (a WARNING while playing, the old matrix staying); an empty matrix, a NaN or infinite
 * tap (or one beyond the float range on an F32 stream) is refused with a warning where it is set,
 * and an ERROR where a file holds it at start; a block-size that is neither 0 nor a power of two
 * from 32 to 2048 is refused with a warning and the previous one stays.
 *
 * Binaural output from an HRTF set: with #GstCudaMatrixConvolve:sofa-location (an AES69 SOFA file
 * of the SimpleFreeFieldHRIR convention, read with libmysofa in a process of its own, the plugin's
 * gst-cudafft-sofa-reader, stopped where it runs past 10 s and 1 s per MiB of the file: libmysofa
 * can loop on a damaged file) each input channel is filtered with the left- and right-ear
 * responses of the measured direction nearest to its own, into stereo. A channel's direction is
 * its entry of #GstCudaMatrixConvolve:directions (<azimuth, elevation> in degrees, SOFA's
 * convention: azimuth counter-clockwise from the front, elevation up), or where that is empty the
 * standard loudspeaker direction of its channel position (front +-30, side +-90, rear +-150
 * degrees...), so that a 7.1 stream becomes binaural with the file alone. A set of another rate
 * is resampled; a file that is not an HRTF set (or cannot be read within the time limit),
 * directions of another count than the channels, or channels without positions and no directions
 * are an ERROR at start (a WARNING while playing); directions out of range are refused with a
 * warning. docs/elements.md has the table of directions.
 *
 * The #GstCudaMatrixConvolve::rate-changed signal is emitted when the rate becomes known or
 * changes, before the responses are read, so that an application can set a matrix for that rate.
 *
 * On the GPU, either pad also takes audio in CUDA memory (`audio/x-raw(memory:CUDAMemory)`, laid
 * out as docs/elements.md says): where a neighbour asks for it (cudaconvolve, cudaspectrum, an
 * appsink with such caps) the samples stay on the device, read and written in place by the
 * engine in blocks of block-size samples (at block-size=0, whose first part runs on the CPU, they
 * are copied to the host and back). Each side is negotiated on its own, and the samples are those
 * of system memory. backend=cpu offers system memory only.
 *
 * ## Example pipelines
 * A true-stereo reverb from a 4-channel response (L->L, L->R, R->L, R->R):
 * |[
 * gst-launch-1.0 filesrc location=dry.wav ! decodebin ! audioconvert ! \
 *     audio/x-raw,format=F32LE,channels=2 ! cudamatrixconvolve ir-location=hall-4ch.wav ! \
 *     audioconvert ! autoaudiosink
 * ]|
 * A 2 x 2 matrix set inline (rows in input-major order):
 * |[
 * gst-launch-1.0 audiotestsrc ! audio/x-raw,format=F32LE,channels=2 ! \
 *     cudamatrixconvolve matrix="<<1.0, 0.5>, <0.0>, <0.0>, <1.0>>" ! fakesink
 * ]|
 * 7.1 to headphones from an HRTF set:
 * |[
 * gst-launch-1.0 filesrc location=movie-7.1.wav ! decodebin ! audioconvert ! \
 *     audio/x-raw,format=F32LE,channels=8 ! cudamatrixconvolve sofa-location=kemar.sofa ! \
 *     audioconvert ! autoaudiosink
 * ]|
 */
#include "gstcudamatrixconvolve.h"
#include "gstcudamatrixconvolveprivate.h"

#include <cudafft/matrix.h>
#include "gstcudafftresponsefile.h"
#include "gstcudafftcudamemory.h"
#include "gstcudafftproperties.h"

#include <gst/audio/audio.h>
#include <math.h>

GST_DEBUG_CATEGORY(gst_cuda_matrix_convolve_debug);
#define GST_CAT_DEFAULT gst_cuda_matrix_convolve_debug

enum {
  PROP_0,
  PROP_IR_LOCATION,
  PROP_IR_LOCATIONS,
  PROP_MATRIX,
  PROP_SOFA_LOCATION,
  PROP_DIRECTIONS,
  PROP_OUTPUTS,
  PROP_BLOCK_SIZE,
  PROP_DRAIN_TAIL
};

enum { SIGNAL_RATE_CHANGED, LAST_SIGNAL };

static guint signals[LAST_SIGNAL];

#define DEFAULT_OUTPUTS 0
#define DEFAULT_BLOCK_SIZE CUDAFFT_MATRIX_BLOCK
#define DEFAULT_DRAIN_TAIL TRUE

#define CAPS                                                                                       \
  "audio/x-raw, format = (string) { F32LE, F64LE }, layout = (string) interleaved, "               \
  "rate = (int) [ 1, MAX ], " GST_CUDAFFT_CHANNELS_FIELD

G_DEFINE_TYPE_WITH_CODE(GstCudaMatrixConvolve, gst_cuda_matrix_convolve,
                        GST_TYPE_CUDAFFT_AUDIO_FILTER,
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_matrix_convolve_debug,
                                                "cudamatrixconvolve", 0, "GPU matrix convolution"));
GST_ELEMENT_REGISTER_DEFINE(cudamatrixconvolve, "cudamatrixconvolve", GST_RANK_NONE,
                            GST_TYPE_CUDA_MATRIX_CONVOLVE);

/* Properties --------------------------------------------------------------------------------- */

/* The block sizes the engine takes: 0 (zero latency) or a power of two from
 * CUDAFFT_MATRIX_MIN_BLOCK to CUDAFFT_MATRIX_MAX_BLOCK (the param spec's range cannot say "power
 * of two"). */
static gboolean
block_size_valid(guint size)
{
  return size == 0 || (size >= CUDAFFT_MATRIX_MIN_BLOCK && size <= CUDAFFT_MATRIX_MAX_BLOCK &&
                       (size & (size - 1)) == 0);
}

static void
gst_cuda_matrix_convolve_set_property(GObject *object, guint prop_id, const GValue *value,
                                      GParamSpec *pspec)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(object);
  Settings *s = &self->settings;
  switch (prop_id) {
  case PROP_IR_LOCATION: /* decoded at once where the stream's rate is known */
    GST_OBJECT_LOCK(self);
    g_clear_pointer(&s->ir_locations, g_strfreev); /* one or the other */
    gst_cudafft_response_file_set_location(self->ir, g_value_get_string(value));
    GST_OBJECT_UNLOCK(self);
    break;
  case PROP_IR_LOCATIONS: {
    gchar **locations = NULL;
    gchar *why = NULL;
    if (!gst_cuda_matrix_convolve_locations_from_value(value, &locations, &why)) {
      gst_cudafft_refuse_value(GST_ELEMENT(self),
                               "ir-locations refused (%s); keeping the previous files.", why);
      g_free(why);
      break;
    }
    GST_OBJECT_LOCK(self);
    g_strfreev(s->ir_locations);
    s->ir_locations = locations;
    gst_cudafft_response_file_set_locations(self->ir, locations);
    GST_OBJECT_UNLOCK(self);
    break;
  }
  case PROP_MATRIX: {
    gdouble *data = NULL;
    guint rows = 0;
    gsize taps = 0;
    gchar *why = NULL;
    if (!gst_cuda_matrix_convolve_matrix_from_value(value, &data, &rows, &taps, &why)) {
      gst_cudafft_refuse_value(GST_ELEMENT(self),
                               "matrix refused (%s); keeping the previous matrix.", why);
      g_free(why);
      break;
    }
    GST_OBJECT_LOCK(self);
    g_free(s->matrix);
    s->matrix = data;
    s->rows = rows;
    s->taps = taps;
    s->serial++;
    GST_OBJECT_UNLOCK(self);
    break;
  }
  case PROP_SOFA_LOCATION: { /* loaded where the stream's rate is known */
    const gchar *location = g_value_get_string(value);
    GST_OBJECT_LOCK(self);
    g_free(s->sofa_location);
    s->sofa_location = location && *location ? g_strdup(location) : NULL;
    s->sofa_serial++;
    s->serial++;
    GST_OBJECT_UNLOCK(self);
    break;
  }
  case PROP_DIRECTIONS: {
    gdouble *pairs = NULL;
    guint count = 0;
    gchar *why = NULL;
    if (!gst_cuda_matrix_convolve_directions_from_value(value, &pairs, &count, &why)) {
      gst_cudafft_refuse_value(GST_ELEMENT(self),
                               "directions refused (%s); keeping the previous directions.", why);
      g_free(why);
      break;
    }
    GST_OBJECT_LOCK(self);
    g_free(s->directions);
    s->directions = pairs;
    s->n_directions = count;
    s->serial++;
    GST_OBJECT_UNLOCK(self);
    break;
  }
  case PROP_OUTPUTS: {
    const guint outputs = g_value_get_uint(value);
    GST_OBJECT_LOCK(self);
    const guint old = s->outputs;
    GST_OBJECT_UNLOCK(self);
    gchar *text = g_strdup_printf("%u", old);
    const gboolean refused =
        gst_cudafft_refuse_while_started(GST_ELEMENT(self), pspec, outputs != old, text);
    g_free(text);
    if (!refused) {
      GST_OBJECT_LOCK(self);
      s->outputs = outputs;
      GST_OBJECT_UNLOCK(self);
    }
    break;
  }
  case PROP_BLOCK_SIZE: {
    const guint size = g_value_get_uint(value);
    GST_OBJECT_LOCK(self);
    const guint old = s->block_size;
    GST_OBJECT_UNLOCK(self);
    if (!block_size_valid(size)) {
      gst_cudafft_refuse_value(GST_ELEMENT(self),
                               "block-size %u refused: use 0 (zero latency) or a power of two from "
                               "%d to %d. "
                               "Keeping block-size=%u.",
                               size, CUDAFFT_MATRIX_MIN_BLOCK, CUDAFFT_MATRIX_MAX_BLOCK, old);
      break;
    }
    gchar *text = g_strdup_printf("%u", old);
    const gboolean refused =
        gst_cudafft_refuse_while_started(GST_ELEMENT(self), pspec, size != old, text);
    g_free(text);
    if (!refused) {
      GST_OBJECT_LOCK(self);
      s->block_size = size;
      GST_OBJECT_UNLOCK(self);
    }
    break;
  }
  case PROP_DRAIN_TAIL:
    GST_OBJECT_LOCK(self);
    s->drain_tail = g_value_get_boolean(value);
    GST_OBJECT_UNLOCK(self);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}

static void
gst_cuda_matrix_convolve_get_property(GObject *object, guint prop_id, GValue *value,
                                      GParamSpec *pspec)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(object);
  const Settings *s = &self->settings;
  GST_OBJECT_LOCK(self);
  switch (prop_id) {
  case PROP_IR_LOCATION: /* none while a list is in force */
    g_value_take_string(value,
                        s->ir_locations ? NULL : gst_cudafft_response_file_dup_location(self->ir));
    break;
  case PROP_IR_LOCATIONS:
    for (guint k = 0; s->ir_locations && s->ir_locations[k]; k++) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_TYPE_STRING);
      g_value_set_string(&v, s->ir_locations[k]);
      gst_value_array_append_and_take_value(value, &v);
    }
    break;
  case PROP_MATRIX:
    gst_cuda_matrix_convolve_matrix_to_value(s->matrix, s->rows, s->taps, value);
    break;
  case PROP_SOFA_LOCATION:
    g_value_set_string(value, s->sofa_location);
    break;
  case PROP_DIRECTIONS:
    gst_cuda_matrix_convolve_directions_to_value(s->directions, s->n_directions, value);
    break;
  case PROP_OUTPUTS:
    g_value_set_uint(value, s->outputs);
    break;
  case PROP_BLOCK_SIZE:
    g_value_set_uint(value, s->block_size);
    break;
  case PROP_DRAIN_TAIL:
    g_value_set_boolean(value, s->drain_tail);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

/* Caps ---------------------------------------------------------------------------------------- */

/* Whether the element is started or starting (its target state PAUSED or PLAYING). */
static gboolean
running(GstCudaMatrixConvolve *self)
{
  GST_OBJECT_LOCK(self);
  const gboolean running = GST_STATE_TARGET(self) >= GST_STATE_PAUSED;
  GST_OBJECT_UNLOCK(self);
  return running;
}

/* The output channel count for an input caps structure: the outputs property, or where its
 * channels are fixed the matrix's (for an ir-location file, where its rate is fixed too and the
 * element runs: waiting for the decode at that rate); 0 where it is not known. An unusable matrix
 * gives 1, so that negotiation completes and set_caps posts the ERROR naming it (rather than a bare
 * not-negotiated).
 *
 * Before the element runs (a link made in NULL or READY, as gst_parse_launch's) the file is not
 * decoded: that would block the application's thread for the decode, and the decode's failure
 * would be known before the pipeline starts, so that its ERROR came the moment the stream started,
 * before an application's main loop (gst-launch-1.0's) may be running to see it. */
static guint
outputs_for_structure(GstCudaMatrixConvolve *self, const GstStructure *s)
{
  gint channels = 0, rate = 0;
  if (!gst_structure_get_int(s, "channels", &channels))
    return gst_cuda_matrix_convolve_outputs_for(self, 0, NULL); /* the property alone */
  GST_OBJECT_LOCK(self);
  const guint property = self->settings.outputs;
  GST_OBJECT_UNLOCK(self);
  if (property > 0)
    return property;
  gchar *location = gst_cudafft_response_file_dup_location(self->ir);
  GstCudafftResponseFileResult *ir = NULL;
  if (location && *location && !gst_cuda_matrix_convolve_sofa_in_force(self)) {
    /* the file is decoded at the stream's rate: only for caps that name it */
    if (!gst_structure_get_int(s, "rate", &rate) || !running(self)) {
      g_free(location);
      return 0;
    }
    gst_cudafft_response_file_set_rate(self->ir, rate);
    GstCudafftResponseSource source;
    if (gst_cuda_matrix_convolve_responses_source(self, TRUE, &source, &ir) !=
        GST_CUDAFFT_RESPONSE_FILE_READY) {
      g_free(location);
      return 0;
    }
  }
  g_free(location);
  const guint outputs = gst_cuda_matrix_convolve_outputs_for(self, (guint)channels, ir);
  gst_cudafft_response_file_result_unref(ir);
  return outputs > 0 && outputs <= CUDAFFT_MATRIX_MAX_CHANNELS ? outputs : 1;
}

static void
set_output_channels(GstStructure *s, guint outputs)
{
  gst_structure_remove_field(s, "channel-mask");
  if (outputs == 0) {
    gst_structure_set(s, "channels", GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
    return;
  }
  gst_structure_set(s, "channels", G_TYPE_INT, (gint)outputs, NULL);
  if (outputs == 2)
    gst_structure_set(s, "channel-mask", GST_TYPE_BITMASK,
                      (guint64)(GST_AUDIO_CHANNEL_POSITION_MASK(FRONT_LEFT) |
                                GST_AUDIO_CHANNEL_POSITION_MASK(FRONT_RIGHT)),
                      NULL);
  else if (outputs > 2)
    gst_structure_set(s, "channel-mask", GST_TYPE_BITMASK, (guint64)0, NULL);
}

/* The same format and rate on the other side, in system memory and, where the GPU runs, in CUDA
 * memory after it (each side negotiated on its own); the output's channels the matrix's outputs,
 * the input's any count (the matrix's entries decide whether it fits). */
static GstCaps *
gst_cuda_matrix_convolve_transform_caps(GstBaseTransform *trans, GstPadDirection direction,
                                        GstCaps *caps, GstCaps *filter)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(trans);
  GstCaps *result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(caps); i++) {
    GstStructure *s = gst_structure_copy(gst_caps_get_structure(caps, i));
    if (direction == GST_PAD_SINK) {
      set_output_channels(s, outputs_for_structure(self, gst_caps_get_structure(caps, i)));
    } else {
      gst_structure_remove_field(s, "channel-mask");
      gst_structure_set(s, "channels", GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
    }
    result = gst_caps_merge_structure(result, s); /* without caps features: system memory */
  }
  result = gst_cudafft_audio_filter_offer_cuda_memory(GST_CUDAFFT_AUDIO_FILTER(self), result);
  return gst_cudafft_audio_filter_filter_caps(GST_CUDAFFT_AUDIO_FILTER(self), direction, caps,
                                              result, filter);
}

static void
use_format(GstCudaMatrixConvolve *self, const GstAudioInfo *info, const GstAudioInfo *out_info)
{
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  self->info = *info;
  self->out_info = *out_info;
  gst_cudafft_audio_filter_set_run_format(filter, GST_AUDIO_INFO_RATE(info),
                                          CUDAFFT_MATRIX_BLOCK / 2);
  gst_cudafft_audio_filter_set_frame_bytes(filter, GST_AUDIO_INFO_BPF(info));
}

static gboolean
gst_cuda_matrix_convolve_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(trans);
  GstCudafftAudioFilter *filter = GST_CUDAFFT_AUDIO_FILTER(self);
  GstAudioInfo info, out_info;
  if (!gst_cudafft_audio_filter_read_audio_caps(filter, incaps, &info) ||
      !gst_cudafft_audio_filter_read_audio_caps(filter, outcaps, &out_info))
    return FALSE;
  self->cuda_out = gst_cudafft_caps_is_cuda_memory(outcaps);
  if (GST_AUDIO_INFO_RATE(&info) != self->signalled_rate) {
    /* before the responses are read, so that a handler can set a matrix for this rate */
    self->signalled_rate = GST_AUDIO_INFO_RATE(&info);
    g_signal_emit(self, signals[SIGNAL_RATE_CHANGED], 0, self->signalled_rate);
  }
  gst_cudafft_response_file_set_rate(self->ir, GST_AUDIO_INFO_RATE(&info)); /* decodes for it */
  /* the same format keeps going (its memory may have changed) */
  if (gst_cuda_matrix_convolve_engine(self) && gst_audio_info_is_equal(&info, &self->info) &&
      gst_audio_info_is_equal(&out_info, &self->out_info))
    return gst_cudafft_audio_filter_check_memory(filter, incaps, outcaps);
  const GstAudioInfo previous = self->info, previous_out = self->out_info;
  use_format(self, &info, &out_info);
  gst_cudafft_audio_filter_close_engine(filter);
  GstCudafftResponseSource source;
  GstCudafftResponseFileResult *ir = NULL;
  if (gst_cuda_matrix_convolve_responses_source(self, FALSE, &source, &ir) ==
      GST_CUDAFFT_RESPONSE_FILE_PENDING) {
    GST_DEBUG_OBJECT(self, "the engine is made at the first buffer, once the responses are "
                           "decoded");
    return TRUE;
  }
  const GstFlowReturn ret = gst_cuda_matrix_convolve_open_engine(self, &source, ir);
  gst_cudafft_response_file_result_unref(ir);
  if (ret == GST_FLOW_FLUSHING) {
    GST_DEBUG_OBJECT(self, "stopped while the HRTF set was read");
    return TRUE; /* no engine: the first buffer answers FLUSHING */
  }
  const gboolean ok = ret == GST_FLOW_OK;
  if (!ok) {
    /* GstBaseTransform keeps the caps it had before: so does the element (as cudaconvolve) */
    use_format(self, &previous, &previous_out);
    if (GST_AUDIO_INFO_RATE(&previous) > 0)
      gst_cudafft_response_file_set_rate(self->ir, GST_AUDIO_INFO_RATE(&previous));
  }
  return ok && gst_cudafft_audio_filter_check_memory(filter, incaps, outcaps);
}

/* Events -------------------------------------------------------------------------------------- */

/* EOS and a new segment end the stream (the tail as drain-tail says); new caps only the run. */
static gboolean
gst_cuda_matrix_convolve_sink_event(GstBaseTransform *trans, GstEvent *event)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(trans);
  const GstEventType type = GST_EVENT_TYPE(event);
  GST_OBJECT_LOCK(self);
  self->end_tail =
      (type == GST_EVENT_EOS || type == GST_EVENT_SEGMENT) && self->settings.drain_tail;
  GST_OBJECT_UNLOCK(self);
  const gboolean ok =
      GST_BASE_TRANSFORM_CLASS(gst_cuda_matrix_convolve_parent_class)->sink_event(trans, event);
  self->end_tail = FALSE;
  return ok;
}

static GstFlowReturn
gst_cuda_matrix_convolve_drain(GstCudafftAudioFilter *filter)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(filter);
  return gst_cuda_matrix_convolve_end_run(self, self->end_tail);
}

static void
gst_cuda_matrix_convolve_close(GstCudafftAudioFilter *filter)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(filter);
  gst_cudafft_response_file_stop(self->ir);
  gst_cuda_matrix_convolve_sofa_set_free(self->sofa);
  self->sofa = NULL;
}

/* A streaming thread waiting for the responses (a decode, an HRTF set's reader) is let go before
 * the pads are deactivated; the next start reads again. */
static GstStateChangeReturn
gst_cuda_matrix_convolve_change_state(GstElement *element, GstStateChange transition)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(element);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    gst_cuda_matrix_convolve_sofa_reader_set_stopped(self->sofa_reader, FALSE);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    gst_cudafft_response_file_stop(self->ir);
    gst_cuda_matrix_convolve_sofa_reader_set_stopped(self->sofa_reader, TRUE);
  }
  return GST_ELEMENT_CLASS(gst_cuda_matrix_convolve_parent_class)
      ->change_state(element, transition);
}

/* A missing, unreadable or not regular ir-location, ir-locations or sofa-location file fails the
 * start, naming the file. */
static gboolean
gst_cuda_matrix_convolve_start(GstBaseTransform *trans)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(trans);
  gst_audio_info_init(&self->info);
  gst_audio_info_init(&self->out_info);
  gst_cudafft_latency_reset(&self->latency);
  self->signalled_rate = 0;
  gchar *location = gst_cudafft_response_file_dup_location(self->ir);
  GST_OBJECT_LOCK(self);
  gchar *sofa = g_strdup(self->settings.sofa_location);
  gchar **list = g_strdupv(self->settings.ir_locations);
  GST_OBJECT_UNLOCK(self);
  GstCudafftResponseFileProblem problem = {0};
  gboolean ok = TRUE;
  if (sofa)
    ok = gst_cudafft_response_file_check(sofa, "sofa-location", &problem);
  else if (list)
    for (guint k = 0; ok && list[k]; k++)
      ok = !*list[k] || gst_cudafft_response_file_check(list[k], "ir-locations", &problem);
  else
    ok = !location || !*location ||
         gst_cudafft_response_file_check(location, "ir-location", &problem);
  g_strfreev(list);
  g_free(sofa);
  if (!ok)
    gst_cudafft_response_file_problem_post(&problem, GST_ELEMENT(self), TRUE);
  gst_cudafft_response_file_problem_clear(&problem);
  g_free(location);
  return ok;
}

static void
gst_cuda_matrix_convolve_finalize(GObject *object)
{
  GstCudaMatrixConvolve *self = GST_CUDA_MATRIX_CONVOLVE(object);
  gst_cudafft_response_file_free(self->ir);
  gst_cuda_matrix_convolve_sofa_reader_free(self->sofa_reader);
  gst_cuda_matrix_convolve_sofa_set_free(self->sofa);
  g_free(self->settings.matrix);
  g_free(self->engine_matrix);
  g_free(self->settings.sofa_location);
  g_strfreev(self->settings.ir_locations);
  g_free(self->settings.directions);
  G_OBJECT_CLASS(gst_cuda_matrix_convolve_parent_class)->finalize(object);
}

static void
gst_cuda_matrix_convolve_class_init(GstCudaMatrixConvolveClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstCudafftAudioFilterClass *filter_class = GST_CUDAFFT_AUDIO_FILTER_CLASS(klass);

  gobject_class->set_property = gst_cuda_matrix_convolve_set_property;
  gobject_class->get_property = gst_cuda_matrix_convolve_get_property;
  gobject_class->finalize = gst_cuda_matrix_convolve_finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(gst_cuda_matrix_convolve_change_state);

  const GParamFlags playing =
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  const GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property(
      gobject_class, PROP_IR_LOCATION,
      g_param_spec_string("ir-location", "Impulse responses file",
                          "An audio file of inputs x outputs channels: channel i * outputs + j is "
                          "the response from input i to output j",
                          NULL, playing));
  g_object_class_install_property(
      gobject_class, PROP_IR_LOCATIONS,
      gst_param_spec_array("ir-locations", "Impulse response files, one per entry",
                           "The responses as a list of audio files, input-major: each file's "
                           "channels the next entries, \"\" an empty entry",
                           g_param_spec_string("location", "Location",
                                               "An audio file, or \"\" for an empty entry", NULL,
                                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
                           playing));
  g_object_class_install_property(
      gobject_class, PROP_MATRIX,
      gst_param_spec_array(
          "matrix", "Response matrix",
          "The responses as an array of inputs x outputs rows of taps, input-major (row i * "
          "outputs + j: input i to output j)",
          /* taps as doubles, so that gst-launch-1.0 reads "<<1, 0.5>, <0.25>>" as such; the
           * range is unbounded so that an infinite tap reaches set_property, which names it.
           * GLib's validation refuses NaN itself (a warning, the matrix stays), as NaN is no
           * double spec's value */
          gst_param_spec_array("row", "Row", "The taps of one entry",
                               g_param_spec_double("tap", "Tap", "One tap of a response", -INFINITY,
                                                   INFINITY, 0.0,
                                                   G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          playing));
  g_object_class_install_property(
      gobject_class, PROP_SOFA_LOCATION,
      g_param_spec_string("sofa-location", "HRTF set (SOFA file)",
                          "An HRTF set (AES69 SOFA, SimpleFreeFieldHRIR) for binaural output: each "
                          "input channel to both ears from the nearest measurement",
                          NULL, playing));
  g_object_class_install_property(
      gobject_class, PROP_DIRECTIONS,
      gst_param_spec_array(
          "directions", "Input directions",
          "With sofa-location: each input channel's <azimuth, elevation> in degrees (SOFA's "
          "convention); empty: from its position",
          /* unbounded, so that a value out of range reaches set_property, which names it */
          gst_param_spec_array("direction", "Direction", "<azimuth, elevation> in degrees",
                               g_param_spec_double("angle", "Angle", "Degrees", -INFINITY, INFINITY,
                                                   0.0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          playing));
  g_object_class_install_property(
      gobject_class, PROP_OUTPUTS,
      g_param_spec_uint("outputs", "Outputs",
                        "The output channel count; 0: the responses' count divided by the input's "
                        "channels. Takes effect at start",
                        0, CUDAFFT_MATRIX_MAX_CHANNELS, DEFAULT_OUTPUTS, ready));
  g_object_class_install_property(
      gobject_class, PROP_BLOCK_SIZE,
      g_param_spec_uint("block-size", "Block size",
                        "Block size in samples, the latency: 0 (zero latency) or a power of two "
                        "from 32 to 2048. Takes effect at start",
                        0, CUDAFFT_MATRIX_MAX_BLOCK, DEFAULT_BLOCK_SIZE, ready));
  g_object_class_install_property(
      gobject_class, PROP_DRAIN_TAIL,
      g_param_spec_boolean("drain-tail", "Drain the tail",
                           "At EOS and a new segment, push the whole response (input + response "
                           "length - 1 samples); FALSE: the input's length",
                           DEFAULT_DRAIN_TAIL, playing));

  /**
   * GstCudaMatrixConvolve::rate-changed:
   * @filter: the element
   * @rate: the new sample rate
   *
   * Emitted from the streaming thread when the sample rate becomes known or changes, before the
   * responses are read for it, so that a handler can set a matrix for that rate (as cudaconvolve's
   * and audiofirfilter's signal for a kernel). The matrix it sets must keep the output count the
   * caps were negotiated with (an ERROR otherwise). ir-location, ir-locations and sofa-location
   * files are resampled to the rate by the element itself.
   */
  signals[SIGNAL_RATE_CHANGED] =
      g_signal_new("rate-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                   G_TYPE_NONE, 1, G_TYPE_INT);

  gst_cudafft_audio_filter_class_add_pad_templates(element_class, gst_caps_from_string(CAPS),
                                                   gst_caps_from_string(CAPS));
  gst_element_class_set_static_metadata(
      element_class, "CUDA matrix convolution", "Filter/Effect/Audio",
      "Convolve N input channels into M output channels with a matrix of responses on an NVIDIA "
      "GPU or the CPU (backend=cpu, FFTW)",
      "gst-cudafft developers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_matrix_convolve_start);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_cuda_matrix_convolve_set_caps);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_matrix_convolve_transform_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_matrix_convolve_sink_event);
  filter_class->close = gst_cuda_matrix_convolve_close;
  filter_class->drain = gst_cuda_matrix_convolve_drain;
  filter_class->get_latency = gst_cuda_matrix_convolve_get_latency;
  filter_class->prepare = gst_cuda_matrix_convolve_prepare;
  filter_class->process = gst_cuda_matrix_convolve_process;
  filter_class->takes_cuda_memory = TRUE;
  filter_class->memory_hint = "use shorter responses, fewer entries or a larger block-size";
}

static void
gst_cuda_matrix_convolve_init(GstCudaMatrixConvolve *self)
{
  self->settings.outputs = DEFAULT_OUTPUTS;
  self->settings.block_size = DEFAULT_BLOCK_SIZE;
  self->settings.drain_tail = DEFAULT_DRAIN_TAIL;
  self->ir = gst_cudafft_response_file_new(GST_ELEMENT(self));
  self->sofa_reader = gst_cuda_matrix_convolve_sofa_reader_new();
}
