/* stft_values.h: the per-value formulas both STFT backends apply, written once so that the CPU
 * reference and the GPU kernels cannot drift apart: integer sample scaling and the non-complex
 * representations of a bin. Plain C, also compiled into CUDA device code. Internal to kernels/. */
#ifndef CUDAFFT_STFT_VALUES_H
#define CUDAFFT_STFT_VALUES_H

#include "cudafft_stft.h"

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CUDAFFT_HOST_DEVICE __host__ __device__
#else
#define CUDAFFT_HOST_DEVICE
#endif

static inline CUDAFFT_HOST_DEVICE float
cudafft_s16_to_float(int16_t v)
{
  return (float)v * (1.0f / 32768.0f);
}

/* through double: a float cannot hold every int32 exactly before the scaling */
static inline CUDAFFT_HOST_DEVICE float
cudafft_s32_to_float(int32_t v)
{
  return (float)((double)v * (1.0 / 2147483648.0));
}

/* The float a bin of power |X|^2 holds in a non-complex representation. The dB floor is written
 * so that a NaN power stays NaN: a frame holding a NaN sample must not read as silence. */
static inline CUDAFFT_HOST_DEVICE float
cudafft_bin_value(CudafftRepresentation representation, float power)
{
  switch (representation) {
  case CUDAFFT_REPRESENTATION_MAGNITUDE:
    return sqrtf(power);
  case CUDAFFT_REPRESENTATION_POWER:
    return power;
  default:
    return 10.0f * log10f(power < CUDAFFT_DB_FLOOR_POWER ? CUDAFFT_DB_FLOOR_POWER : power);
  }
}

#endif
