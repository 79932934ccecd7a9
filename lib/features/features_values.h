/* features_values.h: the per-value formulas of cudafft/features.h that both backends apply,
 * written once so that the CPU backend (and the tests, which compile this header) check the GPU
 * kernels' arithmetic: the padding's sample map, the dither generator, the spectrum value, the
 * log flavours, the energy, the range clamp, the DCT and lifter, the deltas and the F16 rounding.
 * Plain C, also compiled into CUDA device code. Internal to the library.
 *
 * NaN rule: every clamp is written `x < lo ? lo : x`, never fmaxf, so that a NaN stays NaN (a
 * frame holding a NaN sample must not read as silence). */
#ifndef CUDAFFT_FEATURES_VALUES_H
#define CUDAFFT_FEATURES_VALUES_H

#include "sample_values.h"

#include <cudafft/features.h>

#include <math.h>
#include <stdint.h>

/* The sample index position p (of an utterance of n > 0 samples) reads under `pad`, or -1 for a
 * zero (CONSTANT padding, or END's zeros past the end: zero_end). Repeated reflection for
 * positions further out than the signal is long (numpy's rule). */
static inline CUDAFFT_HD int64_t
cudafft_features_pad_index(int64_t p, int64_t n, CudafftFeaturesPad pad, int zero_end)
{
  if (p >= 0 && p < n)
    return p;
  if (zero_end && p >= n)
    return -1;
  if (pad == CUDAFFT_FEATURES_PAD_CONSTANT)
    return -1;
  if (pad == CUDAFFT_FEATURES_PAD_REFLECT) {
    if (n == 1)
      return 0;
    const int64_t period = 2 * (n - 1);
    int64_t m = p % period;
    if (m < 0)
      m += period;
    return m < n ? m : period - m;
  }
  /* SYMMETRIC: x[-1] = x[0], x[n] = x[n - 1]: a period of 2 n */
  const int64_t period = 2 * n;
  int64_t m = p % period;
  if (m < 0)
    m += period;
  return m < n ? m : period - 1 - m;
}

/* SplitMix64's finaliser (Steele, Lea and Flood 2014). */
static inline CUDAFFT_HD uint64_t
cudafft_features_mix(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The dither's standard normal for sample i of frame f of channel c (cudafft/features.h,
 * Dither). */
static inline CUDAFFT_HD float
cudafft_features_gauss(uint64_t seed, unsigned channel, uint64_t frame, uint64_t i)
{
  const uint64_t h = cudafft_features_mix(seed ^ ((uint64_t)channel << 48) ^ (frame << 16) ^ i);
  const float u1 = (float)((h >> 40) + 1) * (1.0f / 16777216.0f);
  const float u2 = (float)((h >> 16) & 0xffffffu) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cosf(6.283185307179586f * u2);
}

/* v[k] from the bin (re, im): (s |X|^2)^(p / 2), s = scale (1 or 1 / n). */
static inline CUDAFFT_HD float
cudafft_features_bin_value(float re, float im, float scale, unsigned power)
{
  const float p = (re * re + im * im) * scale;
  return power == 1 ? sqrtf(p) : p;
}

/* What the log of step 6 needs: the flavour, its floor e, and (DB) 10 log10(max(e, ref)). */
typedef struct {
  CudafftFeaturesLog log;
  float floor;
  float db_offset;
} CudafftFeaturesLogSpec;

/* l = the log flavour of mel value m. */
static inline CUDAFFT_HD float
cudafft_features_log(const CudafftFeaturesLogSpec *s, float m)
{
  switch (s->log) {
  case CUDAFFT_FEATURES_LOG10:
    return log10f(m < s->floor ? s->floor : m);
  case CUDAFFT_FEATURES_LN_ADD:
    return logf(m + s->floor);
  case CUDAFFT_FEATURES_LN_GUARD:
    return logf(m < s->floor ? s->floor : m);
  default:
    return 10.0f * log10f(m < s->floor ? s->floor : m) - s->db_offset;
  }
}

/* e_log of energy e (step 7): the natural log with the flavour's guard, then the floor
 * (log_energy_floor: ln(energy_floor), or -INFINITY for none). */
