/* stft_kernels.cu: the STFT's kinds of work (stft_kernels.h): the batched kernels, built from the
 * block FFT's device functions (block_fft.cuh for the powers of two from CUDAFFT_FUSED_MIN_SIZE,
 * mixed_fft.cuh for every other size), and the callbacks that lay out their descriptors and maps.
 *
 * Each kernel body is the per-object kernel it replaces, its parameters read from the job's
 * descriptor: a batch of one job computes exactly what that kernel computed. */
#include "block_fft.cuh"
#include "block_fft_io.cuh"
#include "block_kernels.cuh"
#include "fft_sizes.cuh"
#include "mixed_fft.cuh"
#include "stft_kernels.h"
#include "stft_values.h"

#include <cstdint>

namespace cudafft {

/* The last pass's destination for synthesis: the conjugate of the points (see
 * real_inverse_pre), times the synthesis window g, as real samples. */
struct WindowedRealOut {
  float2 *row; /* nullptr: a row past the batch, which computes but never writes */
  const float2 *g;
};

template <int P, int B, int Ns>
__device__ __forceinline__ void
write_points(WindowedRealOut to, const float2 *v, int j0)
{
  if (!to.row)
    return;
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < P; ++r) {
      const int m = j0 + b + r * Ns;
      const float2 g = __ldg(&to.g[m]);
      to.row[m] = make_float2(v[b * P + r].x * g.x, -v[b * P + r].y * g.y);
    }
}

} // namespace cudafft

using namespace cudafft;

