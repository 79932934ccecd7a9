/* block_fft.cuh: the block FFT as device functions, for the FFT engine's kernels and for the fused
 * kernels of the other engines (STFT, spectrum, convolution) that hold their data on chip.
 *
 * Algorithm: Stockham autosort (no bit-reversal pass). Each of the N/R threads of a transform
 * holds R points in registers. A pass of radix P gives each thread B = R/P butterflies, adjacent
 * ones (j = tB .. tB + B - 1): it reads the P points j + r N/P, multiplies them by twiddles, runs
 * a P-point DFT in registers and writes the results to their Stockham places (j - k) P + k + r Ns,
 * where Ns is the product of the radices before and k = j mod Ns. The first pass may read straight
 * from global memory and the last may write straight to it: their accesses are runs of adjacent
 * points, 16 bytes per thread where B is even. Passes in between exchange through shared memory.
 *
 * Twiddles: each radix plan has its own table, computed in double precision on the host and rounded
 * once (twiddles.h), laid out [pass][r - 1][k] so that a warp's twiddle loads are
 * adjacent; this keeps the error a few float rounding units (not the ~1e-6 of __sincosf) and the
 * loads coalesced. A pass reads all of its twiddles from the table (TableTwiddles) or only rows
 * 1, 2, 4, 8 and multiplies the rest from them (ProductTwiddles), which trades loads for a few
 * rounding units.
 *
 * Shared-memory layout: point i of a transform lives at pad(i) = i + i/16, which spreads the
 * first pass's strided writes over distinct banks. */
#ifndef CUDAFFT_BLOCK_FFT_CUH
#define CUDAFFT_BLOCK_FFT_CUH

#include <cuda_runtime.h>

#include <type_traits>

