/* spectrum_kernels.cu: the spectrum's kernels, the fused one built from the block FFT's device
 * functions, and its kind of work (spectrum_kernels.h): the callbacks that lay out a batch's
 * descriptors, FFT lists and unit maps, and launch each stage once for every job of the batch.
 *
 * Each kernel body is the per-object kernel it replaces, its parameters read from the job's
 * descriptor: a batch of one job computes exactly what that kernel computed. */
#include "block_fft.cuh"
#include "block_fft_io.cuh"
#include "block_kernels.cuh"
#include "fft_sizes.cuh"
#include "global_memory.cuh"
#include "spectrum_kernels.h"
#include "spectrum_values.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

using namespace cudafft;

namespace {

constexpr int kWide = kPlanWide;

/* Enough blocks for 1024 threads per multiprocessor, as for the C2C kernels: the register cap this
 * sets (for the 128-thread blocks of nfft 4096; a few bytes spill at most) lets one more block
 * in (then shared memory limits), which keeps more loads in flight in this latency-bound kernel.
 * Raising the shared-memory carveout as well made it slower: the window and twiddles lose L1. The
 * measurements (spectrum-kernel-bench) are in bench/HISTORY.md. */
template <int BlockThreads>
constexpr int kFusedMinBlocks = BlockThreads >= 1024 ? 1 : 1024 / BlockThreads;

/* Adds v into a band's sum, or stores it where the FFT is its slot's only contribution (which
 * spares zeroing the slot first). */
__device__ __forceinline__ void
put(float *sum, float v, bool store)
{
  if (store)
    *sum = v;
  else
    atomicAdd(sum, v);
}

/* put() with the choice made at compile time, for the fused kernel without phases: a transform's
 * values are all stored or all added, so it chooses once per transform, and each band's value
 * costs its store (or atomic) alone instead of a branch around both with the address arithmetic
 * of each. */
template <bool Store>
__device__ __forceinline__ void
put(float *sum, float v)
{
  if constexpr (Store)
    *sum = v;
  else
    atomicAdd(sum, v);
}

/* A transform's job and row (its unit's job and row fields), written to shared memory by the
 * transform's thread 0 before the FFT and read back after it (block_fft's barriers order the two):
 * held in registers across the FFT, values like these pushed the FFT's live points past the
 * register cap into local memory. The job's descriptor is read after the FFT, so that nothing but
 * the unit stands between a block's start and its first samples. */
struct FusedOut {
  uint32_t job, row;
};

/* One block row per transform: units[t] says where its samples are, which row its levels go to
 * and how, and its job (BlockRow's spare rows take the launch's last transform, which is real,
 * and never write). Window on load, the half-length complex FFT in shared memory, then each bin
 * once from real_forward_post straight into its row: consecutive bands from consecutive threads.
 * The pointers read from memory go through global(). */
template <int N, bool Phase>
__global__ void
__launch_bounds__(FftShape<N, kWide>::kBlockThreads,
                  kFusedMinBlocks<FftShape<N, kWide>::kBlockThreads>)
    fused_kernel(const CudafftSpectrumFusedDesc *__restrict__ descs,
                 const CudafftSpectrumFusedUnit *__restrict__ units, int count,
                 const float *__restrict__ window, float norm_db,
                 const float2 *__restrict__ twiddles)
{
  using S = FftShape<N, kWide>;
  extern __shared__ float2 smem[];
  __shared__ FusedOut outs[S::kPerBlock];
  BlockRow<N, kWide> ctx(smem, count);
  FusedOut &out = outs[threadIdx.x / S::kThreads];
  {
    const CudafftSpectrumFusedUnit u = units[ctx.transform];
    if (ctx.t == 0)
      out = FusedOut{u.job, u.row};
    const WindowedRealIn from{global(u.samples), window};
    block_fft<N, kWide>(from, ctx.smem, ctx.smem, ctx.t, twiddles);
  }
  if (!ctx.active)
    return;
  const FusedOut o = out;
  const CudafftSpectrumFusedDesc &d = descs[o.job];
  const size_t row = (size_t)(o.row >> 1) * (N + 1);
  float *level_row = global(d.magnitude) + row;
  float *phase_row = Phase ? global(d.phase) + row : nullptr;
  const int threshold = d.threshold;
  if constexpr (Phase) {
    /* With phases the choice stays per band: two post loops made ptxas spill the FFT's points in
     * the phase kernels (24 bytes of stack at nfft 1024, 8 at 8192, where this one loop has
     * none), and a band's phase (atan2) costs many times the branch. */
    const bool store = (o.row & 1) != 0;
    real_forward_post<N, kWide, S::kThreads>(ctx.smem.s, ctx.t, twiddles, [&](int k, float2 x) {
      put(&level_row[k], cudafft_spectrum_level(x.x * x.x + x.y * x.y, norm_db, threshold), store);
      put(&phase_row[k], cudafft_spectrum_phase(x.x, x.y), store);
    });
  } else {
    const auto post = [&](auto stores) {
      constexpr bool kStore = decltype(stores)::value;
      real_forward_post<N, kWide, S::kThreads>(ctx.smem.s, ctx.t, twiddles, [&](int k, float2 x) {
        put<kStore>(&level_row[k],
                    cudafft_spectrum_level(x.x * x.x + x.y * x.y, norm_db, threshold));
      });
    };
    if (o.row & 1)
      post(std::true_type{});
    else
      post(std::false_type{});
  }
}

/* The flat kernels below index with Index: unsigned where the launch's indices (and their last
 * grid stride) fit in 32 bits, which spares 64-bit divisions, else size_t. */
template <typename Index>
bool
fits(size_t total, size_t extra)
{
  return total <= (size_t)(Index)-1 - extra;
}

constexpr int kFlatThreads = 256;
constexpr unsigned kFlatMaxBlocks = 65536;
/* the most one flat launch's grid stride adds to an index */
constexpr size_t kFlatMaxStride = (size_t)kFlatThreads * kFlatMaxBlocks;

unsigned
flat_blocks(size_t total)
{
  const size_t wanted = (total + kFlatThreads - 1) / kFlatThreads;
  return (unsigned)(wanted < kFlatMaxBlocks ? (wanted > 0 ? wanted : 1) : kFlatMaxBlocks);
}

/* Pairs are numbered from the launch's first one: local pair p is pair first_pair + p, whose FFT
 * is first_fft + (first_s + p) / spectra (first_pair = first_fft spectra + first_s), so that the
 * divisions stay in Index. One thread per value, consecutive values on consecutive threads. */
template <typename Index>
__global__ void
gather_kernel(Index n, const float *__restrict__ signal, size_t pitch, Index spectra,
              const CudafftSpectrumLaunchFft *__restrict__ ffts, Index first_s, Index total,
              const float *__restrict__ window, float *__restrict__ frames)
{
  for (Index i = blockIdx.x * (Index)blockDim.x + threadIdx.x; i < total;
       i += (Index)gridDim.x * blockDim.x) {
    const Index r = i / n, k = i - r * n;
    const Index p = first_s + r, f = p / spectra, s = p - f * spectra;
    frames[i] = signal[(size_t)s * pitch + ffts[f].end + k] * __ldg(&window[k]);
  }
}

template <typename Index, bool Phase>
__global__ void
accumulate_kernel(Index bands, Index spectra, const CudafftSpectrumLaunchFft *__restrict__ ffts,
                  Index first_s, Index total, const float2 *__restrict__ bins, float norm_db,
                  int threshold, float *__restrict__ magnitude, float *__restrict__ phase)
{
  for (Index i = blockIdx.x * (Index)blockDim.x + threadIdx.x; i < total;
       i += (Index)gridDim.x * blockDim.x) {
    const Index r = i / bands, k = i - r * bands;
    const Index p = first_s + r, f = p / spectra, s = p - f * spectra;
    const CudafftSpectrumLaunchFft fft = ffts[f];
    const size_t at = ((size_t)fft.slot * spectra + s) * bands + k;
    float2 x = bins[i];
    /* The DC and Nyquist bins of a real signal are real; cuFFT may leave -0 or a rounding error in
     * their imaginary parts, whose phase would read -pi or noise where spectrum's is 0 or pi. */
    if (k == 0 || k == bands - 1)
      x.y = 0.0f;
    const bool store = fft.store != 0;
    put(&magnitude[at], cudafft_spectrum_level(x.x * x.x + x.y * x.y, norm_db, threshold), store);
    if (Phase)
      put(&phase[at], cudafft_spectrum_phase(x.x, x.y), store);
  }
}

using FusedFn = void (*)(dim3, int, size_t, cudaStream_t, const CudafftSpectrumFusedDesc *,
                         const CudafftSpectrumFusedUnit *, int, const float *, float,
                         const float2 *);

struct FusedKernels {
  CudafftBlockKernels shape; /* without, with phase */
  FusedFn launch[2];
};

template <int N, bool Phase>
void
launch_fused(dim3 grid, int threads, size_t smem, cudaStream_t stream,
             const CudafftSpectrumFusedDesc *descs, const CudafftSpectrumFusedUnit *units,
             int count, const float *window, float norm_db, const float2 *twiddles)
{
  fused_kernel<N, Phase>
      <<<grid, threads, smem, stream>>>(descs, units, count, window, norm_db, twiddles);
}

/* The kernels of each size nfft: the real transforms of nfft points run the block FFT of
 * nfft / 2. */
struct FusedTable {
  template <int nfft>
  static FusedKernels
  entry()
  {
    constexpr int N = nfft / 2;
    return {cudafft_block_kernels<N, kWide>((const void *)fused_kernel<N, false>,
                                            (const void *)fused_kernel<N, true>),
            {launch_fused<N, false>, launch_fused<N, true>}};
  }
};

} // namespace

