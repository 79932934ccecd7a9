/* test_scope_kernels.cu: the spectrum scope's mixed-radix FFT kernel (every supported size without
 * a fused kernel: powers of two below 256 and every size with a factor 3, 5 or 7, even and odd) on
 * the host, where no GPU is: what a thread of lib/scope/scope_kernels.cu's mixed_fft_kernel runs
 * (scope_fft_math.cuh: the windowed frame read from the history ring across its end, the plan's
 * passes, the real split or an odd size's bins, the powers), one thread taking the whole group's
 * work, with the twiddle table the library uploads for the size (cudafft_scope_twiddles). Each
 * size's powers, the row poisoned beforehand with a guard after it, against FFTW in double
 * precision on fresh random samples: the magnitudes within the FFT tolerance model of
 * fft_reference.h, every bin written and nothing past them. Also: the scope's kernel table has a
 * kernel (shared memory > 0) for exactly the supported sizes. What it cannot check: the launch
 * geometry, the barriers and the device's memory (the -cuda runs of test_scope and
 * test_scope_backends do). No argument. */
#include "scope_fft_math.cuh"
#include "scope_kernels.h"

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

constexpr int kGuard = 16;

/* The powers of one frame of real size n by scope_fft_math.cuh, and their relative L2 error as
 * magnitudes against FFTW double (NaN where a bin was left unwritten or one past them written). */
double
check_size(size_t n, TestRng *rng)
{
  size_t ring_size = 1;
  while (ring_size < 2 * n)
    ring_size *= 2;
  const size_t mask = ring_size - 1, start = ring_size - n / 3; /* across the ring's end */
  std::vector<float> ring(ring_size), window(n);
  for (float &x : ring)
    x = (float)(2.0 * test_rng_uniform(rng) - 1.0);
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    window[i] = (float)(0.5 - 0.5 * cos(2.0 * M_PI * (double)i / (double)n));
    sum += (double)window[i] * window[i];
  }
  const float norm = (float)(4.0 / ((double)n * sum));

  const int points = scope_mixed_points(n);
  const MixedPlan plan = mixed_plan(points);
  if (plan.n != points)
    test_abort("no mixed-radix plan for %d points (size %zu)", points, n);
  std::vector<float2> table(cudafft_scope_twiddle_count(n), make_float2(NAN, NAN));
  cudafft_scope_twiddles(n, reinterpret_cast<float *>(table.data()));
  std::vector<float2> a((size_t)mixed_buffer_points(points), make_float2(NAN, NAN));
  std::vector<float2> b(a);
  const size_t bins = n / 2 + 1;
  std::vector<float> row(bins + kGuard, NAN);
  if (n % 2)
    scope_mixed_frame<true>(plan, ring.data(), start, mask, window.data(), norm, table.data(),
                            a.data(), b.data(), 0, 1, true, row.data(), MixedNoBarrier{});
  else
    scope_mixed_frame<false>(plan, ring.data(), start, mask, window.data(), norm, table.data(),
                             a.data(), b.data(), 0, 1, true, row.data(), MixedNoBarrier{});

  double *in = fftw_alloc_real(n);
  fftw_complex *out = fftw_alloc_complex(bins);
  fftw_plan reference = fftw_plan_dft_r2c_1d((int)n, in, out, FFTW_ESTIMATE);
  if (!in || !out || !reference)
    test_abort("FFTW double could not plan %zu points", n);
  for (size_t i = 0; i < n; i++)
    in[i] = (double)ring[(start + i) & mask] * (double)window[i];
  fftw_execute(reference);
  double err = 0.0, total = 0.0;
  bool written = true;
  for (size_t k = 0; k < bins; k++) {
    written = written && std::isfinite(row[k]) && row[k] >= 0.0f;
    const double want = hypot(out[k][0], out[k][1]), got = sqrt((double)row[k] / norm);
    err += (got - want) * (got - want);
    total += want * want;
  }
  for (int g = 0; g < kGuard; g++)
    written = written && std::isnan(row[bins + (size_t)g]);
  fftw_destroy_plan(reference);
  fftw_free(in);
  fftw_free(out);
  return written ? sqrt(err / total) : NAN;
}

void
test_every_size()
{
  TestRng rng = test_rng("scope mixed-radix sizes");
  int sizes = 0, odd = 0, failed = 0;
  double worst = 0.0;
  size_t worst_n = 0;
  for (size_t n = CUDAFFT_MIN_SIZE; n <= CUDAFFT_MAX_SIZE; n++) {
    if (!cudafft_is_fft_size(n) || cudafft_is_fused_size(n))
      continue;
    const double error = check_size(n, &rng);
    /* the magnitudes' error is at most the transform's; the powers' float arithmetic adds about
     * a rounding unit */
    const double tolerance = fft_tolerance(n) + 1.2e-7;
    sizes++;
    odd += n % 2 ? 1 : 0;
    if (!(error <= tolerance)) {
      if (failed++ < 10)
        test_check(0, "%zu points: relative L2 error %.3g of the magnitudes, above %.3g%s", n,
                   error, tolerance, std::isnan(error) ? " (a bin unwritten, or past them)" : "");
      continue;
    }
    if (error / tolerance > worst) {
      worst = error / tolerance;
      worst_n = n;
    }
  }
  test_check(failed == 0 && sizes > 300,
             "the mixed-radix kernel's frames of %d sizes (%d odd) against FFTW double: every bin "
             "written, none past them, within the tolerance (worst %.2f of it, at %zu points)",
             sizes, odd, worst, worst_n);
  test_section_done("every mixed-radix size");
}

void
test_kernel_table()
{
  int wrong = 0;
  size_t first = 0;
  for (size_t n = 1; n <= 2 * CUDAFFT_MAX_SIZE; n++) {
    const bool has = cudafft_scope_fft_smem(n) > 0 && cudafft_scope_twiddle_count(n) > 0;
    if (has != (cudafft_is_fft_size(n) != 0) && wrong++ == 0)
      first = n;
  }
  test_check(wrong == 0,
             "the scope's kernels serve exactly the supported sizes (%d wrong, the first %zu)",
             wrong, first);
  test_section_done("kernel table");
}

} // namespace

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  test_kernel_table();
  test_every_size();
  return test_finish();
}
