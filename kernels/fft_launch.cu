/* fft_launch.cu: the engine's kernels (one thread block holds whole transforms) and the table
 * that picks one by kind, size and variant. */
#include "fft_kernels.cuh"
#include "fft_launch.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <cmath>

using namespace cudafft;

/* C2C kernels must fit enough blocks for 1024 threads per multiprocessor: the register cap this
 * sets (64 for 256-thread blocks) costs nothing in the FFT and lets a fourth block in, which keeps
 * more loads in flight (measured on an H200: 0.2724 -> 0.2653 ms for 16384 x 4096). The real
 * kinds ran slower under the same cap, so they keep the compiler's choice. */
template <int BlockThreads>
constexpr int kC2cMinBlocks = BlockThreads >= 1024 ? 1 : 1024 / BlockThreads;

namespace {

/* The pass twiddles a kernel hands block_fft: products of a few table rows (the products
 * variant) or all read from the table. */
template <bool Products>
__device__ __forceinline__ auto
twiddles_for(const float2 *__restrict__ table)
{
  if constexpr (Products)
    return ProductTwiddles{table};
  else
    return table;
}

/* C2C: in and out may be the same buffer (every read of a transform precedes its writes, with
 * barriers between), so they are not __restrict__. */
template <int N, int Kind, bool Products>
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
  block_fft<N, Kind>(from, ctx.smem, to, ctx.t, twiddles_for<Products>(twiddles));
}

/* R2C of 2N real points: the row is N complex points z[m] = x[2m] + i x[2m+1]. */
template <int N, int Kind, bool Products>
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
   * registers too and the real step reads only their partners from shared memory (R2C of
   * 64 and 1024 x 4096 on an H100: 1-3% faster, bench/RESULTS.md). */
  constexpr bool kKeep = S::kPlan.radix[S::kPlan.passes - 1] == S::R;
  float2 kept[S::R];
  if constexpr (kKeep)
    block_fft<N, Kind>(GlobalIn{in + row * N, 1.0f}, ctx.smem, SharedKeep{ctx.smem.s, kept}, ctx.t,
                       twiddles_for<Products>(twiddles));
  else
    block_fft<N, Kind>(GlobalIn{in + row * N, 1.0f}, ctx.smem, ctx.smem, ctx.t,
                       twiddles_for<Products>(twiddles));
  if (!ctx.active)
    return;
  float2 *bins = out + row * (N + 1);
  real_forward_post<N, Kind, S::kThreads, Products>(
      ctx.smem.s, kKeep ? kept : nullptr, ctx.t, twiddles,
      [&](int k, float2 x) { bins[k] = make_float2(scale * x.x, scale * x.y); });
}

/* C2R to 2N real points. Rows of N + 1 bins are 8-byte aligned only, hence 8-byte loads. */
template <int N, int Kind, bool Products>
__global__ void
__launch_bounds__(FftShape<N, Kind>::kBlockThreads)
    c2r_kernel(const float2 *__restrict__ in, float2 *__restrict__ out, int batch, float /* sign */,
               float scale, const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, Kind>;
  extern __shared__ float2 smem[];
  BlockRow<N, Kind> ctx(smem, batch);
  if (ctx.active) {
    const float2 *bins = in + (size_t)ctx.transform * (N + 1);
#pragma unroll
    for (int k = ctx.t; k < N; k += S::kThreads)
      ctx.smem.s[pad(k)] = bins[k];
    if (ctx.t == 0)
      ctx.smem.s[pad(N)] = bins[N];
  }
  __syncthreads();
  real_inverse_pre<N, Kind, S::kThreads, Products>(ctx.smem.s, ctx.t, twiddles);
  const GlobalOut to{ctx.active ? out + (size_t)ctx.transform * N : nullptr, scale, -1.0f};
  block_fft<N, Kind>(ctx.smem, ctx.smem, to, ctx.t, twiddles_for<Products>(twiddles));
}

__global__ void
scale_kernel(float *data, size_t count, float scale)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    data[i] *= scale;
}

struct Variant {
  int n_complex; /* N: n for C2C, n / 2 for the real kinds */
  int plan_kind;
  CudafftKernelShape shape;
  const void *kernel; /* for cudaFuncSetAttribute */
  cudaError_t (*launch)(CudafftDirection, const void *, void *, int, float, const float2 *,
                        cudaStream_t);
};

/* Every kernel takes the same arguments (the real kinds have no use for sign), so that one
 * launcher and one table entry maker serve them all. */
using KernelFn = void (*)(const float2 *, float2 *, int, float, float, const float2 *);