const CudafftBlockKernels *
cudafft_spectrum_fused_kernels(size_t nfft)
{
  const FusedKernels *k = size_table_entry<FusedTable>(nfft);
  return k ? &k->shape : nullptr;
}

cudaError_t
cudafft_spectrum_fused_batch(size_t nfft, int phase, const CudafftSpectrumFusedDesc *descs,
                             const CudafftSpectrumFusedUnit *units, size_t transforms,
                             const float *window, float norm_db, const float2 *twiddles,
                             cudaStream_t stream)
{
  const FusedKernels *k = size_table_entry<FusedTable>(nfft);
  if (!k || transforms > (size_t)INT_MAX - (size_t)k->shape.per_block)
    return cudaErrorInvalidValue;
  if (transforms == 0)
    return cudaSuccess;
  const dim3 grid((unsigned)((transforms + k->shape.per_block - 1) / k->shape.per_block));
  k->launch[phase ? 1 : 0](grid, k->shape.block_threads, k->shape.smem_bytes, stream, descs, units,
                           (int)transforms, window, norm_db, twiddles);
  return cudaGetLastError();
}

cudaError_t
cudafft_spectrum_gather_launch(size_t nfft, const float *signal, size_t pitch, size_t spectra,
                               const CudafftSpectrumLaunchFft *ffts, size_t first, size_t count,
                               const float *window, float *frames, cudaStream_t stream)
{
  if (count == 0)
    return cudaSuccess;
  if (spectra == 0 || nfft == 0 || count > SIZE_MAX / nfft)
    return cudaErrorInvalidValue;
  const size_t total = count * nfft;
  const size_t first_s = first % spectra;
  ffts += first / spectra;
  const unsigned blocks = flat_blocks(total);
  if (fits<unsigned>(total, kFlatMaxStride) && fits<unsigned>(first_s + count, spectra))
    gather_kernel<unsigned><<<blocks, kFlatThreads, 0, stream>>>(
        (unsigned)nfft, signal, pitch, (unsigned)spectra, ffts, (unsigned)first_s, (unsigned)total,
        window, frames);
  else
    gather_kernel<size_t><<<blocks, kFlatThreads, 0, stream>>>(nfft, signal, pitch, spectra, ffts,
                                                               first_s, total, window, frames);
  return cudaGetLastError();
}

