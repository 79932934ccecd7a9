/* test_random.c: see test_random.h. */
#include "test_random.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t run_seed;

uint64_t
test_random_init(void)
{
  const char *env = getenv("CUDAFFT_TEST_SEED");
  if (env && *env) {
    char *end;
    run_seed = strtoull(env, &end, 0);
    if (*end != '\0') {
      fprintf(stderr, "CUDAFFT_TEST_SEED=%s is not a number\n", env);
      exit(2);
    }
    return run_seed;
  }
  FILE *urandom = fopen("/dev/urandom", "rb");
  if (!urandom || fread(&run_seed, sizeof run_seed, 1, urandom) != 1)
    run_seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
  if (urandom)
    fclose(urandom);
  return run_seed;
}

uint64_t
test_random_seed(void)
{
  return run_seed;
}

TestRng
test_rng(const char *label_format, ...)
{
  char label[512];
  va_list args;
  va_start(args, label_format);
  vsnprintf(label, sizeof label, label_format, args);
  va_end(args);
  /* FNV-1a of the label */
  uint64_t h = 0xcbf29ce484222325u;
  for (const char *p = label; *p; p++)
    h = (h ^ (unsigned char)*p) * 0x100000001b3u;
  const TestRng rng = {run_seed ^ h};
  return rng;
}

uint64_t
test_rng_u64(TestRng *rng)
{
  uint64_t z = (rng->state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

double
test_rng_uniform(TestRng *rng)
{
  return (double)(test_rng_u64(rng) >> 40) * (2.0 / 16777216.0) - 1.0;
}

double
test_rng_uniform53(TestRng *rng)
{
  return (double)(test_rng_u64(rng) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

size_t
test_rng_range(TestRng *rng, size_t lo, size_t hi)
{
  return lo + (size_t)(test_rng_u64(rng) % ((uint64_t)(hi - lo) + 1));
}

void
test_rng_fill(TestRng *rng, float *data, size_t count)
{
  for (size_t i = 0; i < count; i++)
    data[i] = (float)test_rng_uniform(rng);
}
