/* bands.c: the public functions of cudafft/bands.h, on the formulas of band_values.h. */
#include "band_values.h"
#include "errors.h"

#include <math.h>
#include <stdlib.h>

static int
valid_fraction(unsigned b)
{
  return b == 1 || b == 3 || b == 6 || b == 12 || b == 24;
}

/* The bands x0 .. x0 + *count - 1 of an OCTAVE layout: those whose midband lies in [lo, hi]. The
 * estimate from logarithms is corrected against the exact formula, so that a midband that equals
 * an end of the range (1000 Hz, say) counts whatever the rounding of the logarithms. */
static void
octave_range(unsigned b, double lo, double hi, int *x0, size_t *count)
{
  /* f_m(x) = f_r 10^(0.3 e(x)), e(x) = x / b (odd b) or (2x + 1) / (2b) (even b) */
  const double e_lo = log10(lo / CUDAFFT_OCTAVE_REFERENCE) / CUDAFFT_OCTAVE_G_LOG10;
  const double e_hi = log10(hi / CUDAFFT_OCTAVE_REFERENCE) / CUDAFFT_OCTAVE_G_LOG10;
  const double shift = b % 2 == 1 ? 0.0 : 0.5;
  int first = (int)ceil(e_lo * b - shift), last = (int)floor(e_hi * b - shift);
  while (cudafft_octave_midband_value(b, first - 1) >= lo)
    first--;
  while (cudafft_octave_midband_value(b, first) < lo)
    first++;
  while (cudafft_octave_midband_value(b, last + 1) <= hi)
    last++;
  while (last >= first && cudafft_octave_midband_value(b, last) > hi)
    last--;
  *x0 = first;
  *count = last >= first ? (size_t)(last - first + 1) : 0;
}

static const char *
scale_name(CudafftFrequencyScale scale)
{
  switch (scale) {
  case CUDAFFT_SCALE_LINEAR:
    return "linear";
  case CUDAFFT_SCALE_LOG:
    return "log";
  case CUDAFFT_SCALE_MEL:
    return "mel";
  case CUDAFFT_SCALE_OCTAVE:
    return "octave";
  default:
    return "?";
  }
}

/* The checks of a resolved layout, shared by every function that takes one. */
static CudafftStatus
check_layout(const CudafftBandLayout *layout)
{
  if (!layout)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "band layout is NULL");
  const double lo = layout->min_frequency, hi = layout->max_frequency;
  if ((unsigned)layout->scale >= CUDAFFT_SCALE_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown frequency scale %d",
                        (int)layout->scale);
  if (!isfinite(lo) || !isfinite(hi) || lo < 0.0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "band frequencies %g Hz to %g Hz: they must be finite and not negative", lo,
                        hi);
  if (!(lo < hi))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "the lowest band frequency (%g Hz) is not below the highest (%g Hz)", lo,
                        hi);
  if ((layout->scale == CUDAFFT_SCALE_LOG || layout->scale == CUDAFFT_SCALE_OCTAVE) && lo <= 0.0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "a %s frequency scale needs a lowest frequency above 0 Hz",
                        scale_name(layout->scale));
  if (layout->scale == CUDAFFT_SCALE_OCTAVE) {
    if (!valid_fraction(layout->bands_per_octave))
      return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "%u bands per octave: IEC 61260-1 bands come 1, 3, 6, 12 or 24 to the "
                          "octave",
                          layout->bands_per_octave);
    int x0;
    size_t count;
    octave_range(layout->bands_per_octave, lo, hi, &x0, &count);
    if (count == 0)
      return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "no 1/%u-octave band has its midband frequency between %g Hz and %g Hz",
                          layout->bands_per_octave, lo, hi);
  } else if (layout->bands == 0 || layout->bands > (size_t)1 << 30) {
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%zu bands: 1 to 2^30 are possible",
                        layout->bands);
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_band_layout_resolve(CudafftBandLayout *layout, double rate)
{
  if (!layout)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "band layout is NULL");
  if (!isfinite(rate) || rate <= 0.0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "sample rate %g is not positive", rate);
  const double nyquist = rate / 2.0;
  if (layout->min_frequency == 0.0 &&
      (layout->scale == CUDAFFT_SCALE_LOG || layout->scale == CUDAFFT_SCALE_OCTAVE))
    layout->min_frequency = CUDAFFT_BANDS_AUTO_MIN_FREQUENCY;
  if (layout->max_frequency == 0.0 || layout->max_frequency > nyquist)
    layout->max_frequency = nyquist;
  return check_layout(layout);
}

