/* band_values.h: the formulas of cudafft/bands.h (frequency scales, IEC 61260-1 octave bands,
 * IEC 61672-1 weightings, a band's power from bin powers), written once as static inline functions
 * that host code and CUDA device code both compile, so that the CPU backends, the GPU kernels and
 * the public functions (bands.c) cannot drift apart. Internal to the library. */
#ifndef CUDAFFT_BAND_VALUES_H
#define CUDAFFT_BAND_VALUES_H

#include "sample_values.h" /* CUDAFFT_HD */

#include <cudafft/bands.h>

#include <math.h>

/* IEC 61260-1: G = 10^(3/10), f_r = 1000 Hz. */
#define CUDAFFT_OCTAVE_G_LOG10 0.3
#define CUDAFFT_OCTAVE_REFERENCE 1000.0

/* The exponent of G in band x's midband frequency (odd b: x / b; even b: (2x + 1) / (2b)). */
static inline CUDAFFT_HD double
cudafft_octave_exponent(unsigned b, int x)
{
  return (b % 2 == 1) ? (double)x / (double)b : (2.0 * x + 1.0) / (2.0 * b);
}

/* Band x's exact midband frequency, f_r G^exponent. */
static inline CUDAFFT_HD double
cudafft_octave_midband_value(unsigned b, int x)
{
  return CUDAFFT_OCTAVE_REFERENCE *
         pow(10.0, CUDAFFT_OCTAVE_G_LOG10 * cudafft_octave_exponent(b, x));
}

/* The band edge factor G^(1 / (2b)). */
static inline CUDAFFT_HD double
cudafft_octave_edge_factor(unsigned b)
{
  return pow(10.0, CUDAFFT_OCTAVE_G_LOG10 / (2.0 * b));
}

static inline CUDAFFT_HD double
cudafft_mel_value(double hz)
{
  return 2595.0 * log10(1.0 + hz / 700.0);
}

static inline CUDAFFT_HD double
cudafft_hz_from_mel_value(double mel)
{
  return 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
}

/* A LINEAR, LOG or MEL scale's coordinate of f, and back. */
static inline CUDAFFT_HD double
cudafft_scale_coordinate(CudafftFrequencyScale scale, double hz)
{
  switch (scale) {
  case CUDAFFT_SCALE_LOG:
    return log(hz);
  case CUDAFFT_SCALE_MEL:
    return cudafft_mel_value(hz);
  default:
    return hz;
  }
}

static inline CUDAFFT_HD double
cudafft_scale_frequency(CudafftFrequencyScale scale, double s)
{
  switch (scale) {
  case CUDAFFT_SCALE_LOG:
    return exp(s);
  case CUDAFFT_SCALE_MEL:
    return cudafft_hz_from_mel_value(s);
  default:
    return s;
  }
}

/* IEC 61672-1 Annex E's pole frequencies, squared (f1 holds f1^2, ...): equations E.1 - E.6. */
typedef struct {
  double f1, f2, f3, f4;
} CudafftWeightingPoles;

static inline CUDAFFT_HD CudafftWeightingPoles
cudafft_weighting_poles(void)
{
  const double fr2 = 1000.0 * 1000.0;
  const double fl2 = pow(10.0, 3.0), fh2 = pow(10.0, 7.8); /* (10^1.5)^2, (10^3.9)^2 */
  const double d = sqrt(0.5);
  const double b = (fr2 + fl2 * fh2 / fr2 - d * (fl2 + fh2)) / (1.0 - d);
  const double c = fl2 * fh2;
  const double root = sqrt(b * b - 4.0 * c);
  const double fa = pow(10.0, 2.45);
  const double f2 = fa * (3.0 - sqrt(5.0)) / 2.0, f3 = fa * (3.0 + sqrt(5.0)) / 2.0;
  const CudafftWeightingPoles p = {(-b - root) / 2.0, f2 * f2, f3 * f3, (-b + root) / 2.0};
  return p;
}

/* The unnormalised responses (without C1000 / A1000) as power ratios, at ff = f^2. */
static inline CUDAFFT_HD double
cudafft_weighting_c_ratio(CudafftWeightingPoles p, double ff)
{
  const double r = p.f4 * ff / ((ff + p.f1) * (ff + p.f4));
  return r * r;
}

static inline CUDAFFT_HD double
cudafft_weighting_a_ratio(CudafftWeightingPoles p, double ff)
{
  const double r = p.f4 * ff * ff / ((ff + p.f1) * sqrt(ff + p.f2) * sqrt(ff + p.f3) * (ff + p.f4));
  return r * r;
}

/* The weighting's gain as a power ratio at f Hz: 10^(W(f) / 10), exactly 1 at 1 kHz. */
static inline CUDAFFT_HD double
cudafft_weighting_gain(CudafftWeighting weighting, double hz)
{
  if (weighting != CUDAFFT_WEIGHTING_A && weighting != CUDAFFT_WEIGHTING_C)
    return 1.0;
  const CudafftWeightingPoles p = cudafft_weighting_poles();
  const double ff = hz * hz, kk = 1000.0 * 1000.0;
  if (weighting == CUDAFFT_WEIGHTING_A)
    return cudafft_weighting_a_ratio(p, ff) / cudafft_weighting_a_ratio(p, kk);
  return cudafft_weighting_c_ratio(p, ff) / cudafft_weighting_c_ratio(p, kk);
}

/* A band's power: sum_k a_k g_k P_k over its bins (cudafft/bands.h); gains may be NULL (all 1).
 * Summed in bin order, in float. */
static inline CUDAFFT_HD float
cudafft_band_power(const CudafftBandBins *band, const float *power, const float *gains)
{
  const unsigned first = band->first, last = band->last;
  if (first == last)
    return band->first_weight * (gains ? gains[first] : 1.0f) * power[first];
  float sum = band->first_weight * (gains ? gains[first] : 1.0f) * power[first];
  for (unsigned k = first + 1; k < last; ++k)
    sum += (gains ? gains[k] : 1.0f) * power[k];
  return sum + band->last_weight * (gains ? gains[last] : 1.0f) * power[last];
}

#endif