namespace {

constexpr int kWide = kPlanWide;
/* Values (samples of a conversion, sums of an overlap-add) per unit of the flat kernels. */
constexpr size_t kFlatUnit = 2048;

size_t
flat_units(size_t values)
{
  return (values + kFlatUnit - 1) / kFlatUnit;
}

/* What the analysis kernels read of a job. */
struct AnalysisDesc {
  const void *raw; /* the interleaved input; nullptr: zeros */
  float *append;
  size_t pitch;
  size_t total; /* samples x channels values appended */
  unsigned channels;
  int format;
  uint32_t convert_units;
  CudafftSegment move;
  const float *signal;
  const float *window;
  float *out;
  int hop, group, c0, representation;
};

/* What the synthesis kernels read of a job. */
struct SynthesisDesc {
  const float2 *bins;
  float2 *rows;
  const float2 *g;
  const float *tail_in;
  float *tail_out;
  float *out;
  size_t out_samples;
  size_t total; /* (frames hop + n - hop) x group sums */
  int n, hop, frames, group;
};

/* Transform t of a launch is unit map[t] of its job; BlockRow's spare rows take the launch's last
 * transform, which is real, and never write. The twiddles are the launch's: every object of a size
 * has the same table (a kernel parameter stays out of the registers the FFT needs, and one table
 * stays in L1 for every job). */
template <int N>
__global__ void
__launch_bounds__(FftShape<N, kWide>::kBlockThreads)
    analysis_kernel(const AnalysisDesc *__restrict__ descs, const CudafftUnit *__restrict__ map,
                    int count, const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, kWide>;
  extern __shared__ float2 smem[];
  BlockRow<N, kWide> ctx(smem, count);
  const CudafftUnit u = map[ctx.transform];
  const AnalysisDesc &d = descs[u.job];
  const int local = (int)u.index;
  const int frame = local / d.group, channel = d.c0 + local % d.group;
  const WindowedRealIn from{d.signal + channel * d.pitch + (size_t)frame * d.hop, d.window};
  block_fft<N, kWide>(from, ctx.smem, ctx.smem, ctx.t, twiddles);
  if (!ctx.active)
    return;
  const int representation = d.representation;
  float *row =
      d.out + (size_t)local * (N + 1) * (representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1);
  real_forward_post<N, kWide, S::kThreads>(ctx.smem.s, ctx.t, twiddles, [&](int k, float2 x) {
    if (representation == CUDAFFT_REPRESENTATION_COMPLEX)
      reinterpret_cast<float2 *>(row)[k] = x;
    else
      row[k] = cudafft_bin_value((CudafftRepresentation)representation, x.x * x.x + x.y * x.y);
  });
}

template <int N>
__global__ void
__launch_bounds__(FftShape<N, kWide>::kBlockThreads)
    synthesis_kernel(const SynthesisDesc *__restrict__ descs, const CudafftUnit *__restrict__ map,
                     int count, const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, kWide>;
  extern __shared__ float2 smem[];
  BlockRow<N, kWide> ctx(smem, count);
  const CudafftUnit u = map[ctx.transform];
  const SynthesisDesc &d = descs[u.job];
  load_real_bins<N, S::kThreads>(ctx.smem.s, d.bins + (size_t)u.index * (N + 1), ctx.t);
  __syncthreads();
  real_inverse_pre<N, kWide, S::kThreads>(ctx.smem.s, ctx.t, twiddles);
  const WindowedRealOut to{ctx.active ? d.rows + (size_t)u.index * N : nullptr, d.g};
  block_fft<N, kWide>(ctx.smem, ctx.smem, to, ctx.t, twiddles);
}

/* The mixed-radix kernels (every size without a fused kernel): the same work as analysis_kernel
 * and synthesis_kernel, on mixed_fft.cuh's block FFT with the size's plan. Even sizes n run the
 * complex FFT of N = n / 2 points and the real split; odd sizes (Odd) the complex FFT of N = n
 * points of (x, 0), whose bins 0..(n-1)/2 they keep, and synthesis the Hermitian spectrum's. A
 * frame starts at any sample, so its samples are read 4 bytes at a time. */
template <bool Odd>
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_analysis_kernel(const AnalysisDesc *__restrict__ descs,
                          const CudafftUnit *__restrict__ map, int count,
                          const float2 *__restrict__ twiddles, CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int n = m.plan.n, threads = m.threads;
  const MixedBlockRow ctx(smem, n, threads, count);
  const CudafftUnit u = map[ctx.transform];
  const AnalysisDesc &d = descs[u.job];
  const int local = (int)u.index;
  const int frame = local / d.group, channel = d.c0 + local % d.group;
  const float *x = d.signal + channel * d.pitch + (size_t)frame * d.hop;
  const float *w = d.window;
  for (int i = ctx.t; i < n; i += threads)
    ctx.a[pad(i)] =
        Odd ? make_float2(x[i] * __ldg(&w[i]), 0.0f)
            : make_float2(x[2 * i] * __ldg(&w[2 * i]), x[2 * i + 1] * __ldg(&w[2 * i + 1]));
  __syncthreads();
  const float2 *z = mixed_fft(m.plan, ctx.a, ctx.b, twiddles, ctx.t, threads, false);
  if (!ctx.active)
    return;
  const int representation = d.representation;
  const int bins = Odd ? n / 2 + 1 : n + 1;
  float *row =
      d.out + (size_t)local * bins * (representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1);
  const auto emit = [&](int k, float2 v) {
    if (representation == CUDAFFT_REPRESENTATION_COMPLEX)
      reinterpret_cast<float2 *>(row)[k] = v;
    else
      row[k] = cudafft_bin_value((CudafftRepresentation)representation, v.x * v.x + v.y * v.y);
  };
  if (Odd) {
    for (int k = ctx.t; k <= n / 2; k += threads)
      emit(k, z[pad(k)]);
    return;
  }
  const float2 *real_w = mixed_real_twiddles(m.plan, twiddles);
  for (int k = ctx.t; 2 * k <= n; k += threads) {
    float2 xk, xnk;
    mixed_real_forward_pair(z, n, k, real_w, &xk, &xnk);
    emit(k, xk);
    if (2 * k != n)
      emit(n - k, xnk);
  }
}

template <bool Odd>
__global__ void
__launch_bounds__(kMixedMaxBlockThreads)
    mixed_synthesis_kernel(const SynthesisDesc *__restrict__ descs,
                           const CudafftUnit *__restrict__ map, int count,
                           const float2 *__restrict__ twiddles, CudafftMixedArgs m)
{
  extern __shared__ float2 smem[];
  const int n = m.plan.n, threads = m.threads;
  const MixedBlockRow ctx(smem, n, threads, count);
  const CudafftUnit u = map[ctx.transform];
  const SynthesisDesc &d = descs[u.job];
  const int bins = Odd ? n / 2 + 1 : n + 1;
  const float2 *in = d.bins + (size_t)u.index * bins;
  if (Odd) {
    for (int k = ctx.t; k < bins; k += threads) {
      const float2 v = in[k];
      ctx.a[pad(k)] = k == 0 ? make_float2(v.x, 0.0f) : v;
      if (k > 0)
        ctx.a[pad(n - k)] = conj(v);
    }
    __syncthreads();
  } else {
    for (int k = ctx.t; k < bins; k += threads)
      ctx.a[pad(k)] = in[k];
    __syncthreads();
    const float2 *real_w = mixed_real_twiddles(m.plan, twiddles);
    for (int k = ctx.t; 2 * k <= n; k += threads)
      mixed_real_inverse_pair(ctx.a, n, k, real_w);
    __syncthreads();
  }
  const float2 *z = mixed_fft(m.plan, ctx.a, ctx.b, twiddles, ctx.t, threads, true);
  if (!ctx.active)
    return;
  /* the samples times the synthesis window g into the frame's row of the real length */
  const float *g = reinterpret_cast<const float *>(d.g);
  if (Odd) {
    float *row = reinterpret_cast<float *>(d.rows) + (size_t)u.index * n;
    for (int i = ctx.t; i < n; i += threads)
      row[i] = z[pad(i)].x * __ldg(&g[i]);
    return;
  }
  float2 *row = d.rows + (size_t)u.index * n;
  for (int i = ctx.t; i < n; i += threads) {
    const float2 v = z[pad(i)], gi = __ldg(&d.g[i]);
    row[i] = make_float2(v.x * gi.x, v.y * gi.y);
  }
}

/* One block per unit: the conversion of kFlatUnit input values behind the held samples (reads in
 * the interleaved order, coalesced; the planar writes scatter over channels, which costs little
 * next to the transforms), or a part of the held samples' move. */
__global__ void
__launch_bounds__(kCudafftUnitThreads)
    assemble_kernel(const AnalysisDesc *__restrict__ descs, const CudafftUnit *__restrict__ map)
{
  const CudafftUnit u = map[blockIdx.x];
  const AnalysisDesc &d = descs[u.job];
  if (u.index >= d.convert_units) {
    cudafft_segment_unit(d.move, u.index - d.convert_units);
    return;
  }
  const size_t first = (size_t)u.index * kFlatUnit;
  const size_t last = first + kFlatUnit < d.total ? first + kFlatUnit : d.total;
  /* a job's values are fewer than 2^32 (its chunk): 32-bit divisions */
  const unsigned channels = d.channels;
  const size_t pitch = d.pitch;
  float *signal = d.append;
  const void *raw = d.raw;
  const CudafftSampleFormat format = (CudafftSampleFormat)d.format;
  for (unsigned i = (unsigned)first + threadIdx.x; i < (unsigned)last; i += blockDim.x)
    signal[(i % channels) * pitch + i / channels] =
        raw ? cudafft_sample_float(format, raw, i, CUDAFFT_INT_SCALE_POW2) : 0.0f;
}

/* One thread per output sample of one channel, consecutive samples on consecutive threads (the
 * frame rows are read in order). It sums the frames that cover the sample, oldest first, onto the
 * carried sum. */
__global__ void
__launch_bounds__(kCudafftUnitThreads)
    overlap_add_kernel(const SynthesisDesc *__restrict__ descs, const CudafftUnit *__restrict__ map)
{
  const CudafftUnit u = map[blockIdx.x];
  const SynthesisDesc &d = descs[u.job];
  const int n = d.n, hop = d.hop, frames = d.frames, channels = d.group;
  const float *rows = reinterpret_cast<const float *>(d.rows);
  const float *tail_in = d.tail_in;
  const int carried = n - hop;
  const size_t length = (size_t)frames * hop + carried; /* per channel */
  const size_t first = (size_t)u.index * kFlatUnit;
  const size_t last = first + kFlatUnit < d.total ? first + kFlatUnit : d.total;
  /* a job's sums are fewer than 2^32 (its frames): 32-bit divisions */
  const unsigned length32 = (unsigned)length;
  for (unsigned i = (unsigned)first + threadIdx.x; i < (unsigned)last; i += blockDim.x) {
    const int c = (int)(i / length32);
    const size_t p = i % length32;
    float sum = p < (size_t)carried && tail_in ? tail_in[(size_t)c * carried + p] : 0.0f;
    if (frames > 0) {
      const size_t first_frame = p >= (size_t)n ? (p - n) / hop + 1 : 0;
      size_t last_frame = p / hop;
      if (last_frame > (size_t)frames - 1)
        last_frame = frames - 1;
      for (size_t f = first_frame; f <= last_frame; ++f)
        sum += rows[(f * channels + c) * n + (p - f * hop)];
    }
    if (p < d.out_samples)
      d.out[p * channels + c] = sum;
    else if (d.tail_out)
      d.tail_out[(size_t)c * carried + (p - (size_t)frames * hop)] = sum;
  }
}

using AnalyseFn = void (*)(dim3, int, size_t, cudaStream_t, const AnalysisDesc *,
                           const CudafftUnit *, int, const float2 *);
using SynthesiseFn = void (*)(dim3, int, size_t, cudaStream_t, const SynthesisDesc *,
                              const CudafftUnit *, int, const float2 *);

using MixedAnalyseFn = void (*)(dim3, int, size_t, cudaStream_t, const AnalysisDesc *,
                                const CudafftUnit *, int, const float2 *, CudafftMixedArgs);
using MixedSynthesiseFn = void (*)(dim3, int, size_t, cudaStream_t, const SynthesisDesc *,
                                   const CudafftUnit *, int, const float2 *, CudafftMixedArgs);

/* The kernels of a size: the fused power-of-two ones (analyse, synthesise), or the mixed-radix
 * ones (mixed_analyse, mixed_synthesise; shape.twiddles.plan_kind kPlanMixed). */
struct FusedKernels {
  CudafftBlockKernels shape; /* analysis, synthesis */
  AnalyseFn analyse;
  SynthesiseFn synthesise;
  MixedAnalyseFn mixed_analyse;
  MixedSynthesiseFn mixed_synthesise;
};

template <int N>
void
analyse(dim3 grid, int threads, size_t smem, cudaStream_t stream, const AnalysisDesc *descs,
        const CudafftUnit *map, int count, const float2 *twiddles)
{
  analysis_kernel<N><<<grid, threads, smem, stream>>>(descs, map, count, twiddles);
}

template <int N>
void
synthesise(dim3 grid, int threads, size_t smem, cudaStream_t stream, const SynthesisDesc *descs,
           const CudafftUnit *map, int count, const float2 *twiddles)
{
  synthesis_kernel<N><<<grid, threads, smem, stream>>>(descs, map, count, twiddles);
}

template <bool Odd>
void
mixed_analyse(dim3 grid, int threads, size_t smem, cudaStream_t stream, const AnalysisDesc *descs,
              const CudafftUnit *map, int count, const float2 *twiddles, CudafftMixedArgs m)
{
  mixed_analysis_kernel<Odd><<<grid, threads, smem, stream>>>(descs, map, count, twiddles, m);
}

template <bool Odd>
void
mixed_synthesise(dim3 grid, int threads, size_t smem, cudaStream_t stream,
                 const SynthesisDesc *descs, const CudafftUnit *map, int count,
                 const float2 *twiddles, CudafftMixedArgs m)
{
  mixed_synthesis_kernel<Odd><<<grid, threads, smem, stream>>>(descs, map, count, twiddles, m);
}

/* The kernels of each power-of-two size n: the real transforms of n points run the block FFT of
 * n / 2. */
struct FusedTable {
  template <int n>
  static FusedKernels
  entry()
  {
    constexpr int N = n / 2;
    return {cudafft_block_kernels<N, kWide>((const void *)analysis_kernel<N>,
                                            (const void *)synthesis_kernel<N>),
            analyse<N>, synthesise<N>, nullptr, nullptr};
  }
};

/* The mixed-radix kernels of every other size n: the block FFT of n / 2 points for even n, of n
 * for odd n. */
struct MixedTable {
  static FusedKernels
  entry(size_t n)
  {
    if (n % 2)
      return {cudafft_mixed_block_kernels((int)n, (const void *)mixed_analysis_kernel<true>,
                                          (const void *)mixed_synthesis_kernel<true>),
              nullptr, nullptr, mixed_analyse<true>, mixed_synthesise<true>};
    return {cudafft_mixed_block_kernels((int)n / 2, (const void *)mixed_analysis_kernel<false>,
                                        (const void *)mixed_synthesis_kernel<false>),
            nullptr, nullptr, mixed_analyse<false>, mixed_synthesise<false>};
  }
};

const FusedKernels *
kernels_of(size_t n)
{
  return cudafft_is_fused_size(n) ? size_table_entry<FusedTable>(n)
                                  : supported_table_entry<MixedTable>(n);
}

/* Transforms of the jobs by FFT size: per_size[i] for supported size index i (fft_sizes.cuh); the
 * launches go in that order, so a size's transforms are one run of the map. twiddles[i]: the
 * table of the size's first job (every object of a size has the same). */
struct SizeRuns {
  size_t per_size[kSupportedSizesMax] = {};
  size_t first[kSupportedSizesMax] = {};
  const float2 *twiddles[kSupportedSizesMax] = {};