/* The bands of a checked layout, and in *x0 the IEC 61260-1 index of an OCTAVE layout's first
 * (0 for the other scales). */
static size_t
layout_bands(const CudafftBandLayout *layout, int *x0)
{
  *x0 = 0;
  if (layout->scale != CUDAFFT_SCALE_OCTAVE)
    return layout->bands;
  size_t count;
  octave_range(layout->bands_per_octave, layout->min_frequency, layout->max_frequency, x0, &count);
  return count;
}

size_t
cudafft_band_count(const CudafftBandLayout *layout)
{
  int x0;
  return check_layout(layout) == CUDAFFT_STATUS_OK ? layout_bands(layout, &x0) : 0;
}

double
cudafft_octave_midband(unsigned bands_per_octave, int x, double *lower, double *upper)
{
  const double midband = cudafft_octave_midband_value(bands_per_octave, x);
  const double factor = cudafft_octave_edge_factor(bands_per_octave);
  if (lower)
    *lower = midband / factor;
  if (upper)
    *upper = midband * factor;
  return midband;
}

/* Band i's edges and centre. */
static void
band_edges(const CudafftBandLayout *layout, int x0, size_t i, double *lower, double *centre,
           double *upper)
{
  if (layout->scale == CUDAFFT_SCALE_OCTAVE) {
    *centre = cudafft_octave_midband(layout->bands_per_octave, x0 + (int)i, lower, upper);
    return;
  }
  const CudafftFrequencyScale scale = layout->scale;
  const double s_lo = cudafft_scale_coordinate(scale, layout->min_frequency);
  const double s_hi = cudafft_scale_coordinate(scale, layout->max_frequency);
  double s, step;
  if (layout->bands == 1) {
    s = 0.5 * (s_lo + s_hi);
    step = s_hi - s_lo;
  } else {
    step = (s_hi - s_lo) / (double)(layout->bands - 1);
    s = s_lo + (double)i * step;
  }
  *centre = cudafft_scale_frequency(scale, s);
  *lower = cudafft_scale_frequency(scale, s - 0.5 * step);
  *upper = cudafft_scale_frequency(scale, s + 0.5 * step);
}

CudafftStatus
cudafft_band_edges(const CudafftBandLayout *layout, double *lower, double *centre, double *upper)
{
  const CudafftStatus status = check_layout(layout);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  int x0;
  const size_t count = layout_bands(layout, &x0);
  for (size_t i = 0; i < count; i++) {
    double lo, c, hi;
    band_edges(layout, x0, i, &lo, &c, &hi);
    if (lower)
      lower[i] = lo;
    if (centre)
      centre[i] = c;
    if (upper)
      upper[i] = hi;
  }
  return CUDAFFT_STATUS_OK;
}

