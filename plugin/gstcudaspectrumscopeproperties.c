/* gstcudaspectrumscopeproperties.c: see the header. */
#include "gstcudaspectrumscopeproperties.h"

#include "gstcudafftbands.h"
#include "gstcudafftcaps.h"
#include "gstcudafftproperties.h"

#define DEFAULT_STYLE CUDAFFT_SCOPE_SPECTROGRAM
#define DEFAULT_FREQUENCY_SCALE CUDAFFT_SCALE_LOG
#define DEFAULT_DB_MIN -90.0
#define DEFAULT_DB_MAX 0.0
#define DEFAULT_COLORMAP CUDAFFT_COLORMAP_VIRIDIS
#define DEFAULT_SMOOTHING 0.0
#define DEFAULT_PEAK_HOLD 1000.0
#define DEFAULT_PEAK_DECAY 20.0
#define DEFAULT_MULTI_CHANNEL TRUE

#define GST_TYPE_CUDA_SPECTRUM_SCOPE_STYLE (gst_cuda_spectrum_scope_style_get_type())
static GType
gst_cuda_spectrum_scope_style_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {CUDAFFT_SCOPE_SPECTROGRAM, "A scrolling spectrogram, the newest column at the right",
       "spectrogram"},
      {CUDAFFT_SCOPE_BARS, "An analyser's bars with peak markers", "bars"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudaSpectrumScopeStyle", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

#define GST_TYPE_CUDAFFT_COLORMAP (gst_cudafft_colormap_get_type())
static GType
gst_cudafft_colormap_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {CUDAFFT_COLORMAP_VIRIDIS, "viridis (matplotlib's perceptual colormap)", "viridis"},
      {CUDAFFT_COLORMAP_MAGMA, "magma (matplotlib's perceptual colormap)", "magma"},
      {CUDAFFT_COLORMAP_GREY, "grey, black to white", "grey"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudafftColormap", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

void
gst_cuda_spectrum_scope_properties_install(GObjectClass *gobject_class)
{
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_STYLE,
      g_param_spec_enum(
          "style", "Style",
          "spectrogram (a scrolling waterfall) or bars (an analyser with peak markers)",
          GST_TYPE_CUDA_SPECTRUM_SCOPE_STYLE, DEFAULT_STYLE, flags));
  const GstCudafftBandProps band_props = {
      GST_CUDA_SPECTRUM_SCOPE_PROP_FREQUENCY_SCALE, GST_CUDA_SPECTRUM_SCOPE_PROP_BANDS_PER_OCTAVE,
      GST_CUDA_SPECTRUM_SCOPE_PROP_MIN_FREQUENCY, GST_CUDA_SPECTRUM_SCOPE_PROP_MAX_FREQUENCY,
      GST_CUDA_SPECTRUM_SCOPE_PROP_WEIGHTING};
  gst_cudafft_bands_install_properties(gobject_class, &band_props, DEFAULT_FREQUENCY_SCALE,
                                       GST_PARAM_MUTABLE_PLAYING);
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MIN,
      g_param_spec_double("db-min", "Lowest level",
                          "The level (dB, 0 dB = a full-scale sine) at the bottom of the colormap "
                          "and of the bars; below db-max (either may be set first)",
                          -300.0, 300.0, DEFAULT_DB_MIN, flags));
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MAX,
      g_param_spec_double("db-max", "Highest level",
                          "The level (dB) at the top of the colormap and of the bars; above "
                          "db-min",
                          -300.0, 300.0, DEFAULT_DB_MAX, flags));
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_COLORMAP,
      g_param_spec_enum("colormap", "Colormap",
                        "Colours of the levels: viridis or magma (matplotlib's 256-entry tables, "
                        "interpolated) or grey",
                        GST_TYPE_CUDAFFT_COLORMAP, DEFAULT_COLORMAP, flags));
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_SMOOTHING,
      g_param_spec_double("smoothing", "Smoothing",
                          "Time constant in ms of each band's exponential average over frames "
                          "(125: a sound level meter's Fast); 0: none",
                          0.0, 60000.0, DEFAULT_SMOOTHING, flags));
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_HOLD,
      g_param_spec_double("peak-hold", "Peak hold",
                          "How long (ms) bars' peak markers hold a level before it falls (at "
                          "most 1024 frames)",
                          0.0, 60000.0, DEFAULT_PEAK_HOLD, flags));
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_DECAY,
      g_param_spec_double("peak-decay", "Peak decay",
                          "How fast (dB per second) a peak falls once its hold is over", 0.0,
                          10000.0, DEFAULT_PEAK_DECAY, flags));
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_FFT_SIZE,
      gst_cudafft_fft_size_param("Points of each channel's FFT: " GST_CUDAFFT_MIN_SIZE_TEXT
                                 " to " GST_CUDAFFT_MAX_SIZE_TEXT
                                 " with no prime factor above 7 (400, 1000, 1125, 4096, ...)",
                                 GST_CUDAFFT_DEFAULT_FFT_SIZE, flags));
  g_object_class_install_property(
      gobject_class, GST_CUDA_SPECTRUM_SCOPE_PROP_MULTI_CHANNEL,
      g_param_spec_boolean("multi-channel", "Multichannel",
                           "Each channel in a lane of its own (stacked from the top, channel 0 "
                           "first); FALSE: one lane, the channels' powers averaged",
                           DEFAULT_MULTI_CHANNEL, flags));
  gst_type_mark_as_plugin_api(GST_TYPE_CUDA_SPECTRUM_SCOPE_STYLE, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_COLORMAP, 0);
}

