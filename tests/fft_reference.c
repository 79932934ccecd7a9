/* fft_reference.c: see fft_reference.h. */
#include "fft_reference.h"
#include "fft_backend.h"
#include "test_util.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const FftTransform fft_transforms[FFT_TRANSFORM_COUNT] = {
    {CUDAFFT_C2C, CUDAFFT_FORWARD},
    {CUDAFFT_C2C, CUDAFFT_INVERSE},
    {CUDAFFT_R2C, CUDAFFT_FORWARD},
    {CUDAFFT_C2R, CUDAFFT_INVERSE},
};

size_t
fft_layout_floats(CudafftKind kind, size_t n, int input)
{
  switch (kind) {
  case CUDAFFT_C2C:
    return 2 * n;
  case CUDAFFT_R2C: /* bins 0..n/2, n/2 rounded down */
    return input ? n : 2 * (n / 2 + 1);
  case CUDAFFT_C2R:
    return input ? 2 * (n / 2 + 1) : n;
  }
  return 0;
}

double
fft_tolerance(size_t n)
{
  /* float32's rounding unit is 2^-24 = 6e-8, and the error of an FFT grows at worst about
   * linearly with its number of radix-2 stages, log2(n): 2.5e-8 per stage is 3e-7 at n = 4096,
   * the project's requirement. FFTW float (FFTW_ESTIMATE) measures 1.0e-7 at n = 256 to 1.35e-7
   * at n = 16384 on random data, 0.4 to 0.56 of this; a radix-16 Stockham has a quarter of the
   * stages and should do no worse. Below 256 points it stays at 256's, 2e-7: the error of a
   * transform of a few dozen values varies far more from one random input to the next (the
   * mixed-radix passes measured up to 1.14 times 2.5e-8 log2(n) at n = 20 in 30 runs of
   * test_mixed_fft, 0.6 of this floor). A real bug (a wrong twiddle, index or scale) shows up at
   * 1e-3 or more. */
  return 2.5e-8 * log2((double)(n > 256 ? n : 256));
}

int
fft_reference(CudafftKind kind, CudafftDirection direction, size_t n, const float *in, size_t batch,
              double *out)
{
  const size_t in_floats = fft_layout_floats(kind, n, 1);
  const size_t out_floats = fft_layout_floats(kind, n, 0);
  /* One transform at a time through double buffers of the plan's own: the reference costs the
   * size of its result and no more. */
  double *din = fftw_malloc(2 * n * sizeof(double));
  double *dout = fftw_malloc(2 * n * sizeof(double));
  fftw_plan plan = NULL;
  if (din && dout) {
    switch (kind) {
    case CUDAFFT_C2C:
      plan = fftw_plan_dft_1d((int)n, (fftw_complex *)din, (fftw_complex *)dout,
                              direction == CUDAFFT_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD,
                              FFTW_ESTIMATE);
      break;
    case CUDAFFT_R2C:
      plan = fftw_plan_dft_r2c_1d((int)n, din, (fftw_complex *)dout, FFTW_ESTIMATE);
      break;
    case CUDAFFT_C2R:
      plan = fftw_plan_dft_c2r_1d((int)n, (fftw_complex *)din, dout, FFTW_ESTIMATE);
      break;
    }
  }
  if (plan) {
    for (size_t b = 0; b < batch; b++) {
      const float *src = in + b * in_floats;
      for (size_t i = 0; i < in_floats; i++)
        din[i] = src[i];
      if (kind == CUDAFFT_C2R) { /* an odd n has no bin n/2 of its own */
        din[1] = 0.0;
        if (n % 2 == 0)
          din[n + 1] = 0.0;
      }
      fftw_execute(plan);
      memcpy(out + b * out_floats, dout, out_floats * sizeof(double));
    }
    fftw_destroy_plan(plan);
  }
  fftw_free(din);
  fftw_free(dout);
  return plan ? 0 : -1;
}

double
fft_rel_l2_error(const float *out, const double *ref, size_t count, double ref_scale)
{
  double err2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < count; i++) {
    double r = ref_scale * ref[i];
    double d = (double)out[i] - r;
    err2 += d * d;
    ref2 += r * r;
  }
  /* A zero reference would make any output look infinitely wrong: report the absolute error. */
  return ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
}

