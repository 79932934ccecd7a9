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
      g_param_spec_enum("frequency-scale", "Frequency scale",
                        "How bands are spaced: linear, log or mel (centres evenly spaced on that "
                        "axis) or octave (IEC 61260-1 fractional-octave bands)",
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
                        "The frequency weighting of each bin's power before it is summed into "
                        "bands: z (none), a or c (IEC 61672-1)",
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

gboolean
gst_cudafft_band_settings_equal(const GstCudafftBandSettings *a, const GstCudafftBandSettings *b)
{
  return a->scale == b->scale && a->bands_per_octave == b->bands_per_octave &&
         a->min_frequency == b->min_frequency && a->max_frequency == b->max_frequency &&
         a->weighting == b->weighting;
}

/* "frequency-scale=octave, bands-per-octave=3, min-frequency=50, max-frequency=0, weighting=z":
 * the properties as a user sets them (bands-per-octave only where it counts). */
static gchar *
settings_text(const GstCudafftBandSettings *b)
{
  const gchar *scale = gst_cudafft_enum_nick(GST_TYPE_CUDAFFT_FREQUENCY_SCALE, b->scale);
  const gchar *weighting = gst_cudafft_enum_nick(GST_TYPE_CUDAFFT_WEIGHTING, b->weighting);
  gchar *fraction = b->scale == CUDAFFT_SCALE_OCTAVE
                        ? g_strdup_printf(", bands-per-octave=%u", b->bands_per_octave)
                        : g_strdup("");
  gchar *text = g_strdup_printf("frequency-scale=%s%s, min-frequency=%g, max-frequency=%g, "
                                "weighting=%s",
                                scale, fraction, b->min_frequency, b->max_frequency, weighting);
  g_free(fraction);
  return text;
}

/* What would give bands: for `l`, the resolved layout that has none at `rate`. */
static gchar *
range_hint(const CudafftBandLayout *l, guint rate)
{
  const gdouble nyquist = rate / 2.0;
  if (!(l->min_frequency < l->max_frequency)) {
    gchar *automatic =
        l->scale == CUDAFFT_SCALE_LOG || l->scale == CUDAFFT_SCALE_OCTAVE
            ? g_strdup_printf(", and min-frequency=0 for %g Hz", CUDAFFT_BANDS_AUTO_MIN_FREQUENCY)
            : g_strdup("");
    gchar *hint = g_strdup_printf("Bands need min-frequency below max-frequency, both at most %g "
                                  "Hz, the Nyquist frequency (rate / 2; max-frequency=0 stands "
                                  "for it%s)",
                                  nyquist, automatic);
    g_free(automatic);
    return hint;
  }
  if (l->scale != CUDAFFT_SCALE_OCTAVE)
    return NULL;
  /* the midbands nearest the range on either side (IEC 61260-1 indices reach 1 MHz within
   * +-10 octaves of 1 kHz at 24 bands per octave) */
  gdouble below = 0.0, above = 0.0;
  for (gint x = -10 * 24 - 1; x <= 10 * 24 + 1; x++) {
    const gdouble f = cudafft_octave_midband(l->bands_per_octave, x, NULL, NULL);
    if (f < l->min_frequency)
      below = f;
    else if (f > l->max_frequency && above == 0.0)
      above = f;
  }
  if (above > 0.0 && above <= nyquist)
    return g_strdup_printf("Widen the range to hold a 1/%u-octave midband frequency: the nearest "
                           "are %.5g Hz and %.5g Hz",
                           l->bands_per_octave, below, above);
  return g_strdup_printf("Widen the range to hold a 1/%u-octave midband frequency: the nearest "
                         "is %.5g Hz",
                         l->bands_per_octave, below);
}

gchar *
gst_cudafft_band_settings_problem(const GstCudafftBandSettings *layout, guint rate)
{
  /* one band: the count never empties a range (each element asks for at least one) */
  CudafftBandLayout l = {layout->scale, 1, layout->bands_per_octave, layout->min_frequency,
                         layout->max_frequency};
  if (cudafft_band_layout_resolve(&l, (double)rate) == CUDAFFT_STATUS_OK)
    return NULL;
  gchar *asked = settings_text(layout);
  gchar *hint = range_hint(&l, rate);
  gchar *problem =
      g_strdup_printf("%s give no bands at %u Hz: %s%s%s", asked, rate,
                      cudafft_last_error_message(), hint ? ". " : "", hint ? hint : "");
  g_free(hint);
  g_free(asked);
  return problem;
}

void
gst_cudafft_band_settings_refuse(GstElement *element, const gchar *problem,
                                 const GstCudafftBandSettings *in_force)
{
  if (!in_force) {
    GST_ELEMENT_ERROR(element, LIBRARY, SETTINGS, ("%s.", problem), (NULL));
    return;
  }
  gchar *kept = settings_text(in_force);
  gst_cudafft_refuse_value(element, "%s. The layout in force stays: keeping %s.", problem, kept);
  g_free(kept);
}
