/* mixed_fft.cuh: the block FFT of any size n = 2^a 3^b 5^c 7^d held in shared memory, with a plan
 * made at run time (one kernel serves every size), for the engines' kernels of the sizes that
 * block_fft.cuh's power-of-two kernels do not cover, and for fused kernels of other engines.
 *
 * Algorithm: Stockham autosort (no reordering pass), as block_fft.cuh, in passes of radix 2, 3, 4,
 * 5, 7, 8 or 16. A pass of radix P reads butterfly j's points j + r N/P (r = 0..P-1) from one
 * buffer, multiplies them by the twiddles W_(Ns P)^(k r) (k = j mod Ns, Ns the product of the
 * radices before), runs a P-point DFT and writes the results to (j - k) P + k + r Ns in the other
 * buffer: the passes go back and forth between two buffers, one barrier a pass, and each thread of
 * the transform's group takes butterflies t, t + T, ... (any T). Points live at pad(i) = i + i/16
 * (block_fft.cuh), which keeps the first pass's strided writes on distinct banks.
 *
 * Twiddles: one table per size, computed on the host in double precision and rounded once
 * (mixed_twiddle_fill; twiddles.h makes and uploads it as plan kind kPlanMixed): each pass's
 * (P - 1) Ns values laid out [pass][r - 1][k] (passes with Ns = 1 have none), then W_2N^k for
 * k = 0..N/2, which the real transforms of 2N points use.
 *
 * Every step that touches values is __host__ __device__: tests/test_mixed_fft.cu runs the passes
 * of every size on the host against FFTW in double precision.
 *
 * How a kernel uses it (N complex points per transform; T threads, t = 0..T-1, per transform):
 *
 *   host:   MixedPlan plan = mixed_plan(N);           plan.n == 0: N is not 7-smooth
 *           CudafftTwiddlePlan tw = {N, kPlanMixed};  cudafft_twiddles_upload(&tw, 1, ...) puts
 *                                                     the table on the device (twiddles.h)
 *           int T = mixed_group_threads(plan);        a good group size (any T >= 1 works)
 *           shared memory per transform: 2 * mixed_buffer_points(N) * sizeof(float2) bytes
 *           pass plan, T and the table to the kernel (the plan is 20 bytes: a kernel argument)
 *   device: float2 *a = smem + row * 2 * mixed_buffer_points(N), *b = a + mixed_buffer_points(N);
 *           a[pad(i)] = x[i] for i = t, t + T, ... < N    the input, in the padded layout
 *           __syncthreads();
 *           float2 *X = mixed_fft(plan, a, b, twiddles, t, T, inverse);
 *           ... read X[pad(k)], k < N ...                 a or b, complete (it ends with a barrier)
 *
 * Every thread of the block must call mixed_fft (it uses __syncthreads): a block that holds several
 * transforms of the same plan runs them together, each group with its own t and buffers; threads
 * of a partly empty last block run a transform of their own (whatever is in their buffers) and
 * write nothing. MixedBlockRow gives a thread its transform, t and buffers in such a block (the
 * engines' kernels in lib/fft/fft_kernels.cu and lib/stft/stft_kernels.cu use it; the launch
 * shape for a size: block_kernels.cuh's cudafft_mixed_block_kernels()). Forward is unnormalised
 * with e^(-2 pi i jk/N); inverse with e^(+2 pi i jk/N).
 *
 * Real transforms of 2N points (even sizes; an odd size runs its real transforms as complex ones):
 *   R2C: a[pad(m)] = (x[2m], x[2m+1]) for m < N, barrier, forward mixed_fft to Z; then for pair
 *        index k = t, t + T, ... <= N/2, mixed_real_forward_pair(Z, N, k, w, &X[k], &X[N - k])
 *        gives bins 0..N (k = 0: X[0] and X[N]; where 2k = N both are X[N/2]), with
 *        w = mixed_real_twiddles(plan, twiddles). It only reads Z.
 *   C2R: a[pad(k)] = X[k] for k = 0..N (bin N too: the buffer holds N + 1 points), barrier, then
 *        mixed_real_inverse_pair(a, N, k, w) in place for every pair index k as above, barrier,
 *        inverse mixed_fft to z: the output samples are x[2m] = z[m].x, x[2m+1] = z[m].y,
 *        unnormalised (2N times the signal whose bins X were). The imaginary parts of bins 0 and N
 *        are ignored. */
#ifndef CUDAFFT_MIXED_FFT_CUH
#define CUDAFFT_MIXED_FFT_CUH

#include "block_fft.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

