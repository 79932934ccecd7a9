/* scope_values.h: the per-value and per-pixel formulas of the spectrum scope (cudafft/scope.h),
 * written once as static inline functions that the CPU backend and the CUDA kernels both compile,
 * so that the CPU tests check the arithmetic the GPU runs: where each FFT's window starts, a bin's
 * power, a lane's band power, smoothing, levels, peaks, colours and pixels. Internal to the
 * library.
 *
 * Float arithmetic is written out in the order both backends evaluate it. The GPU contracts some
 * multiply-adds into fused ones and its logarithms differ from the C library's in the last bit;
 * every quantity that reaches a pixel is a continuous function of such values (the bars and
 * markers are anti-aliased, the colormaps interpolated, the peaks a maximum), so those bits move a
 * byte by at most one rounding step. */
#ifndef CUDAFFT_SCOPE_VALUES_H
#define CUDAFFT_SCOPE_VALUES_H

#include "band_values.h"

#include <cudafft/scope.h>

#include <math.h>
#include <stdint.h>

/* The most FFTs per channel in one frame (cudafft/scope.h). */
#define CUDAFFT_SCOPE_MAX_FFTS 64u

/* FFTs per channel for a frame that brings `frames` samples per channel. */
static inline CUDAFFT_HD unsigned
cudafft_scope_fft_count(size_t frames, size_t fft_size)
{
  const size_t half = fft_size / 2;
  if (frames <= half)
    return 1;
  const size_t k = (frames + half - 1) / half;
  return k < CUDAFFT_SCOPE_MAX_FFTS ? (unsigned)k : CUDAFFT_SCOPE_MAX_FFTS;
}

/* Where FFT j of `ffts` starts in a history ring of mask + 1 samples whose newest sample is at
 * newest - 1: it ends floor(j frames / ffts) samples before the newest. */
static inline CUDAFFT_HD size_t
cudafft_scope_fft_start(size_t newest, size_t frames, unsigned ffts, unsigned j, size_t fft_size,
                        size_t mask)
{
  const size_t back = (size_t)j * frames / ffts;
  return (newest - back - fft_size) & mask;
}

/* A bin's power |X|^2 norm; 0 where that is not finite. */
static inline CUDAFFT_HD float
cudafft_scope_bin_power(float re, float im, float norm)
{
  const float p = (re * re + im * im) * norm;
  return isfinite(p) ? p : 0.0f;
}

/* A lane's power in one band: the band's power (band_values.h) of each of the lane's `count`
 * spectra (rows of `bins` powers from `power` on), summed in order, times inv_count = 1 / count. */
static inline CUDAFFT_HD float
cudafft_scope_lane_power(const CudafftBandBins *band, const float *gains, const float *power,
                         size_t bins, unsigned count, float inv_count)
{
  float sum = 0.0f;
  for (unsigned s = 0; s < count; ++s)
    sum += cudafft_band_power(band, power + (size_t)s * bins, gains);
  return sum * inv_count;
}

/* The exponential average S + alpha (P - S); P itself for alpha >= 1 (no smoothing). */
static inline CUDAFFT_HD float
cudafft_scope_smooth(float smoothed, float power, float alpha)
{
  return alpha >= 1.0f ? power : smoothed + alpha * (power - smoothed);
}

/* 10 log10(S) dB, at least CUDAFFT_SCOPE_FLOOR_DB. */
static inline CUDAFFT_HD float
cudafft_scope_level(float smoothed)
{
  return smoothed > 1e-30f ? 10.0f * log10f(smoothed) : CUDAFFT_SCOPE_FLOOR_DB;
}

/* One frame of a band's peak: the level enters the hold window (hold levels, `stride` apart,
 * slot the oldest one's place), the level leaving it feeds the decaying maximum *decayed, and the
 * peak is the highest of the window and *decayed. */
static inline CUDAFFT_HD float
cudafft_scope_peak(float level, float *window, size_t stride, unsigned hold, unsigned slot,
                   float *decayed, float decay)
{
  const float leaving = window[(size_t)slot * stride];
  float d = fmaxf(*decayed, leaving) - decay;
  d = fmaxf(d, CUDAFFT_SCOPE_FLOOR_DB);
  *decayed = d;
  window[(size_t)slot * stride] = level;
  float peak = d;
  for (unsigned i = 0; i < hold; ++i)
    peak = fmaxf(peak, window[(size_t)i * stride]);
  return peak;
}