cudaError_t
cudafft_spectrum_accumulate_launch(size_t bands, size_t spectra,
                                   const CudafftSpectrumLaunchFft *ffts, size_t first, size_t count,
                                   const float2 *bins, float norm_db, int threshold,
                                   float *magnitude, float *phase, cudaStream_t stream)
{
  if (count == 0)
    return cudaSuccess;
  if (spectra == 0 || bands == 0 || count > SIZE_MAX / bands)
    return cudaErrorInvalidValue;
  const size_t total = count * bands;
  const size_t first_s = first % spectra;
  ffts += first / spectra;
  const unsigned blocks = flat_blocks(total);
  if (fits<unsigned>(total, kFlatMaxStride) && fits<unsigned>(first_s + count, spectra)) {
    if (phase)
      accumulate_kernel<unsigned, true><<<blocks, kFlatThreads, 0, stream>>>(
          (unsigned)bands, (unsigned)spectra, ffts, (unsigned)first_s, (unsigned)total, bins,
          norm_db, threshold, magnitude, phase);
    else
      accumulate_kernel<unsigned, false><<<blocks, kFlatThreads, 0, stream>>>(
          (unsigned)bands, (unsigned)spectra, ffts, (unsigned)first_s, (unsigned)total, bins,
          norm_db, threshold, magnitude, phase);
  } else {
    if (phase)
      accumulate_kernel<size_t, true><<<blocks, kFlatThreads, 0, stream>>>(
          bands, spectra, ffts, first_s, total, bins, norm_db, threshold, magnitude, phase);
    else
      accumulate_kernel<size_t, false><<<blocks, kFlatThreads, 0, stream>>>(
          bands, spectra, ffts, first_s, total, bins, norm_db, threshold, magnitude, phase);
  }
  return cudaGetLastError();
}

