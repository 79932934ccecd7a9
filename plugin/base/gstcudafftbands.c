/* gstcudafftbands.c: see the header. */
#include "gstcudafftbands.h"

#include "gstcudafftproperties.h"

GType
gst_cudafft_frequency_scale_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {CUDAFFT_SCALE_LINEAR, "Bands evenly spaced in frequency", "linear"},
      {CUDAFFT_SCALE_LOG, "Bands evenly spaced in log frequency", "log"},
      {CUDAFFT_SCALE_MEL, "Bands evenly spaced in mel = 2595 log10(1 + f / 700)", "mel"},
      {CUDAFFT_SCALE_OCTAVE, "IEC 61260-1 fractional-octave bands", "octave"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudafftFrequencyScale", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

GType
gst_cudafft_weighting_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {CUDAFFT_WEIGHTING_Z, "Z: none (0 dB at every frequency)", "z"},
      {CUDAFFT_WEIGHTING_A, "A weighting of IEC 61672-1", "a"},
      {CUDAFFT_WEIGHTING_C, "C weighting of IEC 61672-1", "c"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudafftWeighting", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

void
gst_cudafft_bands_install_properties(GObjectClass *klass, const GstCudafftBandProps *ids,
                                     CudafftFrequencyScale default_scale, GParamFlags flags)
{
  flags |= G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property(
      klass, ids->scale,
      g_param_spec_enum(
          "frequency-scale", "Frequency scale",
          "How bands are spaced. linear, log, mel (2595 log10(1 + f / 700)): band centres evenly "
          "spaced on that axis from min-frequency to max-frequency (both included), edges halfway "
          "between centres. octave: the IEC 61260-1 fractional-octave bands with midband in that "
          "range (base-10 ratio G = 10^(3/10), midbands 1000 G^(x / b) Hz for odd b and 1000 "
          "G^((2x + 1) / (2b)) Hz for even b bands per octave, edges midband G^(-+1 / "
          "(2b))). " GST_CUDAFFT_BINS_TO_BANDS_TEXT,
          GST_TYPE_CUDAFFT_FREQUENCY_SCALE, default_scale, flags));
  g_object_class_install_property(
      klass, ids->bands_per_octave,
      g_param_spec_uint("bands-per-octave", "Bands per octave",
                        "Bands per octave with frequency-scale=octave: 1, 3, 6, 12 or 24 (others "
                        "are refused with a warning)",
                        1, 24, GST_CUDAFFT_DEFAULT_BANDS_PER_OCTAVE, flags));
  g_object_class_install_property(
      klass, ids->min_frequency,
      g_param_spec_double("min-frequency", "Minimum frequency",
                          "The lowest band centre in Hz; 0: automatic (0 Hz for linear and mel, "
                          "20 Hz for log and octave)",
                          0.0, 1e6, GST_CUDAFFT_DEFAULT_MIN_FREQUENCY, flags));
  g_object_class_install_property(
      klass, ids->max_frequency,
      g_param_spec_double("max-frequency", "Maximum frequency",
                          "The highest band centre in Hz; 0 (automatic) or one above the Nyquist "
                          "frequency: the Nyquist frequency (rate / 2)",
                          0.0, 1e6, GST_CUDAFFT_DEFAULT_MAX_FREQUENCY, flags));
  g_object_class_install_property(
      klass, ids->weighting,
      g_param_spec_enum("weighting", "Frequency weighting",
                        "The frequency weighting each FFT bin's power takes before bins are "
                        "summed into bands: z (none), a or c (IEC 61672-1 Annex E's closed "
                        "formulas with its exact pole frequencies, normalised to 0 dB at 1 kHz)",
                        GST_TYPE_CUDAFFT_WEIGHTING, GST_CUDAFFT_DEFAULT_WEIGHTING, flags));
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_FREQUENCY_SCALE, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_CUDAFFT_WEIGHTING, 0);
}

gboolean
gst_cudafft_bands_check_per_octave(GstElement *element, guint b)
{
  if (b == 1 || b == 3 || b == 6 || b == 12 || b == 24)
    return TRUE;
  guint in_effect = 0;
  g_object_get(element, "bands-per-octave", &in_effect, NULL);
  gst_cudafft_refuse_value(element,
                           "bands-per-octave %u refused: use 1, 3, 6, 12 or 24 (IEC 61260-1). "
                           "Keeping bands-per-octave=%u.",
                           b, in_effect);
  return FALSE;
}