namespace cudafft {

__host__ __device__ constexpr int
pad(int i)
{
  return i + (i >> 4);
}

/* How a kernel splits N points into passes. */
enum RadixPlanKind {
  kPlanWide = 0,   /* 16 points per thread, radix-16 passes after a smaller radix first */
  kPlanNarrow = 1, /* 8 points per thread (twice the threads per transform), radix-8 passes */
  kPlanMixed = 2,  /* any size 2^a 3^b 5^c 7^d, planned at run time (mixed_fft.cuh) */
  kPlanCount = 3
};

struct RadixPlan {
  int points_per_thread;
  int passes;
  int radix[16];
};

__host__ __device__ constexpr RadixPlan
make_radix_plan(int n, int kind)
{
  RadixPlan plan{};
  int rest = n;
  int r = kind == kPlanWide ? 16 : 8;
  if (n / r > 1024) /* a transform may not need more threads than a block has */
    r = n / 1024;
  plan.points_per_thread = r;
  if (kind == kPlanWide) {
    /* The radix left over when the 16s are taken goes first: its pass reads global memory with
     * several adjacent butterflies per thread, hence 16-byte loads (faster than the same radix
     * last: bench/HISTORY.md). */
    int first = 1;
    for (int m = n; m >= r; m /= r)
      first = m / r;
    if (first > 1 && first < r) {
      plan.radix[plan.passes++] = first;
      rest /= first;
    }
  }
  while (rest > 1) {
    const int p = rest >= r ? r : rest;
    plan.radix[plan.passes++] = p;
    rest /= p;
  }
  return plan;
}

/* Twiddles of pass i: (P - 1) Ns values, for Ns > 1. */
__host__ __device__ constexpr int
pass_twiddle_offset(int n, int kind, int pass)
{
  const RadixPlan plan = make_radix_plan(n, kind);
  int offset = 0, ns = 1;
  for (int i = 0; i < pass; ++i) {
    if (ns > 1)
      offset += (plan.radix[i] - 1) * ns;
    ns *= plan.radix[i];
  }
  return offset;
}

/* The table of a variant: pass twiddles, then W_2N^k for k = 0..N/2 (real transforms of 2N). */
__host__ __device__ constexpr int
real_twiddle_offset(int n, int kind)
{
  return pass_twiddle_offset(n, kind, make_radix_plan(n, kind).passes);
}

__host__ __device__ constexpr int
twiddle_count(int n, int kind)
{
  return real_twiddle_offset(n, kind) + n / 2 + 1;
}

/* Threads a block aims for when transforms are small enough to share one. Small blocks keep
 * the last wave short and give small batches more blocks (128 measured faster than 256 and 512:
 * bench/HISTORY.md). */
constexpr int kBlockThreadsAim = 128;

/* Shape of a kernel: N complex points per transform in one block of shared memory. */
template <int N, int Kind> struct FftShape {
  static constexpr RadixPlan kPlan = make_radix_plan(N, Kind);
  static constexpr int R = kPlan.points_per_thread;
  static constexpr int kThreads = N / R; /* per transform */
  static constexpr int kPerBlock =
      kThreads >= kBlockThreadsAim ? 1 : kBlockThreadsAim / kThreads; /* transforms */
  static constexpr int kBlockThreads = kThreads * kPerBlock;
  static constexpr int kStride = pad(N) + 1; /* + 1: bin N of a real transform of 2N points */
  static constexpr size_t kSmemBytes = sizeof(float2) * kStride * kPerBlock;
  static_assert((N & (N - 1)) == 0 && kThreads <= 1024, "unsupported transform size");
};

/* Complex arithmetic, for the device kernels here and in mixed_fft.cuh, whose passes the tests
 * also run on the host. */
__host__ __device__ __forceinline__ float2
operator+(float2 a, float2 b)
{
  return make_float2(a.x + b.x, a.y + b.y);
}

__host__ __device__ __forceinline__ float2
operator-(float2 a, float2 b)
{
  return make_float2(a.x - b.x, a.y - b.y);
}

__host__ __device__ __forceinline__ float2
cmul(float2 a, float2 b)
{
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

__host__ __device__ __forceinline__ float2
conj(float2 a)
{
  return make_float2(a.x, -a.y);
}

/* a * e^(-2 pi i m / 16) for m in [0, 8). m is a constant once the callers' loops unroll, so the
 * switch folds away and the trivial factors cost no multiplications. */
__host__ __device__ __forceinline__ float2
mul_w16(float2 a, int m)
{
  const float c = 0.92387953251128674f; /* cos(pi/8) */
  const float s = 0.38268343236508977f; /* sin(pi/8) */
  const float h = 0.70710678118654752f; /* cos(pi/4) */
  switch (m) {
  case 0:
    return a;
  case 1:
    return cmul(a, make_float2(c, -s));
  case 2:
    return make_float2((a.x + a.y) * h, (a.y - a.x) * h);
  case 3:
    return cmul(a, make_float2(s, -c));
  case 4:
    return make_float2(a.y, -a.x);
  case 5:
    return cmul(a, make_float2(-s, -c));
  case 6:
    return make_float2((a.y - a.x) * h, -(a.x + a.y) * h);
  default:
    return cmul(a, make_float2(-c, -s));
  }
}

/* f(std::integral_constant<int, I>) for I = Begin..End-1: a loop whose index is a template constant
 * in the body. */
template <int Begin, int End, typename F>
__device__ __forceinline__ void
static_for(F &&f)
{
  if constexpr (Begin < End) {
    f(std::integral_constant<int, Begin>{});
    static_for<Begin + 1, End>(f);
  }
}

__host__ __device__ constexpr int
log2_of(int p)
{
  return p <= 1 ? 0 : 1 + log2_of(p / 2);
}

/* One radix-2 decimation-in-frequency stage of a P-point DFT in registers, then the stages below
 * it. Written as recursion rather than a halving loop so that every index is a compile-time
 * constant and the points stay in registers. */
template <int P, int Span>
__device__ __forceinline__ void
dif_stages(float2 *x)
{
#pragma unroll
  for (int base = 0; base < P; base += 2 * Span) {
#pragma unroll
    for (int k = 0; k < Span; ++k) {
      const float2 u = x[base + k], v = x[base + k + Span];
      x[base + k] = u + v;
      x[base + k + Span] = mul_w16(u - v, k * (8 / Span)); /* W_(2 Span)^k */
    }
  }
  if constexpr (Span > 1)
    dif_stages<P, Span / 2>(x);
}

/* Forward DFT of P <= 16 points held in registers, natural order in and out: radix-2 decimation
 * in frequency with constant twiddles, then a register permutation (free). */
template <int P>
__device__ __forceinline__ void
dft(float2 *x)
{
  static_assert(P >= 2 && P <= 16 && (P & (P - 1)) == 0, "radix must be 2, 4, 8 or 16");
  dif_stages<P, P / 2>(x);
  constexpr int kBits = log2_of(P);
  float2 y[P];
  /* __brev of a constant folds at compile time, so the permutation costs nothing */
#pragma unroll
  for (int k = 0; k < P; ++k)
    y[k] = x[__brev(k) >> (32 - kBits)];
#pragma unroll
  for (int k = 0; k < P; ++k)
    x[k] = y[k];
}

/* Where a pass reads its points from or writes them to: shared memory (padded layout) or a row
 * of N complex points in global memory, with conjugation (sign = -1) and scaling on the way. */
struct SharedRow {
  float2 *s;
};

/* Which transform of a launch a thread works on, for kernels whose blocks hold kPerBlock
 * transforms: its thread index t within the transform and its shared row. The last block may be
 * partly empty: its spare rows are not `active` and take the last real transform, so that they
 * read valid memory while they join the block's barriers; they must not write. */
template <int N, int Kind> struct BlockRow {
  using S = FftShape<N, Kind>;
  int transform, t;
  bool active;
  SharedRow smem;

  __device__
  BlockRow(float2 *smem_base, int count)
  {
    const int row = threadIdx.x / S::kThreads;
    t = threadIdx.x % S::kThreads;
    const int wanted = blockIdx.x * S::kPerBlock + row;
    active = wanted < count;
    transform = active ? wanted : count - 1;
    smem.s = smem_base + row * S::kStride;
  }
};

struct GlobalIn {
  const float2 *row;
  float sign;
};
struct GlobalOut {
  float2 *row;
  float scale, sign;
};

/* Reads the points j0 + b + r stride of butterflies b = 0..B-1 into v[b P + r]. */
template <int P, int B, int Stride>
__device__ __forceinline__ void
read_points(float2 *v, SharedRow from, int j0)
{
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r)
      v[b * P + r] = from.s[pad(j0 + b + r * Stride)];
}

template <int P, int B, int Stride>
__device__ __forceinline__ void
read_points(float2 *v, GlobalIn from, int j0)
{
  if constexpr (B % 2 == 0) {
    /* adjacent butterflies read adjacent points: 16 bytes at a time (j0 and Stride are even) */
    const float4 *row4 = reinterpret_cast<const float4 *>(from.row);
#pragma unroll
    for (int b = 0; b < B; b += 2)
#pragma unroll
      for (int r = 0; r < P; ++r) {
        const float4 q = row4[(j0 + b + r * Stride) / 2];
        v[b * P + r] = make_float2(q.x, from.sign * q.y);
        v[(b + 1) * P + r] = make_float2(q.z, from.sign * q.w);
      }
  } else {
#pragma unroll
    for (int b = 0; b < B; ++b)
#pragma unroll
      for (int r = 0; r < P; ++r) {
        const float2 q = from.row[j0 + b + r * Stride];
        v[b * P + r] = make_float2(q.x, from.sign * q.y);
      }
  }
}

/* Writes butterfly b's outputs v[b P + r] to (j - k) P + k + r Ns, j = j0 + b, k = j mod Ns. */
template <int P, int B, int Ns>
__device__ __forceinline__ void
write_points(SharedRow to, const float2 *v, int j0)
{
#pragma unroll
  for (int b = 0; b < B; ++b) {
    const int j = j0 + b, k = j & (Ns - 1);
#pragma unroll
    for (int r = 0; r < P; ++r)
      to.s[pad((j - k) * P + k + r * Ns)] = v[b * P + r];
  }
}

/* In the last pass Ns = N/P > j, so k = j and the outputs are j + r Ns: adjacent across b. */
template <int P, int B, int Ns>
__device__ __forceinline__ void
write_points(GlobalOut to, const float2 *v, int j0)
{
  if (!to.row) /* a block's unused rows past the batch compute but never write */
    return;
  const float re = to.scale, im = to.sign * to.scale;
  if constexpr (B % 2 == 0) {
    float4 *row4 = reinterpret_cast<float4 *>(to.row);
#pragma unroll
    for (int b = 0; b < B; b += 2)
#pragma unroll
      for (int r = 0; r < P; ++r) {
        const float2 a = v[b * P + r], c = v[(b + 1) * P + r];
        row4[(j0 + b + r * Ns) / 2] = make_float4(re * a.x, im * a.y, re * c.x, im * c.y);
      }
  } else {
#pragma unroll
    for (int b = 0; b < B; ++b)
#pragma unroll
      for (int r = 0; r < P; ++r) {
        const float2 a = v[b * P + r];
        to.row[j0 + b + r * Ns] = make_float2(re * a.x, im * a.y);
      }
  }
}

/* How a pass multiplies its butterflies' inputs by their twiddles W_(Ns P)^(k r), r = 1..P-1,
 * k = (j0 + b) mod Ns. TableTwiddles reads each from the variant's table (laid out
 * [pass][r - 1][k]). */
struct TableTwiddles {
  const float2 *__restrict__ table;

