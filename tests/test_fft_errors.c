/* test_fft_errors.c: the API's contracts on arguments, statuses and memory: every invalid call
 * fails with its documented status and touches nothing, and the corner cases that are valid
 * (in place, odd alignment, adjacent buffers, host_alloc memory) give correct results. The CPU
 * backend is always checked; the CUDA backend too where there is a device. */
#define _POSIX_C_SOURCE 200809L

#include "fft_reference.h"
#include "test_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024
/* Transforms in the larger valid cases: 20 MB of n = 1024 C2C data, more than one of the CUDA
 * backend's staging chunks (8 MB today), the last one partial. */
#define LARGE_BATCH 2500

static void
check_status_names(void)
{
  int ok = 1;
  for (int i = 0; i < CUDAFFT_STATUS_COUNT_; i++) {
    const char *name = cudafft_status_name((CudafftStatus)i);
    if (!name || !*name || strcmp(name, "unknown status") == 0) {
      ok = 0;
      printf("  status %d has no name of its own\n", i);
      continue;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(name, cudafft_status_name((CudafftStatus)j)) == 0) {
        ok = 0;
        printf("  statuses %d and %d are both \"%s\"\n", j, i, name);
      }
  }
  test_check(ok, "cudafft_status_name: a distinct non-empty name for each of the %d statuses",
             (int)CUDAFFT_STATUS_COUNT_);
  const int beyond[] = {CUDAFFT_STATUS_COUNT_, CUDAFFT_STATUS_COUNT_ + 1, 1000, -1};
  for (size_t i = 0; i < sizeof beyond / sizeof beyond[0]; i++) {
    const char *name = cudafft_status_name((CudafftStatus)beyond[i]);
    test_check(name && strcmp(name, "unknown status") == 0,
               "cudafft_status_name(%d) is \"unknown status\" (got \"%s\")", beyond[i],
               name ? name : "(null)");
  }
}

/* plan_create must fail with want and set *plan to NULL (it starts non-NULL here, so that
 * leaving it alone shows). */
static void
expect_create_fails(CudafftStatus want, CudafftBackend backend, int device_id, CudafftKind kind,
                    size_t n, const char *what)
{
  static char sentinel;
  CudafftPlan *plan = (CudafftPlan *)(void *)&sentinel;
  CudafftStatus status = cudafft_plan_create(&plan, backend, device_id, kind, n);
  test_check(status == want && plan == NULL && *cudafft_last_error_message(),
             "plan_create(%s) -> %s (want %s), *plan %s, message \"%s\"", what,
             cudafft_status_name(status), cudafft_status_name(want),
             plan == NULL ? "NULL" : "NOT NULL", cudafft_last_error_message());
  if (status == CUDAFFT_STATUS_OK && plan != (CudafftPlan *)(void *)&sentinel)
    cudafft_plan_destroy(plan);
}

/* plan_create must succeed on backend want_backend; returns the plan (NULL after a FAIL). */
static CudafftPlan *
expect_create_ok(CudafftBackend backend, int device_id, CudafftKind kind, size_t n,
                 CudafftBackend want_backend, const char *what)
{
  CudafftPlan *plan = NULL;
  CudafftStatus status = cudafft_plan_create(&plan, backend, device_id, kind, n);
  CudafftBackend got = cudafft_plan_get_backend(plan);
  int ok = test_check(status == CUDAFFT_STATUS_OK && plan && got == want_backend,
                      "plan_create(%s) -> %s, a %s plan (want %s)%s%s", what,
                      cudafft_status_name(status), plan ? test_backend_name(got) : "(no)",
                      test_backend_name(want_backend), status ? ": " : "",
                      status ? cudafft_last_error_message() : "");
  if (!ok) {
    cudafft_plan_destroy(plan);
    return NULL;
  }
  return plan;
}

/* The supported sizes (cudafft/common.h) as the public functions state them, against the rule
 * worked out here: no prime factor above 7, 16..16384; the nearest sizes of one that is not; and
 * the refusal's message naming them. */
static int
smooth(size_t n)
{
  static const size_t primes[] = {2, 3, 5, 7};
  for (size_t i = 0; n > 0 && i < 4; i++)
    while (n % primes[i] == 0)
      n /= primes[i];
  return n == 1;
}