  template <typename Transforms>
  SizeRuns(CudafftJob *const *jobs, size_t count, Transforms &&transforms)
  {
    for (size_t j = 0; j < count; j++) {
      size_t n = 0;
      const float2 *table = nullptr;
      const size_t t = transforms(jobs[j], &n, &table);
      const int i = supported_size_index(n);
      per_size[i] += t;
      if (!twiddles[i])
        twiddles[i] = table;
    }
    for (int i = 1; i < kSupportedSizesMax; i++)
      first[i] = first[i - 1] + per_size[i - 1];
  }

  size_t
  total() const
  {
    return first[kSupportedSizesMax - 1] + per_size[kSupportedSizesMax - 1];
  }
};

/* Queues the kernel of every size present over its run of the map: launch(kernels, grid, descs,
 * map, transforms, twiddles, stream) for a fused size, mixed(kernels, ..., plan) for the others. */
template <typename Desc, typename Launch, typename MixedLaunch>
CudafftStatus
launch_sizes(const SizeRuns &runs, const Desc *descs, const CudafftUnit *map, cudaStream_t stream,
             Launch &&launch, MixedLaunch &&mixed)
{
  const SupportedSizes &sizes = supported_sizes();
  for (int i = 0; i < sizes.count; i++) {
    const size_t count = runs.per_size[i];
    if (count == 0)
      continue;
    const FusedKernels *k = kernels_of((size_t)sizes.size[i]);
    const dim3 grid((unsigned)((count + k->shape.per_block - 1) / k->shape.per_block));
    if (k->shape.twiddles.plan_kind == kPlanMixed)
      mixed(k, grid, descs, map + runs.first[i], (int)count, runs.twiddles[i], stream,
            cudafft_mixed_args(&k->shape));
    else
      launch(k, grid, descs, map + runs.first[i], (int)count, runs.twiddles[i], stream);
    CUDAFFT_CHECK(cudaGetLastError());
  }
  return CUDAFFT_STATUS_OK;
}

/* Analysis ------------------------------------------------------------------------------------ */

const CudafftStftAnalysisJob *
analysis_job(const CudafftJob *job)
{
  return reinterpret_cast<const CudafftStftAnalysisJob *>(job);
}

size_t
convert_units(const CudafftStftAnalysisJob *a)
{
  return flat_units(a->samples * a->channels);
}

size_t
assemble_units(const CudafftStftAnalysisJob *a)
{
  return convert_units(a) + cudafft_segment_units(a->move);
}

size_t
analysis_transforms(const CudafftJob *job, size_t *n, const float2 **twiddles)
{
  const CudafftStftAnalysisJob *a = analysis_job(job);
  *n = a->n;
  *twiddles = a->twiddles;
  return a->frames * a->group;
}

size_t
analysis_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  size_t bytes = kCudafftAuxSlack;
  for (size_t j = 0; j < count; j++) {
    const CudafftStftAnalysisJob *a = analysis_job(jobs[j]);
    bytes +=
        sizeof(AnalysisDesc) + (assemble_units(a) + a->frames * a->group) * sizeof(CudafftUnit);
  }
  return bytes;
}