/* One band's weights over bins 0 .. top of width d (cudafft/bands.h's two rules). */
static CudafftBandBins
weights_of(double lo, double hi, double d, unsigned top)
{
  CudafftBandBins out = {0, 0, 0.0f, 0.0f};
  const double w = hi - lo;
  if (w < d) {
    double u = 0.5 * (lo + hi) / d;
    u = u < 0.0 ? 0.0 : (u > (double)top ? (double)top : u);
    unsigned j = (unsigned)floor(u);
    if (j >= top)
      j = top - 1;
    const double t = u - (double)j;
    out.first = j;
    out.last = j + 1;
    out.first_weight = (float)(w / d * (1.0 - t));
    out.last_weight = (float)(w / d * t);
    return out;
  }
  /* bins k with (k + 1/2) d > lo and (k - 1/2) d < hi */
  const double a = floor(lo / d - 0.5) + 1.0, b = ceil(hi / d + 0.5) - 1.0;
  const double first = a < 0.0 ? 0.0 : a, last = b > (double)top ? (double)top : b;
  if (first > last)
    return out;
  out.first = (unsigned)first;
  out.last = (unsigned)last;
  const double f = out.first, l = out.last;
  const double lo_first = fmax(lo, (f - 0.5) * d), hi_first = fmin(hi, (f + 0.5) * d);
  const double lo_last = fmax(lo, (l - 0.5) * d), hi_last = fmin(hi, (l + 0.5) * d);
  out.first_weight = (float)fmax(0.0, (hi_first - lo_first) / d);
  out.last_weight = (float)fmax(0.0, (hi_last - lo_last) / d);
  if (out.first == out.last)
    out.last_weight = out.first_weight;
  return out;
}

CudafftStatus
cudafft_band_bins(const CudafftBandLayout *layout, size_t nfft, double rate, CudafftBandBins *bins)
{
  CudafftStatus status = check_layout(layout);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (!bins)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "band bins: output is NULL");
  if (nfft < 2 || nfft / 2 > 0xffffffffu)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "band bins: an FFT of %zu points", nfft);
  if (!isfinite(rate) || rate <= 0.0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "band bins: sample rate %g", rate);
  const double d = rate / (double)nfft;
  const unsigned top = (unsigned)(nfft / 2);
  int x0;
  const size_t count = layout_bands(layout, &x0);
  for (size_t i = 0; i < count; i++) {
    double lo, c, hi;
    band_edges(layout, x0, i, &lo, &c, &hi);
    bins[i] = weights_of(lo, hi, d, top);
  }
  return CUDAFFT_STATUS_OK;
}

double
cudafft_weighting_db(CudafftWeighting weighting, double frequency)
{
  return 10.0 * log10(cudafft_weighting_gain(weighting, frequency));
}

CudafftStatus
cudafft_weighting_gains(CudafftWeighting weighting, size_t nfft, double rate, float *gains)
{
  if (!gains)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "weighting gains: output is NULL");
  if ((unsigned)weighting >= CUDAFFT_WEIGHTING_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown weighting %d", (int)weighting);
  if (nfft < 2 || !isfinite(rate) || rate <= 0.0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "weighting gains: %zu points at %g Hz", nfft,
                        rate);
  const double d = rate / (double)nfft;
  for (size_t k = 0; k <= nfft / 2; k++)
    gains[k] = (float)cudafft_weighting_gain(weighting, (double)k * d);
  return CUDAFFT_STATUS_OK;
}

double
cudafft_mel_from_hz(double hz)
{
  return cudafft_mel_value(hz);
}

double
cudafft_hz_from_mel(double mel)
{
  return cudafft_hz_from_mel_value(mel);
}

void
cudafft_band_levels_from_bins(const CudafftBandBins *bands, size_t count, const float *gains,
                              const float *bin_db, float floor_db, float *band_db)
{
  for (size_t i = 0; i < count; i++) {
    const CudafftBandBins *b = &bands[i];
    double sum = 0.0;
    for (unsigned k = b->first; k <= b->last; k++) {
      const double a = k == b->first ? b->first_weight : k == b->last ? b->last_weight : 1.0;
      sum += a * (gains ? gains[k] : 1.0) * pow(10.0, bin_db[k] / 10.0);
    }
    if (isnan(sum)) {
      band_db[i] = NAN;
      continue;
    }
    const double level = sum > 0.0 ? 10.0 * log10(sum) : -INFINITY;
    band_db[i] = level < floor_db ? floor_db : (float)level;
  }
}
