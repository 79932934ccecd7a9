/* test_util.c: see test_util.h. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

int
test_check_create(CudafftStatus status, const void *object, CudafftStatus want, CudafftStatus also,
                  const char *call, const char *what)
{
  return test_check((status == want || status == also) &&
                        (status == CUDAFFT_STATUS_OK) == (object != NULL),
                    "%s %s -> %s (want %s), object %s%s%s", call, what, cudafft_status_name(status),
                    cudafft_status_name(want), object ? "set" : "NULL", status ? ": " : "",
                    status ? cudafft_last_error_message() : "");
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

static const uint64_t poison_bits64 = 0x7ff8deaddeaddeadu;

void
test_poison_samples(CudafftSampleFormat format, void *data, size_t count)
{
  uint8_t *bytes = data;
  for (size_t i = 0; i < count; i++) {
    if (format == CUDAFFT_SAMPLE_F32)
      memcpy(bytes + i * 4, &poison_bits, 4);
    else
      memcpy(bytes + i * 8, &poison_bits64, 8);
  }
}

size_t
test_count_unpoisoned_samples(CudafftSampleFormat format, const void *data, size_t count)
{
  const uint8_t *bytes = data;
  size_t changed = 0;
  for (size_t i = 0; i < count; i++)
    changed += format == CUDAFFT_SAMPLE_F32 ? memcmp(bytes + i * 4, &poison_bits, 4) != 0
                                            : memcmp(bytes + i * 8, &poison_bits64, 8) != 0;
  return changed;
}

double *
test_random_doubles(TestRng *rng, size_t count)
{
  double *values = test_malloc(count * sizeof *values);
  for (size_t i = 0; i < count; i++)
    values[i] = test_rng_uniform(rng);
  return values;
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