/* The device's loops unroll (their indices become constants: points in registers, constant
 * twiddles folded); the host compiler knows no such pragma. */
#ifdef __CUDA_ARCH__
#define CUDAFFT_MX_UNROLL _Pragma("unroll")
#else
#define CUDAFFT_MX_UNROLL
#endif

namespace cudafft {

/* The most complex points of a plan, and passes: 16384 points take at most 9 passes (3^8 x 2). */
constexpr int kMixedMaxPoints = 16384;
constexpr int kMixedMaxPasses = 12;
/* The most threads mixed_group_threads() gives a transform: kernels launch at most this many a
 * block (__launch_bounds__), which leaves each thread the registers of a radix-16 butterfly. */
constexpr int kMixedMaxGroupThreads = 512;

/* How N complex points split into passes; n == 0 where there is no plan. */
struct MixedPlan {
  int n;
  int passes;
  unsigned char radix[kMixedMaxPasses]; /* in the order the passes run */
};

/* The plan for N points: the powers of two in radix-16 passes and one of 8, 4 or 2 (8 and 4 rather
 * than 16 and 2), then 7s, 5s and 3s. Radix 16 first where there is one makes every later pass's
 * writes runs of 16 or more adjacent points. n == 0 in the result where N is not 2^a 3^b 5^c 7^d
 * or not in 2..kMixedMaxPoints. */
__host__ __device__ inline MixedPlan
mixed_plan(int n)
{
  MixedPlan plan{};
  if (n < 2 || n > kMixedMaxPoints)
    return plan;
  int rest = n, twos = 0, counts[3] = {0, 0, 0};
  const int odd[3] = {7, 5, 3};
  while (rest % 2 == 0) {
    rest /= 2;
    ++twos;
  }
  for (int i = 0; i < 3; ++i)
    while (rest % odd[i] == 0) {
      rest /= odd[i];
      ++counts[i];
    }
  if (rest != 1)
    return plan;
  int sixteens = twos / 4, left = twos % 4;
  int radices[kMixedMaxPasses + 4];
  int passes = 0;
  if (left == 1 && sixteens > 0) { /* 32 = 8 x 4: no radix-2 pass */
    --sixteens;
    left = 5;
  }
  for (int i = 0; i < sixteens; ++i)
    radices[passes++] = 16;
  if (left == 5) {
    radices[passes++] = 8;
    radices[passes++] = 4;
  } else if (left > 0) {
    radices[passes++] = 1 << left;
  }
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < counts[i]; ++c)
      radices[passes++] = odd[i];
  if (passes > kMixedMaxPasses)
    return plan;
  plan.n = n;
  plan.passes = passes;
  for (int i = 0; i < passes; ++i)
    plan.radix[i] = (unsigned char)radices[i];
  return plan;
}

/* Complex values of the passes' twiddles (the table's first part). */
__host__ __device__ inline int
mixed_pass_twiddle_count(const MixedPlan &plan)
{
  int count = 0, ns = 1;
  for (int i = 0; i < plan.passes; ++i) {
    if (ns > 1)
      count += (plan.radix[i] - 1) * ns;
    ns *= plan.radix[i];
  }
  return count;
}

/* Complex values of the whole table: the passes', then W_2N^k for k = 0..N/2. */
__host__ __device__ inline int
mixed_twiddle_count(const MixedPlan &plan)
{
  return mixed_pass_twiddle_count(plan) + plan.n / 2 + 1;
}

/* The real transforms' part of the table: W_2N^k at [k], k = 0..N/2. */
__host__ __device__ inline const float2 *
mixed_real_twiddles(const MixedPlan &plan, const float2 *twiddles)
{
  return twiddles + mixed_pass_twiddle_count(plan);
}

/* Fills table (mixed_twiddle_count(plan) values) in double precision, each rounded once. */
inline void
mixed_twiddle_fill(const MixedPlan &plan, float2 *table)
{
  const double two_pi = 6.283185307179586476925286766559;
  int o = 0;
  for (int i = 0, ns = 1; i < plan.passes; ns *= plan.radix[i], ++i) {
    if (ns == 1)
      continue;
    const int p = plan.radix[i];
    for (int r = 1; r < p; ++r)
      for (int k = 0; k < ns; ++k) {
        const double angle = -two_pi * ((double)k * r) / ((double)ns * p);
        table[o++] = make_float2((float)std::cos(angle), (float)std::sin(angle));
      }
  }
  for (int k = 0; k <= plan.n / 2; ++k) {
    const double angle = -two_pi * k / (2.0 * plan.n);
    table[o++] = make_float2((float)std::cos(angle), (float)std::sin(angle));
  }
}