/* The run kind ------------------------------------------------------------------------------- */

namespace {

/* Values (converted samples, sums out) per unit of the flat kernels. */
constexpr size_t kFlatUnit = 2048;

size_t
flat_units(size_t values)
{
  return (values + kFlatUnit - 1) / kFlatUnit;
}

/* What the first stage reads of a job. */
struct AssembleDesc {
  const uint8_t *raw;
  float *append;
  size_t pitch, frame_bytes;
  size_t total; /* frames x spectra values */
  unsigned channels, spectra;
  int multi_channel, format;
  uint32_t convert_units;
  unsigned segment_count;
  CudafftSegment segments[CUDAFFT_SPECTRUM_SEGMENTS];
};

/* What the last stage reads of a job. */
struct OutputDesc {
  float *magnitude, *phase; /* phase NULL: none */
  float *out;
  size_t slot_floats, closed, out_first, out_count;
  int move;
};

/* One block per unit: a part of the conversion (one thread per (frame, spectrum), the spectra of a
 * frame on adjacent threads, which read adjacent samples of the frame; the writes scatter over
 * the rows, which costs little next to the transforms), or of a segment. */
__global__ void
__launch_bounds__(kCudafftUnitThreads)
    assemble_kernel(const AssembleDesc *__restrict__ descs, const CudafftUnit *__restrict__ map)
{
  const CudafftUnit u = map[blockIdx.x];
  const AssembleDesc &d = descs[u.job];
  if (u.index >= d.convert_units) {
    size_t unit = u.index - d.convert_units;
    for (unsigned i = 0; i < d.segment_count; i++) {
      const size_t units = cudafft_segment_units(d.segments[i]);
      if (unit < units) {
        cudafft_segment_unit(d.segments[i], unit);
        return;
      }
      unit -= units;
    }
    return;
  }
  const size_t first = (size_t)u.index * kFlatUnit;
  const size_t last = first + kFlatUnit < d.total ? first + kFlatUnit : d.total;
  /* a run's values are fewer than 2^32 (its bounds): 32-bit divisions */
  const unsigned spectra = d.spectra;
  const size_t pitch = d.pitch, frame_bytes = d.frame_bytes;
  const CudafftSampleFormat format = (CudafftSampleFormat)d.format;
  const uint8_t *raw = d.raw;
  float *signal = d.append;
  for (unsigned i = (unsigned)first + threadIdx.x; i < (unsigned)last; i += blockDim.x) {
    const unsigned j = i / spectra, s = i - j * spectra;
    signal[s * pitch + j] = cudafft_spectrum_frame_value(format, raw + (size_t)j * frame_bytes,
                                                         d.channels, d.multi_channel, s);
  }
}

/* One thread per value out, in the output's order. With move, the thread of a slot-0 value also
 * moves the open slot's value there once it has read it: no other thread reads or writes it. */
__global__ void
__launch_bounds__(kCudafftUnitThreads)
    outputs_kernel(const OutputDesc *__restrict__ descs, const CudafftUnit *__restrict__ map)
{
  const CudafftUnit u = map[blockIdx.x];
  const OutputDesc &d = descs[u.job];
  const size_t first = (size_t)u.index * kFlatUnit;
  const size_t last = first + kFlatUnit < d.out_count ? first + kFlatUnit : d.out_count;
  const size_t per_array = d.closed * d.slot_floats;
  for (size_t e = first + threadIdx.x; e < last; e += blockDim.x) {
    const size_t g = d.out_first + e;
    const bool phases = g >= per_array;
    const size_t r = phases ? g - per_array : g;
    float *sums = phases ? d.phase : d.magnitude;
    d.out[e] = sums[r];
    if (d.move && r < d.slot_floats)
      sums[r] = sums[per_array + r];
  }
}

const CudafftSpectrumRunJob *
run_job(const CudafftJob *job)
{
  return reinterpret_cast<const CudafftSpectrumRunJob *>(job);
}

size_t
convert_units(const CudafftSpectrumRunJob *r)
{
  return flat_units(r->frames * r->spectra);
}

size_t
assemble_units(const CudafftSpectrumRunJob *r)
{
  size_t units = convert_units(r);
  for (unsigned i = 0; i < r->segment_count; i++)
    units += cudafft_segment_units(r->segments[i]);
  return units;
}

size_t
fused_transforms(const CudafftSpectrumRunJob *r)
{
  return r->fused_path ? r->fft_count * r->spectra : 0;
}

/* The fused launches: one per (size, phase) present, each over its run of the transform units. */
struct FusedRuns {
  size_t per[kSizeCount][2] = {};
  size_t first[kSizeCount][2] = {};
  size_t total = 0;
  const CudafftSpectrumRunJob *tables[kSizeCount] = {}; /* the first job of each size */

