/* test_bands.c: the definitions of cudafft/bands.h against the standards' own tables and against
 * formulas computed here: IEC 61672-1 A and C weighting at the table frequencies (within 0.1 dB
 * of the standard's values, which are given to 0.1 dB), the pole frequencies and the normalisation
 * constants; IEC 61260-1 exact midband frequencies and edges; the band layouts of every scale;
 * the bins-to-band weights of an even and an odd FFT size (whole bins, fractional edges, narrow
 * bands interpolated, continuity where the two rules meet, nothing outside the spectrum); and band
 * levels from bin levels. The
 * definitions do not depend on a backend: the program takes no argument. */
#include "band_values.h" /* the pole frequencies and normalisation, to check against the standard */
#include "test_util.h"

#include <cudafft/bands.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* IEC 61672-1:2013 Table 3: nominal frequency, A and C weightings in dB (given to 0.1 dB), at the
 * exact base-10 frequencies 1000 x 10^(i / 10), i = -20 .. 13. */
static const struct {
  double nominal, a, c;
} iec61672[] = {
    {10, -70.4, -14.3},  {12.5, -63.4, -11.2}, {16, -56.7, -8.5},   {20, -50.5, -6.2},
    {25, -44.7, -4.4},   {31.5, -39.4, -3.0},  {40, -34.6, -2.0},   {50, -30.2, -1.3},
    {63, -26.2, -0.8},   {80, -22.5, -0.5},    {100, -19.1, -0.3},  {125, -16.1, -0.2},
    {160, -13.4, -0.1},  {200, -10.9, 0.0},    {250, -8.6, 0.0},    {315, -6.6, 0.0},
    {400, -4.8, 0.0},    {500, -3.2, 0.0},     {630, -1.9, 0.0},    {800, -0.8, 0.0},
    {1000, 0.0, 0.0},    {1250, 0.6, 0.0},     {1600, 1.0, -0.1},   {2000, 1.2, -0.2},
    {2500, 1.3, -0.3},   {3150, 1.2, -0.5},    {4000, 1.0, -0.8},   {5000, 0.5, -1.3},
    {6300, -0.1, -2.0},  {8000, -1.1, -3.0},   {10000, -2.5, -4.4}, {12500, -4.3, -6.2},
    {16000, -6.6, -8.5}, {20000, -9.3, -11.2},
};

