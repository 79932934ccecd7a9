/* test_fft_accuracy.c: every size, several batch counts and every transform against FFTW double
 * precision on random input, plus forward-inverse round trips. Argument: cpu or cuda. */
#include "fft_reference.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

/* 7: an odd count that fills no thread block or chunk; 1000: from n = 2048 on, several of the
 * CUDA backend's staging chunks (8 MB today), the last one partial. */
static const size_t batches[] = {1, 7, 64, 1000};
/* The batch whose input is also run with scale 1/n, and the round trips' batch. */
#define SCALED_BATCH 7
#define ROUND_TRIP_BATCH 64

/* Fresh random input for one (transform, n, batch): the run with scale 1 and, at SCALED_BATCH, the
 * same input with scale 1/n against the same reference scaled. */
static void
check_batch(CudafftPlan *plan, const FftTransform *t, size_t n, size_t batch)
{
  const size_t in_count = batch * fft_layout_floats(t->kind, n, 1);
  const size_t out_count = batch * fft_layout_floats(t->kind, n, 0);
  float *in = test_malloc(in_count * sizeof(float));
  float *out = test_malloc((out_count + FFT_GUARD_FLOATS) * sizeof(float));
  double *ref = test_malloc(out_count * sizeof(double));
  const char *name = test_transform_name(t->kind, t->direction);
  char label[128];

  test_fill_uniform(in, in_count);
  if (fft_reference(t->kind, t->direction, n, in, batch, ref) != 0)
    test_abort("FFTW double could not plan n=%zu %s", n, name);
  snprintf(label, sizeof label, "n=%zu batch=%zu %s scale=1", n, batch, name);
  fft_check_execute(plan, t->direction, in, out, batch, 1.0f, ref, fft_tolerance(n), label);
  if (batch == SCALED_BATCH) {
    snprintf(label, sizeof label, "n=%zu batch=%zu %s scale=1/n", n, batch, name);
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
check_round_trip(CudafftPlan *forward, CudafftPlan *inverse, size_t n)
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
  char why[256], label[128];

  test_fill_uniform(in, count);
  /* fft_check_execute compares with scale * expected: n * in, exact in double, is the input. */
  for (size_t i = 0; i < count; i++)
    expected[i] = (double)n * in[i];
  snprintf(label, sizeof label, "n=%zu batch=%zu round trip %s scale 1/n", n, batch, name);
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

int
main(int argc, char **argv)
{
  CudafftBackend backend = test_backend_from_args(argc, argv);
  test_seed_init();
  double start = test_seconds();

  for (size_t n = CUDAFFT_MIN_SIZE; n <= CUDAFFT_MAX_SIZE; n *= 2) {
    double n_start = test_seconds();
    CudafftPlan *c2c = fft_create_plan(backend, CUDAFFT_C2C, n);
    CudafftPlan *r2c = fft_create_plan(backend, CUDAFFT_R2C, n);
    CudafftPlan *c2r = fft_create_plan(backend, CUDAFFT_C2R, n);

    for (size_t t = 0; t < FFT_TRANSFORM_COUNT; t++) {
      CudafftKind kind = fft_transforms[t].kind;
      CudafftPlan *plan = kind == CUDAFFT_C2C ? c2c : kind == CUDAFFT_R2C ? r2c : c2r;
      if (!plan)
        continue; /* its creation already failed */
      for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
        check_batch(plan, &fft_transforms[t], n, batches[b]);
    }
    if (c2c)
      check_round_trip(c2c, c2c, n);
    if (r2c && c2r)
      check_round_trip(r2c, c2r, n);

    cudafft_plan_destroy(c2c);
    cudafft_plan_destroy(r2c);
    cudafft_plan_destroy(c2r);
    printf("# n=%zu took %.2f s\n", n, test_seconds() - n_start);
  }
  printf("# %s backend, total %.2f s\n", test_backend_name(backend), test_seconds() - start);
  return test_finish();
}
