/* spectrum_values.h: the per-value formulas both spectrum backends apply, written once so that the
 * CPU reference and the GPU kernels cannot drift apart: sample scaling, channel mixing and a
 * band's level. Plain C, also compiled into CUDA device code. Internal to kernels/. */
#ifndef CUDAFFT_SPECTRUM_VALUES_H
#define CUDAFFT_SPECTRUM_VALUES_H

#include "cudafft_spectrum.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CUDAFFT_SPECTRUM_HD __host__ __device__
#else
#define CUDAFFT_SPECTRUM_HD
#endif

/* Sample c of an interleaved frame, scaled as spectrum scales it: integers divided by
 * 2^(bits - 1) - 1 in float. Byte-wise reads: S24 frames (and so the frames after them) have no
 * alignment. */
static inline CUDAFFT_SPECTRUM_HD float
cudafft_spectrum_sample(CudafftSpectrumFormat format, const uint8_t *frame, unsigned c)
{
  switch (format) {
  case CUDAFFT_SPECTRUM_S16: {
    const uint8_t *p = frame + 2 * (size_t)c;
    const int16_t v = (int16_t)(uint16_t)(p[0] | (p[1] << 8));
    return (float)v / 32767.0f;
  }
  case CUDAFFT_SPECTRUM_S24: {
    const uint8_t *p = frame + 3 * (size_t)c;
    int32_t v = (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16));
    if (v & 0x00800000)
      v -= 0x01000000;
    return (float)v / 8388607.0f;
  }
  case CUDAFFT_SPECTRUM_S32: {
    const uint8_t *p = frame + 4 * (size_t)c;
    const int32_t v = (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                                ((uint32_t)p[3] << 24));
    /* spectrum divides by (float)(2^31 - 1), which rounds to 2^31 */
    return (float)v / 2147483647.0f;
  }
  case CUDAFFT_SPECTRUM_F32: {
    float v;
    memcpy(&v, frame + 4 * (size_t)c, sizeof v);
    return v;
  }
  default: {
    double v;
    memcpy(&v, frame + 8 * (size_t)c, sizeof v);
    return (float)v;
  }
  }
}

/* The analysed value of a frame for spectrum `s`: channel s, or with mixed (s == 0) the mean of
 * the channels, summed in channel order in float as spectrum sums them. */
static inline CUDAFFT_SPECTRUM_HD float
cudafft_spectrum_frame_value(CudafftSpectrumFormat format, const uint8_t *frame, unsigned channels,
                             int multi_channel, unsigned s)
{
  if (multi_channel)
    return cudafft_spectrum_sample(format, frame, s);
  float v = cudafft_spectrum_sample(format, frame, 0);
  for (unsigned c = 1; c < channels; c++)
    v += cudafft_spectrum_sample(format, frame, c);
  return v / (float)channels;
}

/* A band's level in dB from its power |X|^2: 10 log10(power) - norm_db (norm_db = 20 log10 nfft),
 * raised to threshold; NaN where power is not finite. */
static inline CUDAFFT_SPECTRUM_HD float
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
static inline CUDAFFT_SPECTRUM_HD float
cudafft_spectrum_phase(float re, float im)
{
  if (!isfinite(re * re + im * im))
    return NAN;
  return atan2f(im, re);
}

#endif
