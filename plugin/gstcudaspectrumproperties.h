/* gstcudaspectrumproperties.h: cudaspectrum's properties: spectrum's (the same names, nicks,
 * blurbs, ranges and defaults) and its own (message-lists, the band layouts, fft-size), all of
 * which may change while playing, and the settings they hold. The element reads the settings
 * under its object lock and decides when each applies (gstcudaspectrum.c); a new property starts
 * here. */
#ifndef GST_CUDA_SPECTRUM_PROPERTIES_H
#define GST_CUDA_SPECTRUM_PROPERTIES_H

#include <cudafft/bands.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* The properties' values, under the element's object lock. */
typedef struct {
  gboolean post_messages;
  gboolean message_magnitude;
  gboolean message_phase;
  gboolean message_lists;
  guint64 interval;
  guint bands;
  gint threshold;
  gboolean multi_channel;
  CudafftFrequencyScale scale; /* the band layout: off (spectrum's bins) with linear and z */
  guint bands_per_octave;
  gdouble min_frequency, max_frequency;
  CudafftWeighting weighting;
  guint fft_size; /* the analysis's points with log, mel and octave layouts */
} GstCudaSpectrumSettings;

/* Installs the properties on cudaspectrum's class, whose set_property and get_property call
 * gst_cuda_spectrum_properties_set() and _get() (and are set before this, as GObject requires). */
void gst_cuda_spectrum_properties_install(GObjectClass *gobject_class);

/* The defaults. */
void gst_cuda_spectrum_settings_init(GstCudaSpectrumSettings *settings);

/* set_property for `object`, whose settings are `settings`: takes the object lock; a refused
 * bands-per-octave keeps the value in effect (gst_cudafft_bands_check_per_octave). */
void gst_cuda_spectrum_properties_set(GObject *object, GstCudaSpectrumSettings *settings,
                                      guint prop_id, const GValue *value, GParamSpec *pspec);

/* get_property from a copy of the settings taken under the object lock. */
void gst_cuda_spectrum_properties_get(GObject *object, const GstCudaSpectrumSettings *settings,
                                      guint prop_id, GValue *value, GParamSpec *pspec);

G_END_DECLS

#endif
