/* convolve-kernel-bench: the convolution's kernels on the device alone (no uploads, no downloads).
 *
 * Part 1, one partition (a 2048-tap kernel, P = 1) on BLOCKS blocks of N = 4096 points of an F32
 * signal already on the device, two ways of cutting the blocks:
 * - independent blocks: block b is samples [b N, b N + N) and all N samples of its circular
 *   convolution with the kernel are written (each sample read once and written once: the issue's
 *   "16384 blocks of 4096 points");
 * - overlap-save: block b is samples [b B, b B + N) of one long signal (B = 2048) and only its
 *   valid second half is kept (ours writes B samples per block; cuFFT's C2R writes all N, of which
 *   the second half is compared).
 * Each is computed by
 * - ours: the fused kernel (forward FFT, product with the kernel's spectrum, inverse FFT);
 * - cuFFT: cufftExecR2C, a complex-multiply kernel, cufftExecC2R (plans made before timing).
 * Part 2, the general partitioned path: CHANNELS = 64 channels x 24 blocks (1.02 s at 48 kHz) with
 * a 2 s mono kernel (96000 taps, P = 47), one job's device chain (the batched launches with one
 * job): deinterleave, forward FFTs into the delay line, MAC + inverse FFT + mix writing interleaved
 * F32 (the deinterleave also carries the last block to the next job's rows); timed whole and as
 * forward + MAC alone, with the real-time factor this implies.
 * Part 3, the executor's batch of live streams, as streams-bench runs them: STREAMS (1024) stereo
 * F32 objects, each with a 1 s mono kernel (48000 taps, P = 24; the element's `kernel` property is
 * one row) and a delay line of its own, one block each in one batch: the batched deinterleave,
 * forward and MAC launches over every job (what the executor's compute stream runs for such a
 * batch; its copies, 16 KB up and 16 KB down per job, are not timed here). Printed: the device
 * time, the bytes the kernels must move in device memory (each job: its input, signal rows and the
 * next front; the forward's frames and slots; the MAC's 2 x P delay-line slots, its P kernel
 * spectra, which the block's two channels share, the dry input and the output) and that time
 * against those bytes at the device's peak memory bandwidth (the bandwidth floor). Checked: every
 * sampled job's output is bit for bit what the same chain gives for that job alone (a batch of
 * one).
 *
 * Timing: 10 warm-ups, then RUNS rounds in which every variant runs once, each timed alone with
 * CUDA events on the one stream; medians. Effective GB/s counts the samples read once and written
 * once. Checks (exit 1 beyond them): ours against cuFFT over every output (relative L2 <= 1e-5),
 * both against a double-precision direct convolution of a few blocks, and the partitioned chain
 * (24 blocks, and 2 blocks for the MAC's small-launch variant) against a double-precision direct
 * convolution of samples of three channels (relative L2 <= 1e-5: float FFTs of 4096 points and
 * sums over 47 partitions stay near 1e-6). No CUDA device: exit 77.
 *
 * Usage: convolve-kernel-bench [--runs N] [--blocks N] [--streams N] */
#include "convolve_kernels.h"

#include "kernel_bench.cuh"

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kB = CUDAFFT_CONVOLVE_BLOCK;
constexpr size_t kN = CUDAFFT_CONVOLVE_FFT_SIZE;
constexpr size_t kBins = CUDAFFT_CONVOLVE_BINS;
constexpr size_t kPitch = CUDAFFT_CONVOLVE_BIN_PITCH;
constexpr double kMaxRelL2 = 1e-5;
/* Part 2 */
constexpr unsigned kChannels = 64;
constexpr size_t kPartBlocks = 24;
constexpr size_t kLongTaps = 96000; /* 2 s at 48 kHz */
constexpr double kRate = 48000.0;
/* Part 3 */
constexpr unsigned kStreamChannels = 2;
constexpr size_t kStreamTaps = 48000; /* 1 s at 48 kHz, one row */