template <int N, int Kind, KernelFn Kernel>
cudaError_t
launch(CudafftDirection dir, const void *in, void *out, int batch, float scale, const float2 *tw,
       cudaStream_t stream)
{
  using S = FftShape<N, Kind>;
  const CudafftKernelShape shape = {S::kBlockThreads, S::kPerBlock, S::kSmemBytes};
  Kernel<<<cudafft_kernel_blocks(&shape, batch), S::kBlockThreads, S::kSmemBytes, stream>>>(
      (const float2 *)in, (float2 *)out, batch, cudafft_direction_sign(dir), scale, tw);
  return cudaGetLastError();
}

template <int N, int Kind, KernelFn Kernel>
Variant
make_variant()
{
  using S = FftShape<N, Kind>;
  return {N,
          Kind,
          {S::kBlockThreads, S::kPerBlock, S::kSmemBytes},
          (const void *)Kernel,
          launch<N, Kind, Kernel>};
}

template <int N, int Kind, bool Products>
Variant
c2c_variant()
{
  return make_variant<N, Kind, c2c_kernel<N, Kind, Products>>();
}

template <int N, int Kind, bool Products>
Variant
r2c_variant()
{
  return make_variant<N, Kind, r2c_kernel<N, Kind, Products>>();
}

template <int N, int Kind, bool Products>
Variant
c2r_variant()
{
  return make_variant<N, Kind, c2r_kernel<N, Kind, Products>>();
}

/* Every kernel of one variant, by kind and size: C2C runs N = n, the real kinds N = n / 2. */
template <int Kind, bool Products>
const Variant *
find_variant(CudafftKind kind, size_t n)
{
  static const Variant c2c[] = {
      c2c_variant<256, Kind, Products>(),  c2c_variant<512, Kind, Products>(),
      c2c_variant<1024, Kind, Products>(), c2c_variant<2048, Kind, Products>(),
      c2c_variant<4096, Kind, Products>(), c2c_variant<8192, Kind, Products>(),
      c2c_variant<16384, Kind, Products>()};
  static const Variant r2c[] = {
      r2c_variant<128, Kind, Products>(),  r2c_variant<256, Kind, Products>(),
      r2c_variant<512, Kind, Products>(),  r2c_variant<1024, Kind, Products>(),
      r2c_variant<2048, Kind, Products>(), r2c_variant<4096, Kind, Products>(),
      r2c_variant<8192, Kind, Products>()};
  static const Variant c2r[] = {
      c2r_variant<128, Kind, Products>(),  c2r_variant<256, Kind, Products>(),
      c2r_variant<512, Kind, Products>(),  c2r_variant<1024, Kind, Products>(),
      c2r_variant<2048, Kind, Products>(), c2r_variant<4096, Kind, Products>(),
      c2r_variant<8192, Kind, Products>()};
  int index = 0; /* log2(n) - log2(CUDAFFT_MIN_SIZE) */
  while (((size_t)CUDAFFT_MIN_SIZE << index) < n)
    ++index;
  if (index > 6 || ((size_t)CUDAFFT_MIN_SIZE << index) != n)
    return nullptr;
  switch (kind) {
  case CUDAFFT_C2C:
    return &c2c[index];
  case CUDAFFT_R2C:
    return &r2c[index];
  case CUDAFFT_C2R:
    return &c2r[index];
  }
  return nullptr;
}

const Variant *
variant_for(CudafftKind kind, size_t n, CudafftVariant variant)
{
  switch (variant) {
  case CUDAFFT_VARIANT_WIDE:
    return find_variant<kPlanWide, false>(kind, n);
  case CUDAFFT_VARIANT_PAIRS:
    return find_variant<kPlanPairs, false>(kind, n);
  case CUDAFFT_VARIANT_NARROW:
    return find_variant<kPlanNarrow, false>(kind, n);
  case CUDAFFT_VARIANT_PRODUCTS:
    return find_variant<kPlanWide, true>(kind, n);
  default:
    return nullptr;
  }
}

} // namespace

extern "C" int
cudafft_kernel_shape(CudafftKind kind, size_t n, CudafftVariant variant, CudafftKernelShape *shape)
{
  const Variant *v = variant_for(kind, n, variant);
  if (!v)
    return 0;
  *shape = v->shape;
  return 1;
}

extern "C" cudaError_t
cudafft_kernel_prepare(CudafftKind kind, size_t n, CudafftVariant variant)
{
  const Variant *v = variant_for(kind, n, variant);
  if (!v)
    return cudaErrorInvalidValue;
  if (v->shape.smem_bytes <= 48 * 1024)
    return cudaSuccess;
  return cudaFuncSetAttribute(v->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              (int)v->shape.smem_bytes);
}

extern "C" size_t
cudafft_kernel_twiddle_count(CudafftKind kind, size_t n, CudafftVariant variant)
{
  const Variant *v = variant_for(kind, n, variant);
  return v ? (size_t)twiddle_count(v->n_complex, v->plan_kind) : 0;
}

