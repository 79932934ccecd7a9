/* test_random.h: the tests' one random source. A run has one seed, from CUDAFFT_TEST_SEED or
 * /dev/urandom (test_harness.h prints it); every check (or table row) draws from a stream of its
 * own, derived from the seed and a label, so that a row replays alone with the run's seed and does
 * not depend on which checks ran before it. Plain C; the library tests and the element tests both
 * use it. */
#ifndef CUDAFFT_TEST_RANDOM_H
#define CUDAFFT_TEST_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __GNUC__
#define TEST_PRINTF(format_index, first_arg)                                                       \
  __attribute__((format(printf, format_index, first_arg)))
#else
#define TEST_PRINTF(format_index, first_arg)
#endif

/* Reads the run's seed from CUDAFFT_TEST_SEED (a number in C notation) or, without it, from
 * /dev/urandom; returns it. Exits 2 where CUDAFFT_TEST_SEED is not a number. */
uint64_t test_random_init(void);
/* The run's seed (0 before test_random_init). */
uint64_t test_random_seed(void);

/* A stream of random numbers (splitmix64: tiny, fast, and good enough to fill test signals). */
typedef struct {
  uint64_t state;
} TestRng;

/* The stream of the printf-formatted label in this run. */
TestRng test_rng(const char *label_format, ...) TEST_PRINTF(1, 2);
uint64_t test_rng_u64(TestRng *rng);
/* Uniform in [-1, 1), 24 random bits: exact in a float. */
double test_rng_uniform(TestRng *rng);
/* Uniform in [-1, 1), 53 random bits: more than a float holds. */
double test_rng_uniform53(TestRng *rng);
/* Uniform integer in [lo, hi]. */
size_t test_rng_range(TestRng *rng, size_t lo, size_t hi);
/* count test_rng_uniform() values as floats. */
void test_rng_fill(TestRng *rng, float *data, size_t count);

#endif