struct Bench {
  size_t blocks = 0;
  cudaStream_t stream = nullptr;
  float *d_signal = nullptr; /* blocks N + B samples: both cuttings read from it */
  float *d_ours = nullptr;   /* blocks N */
  float *d_ref = nullptr;    /* blocks N: cuFFT's output */
  float2 *d_bins = nullptr;  /* blocks x kBins: cuFFT's spectra */
  float2 *d_twiddles = nullptr;
  float2 *d_spectrum = nullptr;     /* the 2048-tap kernel's, scaled by 1/N */
  cufftHandle r2c[2] = {}, c2r = 0; /* r2c[0]: independent, [1]: overlap-save */

  /* part 2 */
  size_t partitions = 0, slots = 0, pitch = 0;
  float *d_raw = nullptr, *d_rows = nullptr, *d_next_rows = nullptr, *d_out = nullptr;
  float2 *d_long_spectra = nullptr, *d_ring = nullptr;
  /* the chain's one job of kPartBlocks blocks and of 2 blocks, and its units */
  CudafftConvolveBlocksJob *d_job_all = nullptr, *d_job_two = nullptr;
  CudafftConvolveUnit *d_units = nullptr;

  /* part 3: `streams` jobs of one block, units[j] from the first units of job j */
  size_t streams = 0;
  CudafftConvolveBlocksJob *d_batch = nullptr;
  CudafftConvolveUnit *d_batch_units = nullptr;
  float *d_batch_raw = nullptr, *d_batch_out = nullptr, *d_batch_rows = nullptr;
  float2 *d_batch_spectra = nullptr, *d_batch_ring = nullptr;
  /* a job alone: its descriptor and units (2 channels) */
  CudafftConvolveBlocksJob *d_alone = nullptr;
  CudafftConvolveUnit *d_alone_units = nullptr;
};

/* A device copy of host data (freed with cudaFree). */
template <typename T>
T *
upload(const std::vector<T> &host)
{
  T *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, host.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

/* The unit map of jobs[0..count) with `units` units each: job j's units in order. */
std::vector<CudafftConvolveUnit>
unit_map(size_t count, size_t units)
{
  std::vector<CudafftConvolveUnit> map;
  for (size_t j = 0; j < count; ++j)
    for (size_t k = 0; k < units; ++k)
      map.push_back(CudafftConvolveUnit{(uint32_t)j, (uint32_t)k});
  return map;
}

/* Uniform in [-1, 1) from a hash of the index and a seed. */
__host__ __device__ inline float
hash_value(uint64_t i, uint32_t seed)
{
  uint32_t h = (uint32_t)i * 0x9E3779B9u ^ (uint32_t)(i >> 32) * 0x85EBCA6Bu ^ seed;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void
fill_kernel(float *x, size_t count, uint32_t seed)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = hash_value(i, seed);
}

/* bins[b][k] *= h[k] (h scaled by 1/N: cuFFT's C2R is unnormalised). */
__global__ void
multiply_kernel(float2 *__restrict__ bins, unsigned total, const float2 *__restrict__ h)
{
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    const float2 x = bins[i], y = __ldg(&h[i % (unsigned)kBins]);
    bins[i] = make_float2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
  }
}

unsigned
blocks_for(size_t count, int threads)
{
  const size_t wanted = (count + threads - 1) / threads;
  return (unsigned)std::min<size_t>(std::max<size_t>(wanted, 1), 65536);
}

/* mode 0: independent blocks, 1: overlap-save */
void
run_ours(Bench *b, int mode)
{
  CHECK_CUDA(cudafft_convolve_fused_planar_launch(b->d_signal, mode ? kB : kN, b->blocks,
                                                  b->d_spectrum, b->d_ours, mode ? kB : kN,
                                                  mode ? kB : 0, b->d_twiddles, b->stream));
}

