/* test_mixed_fft.cu: the mixed-radix block FFT's arithmetic (lib/cuda/mixed_fft.cuh) on the host,
 * where no GPU is: its plans, twiddle tables, passes and real-transform steps run for every
 * butterfly of every size, one thread taking each pass's butterflies in turn where a thread group
 * shares them on the device, against FFTW in double precision on fresh random input with the
 * buffers poisoned beforehand: the complex transform both ways for every N = 2^a 3^b 5^c 7^d from
 * 8 to 16384, and the real transforms of 2N points (R2C's split, C2R's pre-step and inverse) for
 * every such N up to 8192, so every size from 16 to 16384 the engines take; every output value
 * within the tolerance model of fft_reference.h. Also: the plans' radices multiply to N and the
 * table counts agree; the plans exist exactly for the sizes the library accepts
 * (lib/common/sizes.h) and for none other, and the kernel tables' list of them (fft_sizes.cuh)
 * holds them all. What it cannot check: the launch geometry, the barriers
 * and the device's memory (the -cuda runs of test_fft_accuracy and test_stft do). No argument. */
#include "fft_sizes.cuh"
#include "mixed_fft.cuh"

/* The tests' C headers, in C++: their C11 _Noreturn as C++'s attribute. */
#define _Noreturn [[noreturn]]
extern "C" {
#include "fft_reference.h"
#include "sizes.h"
#include "test_harness.h"
}
#undef _Noreturn

#include <fftw3.h>
#include <math.h>
#include <stdio.h>

#include <vector>

using namespace cudafft;

namespace {

/* Relative L2 error of got (n values) against want, NaN where got holds one. */
double
rel_error(const std::vector<float2> &got, const std::vector<double2> &want, size_t n)
{
  double err = 0.0, norm = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(got[i].x) || !isfinite(got[i].y))
      return NAN;
    const double dx = got[i].x - want[i].x, dy = got[i].y - want[i].y;
    err += dx * dx + dy * dy;
    norm += want[i].x * want[i].x + want[i].y * want[i].y;
  }
  return norm > 0.0 ? sqrt(err / norm) : sqrt(err);
}

/* The DFT of in (n points, double) in direction sign (FFTW_FORWARD or FFTW_BACKWARD). */
std::vector<double2>
reference(const std::vector<double2> &in, int n, int sign)
{
  std::vector<double2> x(in), y((size_t)n);
  fftw_plan plan =
      fftw_plan_dft_1d(n, reinterpret_cast<fftw_complex *>(x.data()),
                       reinterpret_cast<fftw_complex *>(y.data()), sign, FFTW_ESTIMATE);
  if (!plan)
    test_abort("FFTW double could not plan %d points", n);
  fftw_execute(plan);
  fftw_destroy_plan(plan);
  return y;
}

/* Two buffers of a transform of n points, poisoned. */
struct Buffers {
  std::vector<float2> a, b;
  explicit Buffers(int n)
      : a((size_t)mixed_buffer_points(n), make_float2(NAN, NAN)),
        b((size_t)mixed_buffer_points(n), make_float2(NAN, NAN))
  {
  }
};

std::vector<float2>
table_of(const MixedPlan &plan)
{
  std::vector<float2> table((size_t)mixed_twiddle_count(plan), make_float2(NAN, NAN));
  mixed_twiddle_fill(plan, table.data());
  return table;
}

/* The plan's own consistency: radices of the allowed set multiplying to n, the table counts. */
bool
plan_ok(const MixedPlan &plan, int n)
{
  long product = 1;
  int twiddles = 0, ns = 1;
  for (int i = 0; i < plan.passes; i++) {
    const int p = plan.radix[i];
    if (p != 2 && p != 3 && p != 4 && p != 5 && p != 7 && p != 8 && p != 16)
      return false;
    product *= p;
    twiddles += ns > 1 ? (p - 1) * ns : 0;
    ns *= p;
  }
  return plan.n == n && plan.passes > 0 && plan.passes <= kMixedMaxPasses && product == n &&
         mixed_pass_twiddle_count(plan) == twiddles &&
         mixed_twiddle_count(plan) == twiddles + n / 2 + 1;
}

