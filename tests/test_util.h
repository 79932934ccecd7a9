/* test_util.h: what the library tests share beyond the harness (test_harness.h) and the random
 * streams (test_random.h), which it includes: memory that is there or ends the run, random values,
 * NaN-poisoned buffers, a hash to tell whether a buffer changed, the names of the FFT's kinds. */
#ifndef CUDAFFT_TEST_UTIL_H
#define CUDAFFT_TEST_UTIL_H

#include "test_harness.h"
#include "test_random.h"

#include <cudafft/fft.h>

#include <stddef.h>
#include <stdint.h>

/* "C2C", "R2C", "C2R" */
const char *test_kind_name(CudafftKind kind);
/* "C2C forward", "C2C inverse", "R2C", "C2R" */
const char *test_transform_name(CudafftKind kind, CudafftDirection direction);

/* The check of one create call of an engine: status is want (or also) and the object pointer,
 * which started non-NULL, is set exactly when status is OK; the library's message is quoted on a
 * failure. call names the function, what the case. Returns whether it held. */
int test_check_create(CudafftStatus status, const void *object, CudafftStatus want,
                      CudafftStatus also, const char *call, const char *what);

/* malloc that ends the run (test_abort) on failure: a test without memory cannot say anything. */
void *test_malloc(size_t bytes);

/* Fills with a quiet NaN of a recognisable payload, so that an unwritten output value fails any
 * comparison and a value written past the end is detected. */
void test_poison(float *data, size_t count);
/* How many of count values are no longer the poison. */
size_t test_count_unpoisoned(const float *data, size_t count);
/* The same for count samples of an F32 or F64 format (F64: a quiet NaN of the same kind). */
void test_poison_samples(CudafftSampleFormat format, void *data, size_t count);
size_t test_count_unpoisoned_samples(CudafftSampleFormat format, const void *data, size_t count);
/* How many values are NaN or infinite; the first one's index in *first (if any). */
size_t test_count_nonfinite(const float *data, size_t count, size_t *first);

/* count test_rng_uniform() values in memory of test_malloc (freed with free). */
double *test_random_doubles(TestRng *rng, size_t count);

/* A fast non-cryptographic hash, to tell whether a buffer changed. */
uint64_t test_hash(const void *data, size_t bytes);

#endif
