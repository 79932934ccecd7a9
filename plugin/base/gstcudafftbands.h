/* gstcudafftbands.h: the band-layout properties that cudaspectrum and cudaspectrumscope share
 * (frequency-scale, bands-per-octave, min-frequency, max-frequency, weighting): their enum types,
 * their specs and blurbs (which state cudafft/bands.h's definitions, so that gst-inspect shows
 * them), the checks their setters apply, and the one answer both elements give to a range without
 * bands at the stream's rate. */
#ifndef GST_CUDAFFT_BANDS_H
#define GST_CUDAFFT_BANDS_H

#include <cudafft/bands.h>

#include <gst/gst.h>

G_BEGIN_DECLS

/* Values equal CudafftFrequencyScale's and CudafftWeighting's. */
#define GST_TYPE_CUDAFFT_FREQUENCY_SCALE (gst_cudafft_frequency_scale_get_type())
GType gst_cudafft_frequency_scale_get_type(void);
#define GST_TYPE_CUDAFFT_WEIGHTING (gst_cudafft_weighting_get_type())
GType gst_cudafft_weighting_get_type(void);

#define GST_CUDAFFT_DEFAULT_BANDS_PER_OCTAVE 3
#define GST_CUDAFFT_DEFAULT_MIN_FREQUENCY 0.0 /* automatic */
#define GST_CUDAFFT_DEFAULT_MAX_FREQUENCY 0.0 /* automatic: rate / 2 */
#define GST_CUDAFFT_DEFAULT_WEIGHTING CUDAFFT_WEIGHTING_Z

/* The ids the five properties have in the element's class. */
typedef struct {
  guint scale, bands_per_octave, min_frequency, max_frequency, weighting;
} GstCudafftBandProps;

/* Installs the five properties with `flags` (on top of READWRITE and STATIC_STRINGS) and
 * default_scale as frequency-scale's default. */
void gst_cudafft_bands_install_properties(GObjectClass *klass, const GstCudafftBandProps *ids,
                                          CudafftFrequencyScale default_scale, GParamFlags flags);

/* Whether bands-per-octave may take b (1, 3, 6, 12, 24); where not, refuses it
 * (gst_cudafft_refuse_value: a WARNING, or GLib's log outside a pipeline) and the caller keeps the
 * old value. Call it without the object lock. */
gboolean gst_cudafft_bands_check_per_octave(GstElement *element, guint b);

/* The five band-layout properties as they are set. What can leave a layout without bands at a
 * rate (the scale, the fraction of an octave, the range) is checked when the layout takes effect
 * (at the start, or at the element's next boundary while playing), never one property against
 * another's old value when it is set, so that they may be set in any order; a layout refused is
 * refused as a whole (all five stay as they were). */
typedef struct {
  CudafftFrequencyScale scale;
  guint bands_per_octave;
  gdouble min_frequency, max_frequency;
  CudafftWeighting weighting;
} GstCudafftBandSettings;

gboolean gst_cudafft_band_settings_equal(const GstCudafftBandSettings *a,
                                         const GstCudafftBandSettings *b);

/* NULL where `layout` has bands at `rate`; else a sentence (g_free) that names the values, the
 * rate, why there are no bands and what would give some. */
gchar *gst_cudafft_band_settings_problem(const GstCudafftBandSettings *layout, guint rate);

/* The answer of every element with band layouts to a layout without bands (`problem`, from
 * gst_cudafft_band_settings_problem): where no layout is in force for this stream (in_force NULL:
 * the start, or a new format), an ERROR with the problem, and the element does not go on; while
 * playing, a WARNING (gst_cudafft_refuse_value) naming the layout kept, in_force, which stays in
 * force (the caller puts it back into the properties, so that they read back what is in force).
 * Call it without the object lock. */
void gst_cudafft_band_settings_refuse(GstElement *element, const gchar *problem,
                                      const GstCudafftBandSettings *in_force);

G_END_DECLS

#endif
