/* test_fft_signals.c: tones whose spectra are known in closed form (DC, Nyquist, a tone at a bin
 * centre, a tone half-way between bins), each with a random amplitude, phase and bin so that no
 * two runs see the same input. Unlike the accuracy test, the expected values come from the
 * mathematics, not from another FFT. Argument: cpu or cuda. */
#include "fft_reference.h"
#include "test_util.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const size_t sizes[] = {256, 4096, 16384};
/* Each transform of a batch gets its own random signal, which also checks the batch strides. */
#define SIGNAL_BATCH 3

/* Every output here has magnitude n * amplitude: a tone's spectral peak, or for C2R a cosine of
 * that amplitude. A transform within the accuracy test's relative L2 tolerance tol(n) (see
 * fft_tolerance) has an error of L2 norm at most tol(n) * ||X||; when the output is one bin that
 * bounds the largest error by tol(n) * n * amplitude, and when it is spread over every sample
 * (C2R of a tone) the error is spread like noise of rms tol(n) * n * amplitude / sqrt(2), whose
 * largest value among some 50000 samples stays under 5 rms. 4 tol(n) covers both; it is 1.2e-6
 * n at n = 4096. A wrong bin, twiddle, scale or an unignored imaginary part is off by 1e-3 of
 * n * amplitude or more. */
#define SIGNAL_TOLERANCE(n) (4.0 * fft_tolerance(n))

static const double pi = 3.14159265358979323846;

typedef enum { SHAPE_DC, SHAPE_NYQUIST, SHAPE_BIN, SHAPE_BETWEEN, SHAPE_COUNT } Shape;
static const char *const shape_names[SHAPE_COUNT] = {
    [SHAPE_DC] = "DC",
    [SHAPE_NYQUIST] = "Nyquist",
    [SHAPE_BIN] = "tone at a bin centre",
    [SHAPE_BETWEEN] = "tone between bins",
};

/* A tone of frequency f2 / 2 cycles per n samples (f2 odd: half-way between bins). */
typedef struct {
  long long f2;
  double amp;
  double complex rot; /* e^(i phase) */
  double junk;        /* what goes into the imaginary parts that C2R must ignore */
} Signal;

/* e^(i angle); CMPLX would say it better but not every compiler has it */
static double complex
unit(double angle)
{
  return cos(angle) + I * sin(angle);
}

/* e^(i pi m / n), with m reduced modulo 2n first so that the angle is exact. */
static double complex
half_turns(long long m, size_t n)
{
  long long period = 2 * (long long)n;
  m %= period;
  if (m < 0)
    m += period;
  return unit(pi * (double)m / (double)n);
}

/* sum_{j<n} e^(i d pi m j / n) for sign d and integer m: n or 0 for even m (whole bins), and for
 * odd m the geometric series' closed form (1 - r^n) / (1 - r) with r^n = e^(i d pi m) = -1. */
static double complex
tone_sum(int d, long long m, size_t n)
{
  if (m % 2 == 0)
    return (m / 2) % (long long)n == 0 ? (double)n : 0.0;
  return 2.0 / (1.0 - half_turns(d * m, n));
}

static Signal
random_signal(TestRng *rng, Shape shape, CudafftKind kind, size_t n)
{
  const int real = kind != CUDAFFT_C2C;
  const size_t half = n / 2;
  Signal s;
  s.amp = 0.75 + 0.25 * test_rng_uniform(rng); /* [0.5, 1) */
  double phase = pi * test_rng_uniform(rng);
  s.junk = test_rng_uniform(rng);
  switch (shape) {
  case SHAPE_DC:
  case SHAPE_NYQUIST:
    s.f2 = shape == SHAPE_DC ? 0 : (long long)n;
    /* A real DC or Nyquist tone is amp cos(phase) (+-1)^j: keep it at full amplitude. */
    if (real)
      phase = test_rng_u64(rng) & 1 ? pi : 0.0;
    break;
  case SHAPE_BIN: {
    /* Complex tones may have negative frequencies (bins above n/2); neither 0 nor n/2, which are
     * the shapes above. */
    size_t k0 = test_rng_range(rng, 1, real ? half - 1 : n - 2);
    if (!real && k0 >= half)
      k0++;
    s.f2 = 2 * (long long)k0;
    break;
  }
  case SHAPE_BETWEEN:
  case SHAPE_COUNT:
    s.f2 = 2 * (long long)test_rng_range(rng, 0, real ? half - 1 : n - 1) + 1;
    break;
  }
  s.rot = unit(phase);
  return s;
}

/* amp cos(pi f2 j / n + phase) */
static double
cosine(const Signal *s, size_t j, size_t n)
{
  return s->amp * creal(s->rot * half_turns(s->f2 * (long long)j, n));
}

/* Bin k of cosine()'s forward transform: the cosine is half of e^(+i..) and half of e^(-i..). */
static double complex
cosine_spectrum(const Signal *s, size_t k, size_t n)
{
  long long m = 2 * (long long)k;
  return 0.5 * s->amp *
         (s->rot * tone_sum(-1, m - s->f2, n) + conj(s->rot) * tone_sum(-1, m + s->f2, n));
}

/* One transform's float input and its exact output:
 *   C2C, sign d (-1 forward): x[j] = amp e^(i phase) e^(-i d pi f2 j / n),
 *                             X[k] = amp e^(i phase) tone_sum(d, 2k - f2)
 *   R2C: x = cosine(), X = cosine_spectrum()
 *   C2R: X = cosine_spectrum() with junk in the ignored imaginary parts, x = n cosine() */