  template <int N, int Kind, int Pass, int P, int B, int Ns>
  __device__ __forceinline__ void
  apply(float2 *v, int j0) const
  {
    const float2 *tw = table + pass_twiddle_offset(N, Kind, Pass);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const int k = (j0 + b) & (Ns - 1);
#pragma unroll
      for (int r = 1; r < P; ++r)
        v[b * P + r] = cmul(v[b * P + r], __ldg(&tw[(r - 1) * Ns + k]));
    }
  }
};

/* ProductTwiddles reads only rows r = 1, 2, 4, 8 and makes the others as products of those
 * (W^(r k) = W^(h k) W^((r - h) k), h the highest power of two in r: at most three products
 * deep, a few float rounding units more): a radix-16 pass reads 4 twiddles a butterfly instead
 * of 15. The engine's kernels are bound by traffic through L1 and shared memory, of which these
 * loads are a large part (the gain is measured in bench/HISTORY.md). */
struct ProductTwiddles {
  const float2 *__restrict__ table;

  template <int N, int Kind, int Pass, int P, int B, int Ns>
  __device__ __forceinline__ void
  apply(float2 *v, int j0) const
  {
    const float2 *tw = table + pass_twiddle_offset(N, Kind, Pass);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const int k = (j0 + b) & (Ns - 1);
      float2 w[P];
#pragma unroll
      for (int r = 1; r < P; r *= 2)
        w[r] = __ldg(&tw[(r - 1) * Ns + k]);
#pragma unroll
      for (int r = 3; r < P; ++r)
        if ((r & (r - 1)) != 0) {
          const int h = 1 << log2_of(r);
          w[r] = cmul(w[h], w[r - h]);
        }
#pragma unroll
      for (int r = 1; r < P; ++r)
        v[b * P + r] = cmul(v[b * P + r], w[r]);
    }
  }
};

