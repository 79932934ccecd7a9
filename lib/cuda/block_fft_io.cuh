/* block_fft_io.cuh: real-signal sources for the block FFT's first pass, shared by the fused kernels
 * that window frames of a real signal on load (STFT analysis, spectrum). Internal to the library.
 */
#ifndef CUDAFFT_BLOCK_FFT_IO_CUH
#define CUDAFFT_BLOCK_FFT_IO_CUH

#include "block_fft.cuh"

#include <cstdint>

namespace cudafft {

/* The real frame x times the window w, read as complex points z[m] = (x[2m] w[2m],
 * x[2m+1] w[2m+1]). Frames start at any sample, so x is only known to be 4-byte aligned; where it
 * happens to be 16-byte aligned (and butterflies come in adjacent pairs) the points are read 16
 * bytes at a time, as GlobalIn reads them: scalar loads issue four times the instructions for the
 * same bytes, which held the spectrum's fused kernel at two thirds of the copy rate. The branch is
 * uniform over a transform and both ways compute the same products. */
struct WindowedRealIn {
  const float *x;
  const float *w; /* 16-byte aligned */
};

template <int P, int B, int Stride>
__device__ __forceinline__ void
read_points(float2 *v, WindowedRealIn from, int j0)
{
  if constexpr (B % 2 == 0) {
    if ((reinterpret_cast<uintptr_t>(from.x) & 15) == 0) {
      /* points m, m + 1 (m = j0 + b + r Stride, even) are reals 2m .. 2m + 3: float4 m / 2 */
      const float4 *x4 = reinterpret_cast<const float4 *>(from.x);
      const float4 *w4 = reinterpret_cast<const float4 *>(from.w);
#pragma unroll
      for (int b = 0; b < B; b += 2)
#pragma unroll
        for (int r = 0; r < P; ++r) {
          const int q = (j0 + b + r * Stride) / 2;
          const float4 a = x4[q];
          const float4 w = __ldg(&w4[q]);
          v[b * P + r] = make_float2(a.x * w.x, a.y * w.y);
          v[(b + 1) * P + r] = make_float2(a.z * w.z, a.w * w.w);
        }
      return;
    }
  }
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const int m = j0 + b + r * Stride;
      v[b * P + r] = make_float2(from.x[2 * m] * __ldg(&from.w[2 * m]),
                                 from.x[2 * m + 1] * __ldg(&from.w[2 * m + 1]));
    }
}

} // namespace cudafft

#endif
