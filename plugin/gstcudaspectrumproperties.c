/* gstcudaspectrumproperties.c: see gstcudaspectrumproperties.h. */
#include "gstcudaspectrumproperties.h"

#include "gstcudafftbands.h"
#include "gstcudafftcaps.h"
#include "gstcudafftproperties.h"

enum {
  PROP_0,
  PROP_POST_MESSAGES,
  PROP_MESSAGE_MAGNITUDE,
  PROP_MESSAGE_PHASE,
  PROP_MESSAGE_LISTS,
  PROP_INTERVAL,
  PROP_BANDS,
  PROP_THRESHOLD,
  PROP_MULTI_CHANNEL,
  PROP_FREQUENCY_SCALE,
  PROP_BANDS_PER_OCTAVE,
  PROP_MIN_FREQUENCY,
  PROP_MAX_FREQUENCY,
  PROP_WEIGHTING,
  PROP_FFT_SIZE,
};

#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_MESSAGE_MAGNITUDE TRUE
#define DEFAULT_MESSAGE_PHASE FALSE
#define DEFAULT_MESSAGE_LISTS TRUE
#define DEFAULT_INTERVAL (GST_SECOND / 10)
#define DEFAULT_BANDS 128
#define DEFAULT_THRESHOLD -60
#define DEFAULT_MULTI_CHANNEL FALSE

void
gst_cuda_spectrum_properties_install(GObjectClass *gobject_class)
{
  /* spectrum's names, nicks, blurbs, ranges and defaults; all may change while playing */
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  g_object_class_install_property(
      gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean("post-messages", "Post Messages",
                           "Whether to post a 'spectrum' element message on the bus for each "
                           "passed interval",
                           DEFAULT_POST_MESSAGES, flags));
  g_object_class_install_property(
      gobject_class, PROP_MESSAGE_MAGNITUDE,
      g_param_spec_boolean("message-magnitude", "Magnitude",
                           "Whether to add a 'magnitude' field to the structure of any "
                           "'spectrum' element messages posted on the bus",
                           DEFAULT_MESSAGE_MAGNITUDE, flags));
  g_object_class_install_property(
      gobject_class, PROP_MESSAGE_PHASE,
      g_param_spec_boolean("message-phase", "Phase",
                           "Whether to add a 'phase' field to the structure of any "
                           "'spectrum' element messages posted on the bus",
                           DEFAULT_MESSAGE_PHASE, flags));
  /* Of its own: the lists are most of a message's cost (a GValue per band); displays read the
   * float32 fields, which are always there */
  g_object_class_install_property(
      gobject_class, PROP_MESSAGE_LISTS,
      g_param_spec_boolean("message-lists", "Message lists",
                           "Whether the 'magnitude' and 'phase' lists are in the messages; FALSE: "
                           "only the float32 'magnitude-data' and 'phase-data'",
                           DEFAULT_MESSAGE_LISTS, flags));
  g_object_class_install_property(
      gobject_class, PROP_INTERVAL,
      g_param_spec_uint64("interval", "Interval",
                          "Interval of time between message posts (in nanoseconds)", 1, G_MAXUINT64,
                          DEFAULT_INTERVAL, flags));
  g_object_class_install_property(gobject_class, PROP_BANDS,
                                  g_param_spec_uint("bands", "Bands", "Number of frequency bands",
                                                    2, ((guint)G_MAXINT + 2) / 2, DEFAULT_BANDS,
                                                    flags));
  g_object_class_install_property(
      gobject_class, PROP_THRESHOLD,
      g_param_spec_int("threshold", "Threshold",
                       "dB threshold for result. All lower values will be set to this", G_MININT, 0,
                       DEFAULT_THRESHOLD, flags));
  g_object_class_install_property(gobject_class, PROP_MULTI_CHANNEL,
                                  g_param_spec_boolean("multi-channel", "Multichannel results",
                                                       "Send separate results for each channel",
                                                       DEFAULT_MULTI_CHANNEL, flags));
  /* Of its own: band layouts, off by default (linear, z: spectrum's bins) */
  const GstCudafftBandProps band_props = {PROP_FREQUENCY_SCALE, PROP_BANDS_PER_OCTAVE,
                                          PROP_MIN_FREQUENCY, PROP_MAX_FREQUENCY, PROP_WEIGHTING};
  gst_cudafft_bands_install_properties(gobject_class, &band_props, CUDAFFT_SCALE_LINEAR,
                                       GST_PARAM_MUTABLE_PLAYING);
  g_object_class_install_property(
      gobject_class, PROP_FFT_SIZE,
      gst_cudafft_fft_size_param("Points of the analysis for the log, mel and octave scales: "
                                 "even, " GST_CUDAFFT_MIN_SIZE_TEXT " to " GST_CUDAFFT_MAX_SIZE_TEXT
                                 ", no prime factor above 7 (ignored with linear)",
                                 GST_CUDAFFT_DEFAULT_FFT_SIZE, flags));
}