template <typename T> constexpr bool kIsShared = false;
template <> constexpr bool kIsShared<SharedRow> = true;

/* The last pass's destination when its points are wanted both in shared memory and, for the
 * thread that computed them, in registers: where the last pass has one butterfly a thread
 * (P = R), thread t of the N/R leaves points t + (N/R) r in kept[r], r = 0..R-1. */
struct SharedKeep {
  float2 *s;
  float2 *kept;
};
template <> constexpr bool kIsShared<SharedKeep> = true;

template <int P, int B, int Ns>
__device__ __forceinline__ void
write_points(SharedKeep to, const float2 *v, int j0)
{
  static_assert(B == 1, "SharedKeep needs one butterfly a thread in the last pass");
  write_points<P, B, Ns>(SharedRow{to.s}, v, j0);
#pragma unroll
  for (int r = 0; r < P; ++r)
    to.kept[r] = v[r];
}

/* Pass `Pass` of the variant's plan, then the passes after it. A pass that reads shared memory
 * waits at a barrier before it overwrites it; a pass that writes shared memory ends with one. */
template <int N, int Kind, int Pass, int Ns, typename From, typename To, typename Twiddles>
__device__ __forceinline__ void
stockham_passes(From from, SharedRow smem, To to, int t, const Twiddles &twiddles)
{
  constexpr RadixPlan kPlan = make_radix_plan(N, Kind);
  if constexpr (Pass < kPlan.passes) {
    constexpr int P = kPlan.radix[Pass];
    constexpr int R = kPlan.points_per_thread;
    constexpr int B = R / P;
    constexpr bool kFirst = Pass == 0, kLast = Pass == kPlan.passes - 1;
    const int j0 = t * B;
    float2 v[R];
    if constexpr (kFirst)
      read_points<P, B, N / P>(v, from, j0);
    else
      read_points<P, B, N / P>(v, smem, j0);
    if constexpr (!kFirst || kIsShared<From>)
      __syncthreads();
    if constexpr (Ns > 1)
      twiddles.template apply<N, Kind, Pass, P, B, Ns>(v, j0);
#pragma unroll
    for (int b = 0; b < B; ++b)
      dft<P>(&v[b * P]);
    if constexpr (kLast) {
      write_points<P, B, Ns>(to, v, j0);
      if constexpr (kIsShared<To>)
        __syncthreads();
    } else {
      write_points<P, B, Ns>(smem, v, j0);
      __syncthreads();
      stockham_passes<N, Kind, Pass + 1, Ns * P>(from, smem, to, t, twiddles);
    }
  }
}

