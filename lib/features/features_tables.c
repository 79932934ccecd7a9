/* features_tables.c: see the header. Every formula is cudafft/features.h's, evaluated in double
 * and rounded to float once. */
#include "features_tables.h"

#include "errors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double two_pi = 6.283185307179586476925286766559;
static const double pi = 3.1415926535897932384626433832795;

double
cudafft_features_window_value(CudafftFeaturesWindow window, int symmetric, size_t length, size_t i)
{
  if (window == CUDAFFT_FEATURES_WINDOW_RECTANGULAR)
    return 1.0;
  const double d = symmetric ? (double)length - 1.0 : (double)length;
  /* a symmetric window of one sample: its one value is the window's middle (1) */
  const double x = d > 0.0 ? two_pi * (double)i / d : pi;
  switch (window) {
  case CUDAFFT_FEATURES_WINDOW_HANN:
    return 0.5 - 0.5 * cos(x);
  case CUDAFFT_FEATURES_WINDOW_HAMMING:
    return 0.54 - 0.46 * cos(x);
  case CUDAFFT_FEATURES_WINDOW_POVEY:
    return pow(0.5 - 0.5 * cos(x), 0.85);
  default:
    return 0.42 - 0.5 * cos(x) + 0.08 * cos(2.0 * x);
  }
}

double
cudafft_features_window_energy(const CudafftFeaturesConfig *config)
{
  const size_t length = config->win_length ? config->win_length : config->fft_size;
  double energy = 0.0;
  for (size_t i = 0; i < length; i++) {
    const double w =
        cudafft_features_window_value(config->window, config->window_symmetric, length, i);
    energy += w * w;
  }
  return energy;
}

/* Slaney's scale: linear to 1000 Hz (200/3 Hz per mel), logarithmic above. */
#define SLANEY_F_SP (200.0 / 3.0)
#define SLANEY_MIN_LOG_HZ 1000.0
#define SLANEY_MIN_LOG_MEL (SLANEY_MIN_LOG_HZ / SLANEY_F_SP)

static double
slaney_logstep(void)
{
  return log(6.4) / 27.0;
}

double
cudafft_features_hz_to_mel(CudafftMelScale scale, double hz)
{
  if (scale == CUDAFFT_MEL_SCALE_HTK)
    return 2595.0 * log10(1.0 + hz / 700.0);
  if (hz < SLANEY_MIN_LOG_HZ)
    return hz / SLANEY_F_SP;
  return SLANEY_MIN_LOG_MEL + log(hz / SLANEY_MIN_LOG_HZ) / slaney_logstep();
}

double
cudafft_features_mel_to_hz(CudafftMelScale scale, double mel)
{
  if (scale == CUDAFFT_MEL_SCALE_HTK)
    return 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
  if (mel < SLANEY_MIN_LOG_MEL)
    return SLANEY_F_SP * mel;
  return SLANEY_MIN_LOG_HZ * exp(slaney_logstep() * (mel - SLANEY_MIN_LOG_MEL));
}

double
cudafft_features_f_high(const CudafftFeaturesConfig *config)
{
  const double nyquist = 0.5 * config->sample_rate;
  return config->f_max > 0.0 ? config->f_max : nyquist + config->f_max;
}

/* p[i], i = 0 .. M + 1 (mel points), and h[i] = mel^-1(p[i]). */
static void
mel_points(const CudafftFeaturesConfig *config, unsigned i, double *p, double *h)
{
  const double lo = cudafft_features_hz_to_mel(config->mel_scale, config->f_min);
  const double hi = cudafft_features_hz_to_mel(config->mel_scale, cudafft_features_f_high(config));
  *p = lo + (double)i * (hi - lo) / (double)(config->n_mels + 1);
  *h = cudafft_features_mel_to_hz(config->mel_scale, *p);
}