void
gst_cuda_spectrum_scope_settings_init(GstCudaSpectrumScopeSettings *settings)
{
  CudafftScopeOptions *o = &settings->options;
  o->style = DEFAULT_STYLE;
  o->multi_channel = DEFAULT_MULTI_CHANNEL;
  o->scale = DEFAULT_FREQUENCY_SCALE;
  o->bands_per_octave = GST_CUDAFFT_DEFAULT_BANDS_PER_OCTAVE;
  o->min_frequency = GST_CUDAFFT_DEFAULT_MIN_FREQUENCY;
  o->max_frequency = GST_CUDAFFT_DEFAULT_MAX_FREQUENCY;
  o->weighting = GST_CUDAFFT_DEFAULT_WEIGHTING;
  o->db_min = (float)DEFAULT_DB_MIN;
  o->db_max = (float)DEFAULT_DB_MAX;
  o->colormap = DEFAULT_COLORMAP;
  o->smoothing_ms = (float)DEFAULT_SMOOTHING;
  o->peak_hold_ms = (float)DEFAULT_PEAK_HOLD;
  o->peak_decay_db_per_s = (float)DEFAULT_PEAK_DECAY;
  settings->fft_size = GST_CUDAFFT_DEFAULT_FFT_SIZE;
}

void
gst_cuda_spectrum_scope_properties_set(GObject *object, GstCudaSpectrumScopeSettings *settings,
                                       guint prop_id, const GValue *value, GParamSpec *pspec)
{
  CudafftScopeOptions *o = &settings->options;
  /* refusals (gstcudafftproperties.h) run before the lock is taken; db-min and db-max, a pair, are
   * checked together when they take effect (gstcudaspectrumscope.c), so that they may be set in
   * either order */
  if (prop_id == GST_CUDA_SPECTRUM_SCOPE_PROP_BANDS_PER_OCTAVE &&
      !gst_cudafft_bands_check_per_octave(GST_ELEMENT(object), g_value_get_uint(value)))
    return;
  if (prop_id == GST_CUDA_SPECTRUM_SCOPE_PROP_FFT_SIZE &&
      !gst_cudafft_fft_size_check(GST_ELEMENT(object), g_value_get_uint(value), FALSE))
    return;
  GST_OBJECT_LOCK(object);
  switch (prop_id) {
  case GST_CUDA_SPECTRUM_SCOPE_PROP_STYLE:
    o->style = g_value_get_enum(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_FREQUENCY_SCALE:
    o->scale = g_value_get_enum(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_BANDS_PER_OCTAVE:
    o->bands_per_octave = g_value_get_uint(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_MIN_FREQUENCY:
    o->min_frequency = g_value_get_double(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_MAX_FREQUENCY:
    o->max_frequency = g_value_get_double(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_WEIGHTING:
    o->weighting = g_value_get_enum(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MIN:
    o->db_min = (float)g_value_get_double(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MAX:
    o->db_max = (float)g_value_get_double(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_COLORMAP:
    o->colormap = g_value_get_enum(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_SMOOTHING:
    o->smoothing_ms = (float)g_value_get_double(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_HOLD:
    o->peak_hold_ms = (float)g_value_get_double(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_DECAY:
    o->peak_decay_db_per_s = (float)g_value_get_double(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_FFT_SIZE: /* checked above */
    settings->fft_size = g_value_get_uint(value);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_MULTI_CHANNEL:
    o->multi_channel = g_value_get_boolean(value) ? 1 : 0;
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(object);
}

void
gst_cuda_spectrum_scope_properties_get(GObject *object,
                                       const GstCudaSpectrumScopeSettings *settings, guint prop_id,
                                       GValue *value, GParamSpec *pspec)
{
  const CudafftScopeOptions *o = &settings->options;
  switch (prop_id) {
  case GST_CUDA_SPECTRUM_SCOPE_PROP_STYLE:
    g_value_set_enum(value, o->style);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_FREQUENCY_SCALE:
    g_value_set_enum(value, o->scale);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_BANDS_PER_OCTAVE:
    g_value_set_uint(value, o->bands_per_octave);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_MIN_FREQUENCY:
    g_value_set_double(value, o->min_frequency);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_MAX_FREQUENCY:
    g_value_set_double(value, o->max_frequency);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_WEIGHTING:
    g_value_set_enum(value, o->weighting);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MIN:
    g_value_set_double(value, o->db_min);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_DB_MAX:
    g_value_set_double(value, o->db_max);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_COLORMAP:
    g_value_set_enum(value, o->colormap);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_SMOOTHING:
    g_value_set_double(value, o->smoothing_ms);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_HOLD:
    g_value_set_double(value, o->peak_hold_ms);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_PEAK_DECAY:
    g_value_set_double(value, o->peak_decay_db_per_s);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_FFT_SIZE:
    g_value_set_uint(value, settings->fft_size);
    break;
  case GST_CUDA_SPECTRUM_SCOPE_PROP_MULTI_CHANNEL:
    g_value_set_boolean(value, o->multi_channel != 0);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}