/* Where the descriptors and the maps are in a batch's auxiliary data. */
struct AnalysisLayout {
  size_t descs, assemble, transforms;
  size_t assemble_count = 0; /* units */

  AnalysisLayout(CudafftJob *const *jobs, size_t count, const SizeRuns &runs)
  {
    for (size_t j = 0; j < count; j++)
      assemble_count += assemble_units(analysis_job(jobs[j]));
    CudafftAuxLayout layout;
    descs = layout.take(count, sizeof(AnalysisDesc));
    assemble = layout.take(assemble_count, sizeof(CudafftUnit));
    transforms = layout.take(runs.total(), sizeof(CudafftUnit));
  }
};

void
analysis_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  const SizeRuns runs(jobs, count, analysis_transforms);
  const AnalysisLayout layout(jobs, count, runs);
  AnalysisDesc *descs = cudafft_aux_at<AnalysisDesc>(host_aux, layout.descs);
  CudafftUnit *assemble = cudafft_aux_at<CudafftUnit>(host_aux, layout.assemble);
  CudafftUnit *transforms = cudafft_aux_at<CudafftUnit>(host_aux, layout.transforms);
  size_t cursor[kSupportedSizesMax];
  for (int i = 0; i < kSupportedSizesMax; i++)
    cursor[i] = runs.first[i];
  for (size_t j = 0; j < count; j++) {
    const CudafftStftAnalysisJob *a = analysis_job(jobs[j]);
    const size_t units = convert_units(a);
    descs[j] = AnalysisDesc{a->zeros || a->samples == 0 ? nullptr : a->job.device_in,
                            a->append,
                            a->pitch,
                            a->samples * a->channels,
                            a->channels,
                            (int)a->format,
                            (uint32_t)units,
                            a->move,
                            a->signal,
                            a->window,
                            static_cast<float *>(a->job.device_out),
                            (int)a->hop,
                            (int)a->group,
                            (int)a->c0,
                            (int)a->representation};
    cudafft_put_units(&assemble, j, assemble_units(a));
    const int size = supported_size_index(a->n);
    CudafftUnit *at = transforms + cursor[size];
    cudafft_put_units(&at, j, a->frames * a->group);
    cursor[size] += a->frames * a->group;
  }
}