  FusedRuns(CudafftJob *const *jobs, size_t count)
  {
    for (size_t j = 0; j < count; j++) {
      const CudafftSpectrumRunJob *r = run_job(jobs[j]);
      if (fused_transforms(r) == 0)
        continue;
      const int i = size_index(r->nfft);
      per[i][r->phase ? 1 : 0] += fused_transforms(r);
      if (!tables[i])
        tables[i] = r;
    }
    for (int i = 0; i < kSizeCount; i++)
      for (int p = 0; p < 2; p++) {
        first[i][p] = total;
        total += per[i][p];
      }
  }
};

/* Where the descriptors, the FFT lists and the maps are in a batch's auxiliary data. */
struct RunLayout {
  size_t fused, assemble, outputs, ffts, assemble_map, transform_map, output_map;
  size_t assemble_count = 0, output_count = 0, fft_total = 0; /* units, units, FFTs */

  RunLayout(CudafftJob *const *jobs, size_t count, const FusedRuns &runs)
  {
    for (size_t j = 0; j < count; j++) {
      const CudafftSpectrumRunJob *r = run_job(jobs[j]);
      assemble_count += assemble_units(r);
      output_count += flat_units(r->out_count);
      fft_total += r->fft_count;
    }
    CudafftAuxLayout layout;
    fused = layout.take(count, sizeof(CudafftSpectrumFusedDesc));
    assemble = layout.take(count, sizeof(AssembleDesc));
    outputs = layout.take(count, sizeof(OutputDesc));
    ffts = layout.take(fft_total, sizeof(CudafftSpectrumLaunchFft));
    assemble_map = layout.take(assemble_count, sizeof(CudafftUnit));
    transform_map = layout.take(runs.total, sizeof(CudafftSpectrumFusedUnit));
    output_map = layout.take(output_count, sizeof(CudafftUnit));
  }
};

size_t
job_aux_bytes(const CudafftSpectrumRunJob *r)
{
  return sizeof(CudafftSpectrumFusedDesc) + sizeof(AssembleDesc) + sizeof(OutputDesc) +
         r->fft_count * sizeof(CudafftSpectrumLaunchFft) +
         fused_transforms(r) * sizeof(CudafftSpectrumFusedUnit) +
         (assemble_units(r) + flat_units(r->out_count)) * sizeof(CudafftUnit);
}

size_t
run_aux_bytes(CudafftJob *const *jobs, size_t count)
{
  size_t bytes = kCudafftAuxSlack;
  for (size_t j = 0; j < count; j++)
    bytes += job_aux_bytes(run_job(jobs[j]));
  return bytes;
}

void
run_prepare(CudafftJob *const *jobs, size_t count, void *host_aux, void *device_aux)
{
  const FusedRuns runs(jobs, count);
  const RunLayout layout(jobs, count, runs);
  CudafftSpectrumFusedDesc *fused =
      cudafft_aux_at<CudafftSpectrumFusedDesc>(host_aux, layout.fused);
  AssembleDesc *assemble = cudafft_aux_at<AssembleDesc>(host_aux, layout.assemble);
  OutputDesc *outputs = cudafft_aux_at<OutputDesc>(host_aux, layout.outputs);
  CudafftSpectrumLaunchFft *ffts = cudafft_aux_at<CudafftSpectrumLaunchFft>(host_aux, layout.ffts);
  const CudafftSpectrumLaunchFft *device_ffts =
      cudafft_aux_at<CudafftSpectrumLaunchFft>(device_aux, layout.ffts);
  CudafftUnit *assemble_map = cudafft_aux_at<CudafftUnit>(host_aux, layout.assemble_map);
  CudafftSpectrumFusedUnit *transform_map =
      cudafft_aux_at<CudafftSpectrumFusedUnit>(host_aux, layout.transform_map);
  CudafftUnit *output_map = cudafft_aux_at<CudafftUnit>(host_aux, layout.output_map);
  size_t cursor[kSizeCount][2];
  for (int i = 0; i < kSizeCount; i++)
    for (int p = 0; p < 2; p++)
      cursor[i][p] = runs.first[i][p];
  for (size_t j = 0; j < count; j++) {
    const CudafftSpectrumRunJob *r = run_job(jobs[j]);
    fused[j] = r->fused;
    fused[j].ffts = device_ffts;
    if (r->fft_count > 0)
      memcpy(ffts, r->ffts, r->fft_count * sizeof *ffts);
    ffts += r->fft_count;
    device_ffts += r->fft_count;

    AssembleDesc &a = assemble[j];
    a.raw = r->frames > 0 ? static_cast<const uint8_t *>(r->job.device_in) : nullptr;
    a.append = r->append;
    a.pitch = r->pitch;
    a.frame_bytes = r->frame_bytes;
    a.total = r->frames * r->spectra;
    a.channels = r->channels;
    a.spectra = (unsigned)r->spectra;
    a.multi_channel = r->multi_channel;
    a.format = (int)r->format;
    a.convert_units = (uint32_t)convert_units(r);
    a.segment_count = r->segment_count;
    for (unsigned i = 0; i < r->segment_count; i++)
      a.segments[i] = r->segments[i];
    cudafft_put_units(&assemble_map, j, assemble_units(r));

    if (fused_transforms(r) > 0) {
      size_t &at = cursor[size_index(r->nfft)][r->phase ? 1 : 0];
      CudafftSpectrumFusedUnit *units = transform_map + at;
      /* pair p: FFT p / spectra of spectrum p % spectra */
      for (size_t f = 0; f < r->fft_count; f++) {
        const CudafftSpectrumLaunchFft &fft = r->ffts[f];
        for (size_t s = 0; s < r->spectra; s++) {
          const float *samples = r->fused.signal + s * r->fused.pitch + fft.end;
          *units++ = cudafft_spectrum_fused_unit(samples, j, fft.slot * r->spectra + s, fft.store);
        }
      }
      at += fused_transforms(r);
    }

    outputs[j] =
        OutputDesc{r->magnitude_sums, r->phase_sums, static_cast<float *>(r->job.device_out),
                   r->slot_floats,    r->closed,     r->out_first,
                   r->out_count,      r->move};
    cudafft_put_units(&output_map, j, flat_units(r->out_count));
  }
}

CudafftStatus
run_launch(CudafftJob *const *jobs, size_t count, void *device_aux, void *stream_)
{
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_);
  const FusedRuns runs(jobs, count);
  const RunLayout layout(jobs, count, runs);
  if (layout.assemble_count > 0) {
    assemble_kernel<<<(unsigned)layout.assemble_count, kCudafftUnitThreads, 0, stream>>>(
        cudafft_aux_at<AssembleDesc>(device_aux, layout.assemble),
        cudafft_aux_at<CudafftUnit>(device_aux, layout.assemble_map));
    CUDAFFT_CHECK(cudaGetLastError());
  }
  const CudafftSpectrumFusedDesc *fused =
      cudafft_aux_at<CudafftSpectrumFusedDesc>(device_aux, layout.fused);
  const CudafftSpectrumFusedUnit *transform_map =
      cudafft_aux_at<CudafftSpectrumFusedUnit>(device_aux, layout.transform_map);
  for (int i = 0; i < kSizeCount; i++)
    for (int p = 0; p < 2; p++)
      if (runs.per[i][p] > 0)
        CUDAFFT_CHECK(cudafft_spectrum_fused_batch((size_t)CUDAFFT_FUSED_MIN_SIZE << i, p, fused,
                                                   transform_map + runs.first[i][p], runs.per[i][p],
                                                   runs.tables[i]->window, runs.tables[i]->norm_db,
                                                   runs.tables[i]->twiddles, stream));
  const CudafftSpectrumLaunchFft *device_ffts =
      cudafft_aux_at<CudafftSpectrumLaunchFft>(device_aux, layout.ffts);
  for (size_t j = 0; j < count; j++) {
    const CudafftSpectrumRunJob *r = run_job(jobs[j]);
    if (!r->fused_path && r->fft_count > 0) {
      const CudafftStatus status = r->cufft(r->cufft_object, r->fused.signal, device_ffts,
                                            r->fft_count, r->fused.threshold, r->phase, stream);
      if (status != CUDAFFT_STATUS_OK)
        return status;
    }
    device_ffts += r->fft_count;
  }
  if (layout.output_count > 0) {
    outputs_kernel<<<(unsigned)layout.output_count, kCudafftUnitThreads, 0, stream>>>(
        cudafft_aux_at<OutputDesc>(device_aux, layout.outputs),
        cudafft_aux_at<CudafftUnit>(device_aux, layout.output_map));
    CUDAFFT_CHECK(cudaGetLastError());
  }
  return CUDAFFT_STATUS_OK;
}

} // namespace