static void
test_weighting(void)
{
  double worst_a = 0.0, worst_c = 0.0;
  for (size_t i = 0; i < COUNT(iec61672); i++) {
    const double f = 1000.0 * pow(10.0, ((double)i - 20.0) / 10.0);
    const double a = cudafft_weighting_db(CUDAFFT_WEIGHTING_A, f);
    const double c = cudafft_weighting_db(CUDAFFT_WEIGHTING_C, f);
    const double z = cudafft_weighting_db(CUDAFFT_WEIGHTING_Z, f);
    worst_a = fmax(worst_a, fabs(a - iec61672[i].a));
    worst_c = fmax(worst_c, fabs(c - iec61672[i].c));
    if (!test_check(fabs(a - iec61672[i].a) <= 0.1 && fabs(c - iec61672[i].c) <= 0.1 && z == 0.0,
                    "IEC 61672-1 at %g Hz (%.4f Hz): A %.3f dB (table %.1f), C %.3f dB (table "
                    "%.1f), Z %g",
                    iec61672[i].nominal, f, a, iec61672[i].a, c, iec61672[i].c, z))
      break;
  }
  /* The table's values are rounded to 0.1 dB, so a right formula is within 0.05 of each. */
  test_check(worst_a <= 0.05 && worst_c <= 0.05,
             "every table value within its rounding: A %.4f dB, C %.4f dB at most", worst_a,
             worst_c);
  test_check(fabs(cudafft_weighting_db(CUDAFFT_WEIGHTING_A, 1000.0)) < 1e-12 &&
                 fabs(cudafft_weighting_db(CUDAFFT_WEIGHTING_C, 1000.0)) < 1e-12,
             "A and C are 0 dB at 1 kHz");
  test_check(isinf(cudafft_weighting_db(CUDAFFT_WEIGHTING_A, 0.0)) &&
                 cudafft_weighting_db(CUDAFFT_WEIGHTING_A, 0.0) < 0 &&
                 isinf(cudafft_weighting_db(CUDAFFT_WEIGHTING_C, 0.0)),
             "A and C are -infinity dB at 0 Hz");
  /* Annex E's pole frequencies (E.1 - E.6), and the normalisation constants the standard rounds
   * to -2.000 dB and -0.062 dB. */
  const CudafftWeightingPoles p = cudafft_weighting_poles();
  const double f1 = sqrt(p.f1), f2 = sqrt(p.f2), f3 = sqrt(p.f3), f4 = sqrt(p.f4);
  test_check(fabs(f1 - 20.598997) < 5e-6 && fabs(f2 - 107.65265) < 5e-5 &&
                 fabs(f3 - 737.86223) < 5e-5 && fabs(f4 - 12194.217) < 5e-4,
             "IEC 61672-1 poles: f1 %.6f, f2 %.5f, f3 %.5f, f4 %.3f Hz (20.598997, 107.65265, "
             "737.86223, 12194.217)",
             f1, f2, f3, f4);
  const double a1000 = 10.0 * log10(cudafft_weighting_a_ratio(p, 1e6));
  const double c1000 = 10.0 * log10(cudafft_weighting_c_ratio(p, 1e6));
  test_check(fabs(a1000 - -2.000) < 5e-4 && fabs(c1000 - -0.062) < 5e-4,
             "normalisation constants A1000 %.4f dB, C1000 %.4f dB (-2.000, -0.062)", a1000, c1000);
  /* The gains of an FFT's bins: 10^(W / 10) at each bin's frequency. */
  float gains[2049];
  test_check(cudafft_weighting_gains(CUDAFFT_WEIGHTING_A, 4096, 48000.0, gains) ==
                 CUDAFFT_STATUS_OK,
             "weighting gains of 2049 bins");
  double worst = 0.0;
  for (size_t k = 1; k < 2049; k++) {
    const double want =
        pow(10.0, cudafft_weighting_db(CUDAFFT_WEIGHTING_A, k * 48000.0 / 4096) / 10.0);
    worst = fmax(worst, fabs(gains[k] / want - 1.0));
  }
  test_check(gains[0] == 0.0f && worst < 1e-6,
             "bin gains are 10^(A(f_k) / 10) (relative error %.2g), 0 at DC", worst);
  test_section_done("weighting");
}

/* IEC 61260-1:2014 Annex E: exact midband frequencies, given to 5 significant figures. */
static const double third_octave[] = {
    25.119, 31.623, 39.811, 50.119, 63.096, 79.433, 100.00, 125.89, 158.49, 199.53,
    251.19, 316.23, 398.11, 501.19, 630.96, 794.33, 1000.0, 1258.9, 1584.9, 1995.3,
    2511.9, 3162.3, 3981.1, 5011.9, 6309.6, 7943.3, 10000,  12589,  15849,  19953};
static const double octave[] = {31.623, 63.096, 125.89, 251.19, 501.19,
                                1000.0, 1995.3, 3981.1, 7943.3, 15849};

static int
five_figures(double got, double want)
{
  /* rounding to 5 significant figures: half a unit of the fifth figure */
  return fabs(got - want) <= 0.5 * pow(10.0, floor(log10(want)) - 4) * 1.0001;
}