CudafftStatus
analysis_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream_)
{
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_);
  const SizeRuns runs(jobs, count, analysis_transforms);
  const AnalysisLayout layout(jobs, count, runs);
  const AnalysisDesc *descs = cudafft_aux_at<AnalysisDesc>(device_aux, layout.descs);
  if (layout.assemble_count > 0) {
    assemble_kernel<<<(unsigned)layout.assemble_count, kCudafftUnitThreads, 0, stream>>>(
        descs, cudafft_aux_at<CudafftUnit>(device_aux, layout.assemble));
    CUDAFFT_CHECK(cudaGetLastError());
  }
  return launch_sizes(
      runs, descs, cudafft_aux_at<CudafftUnit>(device_aux, layout.transforms), stream,
      [](const FusedKernels *k, dim3 grid, const AnalysisDesc *d, const CudafftUnit *map,
         int transforms, const float2 *twiddles, cudaStream_t s) {
        k->analyse(grid, k->shape.block_threads, k->shape.smem_bytes, s, d, map, transforms,
                   twiddles);
      },
      [](const FusedKernels *k, dim3 grid, const AnalysisDesc *d, const CudafftUnit *map,
         int transforms, const float2 *twiddles, cudaStream_t s, CudafftMixedArgs m) {
        k->mixed_analyse(grid, k->shape.block_threads, k->shape.smem_bytes, s, d, map, transforms,
                         twiddles, m);
      });
}

