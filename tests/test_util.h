/* test_util.h: what every test program shares: the check/report lines, the backend argument and
 * its skip rule, a seeded random source, NaN-poisoned buffers. Tests are plain C programs; meson
 * reads the exit status (0 pass, 1 fail, 77 skip) and a person reads the lines. */
#ifndef CUDAFFT_TEST_UTIL_H
#define CUDAFFT_TEST_UTIL_H

#include <cudafft/fft.h>

#include <stddef.h>
#include <stdint.h>

#define TEST_EXIT_SKIP 77

/* Prints "PASS: <what>" or "FAIL: <what>" and counts it; returns ok. */
int test_check(int ok, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints the closing "P passed, F failed" line and returns the exit status. */
int test_finish(void);

/* Skips the whole program: prints "SKIP: <why>" and the closing line, exits 77. */
_Noreturn void test_skip_program(const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Reports a broken test environment (no memory, bad arguments) and exits 1. */
_Noreturn void test_abort(const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The backend named by the program's one argument, "cpu" or "cuda". Exits 77 for "cuda" when
 * there is no device, and only then: a machine with a device must run every check. */
CudafftBackend test_backend_from_args(int argc, char **argv);

const char *test_backend_name(CudafftBackend backend);
/* "C2C", "R2C", "C2R" */
const char *test_kind_name(CudafftKind kind);
/* "C2C forward", "C2C inverse", "R2C", "C2R" */
const char *test_transform_name(CudafftKind kind, CudafftDirection direction);

/* Seeds the random source from CUDAFFT_TEST_SEED or /dev/urandom and prints the seed. */
void test_seed_init(void);
uint64_t test_random_u64(void);
/* Uniform in [-1, 1), 24 random bits: exact in a float. */
double test_random_uniform(void);
/* Uniform integer in [lo, hi]. */
size_t test_random_range(size_t lo, size_t hi);
void test_fill_uniform(float *data, size_t count);

/* malloc that exits on failure: a test without memory cannot say anything. */
void *test_malloc(size_t bytes);

/* Fills with a quiet NaN of a recognisable payload, so that an unwritten output value fails any
 * comparison and a value written past the end is detected. */
void test_poison(float *data, size_t count);
/* How many of count values are no longer the poison. */
size_t test_count_unpoisoned(const float *data, size_t count);
/* How many values are NaN or infinite; the first one's index in *first (if any). */
size_t test_count_nonfinite(const float *data, size_t count, size_t *first);

/* A fast non-cryptographic hash, to tell whether a buffer changed. */
uint64_t test_hash(const void *data, size_t bytes);

/* Monotonic seconds, for the time lines. */
double test_seconds(void);

#endif