static void
test_octaves(void)
{
  for (int i = 0; i < (int)COUNT(third_octave); i++) {
    const double f = cudafft_octave_midband(3, i - 16, NULL, NULL);
    if (!test_check(five_figures(f, third_octave[i]),
                    "1/3 octave band %d: midband %.5f Hz, IEC 61260-1 %g Hz", i - 16, f,
                    third_octave[i]))
      break;
  }
  for (int i = 0; i < (int)COUNT(octave); i++) {
    const double f = cudafft_octave_midband(1, i - 5, NULL, NULL);
    if (!test_check(five_figures(f, octave[i]),
                    "octave band %d: midband %.5f Hz, IEC 61260-1 %g Hz", i - 5, f, octave[i]))
      break;
  }
  double lo, hi;
  cudafft_octave_midband(1, 0, &lo, &hi);
  test_check(five_figures(lo, 707.95) && five_figures(hi, 1412.5),
             "octave at 1 kHz: edges %.4f, %.4f Hz (707.95, 1412.5)", lo, hi);
  cudafft_octave_midband(3, 0, &lo, &hi);
  test_check(five_figures(lo, 891.25) && five_figures(hi, 1122.0),
             "1/3 octave at 1 kHz: edges %.4f, %.4f Hz (891.25, 1122.0)", lo, hi);
  /* Even fractions: midbands at G^((2x + 1) / (2b)), so 1 kHz is a band edge. */
  static const unsigned even[] = {6, 12, 24};
  for (size_t i = 0; i < COUNT(even); i++) {
    const unsigned b = even[i];
    double below_hi, above_lo;
    const double below = cudafft_octave_midband(b, -1, NULL, &below_hi);
    const double above = cudafft_octave_midband(b, 0, &above_lo, NULL);
    const double want = 1000.0 * pow(10.0, 0.3 / (2.0 * b));
    test_check(fabs(above / want - 1.0) < 1e-14 && fabs(below * want / 1e6 - 1.0) < 1e-14 &&
                   fabs(below_hi - 1000.0) < 1e-9 && fabs(above_lo - 1000.0) < 1e-9,
               "1/%u octave: midbands %.5f and %.5f Hz around 1 kHz, which is their common edge", b,
               below, above);
  }
  /* A layout holds the bands whose midband lies in the range. */
  CudafftBandLayout l = {CUDAFFT_SCALE_OCTAVE, 0, 3, 20.0, 20000.0};
  test_check(
      cudafft_band_layout_resolve(&l, 48000.0) == CUDAFFT_STATUS_OK && cudafft_band_count(&l) == 30,
      "1/3 octaves from 20 Hz to 20 kHz: 30 bands, 25 Hz to 20 kHz (%zu)", cudafft_band_count(&l));
  double centres[30];
  cudafft_band_edges(&l, NULL, centres, NULL);
  test_check(five_figures(centres[0], 25.119) && five_figures(centres[29], 19953.0),
             "first and last: %.4f and %.2f Hz", centres[0], centres[29]);
  l = (CudafftBandLayout){CUDAFFT_SCALE_OCTAVE, 0, 1, 0.0, 0.0};
  test_check(cudafft_band_layout_resolve(&l, 48000.0) == CUDAFFT_STATUS_OK &&
                 l.min_frequency == 20.0 && l.max_frequency == 24000.0 &&
                 cudafft_band_count(&l) == 10,
             "octaves, automatic range at 48 kHz: 20 Hz to 24 kHz, 10 bands (%zu)",
             cudafft_band_count(&l));
  l = (CudafftBandLayout){CUDAFFT_SCALE_OCTAVE, 0, 3, 1000.0, 1000.0 * pow(10.0, 0.1)};
  test_check(cudafft_band_layout_resolve(&l, 48000.0) == CUDAFFT_STATUS_OK &&
                 cudafft_band_count(&l) == 2,
             "a range from one midband to the next holds both (%zu)", cudafft_band_count(&l));
  test_section_done("octave bands");
}

static double
mel(double f)
{
  return 2595.0 * log10(1.0 + f / 700.0);
}

