/* gstcudaspectrumbands.c: see the header. */
#include "gstcudaspectrumbands.h"

#include <math.h>
#include <string.h>

gboolean
gst_cuda_spectrum_layout_equal(const GstCudaSpectrumLayout *a, const GstCudaSpectrumLayout *b)
{
  return !a->active == !b->active && a->scale == b->scale &&
         a->bands_per_octave == b->bands_per_octave && a->min_frequency == b->min_frequency &&
         a->max_frequency == b->max_frequency && a->weighting == b->weighting &&
         a->threshold == b->threshold && a->bands == b->bands && a->fft_size == b->fft_size;
}

guint
gst_cuda_spectrum_layout_bins(const GstCudaSpectrumLayout *layout, guint bands)
{
  return layout->active && layout->scale != CUDAFFT_SCALE_LINEAR ? layout->fft_size / 2 + 1 : bands;
}

/* The library's layout for a spectrum of `bins` bins: LINEAR takes as many bands (spectrum's
 * bands, weighted), LOG and MEL the bands property's count. */
static CudafftBandLayout
band_layout(const GstCudaSpectrumLayout *layout, guint bins)
{
  const CudafftBandLayout l = {
      layout->scale, layout->scale == CUDAFFT_SCALE_LINEAR ? bins : layout->bands,
      layout->bands_per_octave, layout->min_frequency, layout->max_frequency};
  return l;
}

void
gst_cuda_spectrum_band_map_clear(GstCudaSpectrumBandMap *map)
{
  g_free(map->weights);
  g_free(map->gains);
  g_free(map->centres);
  g_free(map->nearest);
  memset(map, 0, sizeof *map);
}

static gboolean
map_make(GstCudaSpectrumBandMap *map, const GstCudaSpectrumLayout *layout, guint bins, guint rate)
{
  if (map->weights && map->bins == bins && map->rate == rate &&
      gst_cuda_spectrum_layout_equal(&map->layout, layout))
    return TRUE;
  gst_cuda_spectrum_band_map_clear(map);
  CudafftBandLayout l = band_layout(layout, bins);
  if (cudafft_band_layout_resolve(&l, rate) != CUDAFFT_STATUS_OK)
    return FALSE;
  const gsize nfft = 2 * (gsize)bins - 2, count = cudafft_band_count(&l);
  map->weights = g_new(CudafftBandBins, count);
  map->gains = g_new(gfloat, bins);
  map->centres = g_new(gfloat, count);
  map->nearest = g_new(guint, count);
  gdouble *centres = g_new(gdouble, count);
  const gboolean ok =
      cudafft_band_bins(&l, nfft, rate, map->weights) == CUDAFFT_STATUS_OK &&
      cudafft_weighting_gains(layout->weighting, nfft, rate, map->gains) == CUDAFFT_STATUS_OK &&
      cudafft_band_edges(&l, NULL, centres, NULL) == CUDAFFT_STATUS_OK;
  for (gsize b = 0; ok && b < count; b++) {
    map->centres[b] = (gfloat)centres[b];
    const gdouble k = floor(centres[b] * (gdouble)nfft / rate + 0.5);
    map->nearest[b] = k < 0.0 ? 0 : k > bins - 1 ? bins - 1 : (guint)k;
  }
  g_free(centres);
  if (!ok) {
    gst_cuda_spectrum_band_map_clear(map);
    return FALSE;
  }
  map->layout = *layout;
  map->bins = bins;
  map->rate = rate;
  map->count = count;
  return TRUE;
}

gfloat *
gst_cuda_spectrum_bands_map(GstCudaSpectrumBandMap *map, const GstCudaSpectrumLayout *layout,
                            guint bins, guint rate, const CudafftSpectrumResult *result,
                            gsize spectra, gsize *count, gfloat **phase, gfloat **centres)
{
  if (!map_make(map, layout, bins, rate))
    return NULL;
  const gsize n = map->count, rows = spectra * (result->phase ? 2 : 1);
  gfloat *out = g_new(gfloat, rows * n + n);
  for (gsize s = 0; s < spectra; s++) {
    cudafft_band_levels_from_bins(map->weights, n, map->gains, result->magnitude + s * bins,
                                  (gfloat)layout->threshold, out + s * n);
    if (result->phase)
      for (gsize b = 0; b < n; b++)
        out[(spectra + s) * n + b] = result->phase[s * bins + map->nearest[b]];
  }
  memcpy(out + rows * n, map->centres, n * sizeof *out);
  *count = n;
  *phase = result->phase ? out + spectra * n : NULL;
  *centres = out + rows * n;
  return out;
}
