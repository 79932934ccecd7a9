/* spectrum_values.h: the per-value formulas both spectrum backends apply, written once so that the
 * CPU reference and the GPU kernels cannot drift apart: channel mixing and a band's level (samples
 * are read by sample_values.h with spectrum's integer scaling). Plain C, also compiled into CUDA
 * device code. Internal to the library. */
#ifndef CUDAFFT_SPECTRUM_VALUES_H
#define CUDAFFT_SPECTRUM_VALUES_H

#include "sample_values.h"

#include <cudafft/spectrum.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The analysed value of a frame for spectrum `s`: channel s, or with mixed (s == 0) the mean of
 * the channels, summed in channel order in float as spectrum sums them. */
static inline CUDAFFT_HD float
cudafft_spectrum_frame_value(CudafftSampleFormat format, const uint8_t *frame, unsigned channels,
                             int multi_channel, unsigned s)
{
  if (multi_channel)
    return cudafft_sample_float(format, frame, s, CUDAFFT_INT_SCALE_SPECTRUM);
  float v = cudafft_sample_float(format, frame, 0, CUDAFFT_INT_SCALE_SPECTRUM);
  for (unsigned c = 1; c < channels; c++)
    v += cudafft_sample_float(format, frame, c, CUDAFFT_INT_SCALE_SPECTRUM);
  return v / (float)channels;
}

/* A band's level in dB from its power |X|^2: 10 log10(power) - norm_db (norm_db = 20 log10 nfft),
 * raised to threshold; NaN where power is not finite. */
static inline CUDAFFT_HD float
cudafft_spectrum_level(float power, float norm_db, int threshold)
{
  if (!isfinite(power))
    return NAN;
#ifdef __CUDA_ARCH__
  /* The hardware's base-2 logarithm (absolute error below 2^-22, so 1e-6 dB here) instead of
   * log10f's exact sequence, whose two dozen instructions per band slowed the fused kernel. */
  const float level = 10.0f * __log10f(power) - norm_db;
#else
  const float level = 10.0f * log10f(power) - norm_db;
#endif
  return level < (float)threshold ? (float)threshold : level;
}

/* A band's phase; NaN where the power is not finite, like the level. */
static inline CUDAFFT_HD float
cudafft_spectrum_phase(float re, float im)
{
  if (!isfinite(re * re + im * im))
    return NAN;
  return atan2f(im, re);
}

#endif