static void
test_scales(void)
{
  /* LINEAR over 0 .. rate/2 with nfft/2 + 1 bands: the bins themselves, each weighing 1. */
  const size_t nfft = 1024, bins = nfft / 2 + 1;
  CudafftBandLayout l = {CUDAFFT_SCALE_LINEAR, bins, 3, 0.0, 0.0};
  test_check(cudafft_band_layout_resolve(&l, 44100.0) == CUDAFFT_STATUS_OK &&
                 l.min_frequency == 0.0 && l.max_frequency == 22050.0,
             "linear, automatic range at 44.1 kHz: 0 to 22050 Hz");
  double *centre = test_malloc(bins * sizeof *centre);
  CudafftBandBins *w = test_malloc(bins * sizeof *w);
  cudafft_band_edges(&l, NULL, centre, NULL);
  cudafft_band_bins(&l, nfft, 44100.0, w);
  double worst_centre = 0.0, worst_weight = 0.0;
  for (size_t k = 0; k < bins; k++) {
    worst_centre = fmax(worst_centre, fabs(centre[k] - k * 44100.0 / nfft));
    /* the weight of bin k in band k is 1 and every other weight is 0 */
    for (unsigned j = w[k].first; j <= w[k].last; j++) {
      const double a = j == w[k].first ? w[k].first_weight : j == w[k].last ? w[k].last_weight : 1;
      worst_weight = fmax(worst_weight, fabs(a - (j == k ? 1.0 : 0.0)));
    }
  }
  test_check(worst_centre < 1e-9 && worst_weight < 1e-6,
             "linear bands over 0 .. rate/2 are the bins: centres within %.2g Hz, weights within "
             "%.2g",
             worst_centre, worst_weight);
  free(centre);
  free(w);

  /* LOG, MEL: centres evenly spaced in ln f or mel f, first and last at the ends; edges halfway. */
  static const CudafftFrequencyScale scales[] = {CUDAFFT_SCALE_LOG, CUDAFFT_SCALE_MEL,
                                                 CUDAFFT_SCALE_LINEAR};
  for (size_t s = 0; s < COUNT(scales); s++) {
    const size_t n = 57;
    CudafftBandLayout g = {scales[s], n, 3, 40.0, 16000.0};
    double lower[57], mid[57], upper[57];
    test_check(cudafft_band_layout_resolve(&g, 48000.0) == CUDAFFT_STATUS_OK &&
                   cudafft_band_edges(&g, lower, mid, upper) == CUDAFFT_STATUS_OK,
               "scale %d: 57 bands from 40 Hz to 16 kHz", (int)scales[s]);
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
      double c, a, b;
      if (scales[s] == CUDAFFT_SCALE_LOG) {
        const double r = pow(16000.0 / 40.0, 1.0 / (n - 1));
        c = 40.0 * pow(r, (double)i);
        a = c / sqrt(r);
        b = c * sqrt(r);
      } else if (scales[s] == CUDAFFT_SCALE_MEL) {
        const double step = (mel(16000.0) - mel(40.0)) / (n - 1), m = mel(40.0) + i * step;
        c = 700.0 * (pow(10.0, m / 2595.0) - 1.0);
        a = 700.0 * (pow(10.0, (m - step / 2) / 2595.0) - 1.0);
        b = 700.0 * (pow(10.0, (m + step / 2) / 2595.0) - 1.0);
      } else {
        const double step = (16000.0 - 40.0) / (n - 1);
        c = 40.0 + i * step;
        a = c - step / 2;
        b = c + step / 2;
      }
      worst = fmax(
          worst, fmax(fabs(mid[i] / c - 1), fmax(fabs(lower[i] / a - 1), fabs(upper[i] / b - 1))));
    }
    test_check(worst < 1e-12, "scale %d: centres and edges by the formula (relative %.2g)",
               (int)scales[s], worst);
  }
  test_check(fabs(cudafft_mel_from_hz(1000.0) - 999.9855) < 1e-3 &&
                 fabs(cudafft_hz_from_mel(cudafft_mel_from_hz(4321.0)) - 4321.0) < 1e-9,
             "mel(1000 Hz) = %.4f (O'Shaughnessy: 999.99), and back", cudafft_mel_from_hz(1000.0));
  test_section_done("scales");
}

/* The weights of a band, as a dense vector over bins 0 .. top. */
static void
dense(const CudafftBandBins *b, double *a, size_t bins)
{
  memset(a, 0, bins * sizeof *a);
  for (unsigned k = b->first; k <= b->last; k++)
    a[k] = k == b->first ? b->first_weight : k == b->last ? b->last_weight : 1.0;
}