void
run_cufft(Bench *b, int mode)
{
  CHECK_CUFFT(cufftExecR2C(b->r2c[mode], b->d_signal, (cufftComplex *)b->d_bins));
  const size_t total = b->blocks * kBins;
  multiply_kernel<<<blocks_for(total, 256), 256, 0, b->stream>>>(b->d_bins, (unsigned)total,
                                                                 b->d_spectrum);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUFFT(cufftExecC2R(b->c2r, (cufftComplex *)b->d_bins, b->d_ref));
}

/* The job of `blocks` blocks (kPartBlocks or 2). */
const CudafftConvolveBlocksJob *
part2_job(const Bench *b, size_t blocks)
{
  return blocks == kPartBlocks ? b->d_job_all : b->d_job_two;
}

/* Forward FFTs and MAC of `blocks` blocks from slot 0 (fewer than 4 blocks of 64 channels take the
 * MAC's small-launch variant). */
void
run_partitioned_blocks(Bench *b, size_t blocks)
{
  const size_t units = blocks * kChannels;
  CHECK_CUDA(cudafft_convolve_forward_launch(part2_job(b, blocks), b->d_units, units, b->d_twiddles,
                                             b->stream));
  CHECK_CUDA(cudafft_convolve_mac_launch(part2_job(b, blocks), b->d_units, units, b->d_twiddles,
                                         b->stream));
}

/* The backend alternates two sets of rows; here the next job's front goes to d_next_rows, never
 * read, so that every run starts from the same rows. */
void
run_chain_blocks(Bench *b, size_t blocks)
{
  CHECK_CUDA(cudafft_convolve_deinterleave_launch(part2_job(b, blocks), b->d_units,
                                                  blocks * kChannels, b->stream));
  run_partitioned_blocks(b, blocks);
}

/* Part 3: the batch's chain over every job, or one job's alone. */
void
run_batch_chain(Bench *b, const CudafftConvolveBlocksJob *jobs, const CudafftConvolveUnit *units,
                size_t count)
{
  const size_t transforms = count * 2;
  CHECK_CUDA(cudafft_convolve_deinterleave_launch(jobs, units, transforms, b->stream));
  CHECK_CUDA(cudafft_convolve_forward_launch(jobs, units, transforms, b->d_twiddles, b->stream));
  CHECK_CUDA(cudafft_convolve_mac_launch(jobs, units, transforms, b->d_twiddles, b->stream));
}

void
run_batch(Bench *b)
{
  run_batch_chain(b, b->d_batch, b->d_batch_units, b->streams);
}

void
run_partitioned_core(Bench *b)
{
  run_partitioned_blocks(b, kPartBlocks);
}

void
run_partitioned_chain(Bench *b)
{
  run_chain_blocks(b, kPartBlocks);
}

using RunFn = void (*)(Bench *);

void
ours_independent(Bench *b)
{
  run_ours(b, 0);
}
void
cufft_independent(Bench *b)
{
  run_cufft(b, 0);
}
void
ours_overlap(Bench *b)
{
  run_ours(b, 1);
}
void
cufft_overlap(Bench *b)
{
  run_cufft(b, 1);
}

/* Accumulates |got - want|^2 and |want|^2 for a relative L2 error. */
struct RelL2 {
  double err = 0, ref = 0;
  void
  add(double got, double want)
  {
    err += (got - want) * (got - want);
    ref += want * want;
  }
  double
  value() const
  {
    return ref > 0 ? std::sqrt(err / ref) : (err > 0 ? INFINITY : 0);
  }
};

/* Kernel spectra on the device from host taps (one row; the engine uploads them as doubles). */
float2 *
make_spectra(Bench *b, const std::vector<float> &taps, size_t partitions)
{
  float2 *d_spectra = nullptr;
  CHECK_CUDA(cudaMalloc(&d_spectra, partitions * kPitch * sizeof(float2)));
  double *d_taps = upload(std::vector<double>(taps.begin(), taps.end()));
  CudafftConvolveSpectraJob *d_job =
      upload(std::vector<CudafftConvolveSpectraJob>{{d_taps, d_spectra, taps.size()}});
  CudafftConvolveUnit *d_units = upload(unit_map(1, partitions));
  CHECK_CUDA(cudafft_convolve_spectra_launch(d_job, d_units, partitions, b->d_twiddles, b->stream));
  CHECK_CUDA(cudaStreamSynchronize(b->stream));
  cudaFree(d_taps);
  cudaFree(d_job);
  cudaFree(d_units);
  return d_spectra;
}