void
gst_cuda_spectrum_settings_init(GstCudaSpectrumSettings *settings)
{
  settings->post_messages = DEFAULT_POST_MESSAGES;
  settings->message_magnitude = DEFAULT_MESSAGE_MAGNITUDE;
  settings->message_phase = DEFAULT_MESSAGE_PHASE;
  settings->message_lists = DEFAULT_MESSAGE_LISTS;
  settings->interval = DEFAULT_INTERVAL;
  settings->bands = DEFAULT_BANDS;
  settings->threshold = DEFAULT_THRESHOLD;
  settings->multi_channel = DEFAULT_MULTI_CHANNEL;
  settings->scale = CUDAFFT_SCALE_LINEAR;
  settings->bands_per_octave = GST_CUDAFFT_DEFAULT_BANDS_PER_OCTAVE;
  settings->min_frequency = GST_CUDAFFT_DEFAULT_MIN_FREQUENCY;
  settings->max_frequency = GST_CUDAFFT_DEFAULT_MAX_FREQUENCY;
  settings->weighting = GST_CUDAFFT_DEFAULT_WEIGHTING;
  settings->fft_size = GST_CUDAFFT_DEFAULT_FFT_SIZE;
}

void
gst_cuda_spectrum_properties_set(GObject *object, GstCudaSpectrumSettings *s, guint prop_id,
                                 const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_BANDS_PER_OCTAVE &&
      !gst_cudafft_bands_check_per_octave(GST_ELEMENT(object), g_value_get_uint(value)))
    return;
  /* the band layouts' analysis is spectrum's, nfft = 2 bins - 2: even sizes only */
  if (prop_id == PROP_FFT_SIZE &&
      !gst_cudafft_fft_size_check(GST_ELEMENT(object), g_value_get_uint(value), TRUE))
    return;
  GST_OBJECT_LOCK(object);
  switch (prop_id) {
  case PROP_POST_MESSAGES:
    s->post_messages = g_value_get_boolean(value);
    break;
  case PROP_MESSAGE_MAGNITUDE:
    s->message_magnitude = g_value_get_boolean(value);
    break;
  case PROP_MESSAGE_PHASE:
    s->message_phase = g_value_get_boolean(value);
    break;
  case PROP_MESSAGE_LISTS:
    s->message_lists = g_value_get_boolean(value);
    break;
  case PROP_INTERVAL:
    s->interval = g_value_get_uint64(value);
    break;
  case PROP_BANDS:
    s->bands = g_value_get_uint(value);
    break;
  case PROP_THRESHOLD:
    s->threshold = g_value_get_int(value);
    break;
  case PROP_MULTI_CHANNEL:
    s->multi_channel = g_value_get_boolean(value);
    break;
  case PROP_FREQUENCY_SCALE:
    s->scale = g_value_get_enum(value);
    break;
  case PROP_BANDS_PER_OCTAVE:
    s->bands_per_octave = g_value_get_uint(value);
    break;
  case PROP_MIN_FREQUENCY:
    s->min_frequency = g_value_get_double(value);
    break;
  case PROP_MAX_FREQUENCY:
    s->max_frequency = g_value_get_double(value);
    break;
  case PROP_WEIGHTING:
    s->weighting = g_value_get_enum(value);
    break;
  case PROP_FFT_SIZE: /* checked above */
    s->fft_size = g_value_get_uint(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(object);
}

void
gst_cuda_spectrum_properties_get(GObject *object, const GstCudaSpectrumSettings *s, guint prop_id,
                                 GValue *value, GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_POST_MESSAGES:
    g_value_set_boolean(value, s->post_messages);
    break;
  case PROP_MESSAGE_MAGNITUDE:
    g_value_set_boolean(value, s->message_magnitude);
    break;
  case PROP_MESSAGE_PHASE:
    g_value_set_boolean(value, s->message_phase);
    break;
  case PROP_MESSAGE_LISTS:
    g_value_set_boolean(value, s->message_lists);
    break;
  case PROP_INTERVAL:
    g_value_set_uint64(value, s->interval);
    break;
  case PROP_BANDS:
    g_value_set_uint(value, s->bands);
    break;
  case PROP_THRESHOLD:
    g_value_set_int(value, s->threshold);
    break;
  case PROP_MULTI_CHANNEL:
    g_value_set_boolean(value, s->multi_channel);
    break;
  case PROP_FREQUENCY_SCALE:
    g_value_set_enum(value, s->scale);
    break;
  case PROP_BANDS_PER_OCTAVE:
    g_value_set_uint(value, s->bands_per_octave);
    break;
  case PROP_MIN_FREQUENCY:
    g_value_set_double(value, s->min_frequency);
    break;
  case PROP_MAX_FREQUENCY:
    g_value_set_double(value, s->max_frequency);
    break;
  case PROP_WEIGHTING:
    g_value_set_enum(value, s->weighting);
    break;
  case PROP_FFT_SIZE:
    g_value_set_uint(value, s->fft_size);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}