/* The weights by the header's rules, computed here: the overlap of [lo, hi] with each bin's span,
 * or for a band narrower than a bin the interpolated density at its centre times its width. */
static void
weights_by_rule(double lo, double hi, double d, size_t bins, double *a)
{
  memset(a, 0, bins * sizeof *a);
  const double w = hi - lo;
  if (w >= d) {
    for (size_t k = 0; k < bins; k++)
      a[k] = fmax(0.0, fmin(hi, (k + 0.5) * d) - fmax(lo, (k - 0.5) * d)) / d;
    return;
  }
  double u = (lo + hi) / 2 / d;
  u = fmin(fmax(u, 0.0), (double)(bins - 1));
  size_t j = (size_t)floor(u);
  if (j >= bins - 1)
    j = bins - 2;
  const double t = u - j;
  a[j] = w / d * (1 - t);
  a[j + 1] = w / d * t;
}

/* The weights over the bins of an nfft-point FFT, nfft even (bins to rate / 2) or odd (the last
 * bin below it). */
static void
test_bin_weights(size_t nfft)
{
  const size_t bins = nfft / 2 + 1;
  const double rate = 48000.0, d = rate / nfft;
  double *got = test_malloc(bins * sizeof *got), *want = test_malloc(bins * sizeof *want);
  /* every scale, wide and narrow bands: the library's weights against the rules */
  static const struct {
    CudafftFrequencyScale scale;
    size_t bands;
    unsigned per_octave;
    double lo, hi;
  } layouts[] = {
      {CUDAFFT_SCALE_LOG, 200, 3, 20.0, 20000.0},   {CUDAFFT_SCALE_MEL, 300, 3, 0.0, 24000.0},
      {CUDAFFT_SCALE_LINEAR, 97, 3, 100.0, 9000.0}, {CUDAFFT_SCALE_OCTAVE, 0, 24, 20.0, 0.0},
      {CUDAFFT_SCALE_OCTAVE, 0, 1, 20.0, 0.0},      {CUDAFFT_SCALE_LINEAR, 5000, 3, 0.0, 24000.0},
  };
  for (size_t i = 0; i < COUNT(layouts); i++) {
    CudafftBandLayout l = {layouts[i].scale, layouts[i].bands, layouts[i].per_octave, layouts[i].lo,
                           layouts[i].hi};
    cudafft_band_layout_resolve(&l, rate);
    const size_t n = cudafft_band_count(&l);
    double *lower = test_malloc(n * sizeof *lower), *upper = test_malloc(n * sizeof *upper);
    CudafftBandBins *w = test_malloc(n * sizeof *w);
    cudafft_band_edges(&l, lower, NULL, upper);
    test_check(cudafft_band_bins(&l, nfft, rate, w) == CUDAFFT_STATUS_OK,
               "nfft %zu, layout %zu: %zu bands", nfft, i, n);
    double worst = 0.0;
    size_t narrow = 0;
    for (size_t b = 0; b < n; b++) {
      dense(&w[b], got, bins);
      weights_by_rule(lower[b], upper[b], d, bins, want);
      narrow += upper[b] - lower[b] < d;
      for (size_t k = 0; k < bins; k++)
        worst = fmax(worst, fabs(got[k] - want[k]));
    }
    test_check(worst < 1e-6,
               "nfft %zu, layout %zu: every weight by the rules (%zu of %zu bands narrower "
               "than a bin), largest difference %.2g",
               nfft, i, narrow, n, worst);
    free(lower);
    free(upper);
    free(w);
  }

  /* Adjacent wide bands share their edge bins: the weights of a bin add up to 1. */
  CudafftBandLayout l = {CUDAFFT_SCALE_LOG, 40, 3, 500.0, 16000.0};
  cudafft_band_layout_resolve(&l, rate);
  CudafftBandBins w[40];
  cudafft_band_bins(&l, nfft, rate, w);
  double *sum = test_malloc(bins * sizeof *sum);
  memset(sum, 0, bins * sizeof *sum);
  for (size_t b = 0; b < 40; b++) {
    dense(&w[b], got, bins);
    for (size_t k = 0; k < bins; k++)
      sum[k] += got[k];
  }
  double lower0, upper39, worst = 0.0;
  cudafft_band_edges(&l, NULL, NULL, NULL);
  {
    double lo[40], hi[40];
    cudafft_band_edges(&l, lo, NULL, hi);
    lower0 = lo[0];
    upper39 = hi[39];
  }
  for (size_t k = 0; k < bins; k++)
    if ((k - 0.5) * d >= lower0 && (k + 0.5) * d <= upper39)
      worst = fmax(worst, fabs(sum[k] - 1.0));
  test_check(worst < 1e-6, "nfft %zu: contiguous wide bands: each bin's weights add up to 1 (%.2g)",
             nfft, worst);

  /* Continuity where the rules meet: a band just under a bin wide and one just over. */
  for (int side = 0; side < 2; side++) {
    const double c = 1000.3, width = d * (side ? 1.0 + 1e-9 : 1.0 - 1e-9);
    CudafftBandLayout one = {CUDAFFT_SCALE_LINEAR, 1, 3, c - width / 2, c + width / 2};
    CudafftBandBins b;
    cudafft_band_bins(&one, nfft, rate, &b);
    dense(&b, side ? want : got, bins);
  }
  worst = 0.0;
  for (size_t k = 0; k < bins; k++)
    worst = fmax(worst, fabs(got[k] - want[k]));
  test_check(worst < 1e-6, "nfft %zu: a band a bin wide: both rules give the same weights (%.2g)",
             nfft, worst);

  /* A band beyond the spectrum's last bin takes nothing. */
  CudafftBandLayout out = {CUDAFFT_SCALE_LINEAR, 1, 3, 30000.0, 31000.0};
  CudafftBandBins b;
  cudafft_band_bins(&out, nfft, rate, &b);
  test_check(b.first_weight == 0.0f && b.last_weight == 0.0f,
             "nfft %zu: a band above the last bin weighs nothing", nfft);
  /* An odd nfft has no bin at the Nyquist frequency: its last bin lies d/2 below it, and its span
   * ends there. A band above that span takes nothing, one across its end the part it covers. */
  if (nfft % 2) {
    const double top = (double)(bins - 1) * d + d / 2;
    CudafftBandLayout above = {CUDAFFT_SCALE_LINEAR, 1, 3, top + 0.1 * d, top + 1.6 * d};
    cudafft_band_bins(&above, nfft, rate, &b);
    const int nothing = b.first_weight == 0.0f && b.last_weight == 0.0f;
    CudafftBandLayout across = {CUDAFFT_SCALE_LINEAR, 1, 3, top - 0.75 * d, top + 0.5 * d};
    cudafft_band_bins(&across, nfft, rate, &b);
    test_check(nothing && b.first == bins - 1 && b.last == bins - 1 &&
                   fabs(b.first_weight - 0.75) < 1e-6,
               "nfft %zu: nothing above the last bin's span (%.1f Hz), the covered part of it "
               "below (bin %u weighs %g)",
               nfft, top, b.first, b.first_weight);
  }
  free(got);
  free(want);
  free(sum);
}

