/* convolve_split_kernels.cu: the split path's kernels (CudafftConvolveSplitJob: F32 at block sizes
 * below B, the head of the kernel as one partition at the block size and the tail partitioned at
 * B: the gather, the head, the tail's MAC, its transforms and the add) and their launchers; built
 * from the F32 FFT paths' device code (convolve_fft_device.cuh), as the partitioned path's kernels
 * (convolve_partitioned_kernels.cu). Its kinds, submissions and setup are convolve_cuda_split.cu's.
 */

#include "convolve_fft_device.cuh"
#include "convolve_launch.cuh"

#include <cstdint>

namespace {

/* The split path (CudafftConvolveSplitJob) --------------------------------------------------- */

constexpr int kSplitRun = CUDAFFT_CONVOLVE_SPLIT_RUN;
constexpr int kSplitChunks = CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS;
/* The split MAC: one bin pair (a float4) per thread and partition. */
constexpr int kSplitMacThreads = kConvBlock / 2 / kSplitChunks;
constexpr size_t kSplitRow = 3 * (size_t)kConvBlock; /* a signal row: blocks j - 2, j - 1, j */
constexpr size_t kTailRow = 2 * (size_t)kConvBlock;  /* a tail ring row: z of blocks j - 1, j */
static_assert(kSplitRun % kFlatThreads == 0, "a run is whole rounds of threads");

/* Gather: a run of the job's interleaved input to the signal rows of blocks j, j + 1 and j + 2
 * (adjacent threads adjacent input samples, as the deinterleave). */
__global__ void
__launch_bounds__(kFlatThreads)
    split_gather_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                        const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const size_t samples = job.frames * job.channels, first = (size_t)u.unit * kSplitRun;
  const size_t channels = job.channels;
#pragma unroll 4
  for (int j = threadIdx.x; j < kSplitRun; j += kFlatThreads) {
    const size_t i = first + j;
    if (i >= samples)
      break;
    const size_t frame = job.within + i / channels, c = i % channels;
    const float v = job.in[i];
    job.signal[c * kSplitRow + 2 * kConvBlock + frame] = v;
    job.next[c * kSplitRow + kConvBlock + frame] = v;
    job.after[c * kSplitRow + frame] = v;
  }
}

/* Head: the FFT convolution of the N frames that end at the job's last (the fused kernel's forward
 * FFT, product and inverse), its last `frames` samples staged, mixed with the job's input and
 * written interleaved, one frame per thread, adjacent threads adjacent frames. */
__global__ void
__launch_bounds__(kThreads) split_head_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                              const CudafftConvolveUnit *__restrict__ units,
                                              const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  __shared__ CudafftConvolveSplitJob stage;
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = shared_job(jobs, u.job, stage);
  const size_t c = u.unit;
  const float *row = job.signal + c * kSplitRow;
  const float2 *h = job.head_spectra + (job.kernel_rows > 1 ? c : 0) * kConvPitch;
  forward_times_pre(real_frame(row + job.within + job.frames), smem, h, twiddles);
  const int frames = (int)job.frames, first = kConvBlock - frames / 2; /* complex points */
  const SharedRow s{smem};
  block_fft<kConvBlock, kWide>(s, s, ConvolveStageOut<-1>{smem, first}, threadIdx.x, twiddles);
  __syncthreads();
  const float *y = reinterpret_cast<const float *>(smem);
  const float *dry = row + 2 * kConvBlock + job.within;
  const size_t channels = job.channels;
  const float wet_gain = job.wet_gain, dry_gain = job.dry_gain;
  float *out = job.out + c;
  for (int f = threadIdx.x; f < frames; f += kThreads)
    out[f * channels] = mixed(y[f], dry_gain != 0.0f ? dry[f] : 0.0f, wet_gain, dry_gain);
}

/* MAC: the job's share of block j's earlier partitions, added to acc in place (the block's first
 * share, from partition 1, starts from zeros instead); each thread keeps one bin pair's sum in
 * registers over the partitions (p ascending), as the MAC kernel does. */
