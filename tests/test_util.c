/* test_util.c: see test_util.h. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned passed, failed;

int
test_check(int ok, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  fputs(ok ? "PASS: " : "FAIL: ", stdout);
  vprintf(format, args);
  va_end(args);
  putchar('\n');
  /* meson reads stdout through a pipe: without the flush a crash would eat the last lines. */
  fflush(stdout);
  if (ok)
    passed++;
  else
    failed++;
  return ok;
}

int
test_finish(void)
{
  printf("%u passed, %u failed\n", passed, failed);
  fflush(stdout);
  /* A run that checked nothing has shown nothing. */
  return failed == 0 && passed > 0 ? 0 : 1;
}

void
test_skip_program(const char *format, ...)
{
  va_list args;
  va_start(args, format);
  fputs("SKIP: ", stdout);
  vprintf(format, args);
  va_end(args);
  printf("\n%u passed, %u failed, 1 skipped\n", passed, failed);
  fflush(stdout);
  exit(failed ? 1 : TEST_EXIT_SKIP);
}

void
test_abort(const char *format, ...)
{
  va_list args;
  va_start(args, format);
  fputs("FAIL: ", stdout);
  vprintf(format, args);
  va_end(args);
  printf("\n%u passed, %u failed\n", passed, failed + 1);
  fflush(stdout);
  exit(1);
}

CudafftBackend
test_backend_from_args(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "cpu") == 0)
    return CUDAFFT_BACKEND_CPU;
  if (argc != 2 || strcmp(argv[1], "cuda") != 0)
    test_abort("usage: %s cpu|cuda", argv[0]);
  if (cudafft_cuda_device_count() == 0)
    test_skip_program("no CUDA device (cudafft_cuda_device_count() == 0): %s",
                      cudafft_has_cuda_backend()
                          ? "the CUDA backend is built in but finds no usable device or driver"
                          : "this build has no CUDA backend (configured without nvcc)");
  return CUDAFFT_BACKEND_CUDA;
}

const char *
test_backend_name(CudafftBackend backend)
{
  switch (backend) {
  case CUDAFFT_BACKEND_AUTO:
    return "auto";
  case CUDAFFT_BACKEND_CUDA:
    return "cuda";
  case CUDAFFT_BACKEND_CPU:
    return "cpu";
  }
  return "(invalid backend)";
}

const char *
test_kind_name(CudafftKind kind)
{
  switch (kind) {
  case CUDAFFT_C2C:
    return "C2C";
  case CUDAFFT_R2C:
    return "R2C";
  case CUDAFFT_C2R:
    return "C2R";
  }
  return "(invalid kind)";
}

const char *
test_transform_name(CudafftKind kind, CudafftDirection direction)
{
  if (kind == CUDAFFT_C2C)
    return direction == CUDAFFT_FORWARD ? "C2C forward" : "C2C inverse";
  return test_kind_name(kind);
}

/* splitmix64: tiny, fast, and good enough to fill test signals. */
static uint64_t random_state;

void
test_seed_init(void)
{
  const char *env = getenv("CUDAFFT_TEST_SEED");
  uint64_t seed = 0;
  if (env && *env) {
    char *end;
    seed = strtoull(env, &end, 0);
    if (*end != '\0')
      test_abort("CUDAFFT_TEST_SEED=%s is not a number", env);
  } else {
    FILE *urandom = fopen("/dev/urandom", "rb");
    if (!urandom || fread(&seed, sizeof seed, 1, urandom) != 1)
      seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    if (urandom)
      fclose(urandom);
  }
  random_state = seed;
  printf("seed: 0x%016" PRIx64 " (CUDAFFT_TEST_SEED=0x%016" PRIx64 " reproduces this run)\n", seed,
         seed);
  fflush(stdout);
}

uint64_t
test_random_u64(void)
{
  uint64_t z = (random_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

double
test_random_uniform(void)
{
  return (double)(test_random_u64() >> 40) * (2.0 / 16777216.0) - 1.0;
}

size_t
test_random_range(size_t lo, size_t hi)
{
  return lo + (size_t)(test_random_u64() % (hi - lo + 1));
}

void
test_fill_uniform(float *data, size_t count)
{
  for (size_t i = 0; i < count; i++)
    data[i] = (float)test_random_uniform();
}

void *
test_malloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);
  if (!p)
    test_abort("test_malloc: cannot allocate %zu bytes", bytes);
  return p;
}

static const uint32_t poison_bits = 0x7fc0deadu;

void
test_poison(float *data, size_t count)
{
  for (size_t i = 0; i < count; i++)
    memcpy(&data[i], &poison_bits, sizeof poison_bits);
}

size_t
test_count_unpoisoned(const float *data, size_t count)
{
  size_t changed = 0;
  for (size_t i = 0; i < count; i++) {
    uint32_t bits;
    memcpy(&bits, &data[i], sizeof bits);
    changed += bits != poison_bits;
  }
  return changed;
}

size_t
test_count_nonfinite(const float *data, size_t count, size_t *first)
{
  size_t bad = 0;
  for (size_t i = 0; i < count; i++)
    if (!isfinite(data[i])) {
      if (bad++ == 0 && first)
        *first = i;
    }
  return bad;
}

uint64_t
test_hash(const void *data, size_t bytes)
{
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325u;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, sizeof word);
    h = (h ^ word) * 0x100000001b3u;
    h ^= h >> 29;
  }
  for (; i < bytes; i++)
    h = (h ^ p[i]) * 0x100000001b3u;
  return h;
}

double
test_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