void
cudafft_features_filter_row(const CudafftFeaturesConfig *config, unsigned j, double *row)
{
  const size_t n = config->fft_size, bins = n / 2 + 1;
  const double rate = config->sample_rate;
  double p[3], h[3];
  for (unsigned e = 0; e < 3; e++)
    mel_points(config, j + e, &p[e], &h[e]);
  for (size_t k = 0; k < bins; k++) {
    const double f = (double)k * rate / (double)n;
    double w = 0.0;
    switch (config->filters) {
    case CUDAFFT_MEL_FILTERS_HZ: {
      const double lower = (f - h[0]) / (h[1] - h[0]), upper = (h[2] - f) / (h[2] - h[1]);
      w = fmax(0.0, fmin(lower, upper));
      break;
    }
    case CUDAFFT_MEL_FILTERS_MEL: {
      const double q = cudafft_features_hz_to_mel(config->mel_scale, f);
      if (q > p[0] && q < p[2])
        w = q <= p[1] ? (q - p[0]) / (p[1] - p[0]) : (p[2] - q) / (p[2] - p[1]);
      break;
    }
    default: {
      double b[3];
      for (unsigned e = 0; e < 3; e++)
        b[e] = floor(((double)n + 1.0) * h[e] / rate);
      const double kk = (double)k;
      if (kk >= b[0] && kk < b[1])
        w = (kk - b[0]) / (b[1] - b[0]);
      else if (kk >= b[1] && kk < b[2])
        w = (b[2] - kk) / (b[2] - b[1]);
    }
    }
    if (config->mel_norm == CUDAFFT_MEL_NORM_SLANEY)
      w *= 2.0 / (h[2] - h[0]);
    row[k] = w;
  }
}

/* The coefficients of the Savitzky-Golay fit of degree `order` over width = 2 r + 1 frames,
 * derivative `order`, evaluated at each position p of the window: out[p width + j] (the weight
 * of frame j). The least-squares fit's coefficients a = (A^T A)^-1 A^T y with A[j][d] = x_j^d,
 * x_j = j - p, so that the derivative at p is order! a[order]. */
static void
savgol_rows(int r, unsigned order, float *out)
{
  const int width = 2 * r + 1;
  for (int p = 0; p < width; p++) {
    double g[3][3] = {{0}}, inv[3][3];
    const unsigned dim = order + 1;
    for (int j = 0; j < width; j++) {
      const double x = (double)(j - p);
      double pw[3] = {1.0, x, x * x};
      for (unsigned a = 0; a < dim; a++)
        for (unsigned b = 0; b < dim; b++)
          g[a][b] += pw[a] * pw[b];
    }
    /* (A^T A)^-1 by Gauss-Jordan on dim <= 3 (positive definite: no pivoting needed) */
    for (unsigned a = 0; a < dim; a++)
      for (unsigned b = 0; b < dim; b++)
        inv[a][b] = a == b;
    for (unsigned c = 0; c < dim; c++) {
      const double d = g[c][c];
      for (unsigned b = 0; b < dim; b++) {
        g[c][b] /= d;
        inv[c][b] /= d;
      }
      for (unsigned a = 0; a < dim; a++) {
        if (a == c)
          continue;
        const double m = g[a][c];
        for (unsigned b = 0; b < dim; b++) {
          g[a][b] -= m * g[c][b];
          inv[a][b] -= m * inv[c][b];
        }
      }
    }
    const double factorial = order == 2 ? 2.0 : 1.0;
    for (int j = 0; j < width; j++) {
      const double x = (double)(j - p);
      double pw[3] = {1.0, x, x * x}, sum = 0.0;
      for (unsigned b = 0; b < dim; b++)
        sum += inv[order][b] * pw[b];
      out[p * width + j] = (float)(factorial * sum);
    }
  }
}

void
cudafft_features_tables_free(CudafftFeaturesTables *t)
{
  free(t->window);
  free(t->filters);
  free(t->weights);
  free(t->dct);
  free(t->lifter);
  free(t->savgol[0]);
  free(t->savgol[1]);
  memset(t, 0, sizeof *t);
}