std::vector<float>
random_taps(size_t count, uint32_t seed)
{
  std::vector<float> taps(count);
  for (size_t i = 0; i < count; ++i)
    taps[i] = hash_value(i, seed);
  return taps;
}

/* Part 1's checks: every output ours against cuFFT's, and blocks 0, 1, the middle and the last
 * against a double-precision circular (independent) or linear (overlap-save) convolution. */
bool
check_part1(Bench *b, int mode, const std::vector<float> &signal, const std::vector<float> &taps)
{
  CHECK_CUDA(cudaMemsetAsync(b->d_ours, 0xff, b->blocks * kN * sizeof(float), b->stream));
  CHECK_CUDA(cudaMemsetAsync(b->d_ref, 0xff, b->blocks * kN * sizeof(float), b->stream));
  run_ours(b, mode);
  run_cufft(b, mode);
  CHECK_CUDA(cudaStreamSynchronize(b->stream));
  const size_t kept = mode ? kB : kN, first = kN - kept;
  const std::vector<float> ours = download(b->d_ours, b->blocks * kept);
  const std::vector<float> ref = download(b->d_ref, b->blocks * kN);
  RelL2 vs_cufft, ours_exact, cufft_exact;
  for (size_t blk = 0; blk < b->blocks; ++blk)
    for (size_t i = 0; i < kept; ++i)
      vs_cufft.add(ours[blk * kept + i], ref[blk * kN + first + i]);
  const size_t checked[] = {0, 1 % b->blocks, b->blocks / 2, b->blocks - 1};
  for (size_t blk : checked) {
    const float *x = signal.data() + blk * (mode ? kB : kN);
    for (size_t i = first; i < kN; ++i) {
      double want = 0;
      for (size_t k = 0; k < taps.size(); ++k)
        want += (double)taps[k] * x[(i + kN - k) % kN]; /* overlap-save: i >= B > k never wraps */
      ours_exact.add(ours[blk * kept + i - first], want);
      cufft_exact.add(ref[blk * kN + i], want);
    }
  }
  printf("  check (%s): rel. L2 ours vs cuFFT %.2e; vs double-precision convolution of 4 blocks: "
         "ours %.2e, cuFFT %.2e\n",
         mode ? "overlap-save" : "independent", vs_cufft.value(), ours_exact.value(),
         cufft_exact.value());
  return vs_cufft.value() <= kMaxRelL2 && ours_exact.value() <= kMaxRelL2 &&
         cufft_exact.value() <= kMaxRelL2;
}

/* Part 2's check: one chain of `blocks` blocks from zero history, samples of channels 0, 17 and 63
 * in the first, second and last blocks against a double-precision direct convolution (zeros
 * before the first sample). */
bool
check_part2(Bench *b, const std::vector<float> &taps, size_t blocks)
{
  const size_t frames = blocks * kB;
  CHECK_CUDA(cudaMemsetAsync(b->d_rows, 0, b->pitch * kChannels * sizeof(float), b->stream));
  CHECK_CUDA(
      cudaMemsetAsync(b->d_ring, 0, b->slots * kChannels * kPitch * sizeof(float2), b->stream));
  CHECK_CUDA(cudaMemsetAsync(b->d_out, 0xff, frames * kChannels * sizeof(float), b->stream));
  run_chain_blocks(b, blocks);
  CHECK_CUDA(cudaStreamSynchronize(b->stream));
  const std::vector<float> raw = download(b->d_raw, frames * kChannels);
  const std::vector<float> out = download(b->d_out, frames * kChannels);
  RelL2 err;
  const unsigned channels[] = {0, 17, kChannels - 1};
  for (unsigned c : channels)
    for (size_t j = 0; j < 64; ++j) {
      const size_t picks[] = {j, kB + 3 * j, frames - 1 - 5 * j};
      for (size_t n : picks) {
        double want = 0;
        for (size_t k = 0; k < taps.size() && k <= n; ++k)
          want += (double)taps[k] * raw[(n - k) * kChannels + c];
        err.add(out[n * kChannels + c], want);
      }
    }
  printf("  check (%zu blocks): rel. L2 vs double-precision direct convolution (576 samples of 3 "
         "channels) %.2e\n",
         blocks, err.value());
  return err.value() <= kMaxRelL2;
}