/* Complex transform of n points both ways. Returns the worse error. */
double
check_complex(int n, const MixedPlan &plan, const std::vector<float2> &table, bool inverse)
{
  TestRng rng = test_rng("complex n=%d %s", n, inverse ? "inverse" : "forward");
  Buffers buf(n);
  std::vector<double2> in((size_t)n);
  for (int i = 0; i < n; i++) {
    const float re = (float)test_rng_uniform(&rng), im = (float)test_rng_uniform(&rng);
    buf.a[(size_t)pad(i)] = make_float2(re, im);
    in[(size_t)i].x = re;
    in[(size_t)i].y = im;
  }
  const float2 *out = mixed_fft_passes(plan, buf.a.data(), buf.b.data(), table.data(), 0, 1,
                                       inverse, MixedNoBarrier{});
  std::vector<float2> got((size_t)n);
  for (int i = 0; i < n; i++)
    got[(size_t)i] = out[pad(i)];
  return rel_error(got, reference(in, n, inverse ? FFTW_BACKWARD : FFTW_FORWARD), (size_t)n);
}

/* R2C of 2N real points: the complex view's forward transform, then the pairs' split. */
double
check_r2c(int half, const MixedPlan &plan, const std::vector<float2> &table)
{
  const int n = 2 * half;
  TestRng rng = test_rng("r2c n=%d", n);
  Buffers buf(half);
  std::vector<double2> in((size_t)n);
  for (int m = 0; m < half; m++) {
    const float x0 = (float)test_rng_uniform(&rng), x1 = (float)test_rng_uniform(&rng);
    buf.a[(size_t)pad(m)] = make_float2(x0, x1);
    in[(size_t)(2 * m)].x = x0;
    in[(size_t)(2 * m + 1)].x = x1;
    in[(size_t)(2 * m)].y = in[(size_t)(2 * m + 1)].y = 0.0;
  }
  const float2 *z = mixed_fft_passes(plan, buf.a.data(), buf.b.data(), table.data(), 0, 1, false,
                                     MixedNoBarrier{});
  std::vector<float2> bins((size_t)half + 1, make_float2(NAN, NAN));
  const float2 *w = mixed_real_twiddles(plan, table.data());
  for (int k = 0; k <= half / 2; k++)
    mixed_real_forward_pair(z, half, k, w, &bins[(size_t)k], &bins[(size_t)(half - k)]);
  return rel_error(bins, reference(in, n, FFTW_FORWARD), (size_t)half + 1);
}

/* C2R to 2N real points from random bins 0..N (Hermitian-extended for the reference, the
 * imaginary parts of bins 0 and N taken as zero, as the API documents). */
double
check_c2r(int half, const MixedPlan &plan, const std::vector<float2> &table)
{
  const int n = 2 * half;
  TestRng rng = test_rng("c2r n=%d", n);
  Buffers buf(half);
  std::vector<double2> full((size_t)n);
  for (int k = 0; k <= half; k++) {
    float re = (float)test_rng_uniform(&rng), im = (float)test_rng_uniform(&rng);
    buf.a[(size_t)pad(k)] = make_float2(re, im); /* the imaginary parts of 0 and N are ignored */
    if (k == 0 || k == half)
      im = 0.0f;
    full[(size_t)k].x = re;
    full[(size_t)k].y = im;
    if (k > 0 && k < half) {
      full[(size_t)(n - k)].x = re;
      full[(size_t)(n - k)].y = -im;
    }
  }
  const float2 *w = mixed_real_twiddles(plan, table.data());
  for (int k = 0; k <= half / 2; k++)
    mixed_real_inverse_pair(buf.a.data(), half, k, w);
  const float2 *z = mixed_fft_passes(plan, buf.a.data(), buf.b.data(), table.data(), 0, 1, true,
                                     MixedNoBarrier{});
  std::vector<float2> samples((size_t)n);
  for (int m = 0; m < half; m++) {
    samples[(size_t)(2 * m)] = make_float2(z[pad(m)].x, 0.0f);
    samples[(size_t)(2 * m + 1)] = make_float2(z[pad(m)].y, 0.0f);
  }
  return rel_error(samples, reference(full, n, FFTW_BACKWARD), (size_t)n);
}