static CudafftStatus
make_mel_bank(const CudafftFeaturesConfig *config, CudafftFeaturesTables *t)
{
  const size_t bins = config->fft_size / 2 + 1, m = config->n_mels;
  double *row = malloc(bins * sizeof *row);
  t->filters = calloc(m, sizeof *t->filters);
  if (!row || !t->filters) {
    free(row);
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  }
  /* two passes: the extents, then the weights */
  size_t total = 0;
  for (unsigned j = 0; j < m; j++) {
    cudafft_features_filter_row(config, j, row);
    size_t first = bins, last = 0;
    for (size_t k = 0; k < bins; k++)
      if (row[k] != 0.0) {
        first = k < first ? k : first;
        last = k;
      }
    t->filters[j].first = first < bins ? (unsigned)first : 0;
    t->filters[j].count = first < bins ? (unsigned)(last + 1 - first) : 0;
    t->filters[j].offset = (unsigned)total;
    total += t->filters[j].count;
  }
  t->weight_count = total;
  t->weights = malloc((total ? total : 1) * sizeof *t->weights);
  if (!t->weights) {
    free(row);
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  }
  for (unsigned j = 0; j < m; j++) {
    cudafft_features_filter_row(config, j, row);
    for (unsigned k = 0; k < t->filters[j].count; k++)
      t->weights[t->filters[j].offset + k] = (float)row[t->filters[j].first + k];
  }
  free(row);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
make_cepstrum(const CudafftFeaturesConfig *config, CudafftFeaturesTables *t)
{
  const size_t m = config->n_mels, q = config->n_mfcc;
  t->dct = malloc(q * m * sizeof *t->dct);
  t->lifter = malloc(q * sizeof *t->lifter);
  if (!t->dct || !t->lifter)
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  for (size_t r = 0; r < q; r++) {
    const double norm = sqrt((r == 0 ? 1.0 : 2.0) / (double)m);
    for (size_t j = 0; j < m; j++)
      t->dct[r * m + j] = (float)(norm * cos(pi * (double)r * ((double)j + 0.5) / (double)m));
    const double k = config->lifter;
    double lift = 1.0;
    if (k > 0.0)
      lift =
          1.0 +
          0.5 * k *
              sin(pi *
                  (double)(config->lifter_kind == CUDAFFT_FEATURES_LIFTER_LIBROSA ? r + 1 : r) / k);
    t->lifter[r] = (float)lift;
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_features_tables_make(const CudafftFeaturesConfig *config, CudafftFeaturesTables *t)
{
  memset(t, 0, sizeof *t);
  const size_t length = config->win_length ? config->win_length : config->fft_size;
  t->window_length = length;
  t->window = malloc(length * sizeof *t->window);
  CudafftStatus status = t->window ? CUDAFFT_STATUS_OK : CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  for (size_t i = 0; status == CUDAFFT_STATUS_OK && i < length; i++)
    t->window[i] =
        (float)cudafft_features_window_value(config->window, config->window_symmetric, length, i);
  t->bin_scale = config->normalized == 1   ? (float)(1.0 / (double)config->fft_size)
                 : config->normalized == 2 ? (float)(1.0 / cudafft_features_window_energy(config))
                                           : 1.0f;
  if (status == CUDAFFT_STATUS_OK)
    status = make_mel_bank(config, t);
  if (status == CUDAFFT_STATUS_OK && config->kind == CUDAFFT_FEATURES_MFCC)
    status = make_cepstrum(config, t);
  const int r = config->delta_order ? (int)(config->delta_width - 1) / 2 : 0;
  if (r > 0) {
    double sum = 0.0;
    for (int n = 1; n <= r; n++)
      sum += (double)n * n;
    t->regression_norm = (float)(1.0 / (2.0 * sum));
  }
  if (status == CUDAFFT_STATUS_OK && r > 0 && config->delta_style == CUDAFFT_FEATURES_DELTAS_SAVGOL)
    for (unsigned order = 1; order <= config->delta_order && status == CUDAFFT_STATUS_OK; order++) {
      const size_t width = 2 * (size_t)r + 1;
      t->savgol[order - 1] = malloc(width * width * sizeof(float));
      if (t->savgol[order - 1])
        savgol_rows(r, order, t->savgol[order - 1]);
      else
        status = CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
    }
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_features_tables_free(t);
    return cudafft_fail(status,
                        "cannot allocate the tables of a features object (window, %u mel "
                        "filters, DCT)",
                        config->n_mels);
  }
  return CUDAFFT_STATUS_OK;
}