/* Part 3's set-up: `streams` objects' state, filled with noise (the kernels' time is the same for
 * any values), their jobs of one block and the unit map. */
void
setup_part3(Bench *b)
{
  const size_t partitions = (kStreamTaps + kB - 1) / kB, slots = partitions, pitch = 2 * kB;
  const size_t samples = b->streams * kB * kStreamChannels;
  const size_t rows = b->streams * 2 * kStreamChannels * pitch;
  const size_t spectrum_rows = b->streams * partitions;
  CHECK_CUDA(cudaMalloc(&b->d_batch_raw, samples * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b->d_batch_out, samples * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b->d_batch_rows, rows * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b->d_batch_spectra, spectrum_rows * kPitch * sizeof(float2)));
  CHECK_CUDA(
      cudaMalloc(&b->d_batch_ring, b->streams * kStreamChannels * slots * kPitch * sizeof(float2)));
  const struct {
    float *data;
    size_t count;
  } fills[] = {
      {b->d_batch_raw, samples},
      {b->d_batch_rows, rows},
      {(float *)b->d_batch_spectra, spectrum_rows * kPitch * 2},
      {(float *)b->d_batch_ring, b->streams * kStreamChannels * slots * kPitch * 2},
  };
  uint32_t seed = 10;
  for (const auto &fill : fills) {
    fill_kernel<<<blocks_for(fill.count, 256), 256, 0, b->stream>>>(fill.data, fill.count, seed++);
    CHECK_CUDA(cudaGetLastError());
  }
  std::vector<CudafftConvolveBlocksJob> jobs(b->streams);
  for (size_t j = 0; j < b->streams; ++j) {
    CudafftConvolveBlocksJob &d = jobs[j];
    d.in = b->d_batch_raw + j * kB * kStreamChannels;
    d.out = b->d_batch_out + j * kB * kStreamChannels;
    d.signal = b->d_batch_rows + j * 2 * kStreamChannels * pitch;
    d.next = d.signal + kStreamChannels * pitch;
    d.ring = b->d_batch_ring + j * kStreamChannels * slots * kPitch;
    d.spectra = b->d_batch_spectra + j * partitions * kPitch;
    d.pitch = pitch;
    d.wet_gain = 1.0f;
    d.dry_gain = 0.0f;
    d.format = CUDAFFT_SAMPLE_F32;
    d.channels = (int)kStreamChannels;
    d.kernel_rows = 1;
    d.partitions = (int)partitions;
    d.slots = (int)slots;
    d.first_slot = (int)(j % slots);
    d.blocks = 1;
  }
  b->d_batch = upload(jobs);
  b->d_batch_units = upload(unit_map(b->streams, kStreamChannels));
  b->d_alone_units = upload(unit_map(1, kStreamChannels));
  CHECK_CUDA(cudaMalloc(&b->d_alone, sizeof(CudafftConvolveBlocksJob)));
  CHECK_CUDA(cudaStreamSynchronize(b->stream));
}

/* Bytes the batch's kernels must move in device memory, per job: the deinterleave reads the input
 * and writes the signal rows and the next job's front; the forward FFTs read a frame (two blocks)
 * of each channel and write a spectrum row each; the MAC reads P delay-line rows per channel and
 * the P kernel spectrum rows once (bins 0..B each), the dry input, and writes the output. */
