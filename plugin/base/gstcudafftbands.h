/* gstcudafftbands.h: the band-layout properties that cudaspectrum and cudaspectrumscope share
 * (frequency-scale, bands-per-octave, min-frequency, max-frequency, weighting): their enum types,
 * their specs and blurbs (which state cudafft/bands.h's definitions, so that gst-inspect shows
 * them), and the checks their setters apply. */
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

/* How a band is made of FFT bins, as the element docs state it. */
#define GST_CUDAFFT_BINS_TO_BANDS_TEXT                                                             \
  "A band sums the power of the FFT bins it covers (bin k standing for k rate / nfft +- half a "   \
  "bin), the edge bins weighted by the fraction of their width inside it; a band narrower than a " \
  "bin takes the power density interpolated linearly between the two nearest bins at its centre, " \
  "times its width, so that levels stay continuous."

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

G_END_DECLS

#endif