/* Forward FFT of N points, unnormalised, natural order in and out, by the N/R threads of the
 * transform (t = 0..N/R-1); the inverse is the forward transform of conjugates, conjugated. `from`
 * and `to` are the transform's source and destination (SharedRow, GlobalIn, GlobalOut); smem is
 * its shared-memory row (FftShape::kStride points), used between passes. Every thread of the block
 * must call it (it uses __syncthreads): blocks that hold several transforms call it for all of
 * them at once. Shared-memory input must be complete (a barrier) before the call; shared-memory
 * output is complete when it returns. twiddles: the variant's table, cudafft_kernel_twiddles(). */
template <int N, int Kind, typename From, typename To>
__device__ __forceinline__ void
block_fft(From from, SharedRow smem, To to, int t, const float2 *__restrict__ twiddles)
{
  stockham_passes<N, Kind, 0, 1>(from, smem, to, t, TableTwiddles{twiddles});
}

/* block_fft with the twiddles made as products (ProductTwiddles). */
template <int N, int Kind, typename From, typename To>
__device__ __forceinline__ void
block_fft(From from, SharedRow smem, To to, int t, ProductTwiddles twiddles)
{
  stockham_passes<N, Kind, 0, 1>(from, smem, to, t, twiddles);
}

/* cos and sin of x, |x| <= pi/2, by their Taylor series in double precision: twiddle constants
 * fixed at compile time. */
__host__ __device__ constexpr double
taylor_cos(double x)
{
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 24; ++n) {
    term *= -x * x / ((2.0 * n - 1.0) * (2.0 * n));
    sum += term;
  }
  return sum;
}

__host__ __device__ constexpr double
taylor_sin(double x)
{
  double term = x, sum = x;
  for (int n = 1; n < 24; ++n) {
    term *= -x * x / ((2.0 * n) * (2.0 * n + 1.0));
    sum += term;
  }
  return sum;
}

/* The real steps' twiddle W_2N^k for k = t + i Threads. From the table, one load per k; or, with
 * Products, W_2N^t (one load per thread) times W_2N^(i Threads), a compile-time constant. */
template <int N, int Threads, bool Products> struct RealTwiddles {
  const float2 *__restrict__ w; /* the table's W_2N^k, k = 0..N/2 */
  float2 wt;

  __device__ __forceinline__
  RealTwiddles(const float2 *__restrict__ w_, int t)
      : w(w_)
  {
    if constexpr (Products)
      wt = __ldg(&w[t]);
  }

  template <int I>
  __device__ __forceinline__ float2
  get(int k) const
  {
    if constexpr (!Products) {
      return __ldg(&w[k]);
    } else if constexpr (I == 0) {
      return wt;
    } else {
      constexpr double angle = -3.14159265358979323846 * (double)(I * Threads) / (double)N;
      constexpr float c = (float)taylor_cos(angle), s = (float)taylor_sin(angle);
      return cmul(wt, make_float2(c, s));
    }
  }
};

/* The spectrum X[0..N] of 2N real samples x from Z = FFT_N(z), z[m] = x[2m] + i x[2m+1], which
 * block_fft left at s. Thread t of the transform's Threads handles the bin pairs (k, N - k) for
 * k = t, t + Threads, ... < N/2 (unrolled, so that all their loads are in flight together) and
 * thread 0 also bins 0, N/2 and N; emit(k, X_k) receives each bin once. kept: NULL, or where the
 * last pass left the thread's own Z[k], k = t + i Threads, at kept[i] (SharedKeep, with Threads =
 * N/R), so that only the partners Z[N - k] come from shared memory. */
