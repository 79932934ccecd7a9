/* fft_kernels.cu: the FFT engine's kernels (fft_kernels.h). Each is the block FFT of
 * block_fft.cuh with twiddles made as products of a few table rows (ProductTwiddles), the
 * fastest of the variants measured at every batch (bench/HISTORY.md). */
#include "block_fft.cuh"
#include "block_kernels.cuh"
#include "fft_kernels.h"
#include "fft_sizes.cuh"

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

const CudafftBlockKernels *
kernel_for(CudafftKind kind, size_t n)
{
  switch (kind) {
  case CUDAFFT_C2C:
    return size_table_entry<C2cKernels>(n);
  case CUDAFFT_R2C:
    return size_table_entry<R2cKernels>(n);
  case CUDAFFT_C2R:
    return size_table_entry<C2rKernels>(n);
  }
  return nullptr;
}

} // namespace

extern "C" const CudafftBlockKernels *
cudafft_fft_kernel(CudafftKind kind, size_t n)
{
  return kernel_for(kind, n);
}

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
  launch->params[0] = &a->in;
  launch->params[1] = &a->out;
  launch->params[2] = &a->batch;
  launch->params[3] = &a->sign;
  launch->params[4] = &a->scale;
  launch->params[5] = &a->twiddles;
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