static void
check_sizes(void)
{
  size_t count = 0, wrong = 0;
  for (size_t n = 0; n <= CUDAFFT_MAX_SIZE + 100; n++) {
    const int want = n >= CUDAFFT_MIN_SIZE && n <= CUDAFFT_MAX_SIZE && smooth(n);
    count += want ? 1 : 0;
    wrong += !cudafft_fft_size_supported(n) != !want;
  }
  test_check(wrong == 0 && count == 387 && !cudafft_fft_size_supported((size_t)1 << 40),
             "fft_size_supported: exactly the %zu sizes 16..16384 without a prime factor above 7 "
             "(%zu wrong)",
             count, wrong);
  static const struct {
    size_t n, below, above;
  } nearest[] = {{1001, 1000, 1008}, {1000, 1000, 1000},
                 {401, 400, 405},    {15, 0, 16},
                 {0, 0, 16},         {16, 16, 16},
                 {17, 16, 18},       {16383, 16200, 16384},
                 {16385, 16384, 0},  {(size_t)1 << 40, 16384, 0}};
  for (size_t i = 0; i < sizeof nearest / sizeof nearest[0]; i++) {
    size_t below = 99, above = 99;
    cudafft_fft_size_nearest(nearest[i].n, &below, &above);
    test_check(below == nearest[i].below && above == nearest[i].above,
               "fft_size_nearest(%zu) -> %zu and %zu (want %zu and %zu)", nearest[i].n, below,
               above, nearest[i].below, nearest[i].above);
  }
  cudafft_fft_size_nearest(1001, NULL, NULL);
  static const struct {
    size_t n;
    const char *words;
  } messages[] = {{1001, "the nearest are 1000 and 1008"},
                  {12345, "the nearest are 12288 and 12348"},
                  {15, "below 16, the smallest"},
                  {16385, "above 16384, the largest"}};
  for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
    CudafftPlan *plan = NULL;
    const CudafftStatus status =
        cudafft_plan_create(&plan, CUDAFFT_BACKEND_CPU, -1, CUDAFFT_R2C, messages[i].n);
    test_check(status == CUDAFFT_STATUS_INVALID_SIZE && !plan &&
                   strstr(cudafft_last_error_message(), messages[i].words),
               "plan_create(n=%zu) -> %s, message \"%s\" (want \"%s\" in it)", messages[i].n,
               cudafft_status_name(status), cudafft_last_error_message(), messages[i].words);
    cudafft_plan_destroy(plan);
  }
}

static void
check_plan_create(void)
{
  static const size_t bad_sizes[] = {0,    8,    15,    17,    255,    257,
                                     1001, 4097, 16385, 32768, 100000, (size_t)1 << 40};
  char what[64];
  for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
    snprintf(what, sizeof what, "cpu, n=%zu", bad_sizes[i]);
    expect_create_fails(CUDAFFT_STATUS_INVALID_SIZE, CUDAFFT_BACKEND_CPU, -1, CUDAFFT_C2C,
                        bad_sizes[i], what);
  }
  /* The bounds themselves are valid, for every kind, and sizes of every kind of factor. */
  static const size_t bounds[] = {CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE, 400, 3000, 15625};
  for (CudafftKind kind = CUDAFFT_C2C; kind <= CUDAFFT_C2R; kind++)
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
      snprintf(what, sizeof what, "cpu, %s, n=%zu", test_kind_name(kind), bounds[i]);
      cudafft_plan_destroy(
          expect_create_ok(CUDAFFT_BACKEND_CPU, -1, kind, bounds[i], CUDAFFT_BACKEND_CPU, what));
    }

  CudafftStatus status = cudafft_plan_create(NULL, CUDAFFT_BACKEND_CPU, -1, CUDAFFT_C2C, N);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER, "plan_create(plan = NULL) -> %s",
             cudafft_status_name(status));
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, CUDAFFT_BACKEND_CPU, -1, (CudafftKind)3, N,
                      "kind 3");
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, CUDAFFT_BACKEND_CPU, -1, (CudafftKind)-1, N,
                      "kind -1");
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, (CudafftBackend)3, -1, CUDAFFT_C2C, N,
                      "backend 3");
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, (CudafftBackend)-1, -1, CUDAFFT_C2C, N,
                      "backend -1");
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, CUDAFFT_BACKEND_CPU, -2, CUDAFFT_C2C, N,
                      "cpu, device_id -2");
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, CUDAFFT_BACKEND_AUTO, -2, CUDAFFT_C2C, N,
                      "auto, device_id -2");
  /* The CPU backend ignores device_id (cudafft.h). */
  cudafft_plan_destroy(expect_create_ok(CUDAFFT_BACKEND_CPU, 9999, CUDAFFT_C2C, N,
                                        CUDAFFT_BACKEND_CPU, "cpu, device_id 9999"));
}

