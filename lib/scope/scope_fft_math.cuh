/* scope_fft_math.cuh: the spectrum scope's mixed-radix FFT, for every supported size without a
 * fused kernel (scope_kernels.cu), written as __host__ __device__ steps so that
 * tests/test_scope_kernels.cu runs what a kernel's thread does on the host: a frame's windowed
 * samples from the history ring into the transform's buffer, the passes of mixed_fft.cuh, and the
 * bins' powers (scope_values.h). Internal to the library.
 *
 * An even size n runs the complex FFT of n / 2 points z[m] = (x[2m] w[2m], x[2m + 1] w[2m + 1])
 * and the real split (mixed_real_forward_pair); an odd size the complex FFT of n points
 * (x[i] w[i], 0), whose bins 0..(n - 1) / 2 it keeps. Either way the row holds n / 2 + 1 powers
 * (rounded down), as the CPU backend's FFTW real transform gives them. */
#ifndef CUDAFFT_SCOPE_FFT_MATH_CUH
#define CUDAFFT_SCOPE_FFT_MATH_CUH

#include "mixed_fft.cuh"
#include "scope_values.h"

#include <cstddef>

namespace cudafft {

/* Complex points of the transform of real size n. */
__host__ __device__ constexpr int
scope_mixed_points(size_t n)
{
  return n % 2 ? (int)n : (int)(n / 2);
}

/* Thread t of `threads`: the frame of `points` complex points from the ring (mask + 1 samples, the
 * frame's first at start: it may wrap around the ring's end), times the window w, into a. */
template <bool Odd>
__host__ __device__ inline void
scope_mixed_load(const float *ring, size_t start, size_t mask, const float *w, int points,
                 float2 *a, int t, int threads)
{
  for (int i = t; i < points; i += threads) {
    if (Odd) {
      a[pad(i)] = make_float2(ring[(start + i) & mask] * w[i], 0.0f);
    } else {
      const size_t s = 2 * (size_t)i;
      a[pad(i)] =
          make_float2(ring[(start + s) & mask] * w[s], ring[(start + s + 1) & mask] * w[s + 1]);
    }
  }
}

/* Thread t of `threads`: the powers of bins 0..n/2 (n the real size) into row, from z, the
 * forward transform of the loaded points (plan: its plan; twiddles: its table). Reads z only. */
template <bool Odd>
__host__ __device__ inline void
scope_mixed_powers(const MixedPlan &plan, const float2 *z, const float2 *twiddles, float norm,
                   float *row, int t, int threads)
{
  const int n = plan.n;
  if (Odd) {
    for (int k = t; k <= n / 2; k += threads) {
      const float2 v = z[pad(k)];
      row[k] = cudafft_scope_bin_power(v.x, v.y, norm);
    }
    return;
  }
  const float2 *w = mixed_real_twiddles(plan, twiddles);
  for (int k = t; 2 * k <= n; k += threads) {
    float2 xk, xnk;
    mixed_real_forward_pair(z, n, k, w, &xk, &xnk);
    row[k] = cudafft_scope_bin_power(xk.x, xk.y, norm);
    if (2 * k != n)
      row[n - k] = cudafft_scope_bin_power(xnk.x, xnk.y, norm);
  }
}

/* One frame's powers by the `threads` threads of its group (this one t): load, barrier, the
 * plan's passes (each followed by barrier()), then the powers into row where `active` (a spare
 * group of a partly empty block joins the barriers and writes nothing). a and b: the group's two
 * buffers of mixed_buffer_points(plan.n) points. */
#pragma nv_exec_check_disable
template <bool Odd, typename Barrier>
__host__ __device__ inline void
scope_mixed_frame(const MixedPlan &plan, const float *ring, size_t start, size_t mask,
                  const float *window, float norm, const float2 *twiddles, float2 *a, float2 *b,
                  int t, int threads, bool active, float *row, Barrier barrier)
{
  scope_mixed_load<Odd>(ring, start, mask, window, plan.n, a, t, threads);
  barrier();
  const float2 *z = mixed_fft_passes(plan, a, b, twiddles, t, threads, false, barrier);
  if (active)
    scope_mixed_powers<Odd>(plan, z, twiddles, norm, row, t, threads);
}

} // namespace cudafft

#endif