template <int N, int Kind, int Threads, bool Products = false, typename Emit>
__device__ __forceinline__ void
real_forward_post(const float2 *s, const float2 *kept, int t, const float2 *__restrict__ twiddles,
                  Emit emit)
{
  static_assert((N / 2) % Threads == 0, "pairs must divide evenly among the threads");
  const RealTwiddles<N, Threads, Products> w(twiddles + real_twiddle_offset(N, Kind), t);
  static_for<0, N / 2 / Threads>([&](auto step) {
    constexpr int i = decltype(step)::value;
    const int k = t + i * Threads;
    const float2 a = kept ? kept[i] : s[pad(k)];
    if (k == 0) {
      const float2 h = s[pad(N / 2)];
      emit(0, make_float2(a.x + a.y, 0.0f));
      emit(N, make_float2(a.x - a.y, 0.0f));
      emit(N / 2, conj(h)); /* X[N/2] = conj(Z[N/2]): the general formula at k = N/2 */
      return;
    }
    const float2 b = conj(s[pad(N - k)]);
    const float2 e = make_float2(0.5f * (a.x + b.x), 0.5f * (a.y + b.y));
    const float2 o = make_float2(0.5f * (a.y - b.y), -0.5f * (a.x - b.x)); /* (a - b) / 2i */
    const float2 wo = cmul(w.template get<i>(k), o);
    emit(k, e + wo);
    emit(N - k, conj(e - wo));
  });
}

/* The same with every Z[k] from shared memory. */
template <int N, int Kind, int Threads, bool Products = false, typename Emit>
__device__ __forceinline__ void
real_forward_post(const float2 *s, int t, const float2 *__restrict__ twiddles, Emit emit)
{
  real_forward_post<N, Kind, Threads, Products>(s, nullptr, t, twiddles, emit);
}

/* Copies the bins X[0..N] of a real transform from row to s (padded layout), where
 * real_inverse_pre reads them: thread t of the transform's Threads copies k = t, t + Threads, ...
 * and thread 0 also X[N]. The caller makes the copy complete (a barrier) before reading it. */
template <int N, int Threads>
__device__ __forceinline__ void
load_real_bins(float2 *s, const float2 *__restrict__ row, int t)
{
#pragma unroll
  for (int k = t; k < N; k += Threads)
    s[pad(k)] = row[k];
  if (t == 0)
    s[pad(N)] = row[N];
}

/* The inverse of real_forward_post: turns the bins X[0..N] at s into conj(Z), in place, where
 * Z[k] = (X[k] + conj X[N-k]) + i W^-k (X[k] - conj X[N-k]), so that a forward block_fft then
 * yields the conjugate of the unnormalised inverse of Z, whose real and imaginary parts are the
 * even and odd output samples. The imaginary parts of bins 0 and N are ignored. Same division of
 * the pairs among threads as real_forward_post. Ends with a barrier. */
template <int N, int Kind, int Threads, bool Products = false>
__device__ __forceinline__ void
real_inverse_pre(float2 *s, int t, const float2 *__restrict__ twiddles)
{
  static_assert((N / 2) % Threads == 0, "pairs must divide evenly among the threads");
  const RealTwiddles<N, Threads, Products> w(twiddles + real_twiddle_offset(N, Kind), t);
  static_for<0, N / 2 / Threads>([&](auto step) {
    constexpr int i = decltype(step)::value;
    const int k = t + i * Threads;
    if (k == 0) {
      const float a = s[0].x, c = s[pad(N)].x;
      s[0] = make_float2(a + c, -(a - c));
      s[pad(N / 2)] =
          make_float2(2.0f * s[pad(N / 2)].x, 2.0f * s[pad(N / 2)].y); /* conj(2 conj X) */
      return;
    }
    const float2 xk = s[pad(k)], xnk = conj(s[pad(N - k)]);
    const float2 sum = xk + xnk, diff = xk - xnk;
    const float2 q = cmul(conj(w.template get<i>(k)), diff);
    const float2 zk = make_float2(sum.x - q.y, sum.y + q.x);  /* sum + i q */
    const float2 znk = make_float2(sum.x + q.y, q.x - sum.y); /* conj(sum) + i conj(q) */
    s[pad(k)] = conj(zk);
    s[pad(N - k)] = conj(znk);
  });
  __syncthreads();
}

/* Thread blocks for a grid-stride kernel over `total` elements: one per `threads` elements, at
 * least 1, at most 65536 (the loops stride over the rest). */
inline int
grid_for(size_t total, int threads)
{
  const size_t wanted = (total + threads - 1) / threads;
  return (int)(wanted < 65536 ? (wanted > 0 ? wanted : 1) : 65536);
}

} // namespace cudafft

#endif
