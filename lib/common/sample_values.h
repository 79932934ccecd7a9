/* sample_values.h: reading and writing one interleaved sample in any CudafftSampleFormat, written
 * once for every engine, on the host and in CUDA device code alike, so that the CPU backends and
 * the GPU kernels cannot drift apart. Internal to the library.
 *
 * Integers become values by one of two rules, which differ in the last bit, so each engine names
 * the one its contract states:
 * - CUDAFFT_INT_SCALE_POW2: divided by 2^(bits - 1), exactly (S32 through double), as
 *   audioconvert does: the STFT.
 * - CUDAFFT_INT_SCALE_SPECTRUM: divided by 2^(bits - 1) - 1 in float, as GStreamer's spectrum
 *   does (for S32, (float)(2^31 - 1) rounds to 2^31).
 *
 * Where samples are read: host code copies bytes (callers' buffers have any alignment); device
 * code reads S16, S32, F32 and F64 with loads of their own width (device buffers are aligned to
 * their sample size) and S24 byte by byte. */
#ifndef CUDAFFT_SAMPLE_VALUES_H
#define CUDAFFT_SAMPLE_VALUES_H

#include <cudafft/common.h>

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CUDAFFT_HD __host__ __device__
#else
#define CUDAFFT_HD
#endif

typedef enum {
  CUDAFFT_INT_SCALE_POW2 = 0,
  CUDAFFT_INT_SCALE_SPECTRUM,
} CudafftIntScale;

/* Bytes of one sample; 0 for an unknown format. */
static inline CUDAFFT_HD size_t
cudafft_sample_size(CudafftSampleFormat format)
{
  switch (format) {
  case CUDAFFT_SAMPLE_S16:
    return 2;
  case CUDAFFT_SAMPLE_S24:
    return 3;
  case CUDAFFT_SAMPLE_S32:
  case CUDAFFT_SAMPLE_F32:
    return 4;
  case CUDAFFT_SAMPLE_F64:
    return 8;
  default:
    return 0;
  }
}

/* Loads and stores of one value at p: aligned in device code, any alignment on the host. */
#ifdef __CUDA_ARCH__
#define CUDAFFT_ACCESS_(T, name)                                                                   \
  static inline __device__ T cudafft_load_##name(const uint8_t *p)                                 \
  {                                                                                                \
    return *(const T *)p;                                                                          \
  }                                                                                                \
  static inline __device__ void cudafft_store_##name(uint8_t *p, T v)                              \
  {                                                                                                \
    *(T *)p = v;                                                                                   \
  }
#else
#define CUDAFFT_ACCESS_(T, name)                                                                   \
  static inline CUDAFFT_HD T cudafft_load_##name(const uint8_t *p)                                 \
  {                                                                                                \
    T v;                                                                                           \
    memcpy(&v, p, sizeof v);                                                                       \
    return v;                                                                                      \
  }                                                                                                \
  static inline CUDAFFT_HD void cudafft_store_##name(uint8_t *p, T v)                              \
  {                                                                                                \
    memcpy(p, &v, sizeof v);                                                                       \
  }
#endif
CUDAFFT_ACCESS_(int16_t, s16)
CUDAFFT_ACCESS_(int32_t, s32)
CUDAFFT_ACCESS_(float, f32)
CUDAFFT_ACCESS_(double, f64)
#undef CUDAFFT_ACCESS_

/* Sample i of an interleaved buffer in `format`, as a float by the integer rule `scale`. */
static inline CUDAFFT_HD float
cudafft_sample_float(CudafftSampleFormat format, const void *data, size_t i, CudafftIntScale scale)
{
  const uint8_t *p = (const uint8_t *)data + i * cudafft_sample_size(format);
  switch (format) {
  case CUDAFFT_SAMPLE_S16: {
    const int16_t v = cudafft_load_s16(p);
    return scale == CUDAFFT_INT_SCALE_POW2 ? (float)v * (1.0f / 32768.0f) : (float)v / 32767.0f;
  }
  case CUDAFFT_SAMPLE_S24: {
    int32_t v = (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16));
    if (v & 0x00800000)
      v -= 0x01000000;
    return scale == CUDAFFT_INT_SCALE_POW2 ? (float)v * (1.0f / 8388608.0f) : (float)v / 8388607.0f;
  }
  case CUDAFFT_SAMPLE_S32: {
    const int32_t v = cudafft_load_s32(p);
    /* POW2 through double: a float cannot hold every int32 before the scaling */
    return scale == CUDAFFT_INT_SCALE_POW2 ? (float)((double)v * (1.0 / 2147483648.0))
                                           : (float)v / 2147483647.0f;
  }
  case CUDAFFT_SAMPLE_F32:
    return cudafft_load_f32(p);
  default:
    return (float)cudafft_load_f64(p);
  }
}

/* Sample i of an F32 or F64 buffer as a double (the float formats' values exactly). */
static inline CUDAFFT_HD double
cudafft_sample_double(CudafftSampleFormat format, const void *data, size_t i)
{
  const uint8_t *p = (const uint8_t *)data + i * cudafft_sample_size(format);
  if (format == CUDAFFT_SAMPLE_F32)
    return cudafft_load_f32(p);
  return cudafft_load_f64(p);
}

/* Stores value as sample i of an F32 (rounded to float) or F64 buffer. */
static inline CUDAFFT_HD void
cudafft_sample_store(CudafftSampleFormat format, void *data, size_t i, double value)
{
  uint8_t *p = (uint8_t *)data + i * cudafft_sample_size(format);
  if (format == CUDAFFT_SAMPLE_F32)
    cudafft_store_f32(p, (float)value);
  else
    cudafft_store_f64(p, value);
}

#endif