double
part3_bytes_per_job()
{
  const double block = (double)kB * kStreamChannels * sizeof(float);
  const double row = (double)kBins * sizeof(float2);
  const double partitions = (double)((kStreamTaps + kB - 1) / kB);
  return 3 * block + (2 * block + kStreamChannels * row) +
         ((kStreamChannels + 1) * partitions * row + 2 * block);
}

/* Every sampled job's output from the batch, bit for bit as the job alone gives it. */
bool
check_part3(Bench *b)
{
  run_batch(b);
  CHECK_CUDA(cudaStreamSynchronize(b->stream));
  const size_t per_job = kB * kStreamChannels;
  const std::vector<float> batch = download(b->d_batch_out, b->streams * per_job);
  const size_t sampled[] = {0, 1 % b->streams, b->streams / 2, b->streams - 1};
  size_t differ = 0;
  for (size_t j : sampled) {
    CHECK_CUDA(cudaMemcpy(b->d_alone, b->d_batch + j, sizeof(CudafftConvolveBlocksJob),
                          cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaMemset(b->d_batch_out + j * per_job, 0xff, per_job * sizeof(float)));
    run_batch_chain(b, b->d_alone, b->d_alone_units, 1);
    CHECK_CUDA(cudaStreamSynchronize(b->stream));
    const std::vector<float> alone = download(b->d_batch_out + j * per_job, per_job);
    differ += memcmp(alone.data(), batch.data() + j * per_job, per_job * sizeof(float)) != 0;
  }
  printf("  check: jobs 0, 1, %zu and %zu of the batch alone give the batch's output bit for bit: "
         "%s\n",
         b->streams / 2, b->streams - 1, differ ? "NO" : "yes");
  return differ == 0;
}

} // namespace

