/* fftw_real.c: see the header. */
#include "fftw_real.h"

#include "errors.h"
#include "fftw_planner.h"

CudafftStatus
cudafft_fftw_real_init(CudafftCpuObject *owner, CudafftFftwReal *fft, size_t n, int forward)
{
  fft->real = cudafft_cpu_array(owner, n * sizeof *fft->real);
  fft->bins = cudafft_cpu_array(owner, (n / 2 + 1) * sizeof *fft->bins);
  if (!fft->real || !fft->bins)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate the arrays of a %zu-point real transform", n);
  cudafft_fftw_planner_lock();
  fft->plan = forward ? fftwf_plan_dft_r2c_1d((int)n, fft->real, fft->bins, FFTW_ESTIMATE)
                      : fftwf_plan_dft_c2r_1d((int)n, fft->bins, fft->real, FFTW_ESTIMATE);
  cudafft_fftw_planner_unlock();
  cudafft_cpu_own_plan(owner, fft->plan);
  /* With FFTW_ESTIMATE a valid size only fails for want of memory. */
  if (!fft->plan)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: FFTW could not plan a %zu-point real transform", n);
  return CUDAFFT_STATUS_OK;
}