/* Synthesis ----------------------------------------------------------------------------------- */

const CudafftStftSynthesisJob *
synthesis_job(const CudafftJob *job)
{
  return reinterpret_cast<const CudafftStftSynthesisJob *>(job);
}

size_t
synthesis_sums(const CudafftStftSynthesisJob *s)
{
  return (s->frames * s->hop + s->n - s->hop) * s->group;
}

size_t
synthesis_transforms(const CudafftJob *job, size_t *n, const float2 **twiddles)
{
  const CudafftStftSynthesisJob *s = synthesis_job(job);
  *n = s->n;
  *twiddles = s->twiddles;
  return s->frames * s->group;
}

size_t
synthesis_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  size_t bytes = kCudafftAuxSlack;
  for (size_t j = 0; j < count; j++) {
    const CudafftStftSynthesisJob *s = synthesis_job(jobs[j]);
    bytes += sizeof(SynthesisDesc) +
             (s->frames * s->group + flat_units(synthesis_sums(s))) * sizeof(CudafftUnit);
  }
  return bytes;
}

struct SynthesisLayout {
  size_t descs, transforms, sums;
  size_t sum_units = 0;

  SynthesisLayout(CudafftJob *const *jobs, size_t count, const SizeRuns &runs)
  {
    for (size_t j = 0; j < count; j++)
      sum_units += flat_units(synthesis_sums(synthesis_job(jobs[j])));
    CudafftAuxLayout layout;
    descs = layout.take(count, sizeof(SynthesisDesc));
    transforms = layout.take(runs.total(), sizeof(CudafftUnit));
    sums = layout.take(sum_units, sizeof(CudafftUnit));
  }
};

