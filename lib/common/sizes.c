/* sizes.c: see the header. */
#include "sizes.h"

#include "errors.h"

/* n without its factors 2, 3, 5 and 7: 1 where it has no other. */
static size_t
rough_part(size_t n)
{
  static const size_t primes[] = {2, 3, 5, 7};
  for (size_t i = 0; i < sizeof primes / sizeof primes[0]; i++)
    while (n % primes[i] == 0)
      n /= primes[i];
  return n;
}

int
cudafft_is_fft_size(size_t n)
{
  return n >= CUDAFFT_MIN_SIZE && n <= CUDAFFT_MAX_SIZE && rough_part(n) == 1;
}

int
cudafft_fft_size_supported(size_t n)
{
  return cudafft_is_fft_size(n);
}

int
cudafft_is_fused_size(size_t n)
{
  return n >= CUDAFFT_FUSED_MIN_SIZE && n <= CUDAFFT_MAX_SIZE && (n & (n - 1)) == 0;
}

void
cudafft_fft_size_nearest(size_t n, size_t *below, size_t *above)
{
  /* the sizes lie at most a few percent apart above 16 (the widest gap to 16384 is 5%): a walk */
  size_t lo = 0, hi = 0;
  if (n >= CUDAFFT_MIN_SIZE)
    for (size_t m = n < CUDAFFT_MAX_SIZE ? n : CUDAFFT_MAX_SIZE; m >= CUDAFFT_MIN_SIZE && !lo; m--)
      lo = cudafft_is_fft_size(m) ? m : 0;
  if (n <= CUDAFFT_MAX_SIZE)
    for (size_t m = n > CUDAFFT_MIN_SIZE ? n : CUDAFFT_MIN_SIZE; m <= CUDAFFT_MAX_SIZE && !hi; m++)
      hi = cudafft_is_fft_size(m) ? m : 0;
  if (below)
    *below = lo;
  if (above)
    *above = hi;
}

CudafftStatus
cudafft_check_size(size_t n, const char *what)
{
  if (cudafft_is_fft_size(n))
    return CUDAFFT_STATUS_OK;
  size_t below, above;
  cudafft_fft_size_nearest(n, &below, &above);
  if (!below)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                        "%s %zu is below %d, the smallest size (sizes are %d to %d with no prime "
                        "factor above 7)",
                        what, n, CUDAFFT_MIN_SIZE, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE);
  if (!above)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                        "%s %zu is above %d, the largest size (sizes are %d to %d with no prime "
                        "factor above 7)",
                        what, n, CUDAFFT_MAX_SIZE, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE);
  return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE,
                      "%s %zu has a prime factor above 7 (sizes are %d to %d with no prime factor "
                      "above 7); the nearest are %zu and %zu",
                      what, n, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE, below, above);
}
