/* gstcudaspectrumbands.h: cudaspectrum's band layouts (frequency-scale, bands-per-octave,
 * min-frequency, max-frequency, weighting): when one is active, each interval's spectrum is turned
 * into the layout's bands before it is posted. The spectrum is spectrum's analysis, of nfft =
 * 2 bands - 2 points for the linear scale (the drop-in's rule, each band a bin), of fft-size points
 * for log, mel and octave, whose bands (`bands` of them for log and mel) are made from its
 * fft-size / 2 + 1 bins.
 *
 * The definition: bin k's interval level L_k is spectrum's (the mean of its FFTs' levels in dB,
 * that is the geometric mean of their powers), taken without the threshold's floor; a band's
 * level is 10 log10(sum_k a_k g_k 10^(L_k / 10)) with the bins-to-band weights a_k and the
 * weighting's gains g_k of cudafft/bands.h (a bin's gain at its own frequency k rate / nfft), then
 * raised to threshold. A band's phase is that of the bin nearest its centre. */
#ifndef GST_CUDA_SPECTRUM_BANDS_H
#define GST_CUDA_SPECTRUM_BANDS_H

#include <cudafft/bands.h>
#include <cudafft/spectrum.h>

#include <gst/gst.h>

G_BEGIN_DECLS

/* The engine's threshold while a layout is active: low enough never to floor a level (an FFT
 * bin of exactly zero power reads as this, which makes its interval power 0). */
#define GST_CUDA_SPECTRUM_LAYOUT_THRESHOLD (G_MININT / 2)

/* A layout as the properties set it, with the threshold its bands are floored to. */
typedef struct {
  gboolean active; /* frequency-scale != linear or weighting != z */
  CudafftFrequencyScale scale;
  guint bands_per_octave;
  gdouble min_frequency, max_frequency;
  CudafftWeighting weighting;
  gint threshold;
  guint bands;    /* the band count of linear, log and mel (the bands property) */
  guint fft_size; /* the analysis's points for log, mel and octave */
} GstCudaSpectrumLayout;

/* The bins of the analysis a layout (active or not) is made from, for the bands property
 * `bands`: fft-size / 2 + 1 for log, mel and octave, else `bands` (spectrum's rule). */
guint gst_cuda_spectrum_layout_bins(const GstCudaSpectrumLayout *layout, guint bands);

gboolean gst_cuda_spectrum_layout_equal(const GstCudaSpectrumLayout *a,
                                        const GstCudaSpectrumLayout *b);

/* The weights of the layout last used, kept while the layout, bins and rate stay the same. */
typedef struct {
  GstCudaSpectrumLayout layout;
  guint bins, rate;
  gsize count;
  CudafftBandBins *weights;
  gfloat *gains, *centres;
  guint *nearest; /* the bin nearest each band's centre */
} GstCudaSpectrumBandMap;

/* One result in the layout's bands: returns a new array (g_free) of `spectra` rows of *count
 * magnitudes, then (where the result has phases) as many phases, then the *count band centres
 * in Hz; *phase points to the phases (NULL without) and *centres to the centres. NULL where the
 * layout cannot be made (checked beforehand: gst_cudafft_band_settings_problem). */
gfloat *gst_cuda_spectrum_bands_map(GstCudaSpectrumBandMap *map,
                                    const GstCudaSpectrumLayout *layout, guint bins, guint rate,
                                    const CudafftSpectrumResult *result, gsize spectra,
                                    gsize *count, gfloat **phase, gfloat **centres);

void gst_cuda_spectrum_band_map_clear(GstCudaSpectrumBandMap *map);

G_END_DECLS

#endif