size_t
cudafft_spectrum_run_aux_bytes(const CudafftSpectrumRunJob *job)
{
  return kCudafftAuxSlack + job_aux_bytes(job);
}

size_t
cudafft_spectrum_run_aux_bound(size_t frames, size_t spectra, size_t ffts, size_t transforms,
                               size_t history_units, size_t out_floats)
{
  /* the slot zeros: two segments of one row, at most kCudafftSegmentChunks units each */
  const size_t units = flat_units(frames * spectra) + history_units + 2 * kCudafftSegmentChunks +
                       flat_units(out_floats);
  return kCudafftAuxSlack + sizeof(CudafftSpectrumFusedDesc) + sizeof(AssembleDesc) +
         sizeof(OutputDesc) + ffts * sizeof(CudafftSpectrumLaunchFft) +
         transforms * sizeof(CudafftSpectrumFusedUnit) + units * sizeof(CudafftUnit);
}

const CudafftWorkKind cudafft_spectrum_run_kind = {
    "spectrum runs", run_aux_bytes, run_prepare, run_launch, nullptr,
};

const CudafftWorkKind cudafft_spectrum_tables_kind = {
    "spectrum tables", cudafft_segment_aux_bytes, cudafft_segment_prepare, cudafft_segment_launch,
    nullptr,
};