typedef struct {
  char before[512]; /* copies: the other thread's message dies with it */
  char after[512];
} ThreadMessages;

static void *
fail_on_other_thread(void *arg)
{
  ThreadMessages *messages = arg;
  snprintf(messages->before, sizeof messages->before, "%s", cudafft_last_error_message());
  CudafftPlan *plan;
  cudafft_plan_create(&plan, CUDAFFT_BACKEND_CPU, -1, CUDAFFT_C2C, 12345);
  snprintf(messages->after, sizeof messages->after, "%s", cudafft_last_error_message());
  return NULL;
}

/* Runs first: cudafft.h promises "" before any failure, then per-thread messages. */
static void
check_last_error(void)
{
  test_check(strcmp(cudafft_last_error_message(), "") == 0,
             "last_error_message is \"\" before any failure");
  CudafftPlan *plan;
  cudafft_plan_create(&plan, CUDAFFT_BACKEND_CPU, -1, CUDAFFT_C2C, 1001);
  char first[512];
  snprintf(first, sizeof first, "%s", cudafft_last_error_message());
  test_check(*first != '\0', "last_error_message after a failed plan_create: \"%s\"", first);

  /* A successful call leaves it alone: it describes the last failure. */
  cudafft_plan_destroy(expect_create_ok(CUDAFFT_BACKEND_CPU, -1, CUDAFFT_C2C, N,
                                        CUDAFFT_BACKEND_CPU, "cpu, n=1024"));
  test_check(strcmp(cudafft_last_error_message(), first) == 0,
             "last_error_message unchanged by a successful call");

  ThreadMessages messages;
  pthread_t thread;
  if (pthread_create(&thread, NULL, fail_on_other_thread, &messages) != 0)
    test_abort("pthread_create failed");
  pthread_join(thread, NULL);
  test_check(messages.before[0] == '\0' && messages.after[0] != '\0' &&
                 strcmp(messages.after, first) != 0,
             "another thread starts with \"\" and gets its own message \"%s\"", messages.after);
  test_check(strcmp(cudafft_last_error_message(), first) == 0,
             "this thread's message is unchanged by the other thread's failure");

  cudafft_plan_create(&plan, CUDAFFT_BACKEND_CPU, -2, CUDAFFT_C2C, N);
  test_check(*cudafft_last_error_message() && strcmp(cudafft_last_error_message(), first) != 0,
             "a different failure gives a different message: \"%s\"", cudafft_last_error_message());
}

/* An invalid execute must return want and write nothing to out. */
static void
expect_execute_fails(CudafftStatus want, CudafftPlan *plan, CudafftDirection direction,
                     const void *in, float *out, size_t out_count, size_t batch, const char *what)
{
  if (out)
    test_poison(out, out_count);
  CudafftStatus status = cudafft_execute(plan, direction, in, out, batch, 1.0f);
  size_t written = out ? test_count_unpoisoned(out, out_count) : 0;
  test_check(status == want && written == 0, "execute(%s) -> %s (want %s), %zu values written",
             what, cudafft_status_name(status), cudafft_status_name(want), written);
}

/* The same for transforms whose in and out overlap inside buf: it must stay as it was. */
static void
expect_overlap_fails(CudafftPlan *plan, CudafftDirection direction, float *buf, size_t count,
                     size_t in_offset, size_t out_offset, size_t batch, const char *what)
{
  uint64_t before = test_hash(buf, count * sizeof(float));
  CudafftStatus status =
      cudafft_execute(plan, direction, buf + in_offset, buf + out_offset, batch, 1.0f);
  int unchanged = test_hash(buf, count * sizeof(float)) == before;
  test_check(status == CUDAFFT_STATUS_INVALID_VALUE && unchanged,
             "execute(%s) -> %s (want %s), buffer %s", what, cudafft_status_name(status),
             cudafft_status_name(CUDAFFT_STATUS_INVALID_VALUE),
             unchanged ? "unchanged" : "CHANGED");
}