static void
make_transform(CudafftKind kind, CudafftDirection direction, size_t n, const Signal *s, float *in,
               double *exact)
{
  const int d = direction == CUDAFFT_FORWARD ? -1 : 1;
  switch (kind) {
  case CUDAFFT_C2C:
    for (size_t j = 0; j < n; j++) {
      double complex x = s->amp * s->rot * half_turns(-d * s->f2 * (long long)j, n);
      in[2 * j] = (float)creal(x);
      in[2 * j + 1] = (float)cimag(x);
    }
    for (size_t k = 0; k < n; k++) {
      double complex X = s->amp * s->rot * tone_sum(d, 2 * (long long)k - s->f2, n);
      exact[2 * k] = creal(X);
      exact[2 * k + 1] = cimag(X);
    }
    break;
  case CUDAFFT_R2C:
    for (size_t j = 0; j < n; j++)
      in[j] = (float)cosine(s, j, n);
    for (size_t k = 0; k <= n / 2; k++) {
      double complex X = cosine_spectrum(s, k, n);
      exact[2 * k] = creal(X);
      exact[2 * k + 1] = cimag(X);
    }
    break;
  case CUDAFFT_C2R:
    for (size_t k = 0; k <= n / 2; k++) {
      double complex X = cosine_spectrum(s, k, n);
      in[2 * k] = (float)creal(X);
      in[2 * k + 1] = (float)cimag(X);
    }
    /* Ignored by contract; as large as the spectrum's peak, so that using them shows. */
    in[1] = (float)(s->junk * s->amp * (double)n);
    in[n + 1] = (float)(-s->junk * s->amp * (double)n);
    for (size_t j = 0; j < n; j++)
      exact[j] = (double)n * cosine(s, j, n);
    break;
  }
}

static void
check_signal(CudafftPlan *plan, CudafftDirection direction, Shape shape, size_t n)
{
  const CudafftKind kind = cudafft_plan_get_kind(plan);
  const size_t in_floats = fft_layout_floats(kind, n, 1);
  const size_t out_floats = fft_layout_floats(kind, n, 0);
  float *in = test_malloc(SIGNAL_BATCH * in_floats * sizeof(float));
  float *out = test_malloc((SIGNAL_BATCH * out_floats + FFT_GUARD_FLOATS) * sizeof(float));
  double *exact = test_malloc(SIGNAL_BATCH * out_floats * sizeof(double));
  double amp[SIGNAL_BATCH];
  char why[256];
  TestRng rng =
      test_rng("n=%zu %s %s", n, test_transform_name(kind, direction), shape_names[shape]);

  for (size_t b = 0; b < SIGNAL_BATCH; b++) {
    Signal s = random_signal(&rng, shape, kind, n);
    amp[b] = s.amp;
    make_transform(kind, direction, n, &s, in + b * in_floats, exact + b * out_floats);
  }
  if (!fft_run_poisoned(plan, direction, in, out, SIGNAL_BATCH, 1.0f, why, sizeof why)) {
    test_check(0, "n=%zu %s %s: %s", n, test_transform_name(kind, direction), shape_names[shape],
               why);
  } else {
    /* The worst transform of the batch, as a fraction of its own tolerance. */
    const size_t step = kind == CUDAFFT_C2R ? 1 : 2;
    double worst = 0.0, worst_err = 0.0;
    for (size_t b = 0; b < SIGNAL_BATCH; b++) {
      const float *o = out + b * out_floats;
      const double *e = exact + b * out_floats;
      double max_err = 0.0;
      for (size_t i = 0; i < out_floats; i += step) {
        double err = step == 2 ? hypot(o[i] - e[i], o[i + 1] - e[i + 1]) : fabs(o[i] - e[i]);
        if (err > max_err)
          max_err = err;
      }
      double ratio = max_err / (SIGNAL_TOLERANCE(n) * (double)n * amp[b]);
      if (ratio > worst) {
        worst = ratio;
        worst_err = max_err;
      }
    }
    test_check(worst <= 1.0,
               "n=%zu %s %s: max |X - exact| %.2e, %.3f of the tolerance %.2e * n * amplitude", n,
               test_transform_name(kind, direction), shape_names[shape], worst_err, worst,
               SIGNAL_TOLERANCE(n));
  }
  free(in);
  free(out);
  free(exact);
}

int
main(int argc, char **argv)
{
  const CudafftBackend backend = test_begin(argc, argv);

  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const size_t n = sizes[i];
    CudafftPlan *c2c = fft_create_plan(backend, CUDAFFT_C2C, n);
    CudafftPlan *r2c = fft_create_plan(backend, CUDAFFT_R2C, n);
    CudafftPlan *c2r = fft_create_plan(backend, CUDAFFT_C2R, n);
    for (Shape shape = 0; shape < SHAPE_COUNT; shape++) {
      if (c2c) {
        check_signal(c2c, CUDAFFT_FORWARD, shape, n);
        check_signal(c2c, CUDAFFT_INVERSE, shape, n);
      }
      if (r2c)
        check_signal(r2c, CUDAFFT_FORWARD, shape, n);
      if (c2r)
        check_signal(c2r, CUDAFFT_INVERSE, shape, n);
    }
    cudafft_plan_destroy(c2c);
    cudafft_plan_destroy(r2c);
    cudafft_plan_destroy(c2r);
  }
  return test_finish();
}