static void
test_levels_from_bins(void)
{
  TestRng rng = test_rng("levels from bins");
  const size_t nfft = 2048, bins = nfft / 2 + 1;
  float *db = test_malloc(bins * sizeof *db), gains[1025];
  for (size_t k = 0; k < bins; k++)
    db[k] = (float)(-60.0 + 50.0 * test_rng_uniform(&rng));
  CudafftBandLayout l = {CUDAFFT_SCALE_OCTAVE, 0, 6, 30.0, 0.0};
  cudafft_band_layout_resolve(&l, 44100.0);
  const size_t n = cudafft_band_count(&l);
  CudafftBandBins *w = test_malloc(n * sizeof *w);
  float *got = test_malloc(n * sizeof *got);
  cudafft_band_bins(&l, nfft, 44100.0, w);
  cudafft_weighting_gains(CUDAFFT_WEIGHTING_C, nfft, 44100.0, gains);
  cudafft_band_levels_from_bins(w, n, gains, db, -70.0f, got);
  double worst = 0.0;
  double *a = test_malloc(bins * sizeof *a);
  for (size_t b = 0; b < n; b++) {
    dense(&w[b], a, bins);
    double p = 0.0;
    for (size_t k = 0; k < bins; k++)
      p += a[k] * pow(10.0, cudafft_weighting_db(CUDAFFT_WEIGHTING_C, k * 44100.0 / nfft) / 10.0) *
           pow(10.0, db[k] / 10.0);
    const double want = fmax(10.0 * log10(p), -70.0);
    worst = fmax(worst, fabs(got[b] - want));
  }
  test_check(worst < 1e-4, "band levels from bin levels: 10 log10 sum a g 10^(L/10) (%.2g dB)",
             worst);
  db[3] = NAN;
  cudafft_band_levels_from_bins(w, n, NULL, db, -70.0f, got);
  size_t nans = 0;
  for (size_t b = 0; b < n; b++)
    nans += isnan(got[b]) ? 1 : 0;
  size_t holding = 0;
  for (size_t b = 0; b < n; b++)
    holding += (w[b].first <= 3 && w[b].last >= 3) ? 1 : 0;
  test_check(nans == holding && nans > 0, "a NaN bin makes exactly the bands that hold it NaN");
  free(db);
  free(w);
  free(got);
  free(a);
  test_section_done("levels from bins");
}