static void
check_execute_errors(CudafftPlan *c2c, CudafftPlan *r2c, CudafftPlan *c2r, const char *backend)
{
  /* Room for 4 complex transforms: every overlap below lies inside it. */
  const size_t count = 4 * 2 * N;
  float *a = test_malloc(count * sizeof(float));
  float *b = test_malloc(count * sizeof(float));
  char what[96];
  TestRng rng = test_rng("execute errors %s", backend);
  test_rng_fill(&rng, a, count);

#define WHAT(...) (snprintf(what, sizeof what, __VA_ARGS__), what)
  expect_execute_fails(CUDAFFT_STATUS_INVALID_BATCH, c2c, CUDAFFT_FORWARD, a, b, count, 0,
                       WHAT("%s C2C, batch 0", backend));
  /* INVALID_BATCH also stands for a batch whose byte count does not fit in a size_t, returned
   * before any memory is touched. */
  expect_execute_fails(CUDAFFT_STATUS_INVALID_BATCH, c2c, CUDAFFT_FORWARD, a, b, count, SIZE_MAX,
                       WHAT("%s C2C, batch SIZE_MAX", backend));
  expect_execute_fails(CUDAFFT_STATUS_NULL_POINTER, c2c, CUDAFFT_FORWARD, NULL, b, count, 1,
                       WHAT("%s C2C, in NULL", backend));
  expect_execute_fails(CUDAFFT_STATUS_NULL_POINTER, c2c, CUDAFFT_FORWARD, a, NULL, 0, 1,
                       WHAT("%s C2C, out NULL", backend));
  expect_execute_fails(CUDAFFT_STATUS_NULL_POINTER, NULL, CUDAFFT_FORWARD, a, b, count, 1,
                       WHAT("plan NULL"));
  expect_execute_fails(CUDAFFT_STATUS_INVALID_VALUE, c2c, (CudafftDirection)0, a, b, count, 1,
                       WHAT("%s C2C, direction 0", backend));
  expect_execute_fails(CUDAFFT_STATUS_INVALID_VALUE, c2c, (CudafftDirection)2, a, b, count, 1,
                       WHAT("%s C2C, direction 2", backend));
  expect_execute_fails(CUDAFFT_STATUS_INVALID_VALUE, r2c, CUDAFFT_INVERSE, a, b, count, 1,
                       WHAT("%s R2C, INVERSE", backend));
  expect_execute_fails(CUDAFFT_STATUS_INVALID_VALUE, c2r, CUDAFFT_FORWARD, a, b, count, 1,
                       WHAT("%s C2R, FORWARD", backend));
  /* Only an exact in-place C2C may overlap; partly overlapping C2C buffers are refused. */
  expect_overlap_fails(c2c, CUDAFFT_FORWARD, a, count, 0, 2, 2,
                       WHAT("%s C2C, out = in + 1 complex", backend));
  expect_overlap_fails(c2c, CUDAFFT_INVERSE, a, count, 2 * N, 0, 2,
                       WHAT("%s C2C, out ends inside in", backend));
  /* Real transforms must not overlap: in place, or partly, either way round. */
  expect_overlap_fails(r2c, CUDAFFT_FORWARD, a, count, 0, 0, 2, WHAT("%s R2C, in == out", backend));
  expect_overlap_fails(r2c, CUDAFFT_FORWARD, a, count, 0, N / 2, 2,
                       WHAT("%s R2C, out = in + n/2 floats", backend));
  expect_overlap_fails(r2c, CUDAFFT_FORWARD, a, count, N, 0, 2,
                       WHAT("%s R2C, out ends inside in", backend));
  expect_overlap_fails(c2r, CUDAFFT_INVERSE, a, count, 0, 2, 1,
                       WHAT("%s C2R, out = in + 2 floats", backend));
#undef WHAT
  free(a);
  free(b);
}

/* A transform on buffers that start offset bytes past a 16-byte boundary. The data goes in and
 * out with memcpy, since C forbids reading a float through a pointer that is not float aligned. */
static void
check_offsets(CudafftPlan *plan, CudafftDirection direction, size_t in_offset, size_t out_offset,
              const char *backend)
{
  const CudafftKind kind = cudafft_plan_get_kind(plan);
  const size_t batch = 3;
  const size_t in_count = batch * fft_layout_floats(kind, N, 1);
  const size_t out_count = batch * fft_layout_floats(kind, N, 0);
  float *in = test_malloc(in_count * sizeof(float));
  float *out = test_malloc(out_count * sizeof(float));
  double *ref = test_malloc(out_count * sizeof(double));
  /* malloc's memory is 16-byte aligned: the offsets are exactly what the lines say */
  char *raw_in = test_malloc(in_count * sizeof(float) + 16);
  char *raw_out = test_malloc(out_count * sizeof(float) + 16);

  TestRng rng = test_rng("offsets %s %s %zu %zu", backend, test_transform_name(kind, direction),
                         in_offset, out_offset);
  test_rng_fill(&rng, in, in_count);
  if (fft_reference(kind, direction, N, in, batch, ref) != 0)
    test_abort("FFTW double could not plan");
  memcpy(raw_in + in_offset, in, in_count * sizeof(float));
  memset(raw_out, 0xff, out_count * sizeof(float) + 16); /* NaN in every float, aligned or not */
  CudafftStatus status =
      cudafft_execute(plan, direction, raw_in + in_offset, raw_out + out_offset, batch, 1.0f);
  memcpy(out, raw_out + out_offset, out_count * sizeof(float));
  size_t nonfinite = test_count_nonfinite(out, out_count, NULL);
  double err = fft_rel_l2_error(out, ref, out_count, 1.0);
  test_check(status == CUDAFFT_STATUS_OK && nonfinite == 0 && err <= fft_tolerance(N),
             "%s %s with in %zu and out %zu bytes past 16-byte alignment: %s, %zu values not "
             "finite, relative L2 error %.2e (tol %.2e)",
             backend, test_transform_name(kind, direction), in_offset, out_offset,
             cudafft_status_name(status), nonfinite, err, fft_tolerance(N));
  free(in);
  free(out);
  free(ref);
  free(raw_in);
  free(raw_out);
}

