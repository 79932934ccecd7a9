/* fft_kernels.cu: the FFT engine's kernels (fft_kernels.h). The power-of-two sizes' are the block
 * FFT of block_fft.cuh with twiddles made as products of a few table rows (ProductTwiddles), the
 * fastest of the variants measured at every batch (bench/HISTORY.md); every other size runs the
 * mixed-radix block FFT of mixed_fft.cuh, one kernel per kind for all of them. */
#include "block_fft.cuh"
#include "block_kernels.cuh"
#include "fft_kernels.h"
#include "fft_sizes.cuh"
#include "mixed_fft.cuh"

#include <cstring>

using namespace cudafft;

/* C2C kernels must fit enough blocks for 1024 threads per multiprocessor: the register cap this
 * sets (64 for 256-thread blocks) costs nothing in the FFT and lets a fourth block in, which keeps
 * more loads in flight (bench/HISTORY.md). The real
 * kinds ran slower under the same cap, so they keep the compiler's choice. */
template <int BlockThreads>
constexpr int kC2cMinBlocks = BlockThreads >= 1024 ? 1 : 1024 / BlockThreads;

namespace {

/* C2C: in and out may be the same buffer (every read of a transform precedes its writes, with
 * barriers between), so they are not __restrict__. */
template <int N, int Kind>
__global__ void
__launch_bounds__(FftShape<N, Kind>::kBlockThreads, kC2cMinBlocks<FftShape<N, Kind>::kBlockThreads>)
    c2c_kernel(const float2 *in, float2 *out, int batch, float sign, float scale,
               const float2 *__restrict__ twiddles)
{
  extern __shared__ float2 smem[];
  BlockRow<N, Kind> ctx(smem, batch);
  const size_t row = ctx.transform;
  const GlobalIn from{in + row * N, sign};
  const GlobalOut to{ctx.active ? out + row * N : nullptr, scale, sign};
  block_fft<N, Kind>(from, ctx.smem, to, ctx.t, ProductTwiddles{twiddles});
}

/* R2C of 2N real points: the row is N complex points z[m] = x[2m] + i x[2m+1]. */
template <int N, int Kind>
__global__ void
__launch_bounds__(FftShape<N, Kind>::kBlockThreads)
    r2c_kernel(const float2 *__restrict__ in, float2 *__restrict__ out, int batch, float /* sign */,
               float scale, const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, Kind>;
  extern __shared__ float2 smem[];
  BlockRow<N, Kind> ctx(smem, batch);
  const size_t row = ctx.transform;
  /* Where the plan ends with one radix-R butterfly a thread (wide, narrow), its points stay in
   * registers too and the real step reads only their partners from shared memory (faster for
   * R2C, bench/HISTORY.md). */
  constexpr bool kKeep = S::kPlan.radix[S::kPlan.passes - 1] == S::R;
  float2 kept[S::R];
  if constexpr (kKeep)
    block_fft<N, Kind>(GlobalIn{in + row * N, 1.0f}, ctx.smem, SharedKeep{ctx.smem.s, kept}, ctx.t,
                       ProductTwiddles{twiddles});
  else
    block_fft<N, Kind>(GlobalIn{in + row * N, 1.0f}, ctx.smem, ctx.smem, ctx.t,
                       ProductTwiddles{twiddles});
  if (!ctx.active)
    return;
  float2 *bins = out + row * (N + 1);
  real_forward_post<N, Kind, S::kThreads, true>(
      ctx.smem.s, kKeep ? kept : nullptr, ctx.t, twiddles,
      [&](int k, float2 x) { bins[k] = make_float2(scale * x.x, scale * x.y); });
}

/* C2R to 2N real points. Rows of N + 1 bins are 8-byte aligned only, hence 8-byte loads. */
template <int N, int Kind>
__global__ void
__launch_bounds__(FftShape<N, Kind>::kBlockThreads)
    c2r_kernel(const float2 *__restrict__ in, float2 *__restrict__ out, int batch, float /* sign */,
               float scale, const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, Kind>;
  extern __shared__ float2 smem[];
  BlockRow<N, Kind> ctx(smem, batch);
  if (ctx.active)
    load_real_bins<N, S::kThreads>(ctx.smem.s, in + (size_t)ctx.transform * (N + 1), ctx.t);
  __syncthreads();
  real_inverse_pre<N, Kind, S::kThreads, true>(ctx.smem.s, ctx.t, twiddles);
  const GlobalOut to{ctx.active ? out + (size_t)ctx.transform * N : nullptr, scale, -1.0f};
  block_fft<N, Kind>(ctx.smem, ctx.smem, to, ctx.t, ProductTwiddles{twiddles});
}

/* The mixed-radix kernels: a transform's group loads its row into its first buffer (coalesced:
 * adjacent threads, adjacent points), runs the plan's passes, and stores the result. The inverse
 * runs as the forward transform of conjugates, conjugated (sign = -1), as the fused kernels do. */

/* C2C of N = plan.n points; in and out may be the same buffer (every read of a transform precedes
 * its writes, with barriers between). */
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_c2c_kernel(const float2 *in, float2 *out, int batch, float sign, float scale,
                     const float2 *__restrict__ twiddles, CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int n = m.plan.n;
  const MixedBlockRow ctx(smem, n, m.threads, batch);
  const float2 *src = in + (size_t)ctx.transform * n;
  for (int i = ctx.t; i < n; i += m.threads) {
    const float2 v = src[i];
    ctx.a[pad(i)] = make_float2(v.x, sign * v.y);
  }
  __syncthreads();
  const float2 *x = mixed_fft(m.plan, ctx.a, ctx.b, twiddles, ctx.t, m.threads, false);
  if (!ctx.active)
    return;
  float2 *dst = out + (size_t)ctx.transform * n;
  const float re = scale, im = sign * scale;
  for (int i = ctx.t; i < n; i += m.threads) {
    const float2 v = x[pad(i)];
    dst[i] = make_float2(re * v.x, im * v.y);
  }
}

/* R2C of 2N real points (even sizes): the row is N complex points z[m] = x[2m] + i x[2m+1]. */
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_r2c_kernel(const float2 *__restrict__ in, float2 *__restrict__ out, int batch,
                     float /* sign */, float scale, const float2 *__restrict__ twiddles,
                     CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int n = m.plan.n;
  const MixedBlockRow ctx(smem, n, m.threads, batch);
  const float2 *src = in + (size_t)ctx.transform * n;
  for (int i = ctx.t; i < n; i += m.threads)
    ctx.a[pad(i)] = src[i];
  __syncthreads();
  const float2 *z = mixed_fft(m.plan, ctx.a, ctx.b, twiddles, ctx.t, m.threads, false);
  if (!ctx.active)
    return;
  float2 *bins = out + (size_t)ctx.transform * (n + 1);
  const float2 *w = mixed_real_twiddles(m.plan, twiddles);
  for (int k = ctx.t; 2 * k <= n; k += m.threads) {
    float2 xk, xnk;
    mixed_real_forward_pair(z, n, k, w, &xk, &xnk);
    bins[k] = make_float2(scale * xk.x, scale * xk.y);
    if (2 * k != n)
      bins[n - k] = make_float2(scale * xnk.x, scale * xnk.y);
  }
}

/* R2C of N = plan.n real points, N odd: the complex transform of (x[i], 0), bins 0..(N-1)/2. Rows
 * of N floats are 4-byte aligned only, hence 4-byte loads. */
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_r2c_odd_kernel(const float *__restrict__ in, float2 *__restrict__ out, int batch,
                         float /* sign */, float scale, const float2 *__restrict__ twiddles,
                         CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int n = m.plan.n;
  const MixedBlockRow ctx(smem, n, m.threads, batch);
  const float *src = in + (size_t)ctx.transform * n;
  for (int i = ctx.t; i < n; i += m.threads)
    ctx.a[pad(i)] = make_float2(src[i], 0.0f);
  __syncthreads();
  const float2 *x = mixed_fft(m.plan, ctx.a, ctx.b, twiddles, ctx.t, m.threads, false);
  if (!ctx.active)
    return;
  float2 *bins = out + (size_t)ctx.transform * (n / 2 + 1);
  for (int k = ctx.t; k <= n / 2; k += m.threads) {
    const float2 v = x[pad(k)];
    bins[k] = make_float2(scale * v.x, scale * v.y);
  }
}

/* C2R to 2N real points (even sizes) from N + 1 bins. Rows of N + 1 bins are 8-byte aligned
 * only, hence 8-byte loads. */
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_c2r_kernel(const float2 *__restrict__ in, float2 *__restrict__ out, int batch,
                     float /* sign */, float scale, const float2 *__restrict__ twiddles,
                     CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int n = m.plan.n;
  const MixedBlockRow ctx(smem, n, m.threads, batch);
  const float2 *bins = in + (size_t)ctx.transform * (n + 1);
  for (int k = ctx.t; k <= n; k += m.threads)
    ctx.a[pad(k)] = bins[k];
  __syncthreads();
  const float2 *w = mixed_real_twiddles(m.plan, twiddles);
  for (int k = ctx.t; 2 * k <= n; k += m.threads)
    mixed_real_inverse_pair(ctx.a, n, k, w);
  __syncthreads();
  const float2 *z = mixed_fft(m.plan, ctx.a, ctx.b, twiddles, ctx.t, m.threads, true);
  if (!ctx.active)
    return;
  float2 *dst = out + (size_t)ctx.transform * n;
  for (int i = ctx.t; i < n; i += m.threads) {
    const float2 v = z[pad(i)];
    dst[i] = make_float2(scale * v.x, scale * v.y);
  }
}

/* C2R to N = plan.n real points, N odd, from bins 0..(N-1)/2: the Hermitian spectrum X[N-k] =
 * conj X[k] inverse-transformed, its real part. The imaginary part of bin 0 is ignored. */
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_c2r_odd_kernel(const float2 *__restrict__ in, float *__restrict__ out, int batch,
                         float /* sign */, float scale, const float2 *__restrict__ twiddles,
                         CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int n = m.plan.n;
  const MixedBlockRow ctx(smem, n, m.threads, batch);
  const float2 *bins = in + (size_t)ctx.transform * (n / 2 + 1);
  for (int k = ctx.t; k <= n / 2; k += m.threads) {
    const float2 v = bins[k];
    ctx.a[pad(k)] = k == 0 ? make_float2(v.x, 0.0f) : v;
    if (k > 0)
      ctx.a[pad(n - k)] = conj(v);
  }
  __syncthreads();
  const float2 *x = mixed_fft(m.plan, ctx.a, ctx.b, twiddles, ctx.t, m.threads, true);
  if (!ctx.active)
    return;
  float *dst = out + (size_t)ctx.transform * n;
  for (int i = ctx.t; i < n; i += m.threads)
    dst[i] = scale * x[pad(i)].x;
}

__global__ void
scale_kernel(float *data, size_t count, float scale)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    data[i] *= scale;
}