__global__ void
__launch_bounds__(kSplitMacThreads)
    split_mac_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                     const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const int c = (int)u.unit / kSplitChunks, chunk = (int)u.unit % kSplitChunks;
  const int partitions = job.partitions, first = job.mac_first, end = job.mac_end, slot = job.slot;
  const int k = chunk * kSplitMacThreads + threadIdx.x; /* bins 2k, 2k + 1 */
  const bool last_bin = chunk == 0 && threadIdx.x == 0; /* also bin B */
  const float2 *__restrict__ x_rows = job.ring + (size_t)c * partitions * kConvPitch;
  const float2 *__restrict__ h_rows =
      job.spectra + (size_t)(job.kernel_rows > 1 ? c : 0) * partitions * kConvPitch;
  float2 *acc_row = job.acc + (size_t)c * kConvPitch;
  const bool fresh = first == 1;
  float4 acc =
      fresh ? make_float4(0.0f, 0.0f, 0.0f, 0.0f) : reinterpret_cast<const float4 *>(acc_row)[k];
  float2 last = last_bin && !fresh ? acc_row[kConvBlock] : make_float2(0.0f, 0.0f);
#pragma unroll 4
  for (int p = first; p < end; ++p) {
    const int s = slot - p < 0 ? slot - p + partitions : slot - p;
    const float2 *x = x_rows + (size_t)s * kConvPitch, *h = h_rows + (size_t)p * kConvPitch;
    acc = cmac2(acc, reinterpret_cast<const float4 *>(x)[k],
                __ldg(&reinterpret_cast<const float4 *>(h)[k]));
    if (last_bin)
      last = cmac(last, x[kConvBlock], __ldg(&h[kConvBlock]));
  }
  reinterpret_cast<float4 *>(acc_row)[k] = acc;
  if (last_bin)
    acc_row[kConvBlock] = last;
}

/* Transforms, first: block j's spectrum (signal row c from B: blocks j - 1 and j) to its ring
 * slot. */
__global__ void
__launch_bounds__(kThreads) split_forward_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                                 const CudafftConvolveUnit *__restrict__ units,
                                                 const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const size_t c = u.unit;
  forward_to_bins(real_frame(job.signal + c * kSplitRow + kConvBlock), smem,
                  job.ring + (c * job.partitions + job.slot) * kConvPitch, 1.0f, twiddles);
}

/* Transforms, then: acc + X[j] H[row][0] (X[j] H[row][0] alone for one partition: acc is then
 * never written), the inverse FFT (the narrow plan, as the MAC kernel's) and its kept half,
 * staged, to block tail_block of the channel's tail ring row in 16-byte runs, unmixed. Nothing is
 * stored to global memory before the loads are done (a store to acc, which the compiler cannot
 * tell apart from the other rows, would order each load after it: twice the kernel's time).
 * twiddles: the narrow plan's. */
__global__ void
__launch_bounds__(kMacThreads) split_finish_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                                   const CudafftConvolveUnit *__restrict__ units,
                                                   const float2 *__restrict__ twiddles)
{
  __shared__ float2 smem[Shape::kStride];
  __shared__ CudafftConvolveSplitJob stage;
  const int t = threadIdx.x;
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = shared_job(jobs, u.job, stage);
  const size_t c = u.unit;
  const int partitions = job.partitions;
  const float2 *x = job.ring + (c * partitions + job.slot) * kConvPitch;
  const float2 *h = job.spectra + (size_t)(job.kernel_rows > 1 ? c : 0) * partitions * kConvPitch;
  const bool earlier = partitions > 1; /* acc holds the earlier partitions' sum */
  const float2 *acc_row = job.acc + c * kConvPitch;
  const float4 *acc4 = reinterpret_cast<const float4 *>(acc_row);
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  const float4 *h4 = reinterpret_cast<const float4 *>(h);
#pragma unroll
  for (int i = 0; i < kMacPairs; ++i) {
    const int k = t + i * kMacThreads;
    const float4 sum =
        cmac2(earlier ? acc4[k] : make_float4(0.0f, 0.0f, 0.0f, 0.0f), x4[k], __ldg(&h4[k]));
    smem[pad(2 * k)] = make_float2(sum.x, sum.y);
    smem[pad(2 * k + 1)] = make_float2(sum.z, sum.w);
  }
  if (t == 0)
    smem[pad(kConvBlock)] = cmac(earlier ? acc_row[kConvBlock] : make_float2(0.0f, 0.0f),
                                 x[kConvBlock], __ldg(&h[kConvBlock]));
  __syncthreads();
  real_inverse_pre<kConvBlock, kNarrow, kMacThreads>(smem, t, twiddles);
  const SharedRow s{smem};
  /* the last pass reads all of smem before its barrier, so the stage may overwrite it */
  block_fft<kConvBlock, kNarrow>(s, s, ConvolveStageOut<kKeepPoint>{smem, kKeepPoint}, t, twiddles);
  __syncthreads();
  const float4 *y4 = reinterpret_cast<const float4 *>(smem);
  float4 *o4 = reinterpret_cast<float4 *>(job.tail + c * kTailRow + job.tail_block * kConvBlock);
#pragma unroll
  for (int i = 0; i < kConvBlock / 4 / kMacThreads; ++i)
    o4[t + i * kMacThreads] = y4[t + i * kMacThreads];
}