/* Points of one of a transform's two buffers: indices pad(0..N), bin N of a real transform
 * included. */
__host__ __device__ constexpr int
mixed_buffer_points(int n)
{
  return pad(n) + 1;
}

/* Threads for one transform's group: one per 8 points (so that radix-8 and radix-16 passes have a
 * butterfly or two a thread and radix-3 to 5 passes two or three), at most kMixedMaxGroupThreads.
 */
__host__ __device__ constexpr int
mixed_group_threads(const MixedPlan &plan)
{
  const int t = (plan.n + 7) / 8;
  return t < 1 ? 1 : t > kMixedMaxGroupThreads ? kMixedMaxGroupThreads : t;
}

/* A twiddle from a table in global memory: through the read-only cache on the device. */
__host__ __device__ inline float2
mx_load_twiddle(const float2 *p)
{
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

/* One radix-2 decimation-in-frequency stage of a P-point DFT (P a power of two up to 16), then the
 * stages below it, as block_fft.cuh's dif_stages. */
template <int P, int Span>
__host__ __device__ inline void
mx_dif_stages(float2 *x)
{
  CUDAFFT_MX_UNROLL
  for (int base = 0; base < P; base += 2 * Span) {
    CUDAFFT_MX_UNROLL
    for (int k = 0; k < Span; ++k) {
      const float2 u = x[base + k], v = x[base + k + Span];
      x[base + k] = u + v;
      x[base + k + Span] = mul_w16(u - v, k * (8 / Span)); /* W_(2 Span)^k */
    }
  }
  if constexpr (Span > 1)
    mx_dif_stages<P, Span / 2>(x);
}

/* k's lowest `bits` bits (at most 4) reversed, without a loop, so that it folds to a constant
 * for an unrolled k. */
__host__ __device__ constexpr int
mx_bit_reverse(int k, int bits)
{
  return (((k & 1) << 3) | ((k & 2) << 1) | ((k & 4) >> 1) | ((k & 8) >> 3)) >> (4 - bits);
}

/* cos and sin of 2 pi f / P for the odd radices, f = 1..(P-1)/2. */
__host__ __device__ constexpr float
mx_root_cos(int p, int f)
{
  return p == 3   ? -0.5f
         : p == 5 ? (f == 1 ? 0.30901699437494742f : -0.80901699437494742f)
                  : (f == 1   ? 0.62348980185873353f
                     : f == 2 ? -0.22252093395631440f
                              : -0.90096886790241913f);
}

__host__ __device__ constexpr float
mx_root_sin(int p, int f)
{
  return p == 3   ? 0.86602540378443865f
         : p == 5 ? (f == 1 ? 0.95105651629515357f : 0.58778525229247313f)
                  : (f == 1   ? 0.78183148246802981f
                     : f == 2 ? 0.97492791218182361f
                              : 0.43388373911755812f);
}

/* Forward DFT of P points in registers, natural order in and out. Powers of two: radix-2 stages
 * and a register permutation (free). Odd P: the points paired as x_r +- x_(P-r), so that y_k and
 * y_(P-k) share their products: y_k = x_0 + sum_r cos(2 pi rk/P) (x_r + x_(P-r))
 * -+ i sum_r sin(2 pi rk/P) (x_r - x_(P-r)). */
template <int P>
__host__ __device__ inline void
mx_dft(float2 *x)
{
  if constexpr ((P & (P - 1)) == 0) {
    static_assert(P >= 2 && P <= 16, "power-of-two radix must be 2, 4, 8 or 16");
    mx_dif_stages<P, P / 2>(x);
    constexpr int kBits = P == 2 ? 1 : P == 4 ? 2 : P == 8 ? 3 : 4;
    float2 y[P];
    CUDAFFT_MX_UNROLL
    for (int k = 0; k < P; ++k)
      y[k] = x[mx_bit_reverse(k, kBits)];
    CUDAFFT_MX_UNROLL
    for (int k = 0; k < P; ++k)
      x[k] = y[k];
  } else {
    static_assert(P == 3 || P == 5 || P == 7, "odd radix must be 3, 5 or 7");
    constexpr int H = (P - 1) / 2;
    float2 sum[H], diff[H];
    float2 y0 = x[0];
    CUDAFFT_MX_UNROLL
    for (int r = 1; r <= H; ++r) {
      sum[r - 1] = x[r] + x[P - r];
      diff[r - 1] = x[r] - x[P - r];
      y0 = y0 + sum[r - 1];
    }
    CUDAFFT_MX_UNROLL
    for (int k = 1; k <= H; ++k) {
      float2 re = x[0], im = make_float2(0.0f, 0.0f);
      CUDAFFT_MX_UNROLL
      for (int r = 1; r <= H; ++r) {
        const int m = (r * k) % P;
        const int f = m <= H ? m : P - m;
        const float c = mx_root_cos(P, f);
        const float s = m <= H ? mx_root_sin(P, f) : -mx_root_sin(P, f);
        re = make_float2(re.x + c * sum[r - 1].x, re.y + c * sum[r - 1].y);
        im = make_float2(im.x + s * diff[r - 1].x, im.y + s * diff[r - 1].y);
      }
      /* y_k = re - i im, y_(P-k) = re + i im; x[k] and x[P-k] are no longer read */
      x[k] = make_float2(re.x + im.y, re.y - im.x);
      x[P - k] = make_float2(re.x - im.y, re.y + im.x);
    }
    x[0] = y0;
  }
}

/* Butterfly j of a radix-P pass over N points: reads src, writes dst (padded layouts). stride =
 * N/P; tw: the pass's twiddles (unused where ns = 1). conj_in, conj_out: conjugate the points read,
 * the results written (the inverse transform's first and last passes). */
template <int P>
__host__ __device__ inline void
mixed_butterfly(const float2 *src, float2 *dst, int stride, int ns, int j, const float2 *tw,
                bool conj_in, bool conj_out)
{
  float2 v[P];
  CUDAFFT_MX_UNROLL
  for (int r = 0; r < P; ++r) {
    v[r] = src[pad(j + r * stride)];
    if (conj_in)
      v[r].y = -v[r].y;
  }
  const int k = j % ns;
  if (ns > 1) {
    CUDAFFT_MX_UNROLL
    for (int r = 1; r < P; ++r)
      v[r] = cmul(v[r], mx_load_twiddle(&tw[(r - 1) * ns + k]));
  }
  mx_dft<P>(v);
  const int base = (j - k) * P + k;
  CUDAFFT_MX_UNROLL
  for (int r = 0; r < P; ++r)
    dst[pad(base + r * ns)] = conj_out ? conj(v[r]) : v[r];
}

/* One thread's share of a radix-P pass: butterflies t, t + threads, ... < N/P. */
template <int P>
__host__ __device__ inline void
mixed_pass(const float2 *src, float2 *dst, int n, int ns, const float2 *tw, int t, int threads,
           bool conj_in, bool conj_out)
{
  const int stride = n / P;
  for (int j = t; j < stride; j += threads)
    mixed_butterfly<P>(src, dst, stride, ns, j, tw, conj_in, conj_out);
}

/* The same for a radix known at run time (one of the plan's). */
__host__ __device__ inline void
mixed_pass_of(int radix, const float2 *src, float2 *dst, int n, int ns, const float2 *tw, int t,
              int threads, bool conj_in, bool conj_out)
{
  switch (radix) {
  case 2:
    mixed_pass<2>(src, dst, n, ns, tw, t, threads, conj_in, conj_out);
    break;
  case 3:
    mixed_pass<3>(src, dst, n, ns, tw, t, threads, conj_in, conj_out);
    break;
  case 4:
    mixed_pass<4>(src, dst, n, ns, tw, t, threads, conj_in, conj_out);
    break;
  case 5:
    mixed_pass<5>(src, dst, n, ns, tw, t, threads, conj_in, conj_out);
    break;
  case 7:
    mixed_pass<7>(src, dst, n, ns, tw, t, threads, conj_in, conj_out);
    break;
  case 8:
    mixed_pass<8>(src, dst, n, ns, tw, t, threads, conj_in, conj_out);
    break;
  default:
    mixed_pass<16>(src, dst, n, ns, tw, t, threads, conj_in, conj_out);
    break;
  }
}

/* Barriers between passes: the block's on the device; none where one thread runs every butterfly
 * (the host test). */
struct MixedBlockBarrier {
  __device__ void
  operator()() const
  {
    __syncthreads();
  }
};
struct MixedNoBarrier {
  __host__ __device__ void
  operator()() const
  {
  }
};

/* The passes of the plan from a to b and back, each followed by barrier(); returns the buffer that
 * holds the result (a after an even number of passes, else b). */
#pragma nv_exec_check_disable
template <typename Barrier>
__host__ __device__ inline float2 *
mixed_fft_passes(const MixedPlan &plan, float2 *a, float2 *b, const float2 *twiddles, int t,
                 int threads, bool inverse, Barrier barrier)
{
  int ns = 1, offset = 0;
  for (int p = 0; p < plan.passes; ++p) {
    const int radix = plan.radix[p];
    mixed_pass_of(radix, a, b, plan.n, ns, twiddles + offset, t, threads, inverse && p == 0,
                  inverse && p == plan.passes - 1);
    barrier();
    if (ns > 1)
      offset += (radix - 1) * ns;
    ns *= radix;
    float2 *swap = a;
    a = b;
    b = swap;
  }
  return a;
}

/* The FFT of the N = plan.n points at a (padded layout, complete: a barrier before the call) by the
 * `threads` threads of the transform's group (this one is t); b is the other buffer (both
 * mixed_buffer_points(N) points). Returns a or b, whichever holds the result, complete when it
 * returns; the other holds intermediate values. Every thread of the block must call it. */
__device__ inline float2 *
mixed_fft(const MixedPlan &plan, float2 *a, float2 *b, const float2 *__restrict__ twiddles, int t,
          int threads, bool inverse)
{
  return mixed_fft_passes(plan, a, b, twiddles, t, threads, inverse, MixedBlockBarrier{});
}

/* Which transform of a launch a thread works on, for kernels whose blocks hold blockDim.x / threads
 * transforms of n points, each with its two buffers (2 mixed_buffer_points(n) points) one after
 * another in dynamic shared memory: its thread index t within the transform and its buffers a, b.
 * The last block may be partly empty: its spare rows are not `active` and take the last real
 * transform, so that they read valid memory while they join the block's barriers; they must not
 * write. */
struct MixedBlockRow {
  int transform, t;
  bool active;
  float2 *a, *b;

  __device__
  MixedBlockRow(float2 *smem, int n, int threads, int count)
  {
    const int row = threadIdx.x / threads, per_block = blockDim.x / threads;
    t = threadIdx.x % threads;
    const int wanted = blockIdx.x * per_block + row;
    active = wanted < count;
    transform = active ? wanted : count - 1;
    a = smem + (size_t)row * 2 * mixed_buffer_points(n);
    b = a + mixed_buffer_points(n);
  }
};

/* R2C's last step: bins X[k] and X[N-k] of the 2N real points whose complex view z (z[m] =
 * x[2m] + i x[2m+1]) the forward mixed_fft turned into Z, for pair index k in 0..N/2: k = 0 gives
 * X[0] and X[N]; where 2k = N both are X[N/2]. w: mixed_real_twiddles(). Reads Z only. */
__host__ __device__ inline void
mixed_real_forward_pair(const float2 *z, int n, int k, const float2 *w, float2 *xk, float2 *xnk)
{
  const float2 a = z[pad(k)];
  if (k == 0) {
    *xk = make_float2(a.x + a.y, 0.0f);
    *xnk = make_float2(a.x - a.y, 0.0f);
    return;
  }
  const float2 b = conj(z[pad(n - k)]);
  const float2 e = make_float2(0.5f * (a.x + b.x), 0.5f * (a.y + b.y));
  const float2 o = make_float2(0.5f * (a.y - b.y), -0.5f * (a.x - b.x)); /* (a - b) / 2i */
  const float2 wo = cmul(mx_load_twiddle(&w[k]), o);
  *xk = e + wo;
  *xnk = conj(e - wo);
}

/* C2R's first step, in place for pair index k in 0..N/2: the bins X[k], X[N-k] at buf (pad(0..N))
 * become Z[k] = (X[k] + conj X[N-k]) + i W_2N^-k (X[k] - conj X[N-k]) and Z[N-k], whose inverse
 * mixed_fft gives the 2N real samples (module header). The imaginary parts of X[0] and X[N] are
 * ignored. */
__host__ __device__ inline void
mixed_real_inverse_pair(float2 *buf, int n, int k, const float2 *w)
{
  if (k == 0) {
    const float a = buf[pad(0)].x, c = buf[pad(n)].x;
    buf[pad(0)] = make_float2(a + c, a - c);
    return;
  }
  const float2 xk = buf[pad(k)], xnk = conj(buf[pad(n - k)]);
  const float2 sum = xk + xnk, diff = xk - xnk;
  const float2 q = cmul(conj(mx_load_twiddle(&w[k])), diff);
  buf[pad(k)] = make_float2(sum.x - q.y, sum.y + q.x);     /* sum + i q */
  buf[pad(n - k)] = make_float2(sum.x + q.y, q.x - sum.y); /* conj(sum) + i conj(q) */
}

} // namespace cudafft

#endif
