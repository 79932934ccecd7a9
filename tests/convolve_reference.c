/* convolve_reference.c: see convolve_reference.h. */
#include "convolve_reference.h"
#include "test_harness.h"
#include "test_random.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>

static size_t audit_points;
static double audit_worst;

void
convolve_reference_audit(size_t *points, double *worst)
{
  *points = audit_points;
  *worst = audit_worst;
}

static size_t
min_size(size_t a, size_t b)
{
  return a < b ? a : b;
}

void
convolve_reference_channel(const double *h, size_t taps, const double *x, unsigned channels,
                           unsigned c, size_t x_frames, size_t start, size_t frames, double *y)
{
  if (start >= frames)
    return;
  const size_t count = frames - start;
  /* y[n] for n < frames reads neither taps nor inputs from `count` on: a 10 s kernel checked over
   * a short stream needs a short transform */
  taps = min_size(taps, count);
  const size_t inputs = min_size(x_frames > start ? x_frames - start : 0, count);
#define X(m) ((m) >= start && (m) < x_frames ? x[(m)*channels + c] : 0.0)
  if (count * taps <= ((size_t)1 << 22) || inputs == 0) {
    for (size_t n = start; n < frames; n++) {
      double sum = 0.0;
      for (size_t k = 0; k < taps && k <= n - start; k++)
        sum += h[k] * X(n - k);
      y[n] = sum;
    }
    return;
  }
  /* linear convolution through FFTW double: a transform long enough that nothing wraps */
  size_t size = 1;
  while (size < inputs + taps)
    size *= 2;
  double *a = fftw_malloc(size * sizeof *a), *b = fftw_malloc(size * sizeof *b);
  fftw_complex *fa = fftw_malloc((size / 2 + 1) * sizeof *fa);
  fftw_complex *fb = fftw_malloc((size / 2 + 1) * sizeof *fb);
  if (!a || !b || !fa || !fb)
    test_abort("convolve reference: no memory for %zu points", size);
  fftw_plan pa = fftw_plan_dft_r2c_1d((int)size, a, fa, FFTW_ESTIMATE);
  fftw_plan pb = fftw_plan_dft_r2c_1d((int)size, b, fb, FFTW_ESTIMATE);
  fftw_plan inverse = fftw_plan_dft_c2r_1d((int)size, fa, a, FFTW_ESTIMATE);
  if (!pa || !pb || !inverse)
    test_abort("convolve reference: FFTW cannot plan %zu points", size);
  for (size_t i = 0; i < size; i++) {
    a[i] = i < inputs ? x[(start + i) * channels + c] : 0.0;
    b[i] = i < taps ? h[i] : 0.0;
  }
  fftw_execute(pa);
  fftw_execute(pb);
  for (size_t k = 0; k <= size / 2; k++) {
    const double re = fa[k][0] * fb[k][0] - fa[k][1] * fb[k][1];
    const double im = fa[k][0] * fb[k][1] + fa[k][1] * fb[k][0];
    fa[k][0] = re / (double)size;
    fa[k][1] = im / (double)size;
  }
  fftw_execute(inverse);
  for (size_t n = start; n < frames; n++)
    y[n] = n - start < size ? a[n - start] : 0.0;
  /* The transform against the sum itself at a few random points. Its rounding error is relative
   * to the norms of the whole kernel and input (the bound of |y[n]| by Cauchy-Schwarz), not to the
   * terms of one output. */
  double h_norm = 0.0, x_norm = 0.0;
  for (size_t k = 0; k < taps; k++)
    h_norm += h[k] * h[k];
  for (size_t i = 0; i < inputs; i++)
    x_norm += x[(start + i) * channels + c] * x[(start + i) * channels + c];
  const double bound = sqrt(h_norm * x_norm);
  TestRng rng = test_rng("convolve reference spot checks %zu", audit_points);
  for (int i = 0; i < 8; i++) {
    const size_t n = test_rng_range(&rng, start, frames - 1);
    double sum = 0.0;
    for (size_t k = 0; k < taps && k <= n - start; k++)
      sum += h[k] * X(n - k);
    const double diff = bound > 0.0 ? fabs(sum - y[n]) / bound : fabs(y[n]);
    audit_worst = diff > audit_worst || isnan(diff) ? diff : audit_worst;
    audit_points++;
  }
#undef X
  fftw_destroy_plan(pa);
  fftw_destroy_plan(pb);
  fftw_destroy_plan(inverse);
  fftw_free(a);
  fftw_free(b);
  fftw_free(fa);
  fftw_free(fb);
}

static double *
scratch(size_t frames)
{
  double *p = malloc((frames + 1) * sizeof *p);
  if (!p)
    test_abort("convolve reference: no memory for %zu frames", frames);
  return p;
}

static size_t
span_of(const ConvolveRefKernel *kernel, size_t block)
{
  return kernel->span ? kernel->span : block;
}

void
convolve_reference_stream(const ConvolveRefKernel *kernels, size_t count, size_t block,
                          const double *x, unsigned channels, size_t x_frames, size_t frames,
                          const double *mix, double *y)
{
  double *line = scratch(frames), *other = scratch(frames);
  for (unsigned c = 0; c < channels; c++) {
    for (size_t k = 0; k < count; k++) {
      const ConvolveRefKernel *kern = &kernels[k];
      const double *h = kern->h + (kern->rows == 1 ? 0 : c) * kern->taps;
      const size_t start = min_size(kern->change, frames);
      const size_t end =
          k + 1 < count ? min_size(kernels[k + 1].change + span_of(&kernels[k + 1], block), frames)
                        : frames;
      const size_t span = span_of(kern, block);
      convolve_reference_channel(h, kern->taps, x, channels, c, x_frames, start, end, other);
      for (size_t n = start; n < end; n++) {
        if (k > 0 && n < kern->change + span) {
          const double r = (double)(n - kern->change + 1) / (double)(span + 1);
          line[n] = (1.0 - r) * line[n] + r * other[n];
        } else {
          line[n] = other[n];
        }
      }
    }
    for (size_t n = 0; n < frames; n++) {
      const double wet = mix ? mix[n] : 1.0;
      const double dry = n < x_frames ? x[n * channels + c] : 0.0;
      y[n * channels + c] = wet * line[n] + (1.0 - wet) * dry;
    }
  }
  free(line);
  free(other);
}

double *
convolve_reference(const double *h, size_t taps, unsigned rows, const double *x, unsigned channels,
                   size_t x_frames, size_t frames)
{
  double *y = scratch(frames * channels);
  const ConvolveRefKernel kernel = {h, taps, rows, 0, 0};
  convolve_reference_stream(&kernel, 1, 1, x, channels, x_frames, frames, NULL, y);
  return y;
}
