/* matrix_values.h: the per-value formulas both matrix backends apply, written once so that the CPU
 * backend (which the tests check against the double-precision model) and the GPU kernels cannot
 * drift apart: a response tap as its partition spectrum takes it, the crossover's weight and
 * blend, and the product of two packed bin-0 values. Plain C, also compiled into CUDA device
 * code; one function per precision (float for F32 streams, double for F64). Internal to the
 * library. */
#ifndef CUDAFFT_MATRIX_VALUES_H
#define CUDAFFT_MATRIX_VALUES_H

#include "sample_values.h"

#include <stddef.h>

/* Tap h of a response scaled by 1 / 2L, the inverse transform's normalisation, which the
 * partition spectra carry so that the inverse transforms need no scaling of their own. */
static inline CUDAFFT_HD float
cudafft_matrix_tap_f32(double h, size_t L)
{
  return (float)h * (1.0f / (float)(2 * L));
}
static inline CUDAFFT_HD double
cudafft_matrix_tap_f64(double h, size_t L)
{
  return h * (1.0 / (double)(2 * L));
}

/* Output frame t (0..L-1) of a crossover block: (1 - r) old + r new, r = (t + 1) / (L + 1)
 * (cudafft/matrix.h). */
static inline CUDAFFT_HD float
cudafft_matrix_blend_f32(float old_value, float new_value, size_t t, size_t L)
{
  const float r = (float)(t + 1) / (float)(L + 1);
  return (1 - r) * old_value + r * new_value;
}
static inline CUDAFFT_HD double
cudafft_matrix_blend_f64(double old_value, double new_value, size_t t, size_t L)
{
  const double r = (double)(t + 1) / (double)(L + 1);
  return (1 - r) * old_value + r * new_value;
}

#endif