extern "C" int
cudafft_kernel_table_id(CudafftKind kind, size_t n, CudafftVariant variant)
{
  const Variant *v = variant_for(kind, n, variant);
  return v ? v->plan_kind : -1;
}

extern "C" void
cudafft_kernel_twiddles(CudafftKind kind, size_t n, CudafftVariant variant, float *table)
{
  const Variant *v = variant_for(kind, n, variant);
  if (!v)
    return;
  const double two_pi = 6.283185307179586476925286766559;
  const RadixPlan plan = make_radix_plan(v->n_complex, v->plan_kind);
  size_t o = 0;
  /* the pass twiddles W_(Ns P)^(k r), in the order pass_twiddle_offset() counts them */
  for (int i = 0, ns = 1; i < plan.passes; ns *= plan.radix[i], ++i) {
    if (ns == 1)
      continue;
    for (int r = 1; r < plan.radix[i]; ++r)
      for (int k = 0; k < ns; ++k) {
        const double angle = -two_pi * ((double)k * r) / ((double)ns * plan.radix[i]);
        table[2 * o] = (float)cos(angle);
        table[2 * o + 1] = (float)sin(angle);
        ++o;
      }
  }
  /* then W_2N^k for the real transforms' post- and pre-processing */
  for (int k = 0; k <= v->n_complex / 2; ++k) {
    const double angle = -two_pi * k / (2.0 * v->n_complex);
    table[2 * o] = (float)cos(angle);
    table[2 * o + 1] = (float)sin(angle);
    ++o;
  }
}

extern "C" cudaError_t
cudafft_kernel_launch(CudafftKind kind, size_t n, CudafftVariant variant,
                      CudafftDirection direction, const void *in, void *out, int batch, float scale,
                      const float2 *twiddles, cudaStream_t stream)
{
  const Variant *v = variant_for(kind, n, variant);
  if (!v)
    return cudaErrorInvalidValue;
  return v->launch(direction, in, out, batch, scale, twiddles, stream);
}

/* The runtime error a driver launch error stands for (the codes of the two enums are not
 * promised to agree). */
static cudaError_t
runtime_error_of(CUresult result)
{
  switch (result) {
  case CUDA_SUCCESS:
    return cudaSuccess;
  case CUDA_ERROR_INVALID_VALUE:
    return cudaErrorInvalidValue;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return cudaErrorMemoryAllocation;
  case CUDA_ERROR_INVALID_HANDLE:
    return cudaErrorInvalidResourceHandle;
  case CUDA_ERROR_INVALID_CONTEXT:
    return cudaErrorDeviceUninitialized;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return cudaErrorLaunchOutOfResources;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return cudaErrorIllegalAddress;
  case CUDA_ERROR_NO_DEVICE:
    return cudaErrorNoDevice;
  default:
    return cudaErrorLaunchFailure;
  }
}

/* The driver's cuLaunchKernel, looked up by the first plan that finds it and kept for the
 * process; a failed lookup is not kept, so that the next plan asks again. Plans may be made on
 * several threads at once: both would find the same entry. */
static cudaError_t
driver_launch_entry(void **entry)
{
  static std::atomic<void *> kept{nullptr};
  *entry = kept.load(std::memory_order_acquire);
  if (*entry)
    return cudaSuccess;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t error =
      cudaGetDriverEntryPointByVersion("cuLaunchKernel", entry, 4000, cudaEnableDefault, &found);
  if (error == cudaSuccess && found != cudaDriverEntryPointSuccess)
    error = cudaErrorSymbolNotFound;
  if (error == cudaSuccess)
    kept.store(*entry, std::memory_order_release);
  return error;
}

extern "C" cudaError_t
cudafft_kernel_resolve(CudafftKind kind, size_t n, CudafftVariant variant, CudafftKernel *kernel)
{
  const Variant *v = variant_for(kind, n, variant);
  if (!v)
    return cudaErrorInvalidValue;
  cudaError_t error = driver_launch_entry(&kernel->driver_launch);
  if (error == cudaSuccess)
    error = cudaGetFuncBySymbol(&kernel->function, v->kernel);
  kernel->entry = v->kernel;
  kernel->shape = v->shape;
  return error;
}

extern "C" cudaError_t
cudafft_kernel_run(const CudafftKernel *kernel, CudafftDirection direction, const void *in,
                   void *out, int batch, float scale, const float2 *twiddles, cudaStream_t stream)
{
  const CudafftKernelShape &shape = kernel->shape;
  CudafftKernelArgs args;
  cudafft_kernel_args(&args, direction, in, out, batch, scale, twiddles);
  const auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(kernel->driver_launch);
  return runtime_error_of(launch((CUfunction)kernel->function, cudafft_kernel_blocks(&shape, batch),
                                 1, 1, (unsigned)shape.block_threads, 1, 1,
                                 (unsigned)shape.smem_bytes, (CUstream)stream, args.params,
                                 nullptr));
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
