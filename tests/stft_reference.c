/* stft_reference.c: see stft_reference.h. */
#include "stft_reference.h"
#include "test_harness.h"

#include <fftw3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void
stft_reference_frames(size_t n, size_t hop, CudafftWindow window, const double *x,
                      unsigned channels, size_t samples, size_t lead, size_t frames, double *out)
{
  const size_t bins = n / 2 + 1;
  double *w = malloc(n * sizeof(double));
  double *in = fftw_malloc(n * sizeof(double));
  fftw_complex *spectrum = fftw_malloc(bins * sizeof(fftw_complex));
  fftw_plan plan =
      in && spectrum ? fftw_plan_dft_r2c_1d((int)n, in, spectrum, FFTW_ESTIMATE) : NULL;
  if (!w || !plan)
    test_abort("stft reference: FFTW double could not plan an R2C of n=%zu", n);
  for (size_t i = 0; i < n; i++)
    w[i] = cudafft_window_value(window, n, i);
  for (size_t f = 0; f < frames; f++)
    for (size_t c = 0; c < channels; c++) {
      for (size_t i = 0; i < n; i++) {
        /* the sample's place in x */
        const int64_t s = (int64_t)(f * hop + i) - (int64_t)lead;
        const double v = s >= 0 && (size_t)s < samples ? x[(size_t)s * channels + c] : 0.0;
        in[i] = w[i] * v;
      }
      fftw_execute(plan);
      memcpy(out + (f * channels + c) * bins * 2, spectrum, bins * sizeof(fftw_complex));
    }
  fftw_destroy_plan(plan);
  fftw_free(in);
  fftw_free(spectrum);
  free(w);
}