static inline CUDAFFT_HD float
cudafft_features_energy_log(const CudafftFeaturesLogSpec *s, float e, float log_energy_floor)
{
  const float v =
      s->log == CUDAFFT_FEATURES_LN_ADD ? logf(e + s->floor) : logf(e < s->floor ? s->floor : e);
  return v < log_energy_floor ? log_energy_floor : v;
}

/* The range clamp and the affine (step 6) of one log-mel value, lo = the unit's maximum - range
 * (-INFINITY for none). */
static inline CUDAFFT_HD float
cudafft_features_normalise(float l, float lo, float shift, float scale)
{
  l = l < lo ? lo : l;
  return (l + shift) * scale;
}

/* The largest finite value of a running maximum and v. */
static inline CUDAFFT_HD float
cudafft_features_finite_max(float max, float v)
{
  return isfinite(v) && v > max ? v : max;
}

/* c[q] of step 8 from the log-mel values l (m of them, stride l_stride apart): the DCT row q
 * (dct + q m) times lifter[q]. */
static inline CUDAFFT_HD float
cudafft_features_cepstrum(const float *dct_row, const float *l, size_t l_stride, size_t m,
                          float lifter)
{
  float sum = 0.0f;
  for (size_t j = 0; j < m; j++)
    sum += dct_row[j] * l[j * l_stride];
  return sum * lifter;
}

/* A delta of step 10 at frame t of a unit of `frames` frames (t and frames counted from the
 * unit's first frame; frames may be INT64_MAX while the unit's end is not known), from its values
 * v(f) at v + ((f - base) mod ring) stride: v holds the frames the delta reads, frame `base` of
 * the unit first (ring: the slots of a ring buffer, or INT64_MAX for a plain array).
 * REGRESSION with reach r and norm = 1 / (2 sum n^2), edges repeating the edge frame. */
static inline CUDAFFT_HD float
cudafft_features_regression(const float *v, size_t stride, int64_t base, int64_t ring, int64_t t,
                            int64_t frames, int r, float norm)
{
  float sum = 0.0f;
  for (int n = 1; n <= r; n++) {
    int64_t a = t + n, b = t - n;
    a = a > frames - 1 ? frames - 1 : a;
    b = b < 0 ? 0 : b;
    sum += (float)n *
           (v[((a - base) % ring) * (int64_t)stride] - v[((b - base) % ring) * (int64_t)stride]);
  }
  return sum * norm;
}

/* SAVGOL, as above: coefficients `coefficients` (width rows of width, row p the fit's derivative
 * at position p of a window of width = 2 r + 1 frames), the window starting at the unit's first
 * frame, at t - r, or at its last width frames; zero for a unit of fewer than width frames. */
static inline CUDAFFT_HD float
cudafft_features_savgol(const float *v, size_t stride, int64_t base, int64_t ring, int64_t t,
                        int64_t frames, int r, const float *coefficients)
{
  const int64_t width = 2 * r + 1;
  if (frames < width)
    return 0.0f;
  int64_t first = t - r;
  first = first < 0 ? 0 : first;
  first = first > frames - width ? frames - width : first;
  const float *row = coefficients + (t - first) * width;
  float sum = 0.0f;
  for (int64_t j = 0; j < width; j++)
    sum += row[j] * v[((first + j - base) % ring) * (int64_t)stride];
  return sum;
}

/* IEEE binary16 of f, rounded to nearest even; beyond its range +-Inf; NaN stays a (quiet) NaN.
 * Bit-exact on host and device. */
static inline CUDAFFT_HD uint16_t
cudafft_features_half(float f)
{
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* Inf or NaN */
    return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) /* rounds to 65536 or more */
    return (uint16_t)(sign | 0x7c00u);
  if (abs < 0x38800000u) { /* below 2^-14: subnormal or zero */
    if (abs < 0x33000000u) /* below half the smallest subnormal: zero */
      return (uint16_t)sign;
    const uint32_t exponent = abs >> 23, mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent; /* 14 + 23 - (exponent - 127) - 10 - 1 + 1 */
    uint32_t h = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (h & 1u)))
      h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((abs - 0x38000000u) >> 13); /* rebias 127 -> 15 */
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    h++;
  return (uint16_t)(sign | h);
}

#endif
