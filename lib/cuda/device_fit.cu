/* device_fit.cu: see the header. */
#include "cuda_check.cuh"
#include "device_fit.h"
#include "size_math.h"

#include <cstdint>

extern "C" CudafftStatus
cudafft_device_fits(size_t need, const char *what, const char *detail)
{
  int device = 0;
  size_t free_bytes = 0, total_bytes = 0;
  CUDAFFT_CHECK(cudaGetDevice(&device));
  CUDAFFT_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need <= free_bytes)
    return CUDAFFT_STATUS_OK;
  if (need == SIZE_MAX)
    return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                        "%s needs more GPU memory than can be addressed; GPU %d has %zu MB free",
                        what, device, free_bytes >> 20);
  return cudafft_fail(CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
                      "%s needs %zu MB of GPU memory%s; GPU %d has %zu MB free of %zu MB", what,
                      megabytes(need), detail, device, free_bytes >> 20, total_bytes >> 20);
}