int
main(int argc, char **argv)
{
  Bench b;
  b.blocks = 16384;
  b.streams = 1024;
  int runs = 50;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
      b.blocks = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "--streams") && i + 1 < argc)
      b.streams = parse_size(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--runs N] [--blocks N] [--streams N]\n", argv[0]);
      return 2;
    }
  }
  if (runs < 1 || b.blocks < 2 || b.blocks > (1u << 18) || b.streams < 1 || b.streams > 65536) {
    fprintf(stderr,
            "convolve-kernel-bench: --runs must be >= 1, --blocks in 2..%u, --streams in "
            "1..65536\n",
            1u << 18);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fprintf(stderr, "convolve-kernel-bench: no CUDA device: the benchmark needs a GPU\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  print_device(prop);

  const size_t samples = b.blocks * kN + kB;
  CHECK_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaMalloc(&b.d_signal, samples * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_ours, b.blocks * kN * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_ref, b.blocks * kN * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_bins, b.blocks * kBins * sizeof(float2)));
  int twiddle_plans = 0;
  const CudafftTwiddlePlan *plans = cudafft_convolve_twiddle_plans(&twiddle_plans);
  CHECK_OURS(cudafft_twiddles_upload(plans, twiddle_plans, b.stream, &b.d_twiddles));
  fill_kernel<<<blocks_for(samples, 256), 256, 0, b.stream>>>(b.d_signal, samples, 1);
  CHECK_CUDA(cudaGetLastError());
  const std::vector<float> taps = random_taps(kB, 2);
  b.d_spectrum = make_spectra(&b, taps, 1);
  const std::vector<float> signal = download(b.d_signal, samples);

  long long n = (long long)kN, bins = (long long)kBins;
  size_t work = 0;
  for (int mode = 0; mode < 2; ++mode) {
    CHECK_CUFFT(cufftCreate(&b.r2c[mode]));
    CHECK_CUFFT(cufftMakePlanMany64(b.r2c[mode], 1, &n, &n, 1, mode ? (long long)kB : n, &bins, 1,
                                    bins, CUFFT_R2C, (long long)b.blocks, &work));
    CHECK_CUFFT(cufftSetStream(b.r2c[mode], b.stream));
  }
  CHECK_CUFFT(cufftCreate(&b.c2r));
  CHECK_CUFFT(cufftMakePlanMany64(b.c2r, 1, &n, &bins, 1, bins, &n, 1, n, CUFFT_C2R,
                                  (long long)b.blocks, &work));
  CHECK_CUFFT(cufftSetStream(b.c2r, b.stream));

  printf("part 1: %zu blocks of %zu points, a %zu-tap kernel (one partition); median of %d runs\n",
         b.blocks, kN, kB, runs);
  bool ok = check_part1(&b, 0, signal, taps);
  ok = check_part1(&b, 1, signal, taps) && ok;
  const RunFn fns[] = {ours_independent, cufft_independent, ours_overlap, cufft_overlap};
  float ms[4];
  time_medians(&b, fns, 4, runs, ms);
  const double gb_independent = (double)b.blocks * kN * 2 * sizeof(float) / 1e9;
  const double gb_overlap = (double)b.blocks * kB * 2 * sizeof(float) / 1e9;
  printf("independent blocks (read N, write N per block):\n");
  printf("  ours  (fused: FFT, product, inverse FFT) %8.4f ms %7.0f GB/s\n", ms[0],
         gb_independent / ms[0] * 1e3);
  printf("  cuFFT (R2C, multiply kernel, C2R)        %8.4f ms %7.0f GB/s\n", ms[1],
         gb_independent / ms[1] * 1e3);
  printf("  ratio cuFFT / ours                       %8.2fx\n", ms[1] / ms[0]);
  printf("overlap-save (blocks advance by %zu, the valid %zu kept; GB/s counts %zu in, %zu out):\n",
         kB, kB, kB, kB);
  printf("  ours  (fused, writes the valid half)     %8.4f ms %7.0f GB/s\n", ms[2],
         gb_overlap / ms[2] * 1e3);
  printf("  cuFFT (R2C, multiply kernel, C2R)        %8.4f ms %7.0f GB/s\n", ms[3],
         gb_overlap / ms[3] * 1e3);
  printf("  ratio cuFFT / ours                       %8.2fx\n", ms[3] / ms[2]);

  /* Part 2 */
  b.partitions = (kLongTaps + kB - 1) / kB;
  b.slots = b.partitions + kPartBlocks - 1;
  b.pitch = (kPartBlocks + 1) * kB;
  const size_t frames = kPartBlocks * kB;
  CHECK_CUDA(cudaMalloc(&b.d_raw, frames * kChannels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_out, frames * kChannels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_rows, b.pitch * kChannels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_next_rows, b.pitch * kChannels * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b.d_ring, b.slots * kChannels * kPitch * sizeof(float2)));
  fill_kernel<<<blocks_for(frames * kChannels, 256), 256, 0, b.stream>>>(b.d_raw,
                                                                         frames * kChannels, 3);
  CHECK_CUDA(cudaGetLastError());
  const std::vector<float> long_taps = random_taps(kLongTaps, 4);
  b.d_long_spectra = make_spectra(&b, long_taps, b.partitions);
  {
    CudafftConvolveBlocksJob job = {};
    job.in = b.d_raw;
    job.out = b.d_out;
    job.signal = b.d_rows;
    job.next = b.d_next_rows;
    job.ring = b.d_ring;
    job.spectra = b.d_long_spectra;
    job.pitch = b.pitch;
    job.wet_gain = 1.0f;
    job.dry_gain = 0.0f;
    job.format = CUDAFFT_SAMPLE_F32;
    job.channels = (int)kChannels;
    job.kernel_rows = 1;
    job.partitions = (int)b.partitions;
    job.slots = (int)b.slots;
    job.first_slot = 0;
    job.blocks = (int)kPartBlocks;
    b.d_job_all = upload(std::vector<CudafftConvolveBlocksJob>{job});
    job.blocks = 2;
    b.d_job_two = upload(std::vector<CudafftConvolveBlocksJob>{job});
    b.d_units = upload(unit_map(1, kPartBlocks * kChannels));
  }
  printf("part 2: %u channels x %zu blocks (%.3f s at %.0f Hz), a %zu-tap mono kernel (P = %zu, "
         "delay line of %zu slots: %.1f MB); median of %d runs\n",
         kChannels, kPartBlocks, frames / kRate, kRate, kLongTaps, b.partitions, b.slots,
         b.slots * kChannels * kPitch * sizeof(float2) / 1e6, runs);
  ok = check_part2(&b, long_taps, kPartBlocks) && ok;
  ok = check_part2(&b, long_taps, 2) && ok; /* the MAC's small-launch variant */
  const RunFn part2[] = {run_partitioned_core, run_partitioned_chain};
  time_medians(&b, part2, 2, runs, ms);
  const double audio = frames / kRate;
  printf("  forward FFTs + MAC/inverse FFT            %8.4f ms  %7.0fx real time\n", ms[0],
         audio / (ms[0] * 1e-3));
  printf("  whole chain (+ deinterleave and carry)   %8.4f ms  %7.0fx real time\n", ms[1],
         audio / (ms[1] * 1e-3));

  /* Part 3 */
  setup_part3(&b);
  int clock_khz = 0, bus_bits = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0));
  CHECK_CUDA(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
  const double peak = 2.0 * clock_khz * 1e3 * bus_bits / 8.0; /* bytes/s, double data rate */
  const double bytes = part3_bytes_per_job() * (double)b.streams;
  printf(
      "part 3: a batch of %zu stereo F32 streams, one block each, 1 s mono kernels (%zu taps, P = "
      "%zu); median of %d runs\n",
      b.streams, kStreamTaps, (kStreamTaps + kB - 1) / kB, runs);
  ok = check_part3(&b) && ok;
  const RunFn part3[] = {run_batch};
  time_medians(&b, part3, 1, runs, ms);
  printf("  deinterleave + forward + MAC, 3 launches  %8.4f ms  %7.0f GB/s of %.0f MB moved\n",
         ms[0], bytes / (ms[0] * 1e-3) / 1e9, bytes / 1e6);
  printf("  bandwidth floor at the peak %.0f GB/s      %8.4f ms  (device time %.2fx the floor)\n",
         peak / 1e9, bytes / peak * 1e3, ms[0] * 1e-3 / (bytes / peak));
  printf("  the batch's copies (not timed): %.1f MB up, %.1f MB down\n",
         (double)b.streams * kB * kStreamChannels * sizeof(float) / 1e6,
         (double)b.streams * kB * kStreamChannels * sizeof(float) / 1e6);

  cufftDestroy(b.r2c[0]);
  cufftDestroy(b.r2c[1]);
  cufftDestroy(b.c2r);
  cudaFree(b.d_signal);
  cudaFree(b.d_ours);
  cudaFree(b.d_ref);
  cudaFree(b.d_bins);
  cudaFree(b.d_twiddles);
  cudaFree(b.d_spectrum);
  cudaFree(b.d_raw);
  cudaFree(b.d_out);
  cudaFree(b.d_rows);
  cudaFree(b.d_next_rows);
  cudaFree(b.d_ring);
  cudaFree(b.d_long_spectra);
  cudaFree(b.d_job_all);
  cudaFree(b.d_job_two);
  cudaFree(b.d_units);
  cudaFree(b.d_batch);
  cudaFree(b.d_batch_units);
  cudaFree(b.d_alone);
  cudaFree(b.d_alone_units);
  cudaFree(b.d_batch_raw);
  cudaFree(b.d_batch_out);
  cudaFree(b.d_batch_rows);
  cudaFree(b.d_batch_spectra);
  cudaFree(b.d_batch_ring);
  cudaStreamDestroy(b.stream);
  if (!ok) {
    fprintf(stderr, "convolve-kernel-bench: FAILED: outputs differ beyond relative L2 %.0e\n",
            kMaxRelL2);
    return 1;
  }
  return 0;
}