/* Valid but unusual buffers give correct results: C2C in place, R2C with its output right after
 * its input, and buffers only float aligned or not even that (cudafft.h accepts "any
 * alignment"). */
static void
check_buffers(CudafftPlan *c2c, CudafftPlan *r2c, CudafftPlan *c2r, const char *backend)
{
  const size_t batch = LARGE_BATCH, count = batch * 2 * N;
  double *ref = test_malloc(count * sizeof(double));
  /* big enough for the R2C case below too: batch (2n + 2) floats and the guard */
  float *data = test_malloc((count + 2 * batch + FFT_GUARD_FLOATS) * sizeof(float));
  char label[96];
  TestRng rng = test_rng("buffers %s", backend);

  for (int dir = CUDAFFT_FORWARD; dir <= CUDAFFT_INVERSE; dir += 2) {
    test_rng_fill(&rng, data, count);
    if (fft_reference(CUDAFFT_C2C, (CudafftDirection)dir, N, data, batch, ref) != 0)
      test_abort("FFTW double could not plan");
    snprintf(label, sizeof label, "%s C2C %s in place, batch %zu", backend,
             dir == CUDAFFT_FORWARD ? "forward" : "inverse", batch);
    fft_check_execute(c2c, (CudafftDirection)dir, data, data, batch, 1.0f, ref, fft_tolerance(N),
                      label);
  }

  /* R2C: in = data[0, batch n), out = data[batch n, batch (2n + 2)) */
  test_rng_fill(&rng, data, batch * N);
  if (fft_reference(CUDAFFT_R2C, CUDAFFT_FORWARD, N, data, batch, ref) != 0)
    test_abort("FFTW double could not plan");
  snprintf(label, sizeof label, "%s R2C with out right after in, batch %zu", backend, batch);
  fft_check_execute(r2c, CUDAFFT_FORWARD, data, data + batch * N, batch, 1.0f, ref,
                    fft_tolerance(N), label);
  free(ref);
  free(data);

  check_offsets(c2c, CUDAFFT_FORWARD, 4, 8, backend);
  check_offsets(c2c, CUDAFFT_INVERSE, 1, 3, backend);
  check_offsets(r2c, CUDAFFT_FORWARD, 2, 4, backend);
  check_offsets(c2r, CUDAFFT_INVERSE, 12, 5, backend);
}