struct Worst {
  double error = 0.0; /* error / tolerance */
  int n = 0;
  const char *what = "";
  int failures = 0;

  void
  add(double error, double tolerance, int size, const char *name)
  {
    const double ratio = isnan(error) ? INFINITY : error / tolerance;
    if (!(error <= tolerance)) {
      if (failures++ < 10)
        test_check(0, "%s n=%d: relative L2 error %.3g above %.3g", name, size, error, tolerance);
    }
    if (ratio > this->error) {
      this->error = ratio;
      n = size;
      what = name;
    }
  }
};

} // namespace

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  /* plans exactly where the library takes the size (as a complex size, N from 8 up) */
  int wrong = 0, sizes = 0;
  for (int n = 2; n <= kMixedMaxPoints + 1; n++) {
    const MixedPlan plan = mixed_plan(n);
    const bool smooth = plan.n != 0;
    if (smooth && !plan_ok(plan, n))
      wrong++;
    if (n >= CUDAFFT_MIN_SIZE && n <= CUDAFFT_MAX_SIZE + 1) {
      sizes += cudafft_is_fft_size((size_t)n) ? 1 : 0;
      if (smooth != (cudafft_is_fft_size((size_t)n) != 0) && n <= CUDAFFT_MAX_SIZE)
        wrong++;
    }
  }
  test_check(wrong == 0 && mixed_plan(kMixedMaxPoints + 1).n == 0 && mixed_plan(11).n == 0 &&
                 mixed_plan(1001).n == 0,
             "plans: radices 2..16 multiplying to N, table counts, and a plan exactly for the %d "
             "sizes the library takes (%d wrong)",
             sizes, wrong);
  int misplaced = 0;
  for (int n = 0; n <= CUDAFFT_MAX_SIZE + 1; n++) {
    const int i = supported_size_index((size_t)n);
    const bool listed = i >= 0 && supported_sizes().size[i] == n;
    misplaced += listed != (cudafft_is_fft_size((size_t)n) != 0) ? 1 : 0;
  }
  test_check(supported_sizes().count == sizes && sizes <= kSupportedSizesMax && misplaced == 0,
             "the kernel tables' list holds all %d sizes (at most %d), each at its index (%d "
             "misplaced)",
             supported_sizes().count, kSupportedSizesMax, misplaced);

  Worst complex_worst, real_worst;
  int complex_sizes = 0, real_sizes = 0;
  for (int n = 8; n <= kMixedMaxPoints; n++) {
    const MixedPlan plan = mixed_plan(n);
    if (plan.n == 0)
      continue;
    const std::vector<float2> table = table_of(plan);
    if (n >= CUDAFFT_MIN_SIZE) {
      complex_sizes++;
      complex_worst.add(check_complex(n, plan, table, false), fft_tolerance((size_t)n), n,
                        "C2C forward");
      complex_worst.add(check_complex(n, plan, table, true), fft_tolerance((size_t)n), n,
                        "C2C inverse");
    }
    if (2 * n <= CUDAFFT_MAX_SIZE) {
      real_sizes++;
      real_worst.add(check_r2c(n, plan, table), fft_tolerance((size_t)(2 * n)), 2 * n, "R2C");
      /* the inverse of a spectrum of random bins: as the round trips, twice the forward's */
      real_worst.add(check_c2r(n, plan, table), 2.0 * fft_tolerance((size_t)(2 * n)), 2 * n, "C2R");
    }
  }
  test_check(complex_worst.failures == 0,
             "complex transforms of all %d sizes %d..%d, both ways, against FFTW double: every "
             "one within tolerance (worst %.2f of it, %s n=%d)",
             complex_sizes, CUDAFFT_MIN_SIZE, kMixedMaxPoints, complex_worst.error,
             complex_worst.what, complex_worst.n);
  test_check(real_worst.failures == 0,
             "real transforms of all %d even sizes %d..%d (R2C, C2R) against FFTW double: every "
             "one within tolerance (worst %.2f of it, %s n=%d)",
             real_sizes, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE, real_worst.error, real_worst.what,
             real_worst.n);
  return test_finish();
}