/* The plan kind every FFT kernel is built on. */
constexpr int kKind = kPlanWide;

/* Every kernel takes the same arguments (the real kinds have no use for sign). */
using KernelFn = void (*)(const float2 *, float2 *, int, float, float, const float2 *);

template <int N, KernelFn Kernel>
CudafftBlockKernels
kernel_entry()
{
  return cudafft_block_kernels<N, kKind>((const void *)Kernel);
}

/* The tables by size: C2C runs N = n complex points, the real kinds N = n / 2. */
struct C2cKernels {
  template <int n>
  static CudafftBlockKernels
  entry()
  {
    return kernel_entry<n, c2c_kernel<n, kKind>>();
  }
};
struct R2cKernels {
  template <int n>
  static CudafftBlockKernels
  entry()
  {
    return kernel_entry<n / 2, r2c_kernel<n / 2, kKind>>();
  }
};
struct C2rKernels {
  template <int n>
  static CudafftBlockKernels
  entry()
  {
    return kernel_entry<n / 2, c2r_kernel<n / 2, kKind>>();
  }
};

/* The mixed-radix tables, by size: C2C and the real kinds of odd n run N = n points, the real
 * kinds of even n N = n / 2. */
struct MixedC2cKernels {
  static CudafftBlockKernels
  entry(size_t n)
  {
    return cudafft_mixed_block_kernels((int)n, (const void *)mixed_c2c_kernel);
  }
};
struct MixedR2cKernels {
  static CudafftBlockKernels
  entry(size_t n)
  {
    return n % 2 ? cudafft_mixed_block_kernels((int)n, (const void *)mixed_r2c_odd_kernel)
                 : cudafft_mixed_block_kernels((int)n / 2, (const void *)mixed_r2c_kernel);
  }
};
struct MixedC2rKernels {
  static CudafftBlockKernels
  entry(size_t n)
  {
    return n % 2 ? cudafft_mixed_block_kernels((int)n, (const void *)mixed_c2r_odd_kernel)
                 : cudafft_mixed_block_kernels((int)n / 2, (const void *)mixed_c2r_kernel);
  }
};