static void
check_host_alloc(CudafftPlan *c2c, CudafftBackend backend)
{
  const char *name = test_backend_name(backend);
  const size_t batch = LARGE_BATCH, count = batch * 2 * N;
  void *in = NULL, *out = NULL;
  CudafftStatus s1 = cudafft_host_alloc(c2c, count * sizeof(float), &in);
  CudafftStatus s2 = cudafft_host_alloc(c2c, (count + FFT_GUARD_FLOATS) * sizeof(float), &out);
  /* 64-byte alignment is the CPU backend's promise; pinned memory is page aligned anyway. */
  int ok =
      test_check(s1 == CUDAFFT_STATUS_OK && s2 == CUDAFFT_STATUS_OK && in && out &&
                     (uintptr_t)in % 64 == 0 && (uintptr_t)out % 64 == 0,
                 "%s host_alloc twice -> %s, %s, 64-byte aligned: %s", name,
                 cudafft_status_name(s1), cudafft_status_name(s2),
                 in && out && (uintptr_t)in % 64 == 0 && (uintptr_t)out % 64 == 0 ? "yes" : "no");
  if (ok) {
    double *ref = test_malloc(count * sizeof(double));
    TestRng rng = test_rng("host_alloc %s", name);
    test_rng_fill(&rng, in, count);
    if (fft_reference(CUDAFFT_C2C, CUDAFFT_FORWARD, N, in, batch, ref) != 0)
      test_abort("FFTW double could not plan");
    char label[64];
    snprintf(label, sizeof label, "%s C2C forward on host_alloc memory, batch %zu", name, batch);
    fft_check_execute(c2c, CUDAFFT_FORWARD, in, out, batch, 1.0f, ref, fft_tolerance(N), label);
    free(ref);
  }
  cudafft_host_free(c2c, in);
  cudafft_host_free(c2c, out);
  cudafft_host_free(c2c, NULL);

  void *p = (void *)&p;
  CudafftStatus status = cudafft_host_alloc(c2c, 0, &p);
  test_check(status == CUDAFFT_STATUS_INVALID_VALUE && p == NULL,
             "%s host_alloc(0 bytes) -> %s, *ptr %s", name, cudafft_status_name(status),
             p ? "NOT NULL" : "NULL");
  status = cudafft_host_alloc(NULL, 64, &p);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER, "host_alloc(plan NULL) -> %s",
             cudafft_status_name(status));
  status = cudafft_host_alloc(c2c, 64, NULL);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER, "%s host_alloc(ptr NULL) -> %s", name,
             cudafft_status_name(status));
/* AddressSanitizer and ThreadSanitizer abort on such a request by default */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  if (backend == CUDAFFT_BACKEND_CPU) {
    /* More than any address space holds: the failure must be a status, not a crash. */
    p = (void *)&p;
    status = cudafft_host_alloc(c2c, SIZE_MAX / 2, &p);
    test_check(status == CUDAFFT_STATUS_HOST_OUT_OF_MEMORY && p == NULL,
               "cpu host_alloc(SIZE_MAX / 2) -> %s, *ptr %s", cudafft_status_name(status),
               p ? "NOT NULL" : "NULL");
  }
#endif
}

/* cudafft.h: different plans may be used from different threads at once. Each thread creates,
 * runs and destroys plans in a loop (on the CPU backend that races FFTW's planner unless the
 * backend serialises it); the results are compared on the main thread, which owns the report. */
#define THREADS 4
#define THREAD_ROUNDS 16
#define THREAD_BATCH 4

typedef struct {
  CudafftBackend backend;
  const float *in;   /* THREAD_BATCH transforms, shared read-only */
  const double *ref; /* their C2C forward reference */
  int failures;
  double worst_err;
  char why[256];
} ThreadJob;

static void *
plan_churn(void *arg)
{
  ThreadJob *job = arg;
  float *out = test_malloc((THREAD_BATCH * 2 * N + FFT_GUARD_FLOATS) * sizeof(float));
  for (int round = 0; round < THREAD_ROUNDS; round++) {
    CudafftPlan *plan = NULL;
    CudafftStatus status = cudafft_plan_create(&plan, job->backend, -1, CUDAFFT_C2C, N);
    if (status != CUDAFFT_STATUS_OK) {
      job->failures++;
      snprintf(job->why, sizeof job->why, "plan_create: %s", cudafft_status_name(status));
      continue;
    }
    if (!fft_run_poisoned(plan, CUDAFFT_FORWARD, job->in, out, THREAD_BATCH, 1.0f, job->why,
                          sizeof job->why)) {
      job->failures++;
    } else {
      double err = fft_rel_l2_error(out, job->ref, THREAD_BATCH * 2 * N, 1.0);
      if (!(err <= job->worst_err))
        job->worst_err = err;
    }
    cudafft_plan_destroy(plan);
  }
  free(out);
  return NULL;
}

static void
check_threads(CudafftBackend backend)
{
  const size_t count = THREAD_BATCH * 2 * N;
  float *in = test_malloc(count * sizeof(float));
  double *ref = test_malloc(count * sizeof(double));
  TestRng rng = test_rng("threads %s", test_backend_name(backend));
  test_rng_fill(&rng, in, count);
  if (fft_reference(CUDAFFT_C2C, CUDAFFT_FORWARD, N, in, THREAD_BATCH, ref) != 0)
    test_abort("FFTW double could not plan");

  ThreadJob jobs[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    jobs[t] = (ThreadJob){.backend = backend, .in = in, .ref = ref};
    if (pthread_create(&threads[t], NULL, plan_churn, &jobs[t]) != 0)
      test_abort("pthread_create failed");
  }
  int failures = 0;
  double worst = 0.0;
  const char *why = "";
  for (int t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    failures += jobs[t].failures;
    if (jobs[t].failures)
      why = jobs[t].why;
    if (!(jobs[t].worst_err <= worst))
      worst = jobs[t].worst_err;
  }
  test_check(failures == 0 && worst <= fft_tolerance(N),
             "%s: %d threads x %d rounds of plan_create, execute, plan_destroy: %d failed%s%s, "
             "worst relative L2 error %.2e (tol %.2e)",
             test_backend_name(backend), THREADS, THREAD_ROUNDS, failures, *why ? ": " : "", why,
             worst, fft_tolerance(N));
  free(in);
  free(ref);
}

