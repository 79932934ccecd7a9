/* fft_cuda_none.c: stands in for the CUDA backend in builds without nvcc. */
#include "convolve_backend.h"
#include "fft_backend.h"
#include "spectrum_backend.h"
#include "stft_backend.h"

const CudafftBackendOps *const cudafft_cuda_backend = NULL;

int
cudafft_cuda_backend_device_count(void)
{
  return 0;
}

const CudafftStftOps *const cudafft_stft_cuda_ops = NULL;

const CudafftSpectrumOps *const cudafft_spectrum_cuda_ops = NULL;

const CudafftConvolveOps *const cudafft_convolve_cuda_ops = NULL;

void *
cudafft_cuda_backend_pinned_alloc(size_t bytes)
{
  (void)bytes;
  return NULL;
}

void
cudafft_cuda_backend_pinned_free(void *ptr)
{
  (void)ptr;
}