/* A level's place in the colormap, clamped to [0, 1]. */
static inline CUDAFFT_HD float
cudafft_scope_fraction(float level, float db_min, float db_max)
{
  const float t = (level - db_min) / (db_max - db_min);
  return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
}

/* The colour at t in [0, 1]: linear between the 256 entries of table (RGB, 768 floats), or grey
 * (table NULL). */
static inline CUDAFFT_HD void
cudafft_scope_colour(const float *table, float t, float *rgb)
{
  if (!table) {
    rgb[0] = rgb[1] = rgb[2] = t;
    return;
  }
  const float u = t * 255.0f;
  int i = (int)u;
  i = i > 254 ? 254 : i;
  const float f = u - (float)i;
  for (int c = 0; c < 3; ++c) {
    const float a = table[3 * i + c], b = table[3 * i + 3 + c];
    rgb[c] = a + (b - a) * f;
  }
}

/* A bars pixel in row `row` from the bottom of its lane: the bar (its top bar_top pixels up)
 * covers the row by the fraction min(max(bar_top - row, 0), 1) of row_rgb over black, the marker
 * (white, from peak_top - marker to peak_top) by the fraction of the row it overlaps. */
static inline CUDAFFT_HD void
cudafft_scope_bar_rgb(float bar_top, float peak_top, float marker, unsigned row,
                      const float *row_rgb, float *rgb)
{
  const float r = (float)row;
  float cover = bar_top - r;
  cover = cover < 0.0f ? 0.0f : (cover > 1.0f ? 1.0f : cover);
  float mark = fminf(r + 1.0f, peak_top) - fmaxf(r, peak_top - marker);
  mark = mark < 0.0f ? 0.0f : (mark > 1.0f ? 1.0f : mark);
  for (int c = 0; c < 3; ++c) {
    const float v = row_rgb[c] * cover;
    rgb[c] = v + (1.0f - v) * mark;
  }
}

/* A colour component as a byte: (uint8)(c 255 + 0.5), c clamped to [0, 1]. */
static inline CUDAFFT_HD uint8_t
cudafft_scope_byte(float c)
{
  c = c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
  return (uint8_t)(c * 255.0f + 0.5f);
}

/* Where R, G and B go in a pixel of the layout, and the X byte (-1: none). */
typedef struct {
  int r, g, b, x;
} CudafftScopeOffsets;

static inline CUDAFFT_HD CudafftScopeOffsets
cudafft_scope_offsets(CudafftPixelFormat pixels)
{
  switch (pixels) {
  case CUDAFFT_PIXELS_BGRX: {
    const CudafftScopeOffsets o = {2, 1, 0, 3};
    return o;
  }
  case CUDAFFT_PIXELS_XRGB: {
    const CudafftScopeOffsets o = {1, 2, 3, 0};
    return o;
  }
  case CUDAFFT_PIXELS_XBGR: {
    const CudafftScopeOffsets o = {3, 2, 1, 0};
    return o;
  }
  case CUDAFFT_PIXELS_RGB: {
    const CudafftScopeOffsets o = {0, 1, 2, -1};
    return o;
  }
  case CUDAFFT_PIXELS_BGR: {
    const CudafftScopeOffsets o = {2, 1, 0, -1};
    return o;
  }
  default: {
    const CudafftScopeOffsets o = {0, 1, 2, 3};
    return o;
  }
  }
}

/* Stores a colour (components in [0, 1]) as one pixel at p. */
static inline CUDAFFT_HD void
cudafft_scope_store(uint8_t *p, CudafftScopeOffsets o, const float *rgb)
{
  p[o.r] = cudafft_scope_byte(rgb[0]);
  p[o.g] = cudafft_scope_byte(rgb[1]);
  p[o.b] = cudafft_scope_byte(rgb[2]);
  if (o.x >= 0)
    p[o.x] = 255;
}

#endif
