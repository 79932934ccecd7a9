/* stft_values.h: the per-value formulas both STFT backends apply, written once so that the CPU
 * reference and the GPU kernels cannot drift apart: the non-complex representations of a bin
 * (samples are read by sample_values.h with the power-of-two integer scaling). Plain C, also
 * compiled into CUDA device code. Internal to the library. */
#ifndef CUDAFFT_STFT_VALUES_H
#define CUDAFFT_STFT_VALUES_H

#include "sample_values.h"

#include <cudafft/stft.h>

#include <math.h>
#include <stdint.h>

/* The float a bin of power |X|^2 holds in a non-complex representation. The dB floor is written
 * so that a NaN power stays NaN: a frame holding a NaN sample must not read as silence. */
static inline CUDAFFT_HD float
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
