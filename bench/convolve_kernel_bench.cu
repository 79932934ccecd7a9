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
 * a 2 s mono kernel (96000 taps, P = 47), one process() call's device chain: deinterleave, forward
 * FFTs into the delay line, MAC + inverse FFT + mix writing interleaved F32 (the deinterleave also
 * carries the last block to the next chunk's rows); timed whole and as forward + MAC alone, with
 * the real-time factor this implies.
 *
 * Timing: 10 warm-ups, then RUNS rounds in which every variant runs once, each timed alone with
 * CUDA events on the one stream; medians. Effective GB/s counts the samples read once and written
 * once. Checks (exit 1 beyond them): ours against cuFFT over every output (relative L2 <= 1e-5),
 * both against a double-precision direct convolution of a few blocks, and the partitioned chain
 * (24 blocks, and 2 blocks for the MAC's small-launch variant) against a double-precision direct
 * convolution of samples of three channels (relative L2 <= 1e-5: float FFTs of 4096 points and
 * sums over 47 partitions stay near 1e-6). No CUDA device: exit 77.
 *
 * Usage: convolve-kernel-bench [--runs N] [--blocks N] */
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
};

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

/* Forward FFTs and MAC of `blocks` blocks from slot 0 (fewer than 4 blocks of 64 channels take the
 * MAC's small-launch variant). */
void
run_partitioned_blocks(Bench *b, size_t blocks)
{
  CHECK_CUDA(cudafft_convolve_forward_launch(b->d_rows, b->pitch, kChannels, blocks, b->d_ring,
                                             b->slots, 0, b->d_twiddles, b->stream));
  CHECK_CUDA(cudafft_convolve_mac_launch(CUDAFFT_SAMPLE_F32, b->d_ring, b->slots, 0, kChannels,
                                         blocks, b->d_long_spectra, 1, b->partitions, b->d_rows,
                                         b->pitch, 1.0f, b->d_out, b->d_twiddles, b->stream));
}

/* The backend alternates two sets of rows; here the next chunk's front goes to d_next_rows, never
 * read, so that every run starts from the same rows. */
void
run_chain_blocks(Bench *b, size_t blocks)
{
  CHECK_CUDA(cudafft_convolve_deinterleave_launch(CUDAFFT_SAMPLE_F32, b->d_raw, blocks * kB,
                                                  kChannels, b->d_rows + kB, b->pitch,
                                                  b->d_next_rows, b->stream));
  run_partitioned_blocks(b, blocks);
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

/* Kernel spectra on the device from host taps (rows of `taps` floats). */
float2 *
make_spectra(Bench *b, const std::vector<float> &taps, size_t partitions)
{
  float *d_taps = nullptr;
  float2 *d_spectra = nullptr;
  CHECK_CUDA(cudaMalloc(&d_taps, taps.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_spectra, partitions * kPitch * sizeof(float2)));
  CHECK_CUDA(cudaMemcpy(d_taps, taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudafft_convolve_spectra_launch(d_taps, taps.size(), 1, partitions, d_spectra,
                                             b->d_twiddles, b->stream));
  CHECK_CUDA(cudaStreamSynchronize(b->stream));
  cudaFree(d_taps);
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

} // namespace

int
main(int argc, char **argv)
{
  Bench b;
  b.blocks = 16384;
  int runs = 50;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
      b.blocks = parse_size(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--runs N] [--blocks N]\n", argv[0]);
      return 2;
    }
  }
  if (runs < 1 || b.blocks < 2 || b.blocks > (1u << 18)) {
    fprintf(stderr, "convolve-kernel-bench: --runs must be >= 1, --blocks in 2..%u\n", 1u << 18);
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
  cudaStreamDestroy(b.stream);
  if (!ok) {
    fprintf(stderr, "convolve-kernel-bench: FAILED: outputs differ beyond relative L2 %.0e\n",
            kMaxRelL2);
    return 1;
  }
  return 0;
}
