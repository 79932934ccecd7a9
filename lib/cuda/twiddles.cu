/* twiddles.cu: the block FFT's twiddle tables (twiddles.h). */
#include "block_fft.cuh"
#include "device_memory.h"
#include "errors.h"
#include "mixed_fft.cuh"
#include "twiddles.h"

#include <cmath>
#include <cstdlib>

using namespace cudafft;

extern "C" size_t
cudafft_twiddle_count(int n_complex, int plan_kind)
{
  if (plan_kind == kPlanMixed)
    return (size_t)mixed_twiddle_count(mixed_plan(n_complex));
  return (size_t)twiddle_count(n_complex, plan_kind);
}

extern "C" void
cudafft_twiddle_table(int n_complex, int plan_kind, float *table)
{
  if (plan_kind == kPlanMixed) {
    mixed_twiddle_fill(mixed_plan(n_complex), reinterpret_cast<float2 *>(table));
    return;
  }
  const double two_pi = 6.283185307179586476925286766559;
  const RadixPlan plan = make_radix_plan(n_complex, plan_kind);
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
  for (int k = 0; k <= n_complex / 2; ++k) {
    const double angle = -two_pi * k / (2.0 * n_complex);
    table[2 * o] = (float)cos(angle);
    table[2 * o + 1] = (float)sin(angle);
    ++o;
  }
}

extern "C" size_t
cudafft_twiddles_count(const CudafftTwiddlePlan *plans, int count)
{
  size_t values = 0;
  for (int i = 0; i < count; ++i)
    values += cudafft_twiddle_count(plans[i].n_complex, plans[i].plan_kind);
  return values;
}

extern "C" CudafftStatus
cudafft_twiddles_upload(const CudafftTwiddlePlan *plans, int count, cudaStream_t stream,
                        float2 **table)
{
  *table = nullptr;
  const size_t values = cudafft_twiddles_count(plans, count);
  float *host = (float *)malloc(values * sizeof(float2)); /* up to 200 KB: not for a stack */
  if (!host)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a twiddle table");
  float *at = host;
  for (int i = 0; i < count; ++i) {
    cudafft_twiddle_table(plans[i].n_complex, plans[i].plan_kind, at);
    at += 2 * cudafft_twiddle_count(plans[i].n_complex, plans[i].plan_kind);
  }
  const CudafftStatus status =
      cudafft_device_copy((void **)table, host, values * sizeof(float2), "a twiddle table", stream);
  free(host);
  return status;
}
