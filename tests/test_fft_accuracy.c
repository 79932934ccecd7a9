/* test_fft_accuracy.c: the sizes, several batch counts and every transform against FFTW double
 * precision on random input, plus forward-inverse round trips: every power of two, and a set of the
 * other supported sizes that takes every radix and path of the mixed-radix kernels (odd sizes,
 * Whisper's 400, 480 and 1000 and 3000, sizes whose transforms do not fit a GPU's shared memory);
 * on the CUDA backend also every other supported size, at the smaller batches (the host test
 * test_mixed_fft checks their arithmetic on every build; on the CPU backend, FFTW's own, the set
 * stands for them). On the CUDA backend the set and the powers of two run twice: on our own
 * kernels, and on cuFFT, the path the backend takes by itself where a GPU's shared memory cannot
 * hold a transform (forced here through the library's internal cudafft_plan_create_spec(), so that
 * the shipped path is checked on every GPU), with the same checks and tolerances. Argument: cpu or
 * cuda. */
#include "fft_reference.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

/* 7: an odd count that fills no thread block or chunk; 1000: from n = 2048 on, several of the
 * CUDA backend's staging chunks (8 MB today), the last one partial. The mixed-radix sizes above
 * 2048 stop at 64 (the chunks are the same code for every size, and the reference's time grows
 * with n x batch). */
static const size_t batches[] = {1, 7, 64, 1000};
#define LARGE_BATCH_LIMIT 2048

/* The other sizes both backends check: every radix (2, 3, 4, 5, 7, 8, 16) first and later, odd
 * sizes (real transforms as complex ones), the smallest, the issue's, and sizes past the shared
 * memory of some GPUs (C2C above 3855 points on sm_75, 5963 on sm_86, 13673 on sm_90). */
static const size_t mixed_sizes[] = {24,   25,   27,   48,    49,    80,   96,   100,
                                     105,  343,  400,  480,   625,   1000, 1536, 2187,
                                     3000, 3125, 6615, 10000, 15625, 16000};
/* The batch whose input is also run with scale 1/n, and the round trips' batch. */
#define SCALED_BATCH 7
#define ROUND_TRIP_BATCH 64

/* Fresh random input for one (transform, n, batch): the run with scale 1 and, at SCALED_BATCH, the
 * same input with scale 1/n against the same reference scaled. path: "" or the label of the plans'
 * path. */
static void
check_batch(CudafftPlan *plan, const FftTransform *t, size_t n, size_t batch, const char *path)
{
  const size_t in_count = batch * fft_layout_floats(t->kind, n, 1);
  const size_t out_count = batch * fft_layout_floats(t->kind, n, 0);
  float *in = test_malloc(in_count * sizeof(float));
  float *out = test_malloc((out_count + FFT_GUARD_FLOATS) * sizeof(float));
  double *ref = test_malloc(out_count * sizeof(double));
  const char *name = test_transform_name(t->kind, t->direction);
  char label[160];

  TestRng rng = test_rng("%sn=%zu batch=%zu %s", path, n, batch, name);
  test_rng_fill(&rng, in, in_count);
  if (fft_reference(t->kind, t->direction, n, in, batch, ref) != 0)
    test_abort("FFTW double could not plan n=%zu %s", n, name);
  snprintf(label, sizeof label, "%sn=%zu batch=%zu %s scale=1", path, n, batch, name);
  fft_check_execute(plan, t->direction, in, out, batch, 1.0f, ref, fft_tolerance(n), label);
  if (batch == SCALED_BATCH) {
    snprintf(label, sizeof label, "%sn=%zu batch=%zu %s scale=1/n", path, n, batch, name);
    fft_check_execute(plan, t->direction, in, out, batch, 1.0f / (float)n, ref, fft_tolerance(n),
                      label);
  }
  free(in);
  free(out);
  free(ref);
}

/* Forward (scale 1) then inverse (scale 1/n) must give the input back: C2C with one plan, R2C
 * then C2R with two. */