/* What fft_create_plan checks of a new plan; path names the way it was made. */
static CudafftPlan *
checked_plan(CudafftStatus status, CudafftPlan *plan, CudafftBackend backend, CudafftKind kind,
             size_t n, const char *path)
{
  const char *kind_name = test_kind_name(kind);
  if (status != CUDAFFT_STATUS_OK || !plan) {
    test_check(0, "n=%zu %s: %s on %s: %s: %s", n, kind_name, path, test_backend_name(backend),
               cudafft_status_name(status), cudafft_last_error_message());
    return NULL;
  }
  CudafftBackend got = cudafft_plan_get_backend(plan);
  size_t in_floats = cudafft_plan_input_floats(plan);
  size_t out_floats = cudafft_plan_output_floats(plan);
  if (!test_check(got == backend && cudafft_plan_get_kind(plan) == kind &&
                      cudafft_plan_get_size(plan) == n &&
                      in_floats == fft_layout_floats(kind, n, 1) &&
                      out_floats == fft_layout_floats(kind, n, 0),
                  "n=%zu %s: %s on %s gives a %s plan of size %zu, %zu -> %zu floats per "
                  "transform",
                  n, kind_name, path, test_backend_name(backend), test_backend_name(got),
                  cudafft_plan_get_size(plan), in_floats, out_floats)) {
    cudafft_plan_destroy(plan);
    return NULL;
  }
  return plan;
}

CudafftPlan *
fft_create_plan_on(CudafftBackend backend, int device_id, CudafftKind kind, size_t n)
{
  CudafftPlan *plan = NULL;
  const CudafftStatus status = cudafft_plan_create(&plan, backend, device_id, kind, n);
  return checked_plan(status, plan, backend, kind, n, "plan_create");
}

CudafftPlan *
fft_create_plan(CudafftBackend backend, CudafftKind kind, size_t n)
{
  return fft_create_plan_on(backend, -1, kind, n);
}

CudafftPlan *
fft_create_plan_spec(CudafftBackend backend, CudafftKind kind, size_t n, int force_cufft)
{
  const CudafftFftSpec spec = {.kind = kind, .n = n, .device_id = -1, .force_cufft = force_cufft};
  CudafftPlan *plan = NULL;
  const CudafftStatus status = cudafft_plan_create_spec(&plan, backend, &spec);
  return checked_plan(status, plan, backend, kind, n,
                      force_cufft ? "plan_create_spec (cuFFT path)" : "plan_create_spec");
}

int
fft_run_poisoned(CudafftPlan *plan, CudafftDirection direction, const float *in, float *out,
                 size_t batch, float scale, char *why, size_t why_size)
{
  const size_t in_count = batch * cudafft_plan_input_floats(plan);
  const size_t out_count = batch * cudafft_plan_output_floats(plan);
  const int in_place = (const void *)in == (void *)out;
  uint64_t in_hash = 0;
  if (!in_place) {
    test_poison(out, out_count);
    in_hash = test_hash(in, in_count * sizeof(float));
  }
  test_poison(out + out_count, FFT_GUARD_FLOATS);

  CudafftStatus status = cudafft_execute(plan, direction, in, out, batch, scale);
  if (status != CUDAFFT_STATUS_OK) {
    snprintf(why, why_size, "execute failed: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
    return 0;
  }
  size_t first = 0, nonfinite = test_count_nonfinite(out, out_count, &first);
  size_t overrun = test_count_unpoisoned(out + out_count, FFT_GUARD_FLOATS);
  int in_changed = !in_place && test_hash(in, in_count * sizeof(float)) != in_hash;
  if (nonfinite)
    snprintf(why, why_size,
             "%zu of %zu output values not finite (NaN means unwritten), first at %zu", nonfinite,
             out_count, first);
  else if (overrun)
    snprintf(why, why_size, "%zu values written past the end of the output", overrun);
  else if (in_changed)
    snprintf(why, why_size, "the input was modified");
  return !nonfinite && !overrun && !in_changed;
}

int
fft_check_execute(CudafftPlan *plan, CudafftDirection direction, const float *in, float *out,
                  size_t batch, float scale, const double *ref, double tol, const char *label)
{
  char why[256];
  if (!fft_run_poisoned(plan, direction, in, out, batch, scale, why, sizeof why))
    return test_check(0, "%s: %s", label, why);
  double err = fft_rel_l2_error(out, ref, batch * cudafft_plan_output_floats(plan), scale);
  return test_check(err <= tol, "%s: relative L2 error %.2e %s %.2e", label, err,
                    err <= tol ? "<=" : "EXCEEDS tolerance", tol);
}