/* Add: a run of the job's output samples plus wet_gain times the tail's z, a frames back (the
 * run's ring frames wrap at most once: a job is at most B frames of the 2B ring). Adjacent threads
 * read adjacent channels' rows: scattered, but a push reads only its own frames of them. */
__global__ void
__launch_bounds__(kFlatThreads) split_add_kernel(const CudafftConvolveSplitJob *__restrict__ jobs,
                                                 const CudafftConvolveUnit *__restrict__ units)
{
  const CudafftConvolveUnit u = units[blockIdx.x];
  const CudafftConvolveSplitJob &job = jobs[u.job];
  const size_t channels = job.channels, samples = job.frames * channels;
  const size_t first = (size_t)u.unit * kSplitRun;
  const float wet_gain = job.wet_gain;
#pragma unroll 4
  for (int j = threadIdx.x; j < kSplitRun; j += kFlatThreads) {
    const size_t i = first + j;
    if (i >= samples)
      break;
    size_t at = job.tail_from + i / channels;
    if (at >= kTailRow)
      at -= kTailRow;
    job.out[i] = fmaf(wet_gain, job.tail[i % channels * kTailRow + at], job.out[i]);
  }
}

} // namespace

extern "C" cudaError_t
cudafft_convolve_split_launch(const CudafftConvolveSplitJob *jobs,
                              const CudafftConvolveUnit *run_units, size_t runs,
                              const CudafftConvolveUnit *head_units, size_t heads,
                              const CudafftConvolveUnit *mac_units, size_t macs,
                              const CudafftConvolveUnit *transform_units, size_t transforms,
                              const float2 *twiddles, cudaStream_t stream)
{
  cudaError_t status =
      launch_units(split_gather_kernel, runs, kFlatThreads, stream, jobs, run_units);
  if (status == cudaSuccess)
    status = launch_units(split_head_kernel, heads, kThreads, stream, jobs, head_units, twiddles);
  if (status == cudaSuccess)
    status = launch_units(split_mac_kernel, macs, kSplitMacThreads, stream, jobs, mac_units);
  if (status == cudaSuccess)
    status = launch_units(split_forward_kernel, transforms, kThreads, stream, jobs, transform_units,
                          twiddles);
  if (status == cudaSuccess)
    status = launch_units(split_finish_kernel, transforms, kMacThreads, stream, jobs,
                          transform_units, twiddles + kWideTwiddles);
  if (status == cudaSuccess)
    status = launch_units(split_add_kernel, runs, kFlatThreads, stream, jobs, run_units);
  return status;
}

extern "C" cudaError_t
cudafft_convolve_split_mac_launch(const CudafftConvolveSplitJob *jobs,
                                  const CudafftConvolveUnit *units, size_t count,
                                  cudaStream_t stream)
{
  return launch_units(split_mac_kernel, count, kSplitMacThreads, stream, jobs, units);
}