static void
test_invalid(void)
{
  static const struct {
    CudafftBandLayout layout;
    const char *what;
  } bad[] = {
      {{CUDAFFT_SCALE_LOG, 10, 3, 5000.0, 1000.0}, "min above max"},
      {{CUDAFFT_SCALE_LINEAR, 0, 3, 0.0, 0.0}, "0 bands"},
      {{CUDAFFT_SCALE_OCTAVE, 0, 5, 0.0, 0.0}, "5 bands per octave"},
      {{CUDAFFT_SCALE_OCTAVE, 0, 1, 1001.0, 1100.0}, "an octave range without a midband"},
      {{CUDAFFT_SCALE_MEL, 10, 3, -5.0, 0.0}, "a negative frequency"},
      {{CUDAFFT_SCALE_MEL, 10, 3, NAN, 0.0}, "NaN"},
      {{CUDAFFT_SCALE_COUNT_, 10, 3, 0.0, 0.0}, "an unknown scale"},
      {{CUDAFFT_SCALE_LINEAR, 10, 3, 30000.0, 0.0}, "min above the Nyquist frequency"},
  };
  for (size_t i = 0; i < COUNT(bad); i++) {
    CudafftBandLayout l = bad[i].layout;
    const CudafftStatus status = cudafft_band_layout_resolve(&l, 48000.0);
    test_check(status == CUDAFFT_STATUS_INVALID_VALUE && cudafft_band_count(&l) == 0,
               "%s is refused (%s)", bad[i].what, cudafft_last_error_message());
  }
  CudafftBandLayout ok = {CUDAFFT_SCALE_LOG, 10, 3, 100.0, 50000.0};
  test_check(cudafft_band_layout_resolve(&ok, 48000.0) == CUDAFFT_STATUS_OK &&
                 ok.max_frequency == 24000.0,
             "a maximum above the Nyquist frequency is lowered to it");
  CudafftBandBins b;
  float gain[1];
  test_check(cudafft_band_bins(&ok, 1, 48000.0, &b) == CUDAFFT_STATUS_INVALID_SIZE &&
                 cudafft_weighting_gains(CUDAFFT_WEIGHTING_A, 1, 48000.0, gain) ==
                     CUDAFFT_STATUS_INVALID_VALUE,
             "band bins and weighting gains of a 1-point FFT are refused");
  test_section_done("invalid layouts");
}

int
main(int argc, char **argv)
{
  test_begin_every_backend(argc, argv);
  test_weighting();
  test_octaves();
  test_scales();
  test_bin_weights(4096);
  test_bin_weights(1125);
  test_section_done("bin weights");
  test_levels_from_bins();
  test_invalid();
  return test_finish();
}
