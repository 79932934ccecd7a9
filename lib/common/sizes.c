/* sizes.c: see the header. */
#include "sizes.h"

#include "errors.h"

int
cudafft_is_fft_size(size_t n)
{
  return n >= CUDAFFT_MIN_SIZE && n <= CUDAFFT_MAX_SIZE && (n & (n - 1)) == 0;
}

CudafftStatus
cudafft_check_size(size_t n, const char *what)
{
  if (cudafft_is_fft_size(n))
    return CUDAFFT_STATUS_OK;
  return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "%s %zu is not a power of two from %d to %d",
                      what, n, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE);
}