static void
check_round_trip(CudafftPlan *forward, CudafftPlan *inverse, size_t n, const char *path)
{
  const size_t batch = ROUND_TRIP_BATCH;
  const size_t count = batch * cudafft_plan_input_floats(forward);
  const size_t spectrum_count = batch * cudafft_plan_output_floats(forward);
  float *in = test_malloc(count * sizeof(float));
  float *spectrum = test_malloc((spectrum_count + FFT_GUARD_FLOATS) * sizeof(float));
  float *back = test_malloc((count + FFT_GUARD_FLOATS) * sizeof(float));
  double *expected = test_malloc(count * sizeof(double));
  const char *name =
      cudafft_plan_get_kind(forward) == CUDAFFT_C2C ? "C2C forward, C2C inverse" : "R2C, C2R";
  char why[256], label[160];

  snprintf(label, sizeof label, "%sn=%zu batch=%zu round trip %s scale 1/n", path, n, batch, name);
  TestRng rng = test_rng("%s", label);
  test_rng_fill(&rng, in, count);
  /* fft_check_execute compares with scale * expected: n * in, exact in double, is the input. */
  for (size_t i = 0; i < count; i++)
    expected[i] = (double)n * in[i];
  if (!fft_run_poisoned(forward, CUDAFFT_FORWARD, in, spectrum, batch, 1.0f, why, sizeof why))
    test_check(0, "%s: forward: %s", label, why);
  else
    fft_check_execute(inverse, CUDAFFT_INVERSE, spectrum, back, batch, 1.0f / (float)n, expected,
                      2.0 * fft_tolerance(n), label);
  free(in);
  free(spectrum);
  free(back);
  free(expected);
}

/* Every transform and batch of size n (up to `batches_used` of the list), and the round trips, on
 * plans of one path. */
static void
check_size(CudafftBackend backend, size_t n, int force_cufft, size_t batches_used)
{
  const char *path = force_cufft ? "cuFFT path: " : "";
  CudafftPlan *plans[3];
  for (CudafftKind kind = CUDAFFT_C2C; kind <= CUDAFFT_C2R; kind++)
    plans[kind] =
        force_cufft ? fft_create_plan_spec(backend, kind, n, 1) : fft_create_plan(backend, kind, n);
  for (size_t t = 0; t < FFT_TRANSFORM_COUNT; t++) {
    CudafftPlan *plan = plans[fft_transforms[t].kind];
    if (!plan)
      continue; /* its creation already failed */
    for (size_t b = 0; b < batches_used; b++)
      check_batch(plan, &fft_transforms[t], n, batches[b], path);
  }
  if (plans[CUDAFFT_C2C])
    check_round_trip(plans[CUDAFFT_C2C], plans[CUDAFFT_C2C], n, path);
  if (plans[CUDAFFT_R2C] && plans[CUDAFFT_C2R])
    check_round_trip(plans[CUDAFFT_R2C], plans[CUDAFFT_C2R], n, path);
  for (CudafftKind kind = CUDAFFT_C2C; kind <= CUDAFFT_C2R; kind++)
    cudafft_plan_destroy(plans[kind]);
}

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* Both paths of the CUDA backend (the CPU backend's one) at every batch. */
static void
check_size_fully(CudafftBackend backend, size_t n)
{
  const size_t used = n > LARGE_BATCH_LIMIT && (n & (n - 1)) != 0 ? 3 : COUNT(batches);
  char section[32];
  snprintf(section, sizeof section, "n=%zu", n);
  check_size(backend, n, 0, used);
  if (backend == CUDAFFT_BACKEND_CUDA)
    check_size(backend, n, 1, used);
  test_section_done(section);
}

static int
in_mixed_set(size_t n)
{
  for (size_t i = 0; i < COUNT(mixed_sizes); i++)
    if (mixed_sizes[i] == n)
      return 1;
  return 0;
}

int
main(int argc, char **argv)
{
  const CudafftBackend backend = test_begin(argc, argv);
  for (size_t n = CUDAFFT_MIN_SIZE; n <= CUDAFFT_MAX_SIZE; n *= 2)
    check_size_fully(backend, n);
  for (size_t i = 0; i < COUNT(mixed_sizes); i++)
    check_size_fully(backend, mixed_sizes[i]);
  if (backend == CUDAFFT_BACKEND_CUDA) {
    size_t sizes = 0;
    for (size_t n = CUDAFFT_MIN_SIZE; n <= CUDAFFT_MAX_SIZE; n++)
      if (cudafft_fft_size_supported(n) && (n & (n - 1)) != 0 && !in_mixed_set(n)) {
        check_size(backend, n, 0, 3);
        sizes++;
      }
    char section[64];
    snprintf(section, sizeof section, "the other %zu sizes", sizes);
    test_section_done(section);
  }
  return test_finish();
}