const CudafftBlockKernels *
kernel_for(CudafftKind kind, size_t n)
{
  const bool fused = cudafft_is_fused_size(n);
  switch (kind) {
  case CUDAFFT_C2C:
    return fused ? size_table_entry<C2cKernels>(n) : supported_table_entry<MixedC2cKernels>(n);
  case CUDAFFT_R2C:
    return fused ? size_table_entry<R2cKernels>(n) : supported_table_entry<MixedR2cKernels>(n);
  case CUDAFFT_C2R:
    return fused ? size_table_entry<C2rKernels>(n) : supported_table_entry<MixedC2rKernels>(n);
  }
  return nullptr;
}

} // namespace

extern "C" const CudafftBlockKernels *
cudafft_fft_kernel(CudafftKind kind, size_t n)
{
  return kernel_for(kind, n);
}

/* The launch cache keeps a call's argument values in a key of fixed size. */
static_assert(sizeof(CudafftFftArgs) <= CUDAFFT_LAUNCH_ARGS_MAX, "FFT arguments outgrow a launch");

extern "C" void
cudafft_fft_launch_init(CudafftFftLaunch *launch, const CudafftKernel *resolved,
                        const CudafftBlockKernels *kernel, CudafftDirection direction,
                        const void *in, void *out, int batch, float scale, const float2 *twiddles)
{
  memset(&launch->args, 0, sizeof launch->args);
  CudafftFftArgs *a = &launch->args;
  a->in = in;
  a->out = out;
  a->batch = batch;
  a->sign = direction == CUDAFFT_INVERSE ? -1.0f : 1.0f;
  a->scale = scale;
  a->twiddles = twiddles;
  const bool mixed = kernel->twiddles.plan_kind == kPlanMixed;
  if (mixed)
    a->mixed = cudafft_mixed_args(kernel);
  launch->params[0] = &a->in;
  launch->params[1] = &a->out;
  launch->params[2] = &a->batch;
  launch->params[3] = &a->sign;
  launch->params[4] = &a->scale;
  launch->params[5] = &a->twiddles;
  launch->params[6] = mixed ? &a->mixed : nullptr; /* the fused kernels take six */
  launch->launch.kernel = resolved;
  launch->launch.grid = (unsigned)((batch + kernel->per_block - 1) / kernel->per_block);
  launch->launch.block = (unsigned)kernel->block_threads;
  launch->launch.smem = (unsigned)kernel->smem_bytes;
  launch->launch.args = a;
  launch->launch.args_bytes = sizeof *a;
  launch->launch.params = launch->params;
}

extern "C" cudaError_t
cudafft_scale_launch(float *data, size_t count, float scale, cudaStream_t stream)
{
  const int threads = 256;
  const size_t wanted = (count + threads - 1) / threads;
  const int blocks = (int)(wanted < 4096 ? wanted : 4096);
  scale_kernel<<<blocks, threads, 0, stream>>>(data, count, scale);
  return cudaGetLastError();
}