void
synthesis_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  (void)device_aux;
  const SizeRuns runs(jobs, count, synthesis_transforms);
  const SynthesisLayout layout(jobs, count, runs);
  SynthesisDesc *descs = cudafft_aux_at<SynthesisDesc>(host_aux, layout.descs);
  CudafftUnit *transforms = cudafft_aux_at<CudafftUnit>(host_aux, layout.transforms);
  CudafftUnit *sums = cudafft_aux_at<CudafftUnit>(host_aux, layout.sums);
  size_t cursor[kSupportedSizesMax];
  for (int i = 0; i < kSupportedSizesMax; i++)
    cursor[i] = runs.first[i];
  for (size_t j = 0; j < count; j++) {
    const CudafftStftSynthesisJob *s = synthesis_job(jobs[j]);
    descs[j] = SynthesisDesc{static_cast<const float2 *>(s->job.device_in),
                             reinterpret_cast<float2 *>(s->rows),
                             reinterpret_cast<const float2 *>(s->window),
                             s->tail_in,
                             s->tail_out,
                             static_cast<float *>(s->job.device_out),
                             s->out_samples,
                             synthesis_sums(s),
                             (int)s->n,
                             (int)s->hop,
                             (int)s->frames,
                             (int)s->group};
    const int size = supported_size_index(s->n);
    CudafftUnit *at = transforms + cursor[size];
    cudafft_put_units(&at, j, s->frames * s->group);
    cursor[size] += s->frames * s->group;
    cudafft_put_units(&sums, j, flat_units(synthesis_sums(s)));
  }
}

CudafftStatus
synthesis_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream_)
{
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_);
  const SizeRuns runs(jobs, count, synthesis_transforms);
  const SynthesisLayout layout(jobs, count, runs);
  const SynthesisDesc *descs = cudafft_aux_at<SynthesisDesc>(device_aux, layout.descs);
  const CudafftStatus status = launch_sizes(
      runs, descs, cudafft_aux_at<CudafftUnit>(device_aux, layout.transforms), stream,
      [](const FusedKernels *k, dim3 grid, const SynthesisDesc *d, const CudafftUnit *map,
         int transforms, const float2 *twiddles, cudaStream_t s) {
        k->synthesise(grid, k->shape.block_threads, k->shape.smem_bytes, s, d, map, transforms,
                      twiddles);
      },
      [](const FusedKernels *k, dim3 grid, const SynthesisDesc *d, const CudafftUnit *map,
         int transforms, const float2 *twiddles, cudaStream_t s, CudafftMixedArgs m) {
        k->mixed_synthesise(grid, k->shape.block_threads, k->shape.smem_bytes, s, d, map,
                            transforms, twiddles, m);
      });
  if (status != CUDAFFT_STATUS_OK || layout.sum_units == 0)
    return status;
  overlap_add_kernel<<<(unsigned)layout.sum_units, kCudafftUnitThreads, 0, stream>>>(
      descs, cudafft_aux_at<CudafftUnit>(device_aux, layout.sums));
  CUDAFFT_CHECK(cudaGetLastError());
  return CUDAFFT_STATUS_OK;
}

} // namespace

const CudafftBlockKernels *
cudafft_stft_kernels(size_t n)
{
  const FusedKernels *k = kernels_of(n);
  return k ? &k->shape : nullptr;
}

size_t
cudafft_stft_analysis_aux_bytes(const CudafftStftAnalysisJob *job)
{
  CudafftJob *const jobs[1] = {const_cast<CudafftJob *>(&job->job)};
  return analysis_aux_bytes(jobs, 1);
}

size_t
cudafft_stft_synthesis_aux_bytes(const CudafftStftSynthesisJob *job)
{
  CudafftJob *const jobs[1] = {const_cast<CudafftJob *>(&job->job)};
  return synthesis_aux_bytes(jobs, 1);
}

const CudafftWorkKind cudafft_stft_analysis_kind = {
    "STFT analysis", analysis_aux_bytes, analysis_prepare, analysis_launch, nullptr,
};

const CudafftWorkKind cudafft_stft_synthesis_kind = {
    "STFT synthesis", synthesis_aux_bytes, synthesis_prepare, synthesis_launch, nullptr,
};

const CudafftWorkKind cudafft_stft_tables_kind = {
    "STFT tables", cudafft_segment_aux_bytes, cudafft_segment_prepare, cudafft_segment_launch,
    nullptr,
};
