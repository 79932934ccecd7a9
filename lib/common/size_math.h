/* size_math.h: size arithmetic for the host-memory estimates, shared by the front ends and
 * backends (C and CUDA). Internal; static inline so that each user keeps its own copy. A C file
 * including it defines _DEFAULT_SOURCE before any include: C11 alone hides sysconf's
 * _SC_PHYS_PAGES. */
#ifndef CUDAFFT_SIZE_CHECK_H
#define CUDAFFT_SIZE_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

static inline size_t
min_size(size_t a, size_t b)
{
  return a < b ? a : b;
}

static inline size_t
max_size(size_t a, size_t b)
{
  return a > b ? a : b;
}

/* *out = a b; 0 where that overflows. */
static inline int
mul_size(size_t a, size_t b, size_t *out)
{
  if (b != 0 && a > SIZE_MAX / b)
    return 0;
  *out = a * b;
  return 1;
}

/* *out = a b + c; 0 where that overflows. */
static inline int
mul_add_size(size_t a, size_t b, size_t c, size_t *out)
{
  size_t product;
  if (!mul_size(a, b, &product) || product > SIZE_MAX - c)
    return 0;
  *out = product + c;
  return 1;
}

/* Saturating size arithmetic for the memory estimate: SIZE_MAX stands for "too large to count". */
static inline size_t
sat_mul(size_t a, size_t b)
{
  return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

static inline size_t
sat_add(size_t a, size_t b)
{
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Rounded up, for messages. */
static inline size_t
megabytes(size_t bytes)
{
  return bytes / (1u << 20) + (bytes % (1u << 20) != 0);
}

static inline size_t
physical_memory(void)
{
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  size_t bytes;
  if (pages <= 0 || page_size <= 0 || !mul_size((size_t)pages, (size_t)page_size, &bytes))
    return SIZE_MAX; /* unknown: leave it to the allocations */
  return bytes;
}

#endif
