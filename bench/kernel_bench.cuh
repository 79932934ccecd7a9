/* kernel_bench.cuh: what the device-only kernel benches (convolve-kernel-bench,
 * spectrum-kernel-bench) share: event timing of a set of variants, downloads, the command line's
 * sizes and the device line. Each bench's Bench struct has a `stream` that every variant runs on.
 */
#ifndef CUDAFFT_KERNEL_BENCH_CUH
#define CUDAFFT_KERNEL_BENCH_CUH

#include "bench_check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

/* Medians of each function's runs: every round runs each once, in turn, so that clock and
 * temperature drift touch all of them alike. */
template <typename Bench>
void
time_medians(Bench *b, void (*const *fns)(Bench *), int count, int runs, float *medians)
{
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 10; ++i)
    for (int f = 0; f < count; ++f)
      fns[f](b);
  CHECK_CUDA(cudaStreamSynchronize(b->stream));
  std::vector<std::vector<float>> ms(count, std::vector<float>(runs));
  for (int i = 0; i < runs; ++i)
    for (int f = 0; f < count; ++f) {
      CHECK_CUDA(cudaEventRecord(start, b->stream));
      fns[f](b);
      CHECK_CUDA(cudaEventRecord(stop, b->stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      CHECK_CUDA(cudaEventElapsedTime(&ms[f][i], start, stop));
    }
  for (int f = 0; f < count; ++f) {
    std::sort(ms[f].begin(), ms[f].end());
    medians[f] = ms[f][runs / 2];
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

static inline std::vector<float>
download(const float *d, size_t count)
{
  std::vector<float> h(count);
  CHECK_CUDA(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

/* A whole decimal number; 0 where the text is not one. */
static inline size_t
parse_size(const char *text)
{
  char *end = nullptr;
  const unsigned long long v = strtoull(text, &end, 10);
  return end != text && *end == '\0' ? (size_t)v : 0;
}

/* The first line of each bench's output. */
static inline void
print_device(const cudaDeviceProp &prop)
{
  int runtime = 0, cufft_version = 0;
  cudaRuntimeGetVersion(&runtime);
  cufftGetVersion(&cufft_version);
  printf("device 0: %s (sm_%d%d, %d SMs), CUDA runtime %d, cuFFT %d\n", prop.name, prop.major,
         prop.minor, prop.multiProcessorCount, runtime, cufft_version);
}

#endif