/* Everything that holds for any backend's plans, then what differs between them. */
static void
check_backend(CudafftBackend backend)
{
  const char *name = test_backend_name(backend);
  CudafftPlan *plans[3];
  for (CudafftKind kind = CUDAFFT_C2C; kind <= CUDAFFT_C2R; kind++) {
    char what[64];
    snprintf(what, sizeof what, "%s, %s, n=%d", name, test_kind_name(kind), N);
    plans[kind] = expect_create_ok(backend, -1, kind, N, backend, what);
  }
  CudafftPlan *c2c = plans[CUDAFFT_C2C], *r2c = plans[CUDAFFT_R2C], *c2r = plans[CUDAFFT_C2R];
  if (!c2c || !r2c || !c2r) {
    test_check(0, "%s: cannot check execute without the three plans", name);
  } else {
    test_check(cudafft_plan_get_kind(c2c) == CUDAFFT_C2C &&
                   cudafft_plan_get_kind(r2c) == CUDAFFT_R2C &&
                   cudafft_plan_get_kind(c2r) == CUDAFFT_C2R && cudafft_plan_get_size(c2c) == N,
               "%s plan_get_kind and plan_get_size", name);
    test_check(
        cudafft_plan_input_floats(c2c) == 2 * N && cudafft_plan_output_floats(c2c) == 2 * N &&
            cudafft_plan_input_floats(r2c) == N && cudafft_plan_output_floats(r2c) == N + 2 &&
            cudafft_plan_input_floats(c2r) == N + 2 && cudafft_plan_output_floats(c2r) == N,
        "%s plan_input_floats / plan_output_floats: 2n/2n, n/n+2, n+2/n", name);
    /* an odd size has (n + 1) / 2 bins, no bin n/2 of its own */
    CudafftPlan *odd_r2c = expect_create_ok(backend, -1, CUDAFFT_R2C, 25, backend, "odd R2C");
    CudafftPlan *odd_c2r = expect_create_ok(backend, -1, CUDAFFT_C2R, 25, backend, "odd C2R");
    test_check(
        cudafft_plan_input_floats(odd_r2c) == 25 && cudafft_plan_output_floats(odd_r2c) == 26 &&
            cudafft_plan_input_floats(odd_c2r) == 26 && cudafft_plan_output_floats(odd_c2r) == 25,
        "%s n=25 plan_input_floats / plan_output_floats: n/n+1, n+1/n", name);
    cudafft_plan_destroy(odd_r2c);
    cudafft_plan_destroy(odd_c2r);
    CudafftStatus status = cudafft_plan_synchronize(c2c);
    test_check(status == CUDAFFT_STATUS_OK, "%s plan_synchronize -> %s", name,
               cudafft_status_name(status));
    check_execute_errors(c2c, r2c, c2r, name);
    check_buffers(c2c, r2c, c2r, name);
    check_host_alloc(c2c, backend);

    void *stream = cudafft_plan_get_cuda_stream(c2c);
    float *buf = NULL;
    status = cudafft_host_alloc(c2c, 4 * N * sizeof(float), (void **)&buf);
    if (status != CUDAFFT_STATUS_OK)
      test_abort("host_alloc failed: %s", cudafft_last_error_message());
    if (backend == CUDAFFT_BACKEND_CPU) {
      test_check(stream == NULL, "cpu plan_get_cuda_stream is NULL");
      status = cudafft_execute_device(c2c, CUDAFFT_FORWARD, buf, buf + 2 * N, 1, 1.0f);
      test_check(status == CUDAFFT_STATUS_UNSUPPORTED, "cpu execute_device -> %s",
                 cudafft_status_name(status));
    } else {
      test_check(stream != NULL, "cuda plan_get_cuda_stream is not NULL");
      /* Rejected before any memory is touched, so host memory serves as the pointers. */
      status = cudafft_execute_device(c2c, CUDAFFT_FORWARD, buf + 1, buf + 2 * N, 1, 1.0f);
      test_check(status == CUDAFFT_STATUS_INVALID_VALUE,
                 "cuda execute_device with input 4 bytes off 16-byte alignment -> %s",
                 cudafft_status_name(status));
      status = cudafft_execute_device(c2c, CUDAFFT_FORWARD, NULL, buf, 1, 1.0f);
      test_check(status == CUDAFFT_STATUS_NULL_POINTER, "cuda execute_device(in NULL) -> %s",
                 cudafft_status_name(status));
    }
    cudafft_host_free(c2c, buf);
  }
  cudafft_plan_destroy(c2c);
  cudafft_plan_destroy(r2c);
  cudafft_plan_destroy(c2r);
  check_threads(backend);
}

