/* matrix_reference.c: see the header. */
#include "matrix_reference.h"

#include "convolve_reference.h"
#include "test_harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
matrix_reference(const double *h, size_t taps, unsigned inputs, unsigned outputs, const double *x,
                 size_t x_frames, size_t frames, double *y)
{
  double *term = malloc((frames ? frames : 1) * sizeof *term);
  if (!term)
    test_abort("matrix reference: no memory for %zu frames", frames);
  memset(y, 0, frames * outputs * sizeof *y);
  for (unsigned i = 0; i < inputs; i++)
    for (unsigned j = 0; j < outputs; j++) {
      const double *r = h + ((size_t)i * outputs + j) * taps;
      size_t k = 0;
      while (k < taps && r[k] == 0.0)
        k++;
      if (k == taps)
        continue;
      convolve_reference_channel(r, taps, x, inputs, i, x_frames, 0, frames, term);
      for (size_t n = 0; n < frames; n++)
        y[n * outputs + j] += term[n];
    }
  free(term);
}

/* As matrix_reference(), but partition p (taps p L to p L + L - 1) of each response adds to output
 * block b only where b - p >= reach: the input spectra older than block `reach` are not in the
 * delay line (the header's "Response changes"). A direct sum, since the convolution's terms are cut
 * by blocks. */
static void
reference_from(const double *h, size_t taps, unsigned inputs, unsigned outputs, size_t block_size,
               size_t reach, const double *x, size_t x_frames, size_t frames, double *y)
{
  memset(y, 0, frames * outputs * sizeof *y);
  for (unsigned i = 0; i < inputs; i++)
    for (unsigned j = 0; j < outputs; j++) {
      const double *r = h + ((size_t)i * outputs + j) * taps;
      for (size_t n = 0; n < frames; n++) {
        const size_t b = n / block_size;
        if (b < reach)
          continue;
        const size_t parts = b - reach + 1; /* partitions 0..b - reach */
        size_t end = parts * block_size < taps ? parts * block_size : taps;
        if (end > n + 1)
          end = n + 1;
        double sum = 0;
        for (size_t k = n + 1 > x_frames ? n + 1 - x_frames : 0; k < end; k++)
          sum += r[k] * x[(n - k) * inputs + i];
        y[n * outputs + j] += sum;
      }
    }
}

size_t
matrix_reference_parts(const double *h, size_t rows, size_t taps, size_t block_size)
{
  size_t parts = 0;
  for (size_t row = 0; row < rows; row++) {
    size_t last = taps;
    while (last > 0 && h[row * taps + last - 1] == 0.0)
      last--;
    const size_t p = (last + block_size - 1) / block_size;
    parts = p > parts ? p : parts;
  }
  return parts;
}

double *
matrix_reference_stream(const MatrixRefSet *sets, size_t count, unsigned inputs, unsigned outputs,
                        size_t block_size, const double *x, size_t x_frames, size_t frames)
{
  const size_t values = (frames ? frames : 1) * outputs;
  double *y = malloc(values * sizeof *y), *prev = malloc(values * sizeof *prev);
  double *cur = malloc(values * sizeof *cur);
  if (!y || !prev || !cur)
    test_abort("matrix reference: no memory for %zu frames x %u outputs", frames, outputs);
  matrix_reference(sets[0].h, sets[0].taps, inputs, outputs, x, x_frames, frames, prev);
  memcpy(y, prev, frames * outputs * sizeof *y);
  for (size_t s = 1; s < count; s++) {
    if (sets[s].reach > 0)
      reference_from(sets[s].h, sets[s].taps, inputs, outputs, block_size, sets[s].reach, x,
                     x_frames, frames, cur);
    else
      matrix_reference(sets[s].h, sets[s].taps, inputs, outputs, x, x_frames, frames, cur);
    const size_t change = sets[s].change;
    for (size_t n = change; n < frames; n++) {
      const double r =
          n < change + block_size ? (double)(n - change + 1) / (double)(block_size + 1) : 1.0;
      for (unsigned j = 0; j < outputs; j++)
        y[n * outputs + j] = (1 - r) * prev[n * outputs + j] + r * cur[n * outputs + j];
    }
    double *t = prev;
    prev = cur;
    cur = t;
  }
  free(prev);
  free(cur);
  return y;
}

static double
load_sample(CudafftSampleFormat format, const void *data, size_t n)
{
  return format == CUDAFFT_SAMPLE_F64 ? ((const double *)data)[n] : ((const float *)data)[n];
}

double
matrix_reference_error(CudafftSampleFormat format, const void *out, const double *y, size_t frames,
                       unsigned outputs, size_t *frame, unsigned *output)
{
  double worst = 0;
  size_t worst_n = 0;
  unsigned worst_j = 0;
  for (unsigned j = 0; j < outputs; j++) {
    double power = 0;
    for (size_t n = 0; n < frames; n++)
      power += y[n * outputs + j] * y[n * outputs + j];
    const double rms = frames ? sqrt(power / (double)frames) : 0;
    for (size_t n = 0; n < frames; n++) {
      const double err = fabs(load_sample(format, out, n * outputs + j) - y[n * outputs + j]);
      double rel = rms > 0 ? err / rms : (err == 0 ? 0 : INFINITY);
      if (isnan(rel))
        rel = INFINITY;
      if (rel > worst) {
        worst = rel;
        worst_n = n;
        worst_j = j;
      }
    }
  }
  if (frame)
    *frame = worst_n;
  if (output)
    *output = worst_j;
  return worst;
}