/* cudafft_cuda_unavailable_reason: words exactly where there is no usable device (naming the
 * build where it has no CUDA backend, the driver where the runtime found none), cut to fit and
 * terminated, nothing for no room. */
static void
check_unavailable_reason(int devices, int built)
{
  char text[256];
  memset(text, 'x', sizeof text);
  const size_t n = cudafft_cuda_unavailable_reason(text, sizeof text);
  test_check(n < sizeof text && n == strlen(text) && (devices > 0) == (n == 0),
             "cuda_unavailable_reason with %d devices: \"%s\"", devices, text);
  if (!built)
    test_check(strstr(text, "no CUDA backend") != NULL, "a build without CUDA says so: \"%s\"",
               text);
  else if (devices == 0)
    test_check(strstr(text, "driver") != NULL || strstr(text, "device") != NULL ||
                   strstr(text, "CUDA") != NULL,
               "a host without a usable device names the driver or the device: \"%s\"", text);
  char small[8];
  memset(small, 'x', sizeof small);
  const size_t m = cudafft_cuda_unavailable_reason(small, sizeof small);
  test_check(m < sizeof small && m == strlen(small) && strncmp(small, text, m) == 0,
             "cuda_unavailable_reason cut to %zu bytes: \"%s\"", sizeof small, small);
  test_check(cudafft_cuda_unavailable_reason(NULL, sizeof text) == 0 &&
                 cudafft_cuda_unavailable_reason(text, 0) == 0,
             "cuda_unavailable_reason into NULL or 0 bytes: 0");
}

static void
check_cuda_availability(void)
{
  int devices = cudafft_cuda_device_count();
  int built = cudafft_has_cuda_backend();
  test_check(devices >= 0 && (built || devices == 0),
             "cuda_device_count %d, CUDA backend %s built in", devices, built ? "is" : "is not");
  check_unavailable_reason(devices, built);
  if (devices == 0) {
    CudafftStatus want = built ? CUDAFFT_STATUS_NO_DEVICE : CUDAFFT_STATUS_BACKEND_UNAVAILABLE;
    expect_create_fails(want, CUDAFFT_BACKEND_CUDA, -1, CUDAFFT_C2C, N, "cuda, no device");
    cudafft_plan_destroy(expect_create_ok(CUDAFFT_BACKEND_AUTO, -1, CUDAFFT_C2C, N,
                                          CUDAFFT_BACKEND_CPU, "auto, no device"));
    return;
  }
  expect_create_fails(CUDAFFT_STATUS_NO_DEVICE, CUDAFFT_BACKEND_CUDA, 9999, CUDAFFT_C2C, N,
                      "cuda, device_id 9999");
  expect_create_fails(CUDAFFT_STATUS_NO_DEVICE, CUDAFFT_BACKEND_CUDA, devices, CUDAFFT_C2C, N,
                      "cuda, device_id = device count");
  cudafft_plan_destroy(expect_create_ok(CUDAFFT_BACKEND_AUTO, -1, CUDAFFT_C2C, N,
                                        CUDAFFT_BACKEND_CUDA, "auto, with a device"));
  cudafft_plan_destroy(expect_create_ok(CUDAFFT_BACKEND_CUDA, 0, CUDAFFT_C2C, N,
                                        CUDAFFT_BACKEND_CUDA, "cuda, device_id 0"));
  check_backend(CUDAFFT_BACKEND_CUDA);
}

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  check_last_error(); /* first: it needs a thread on which nothing has failed yet */
  check_status_names();
  check_sizes();
  check_plan_create();
  check_backend(CUDAFFT_BACKEND_CPU);
  check_cuda_availability();
  cudafft_plan_destroy(NULL);
  test_check(1, "plan_destroy(NULL) returns");
  return test_finish();
}
