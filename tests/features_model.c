/* features_model.c: see the header. Written from cudafft/features.h's comment, step by step,
 * sharing no code with the library. */
#include "features_model.h"

#include "test_signal.h"
#include "test_util.h"

#include <fftw3.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

/* Step 2's sizes. */
typedef struct {
  long n, len, span, offset, hop, pad_in;
} Frames;

static Frames
frames_of(const CudafftFeaturesConfig *c)
{
  Frames f;
  f.n = (long)c->fft_size;
  f.len = c->win_length ? (long)c->win_length : f.n;
  f.span = c->span == CUDAFFT_FEATURES_SPAN_FFT ? f.n : f.len;
  f.offset = c->span == CUDAFFT_FEATURES_SPAN_FFT ? (f.n - f.len) / 2 : 0;
  f.hop = (long)c->hop;
  f.pad_in = c->edges == CUDAFFT_FEATURES_EDGES_CENTER  ? f.span / 2
             : c->edges == CUDAFFT_FEATURES_EDGES_KALDI ? f.span / 2 - f.hop / 2
                                                        : 0;
  return f;
}

static long
rule_frames(const CudafftFeaturesConfig *c, const Frames *f, long n)
{
  if (n == 0)
    return 0;
  switch (c->edges) {
  case CUDAFFT_FEATURES_EDGES_CENTER:
    return n + 2 * f->pad_in < f->span ? 0 : 1 + (n + 2 * f->pad_in - f->span) / f->hop;
  case CUDAFFT_FEATURES_EDGES_SNIP:
    return n < f->span ? 0 : 1 + (n - f->span) / f->hop;
  case CUDAFFT_FEATURES_EDGES_KALDI:
    return (n + f->hop / 2) / f->hop;
  default:
    return n <= f->span ? 1 : 1 + (long)ceil((double)(n - f->span) / (double)f->hop);
  }
}

/* Sample p of y (n samples) through the padding. */
static double
padded(const CudafftFeaturesConfig *c, const double *y, long n, long p)
{
  if (p >= 0 && p < n)
    return y[p];
  if (c->edges == CUDAFFT_FEATURES_EDGES_END && p >= n)
    return 0.0;
  if (c->pad == CUDAFFT_FEATURES_PAD_CONSTANT)
    return 0.0;
  /* reflect step by step, as often as it takes */
  while (p < 0 || p >= n) {
    if (c->pad == CUDAFFT_FEATURES_PAD_REFLECT) {
      if (n == 1)
        return y[0];
      p = p < 0 ? -p : 2 * (n - 1) - p;
    } else {
      p = p < 0 ? -p - 1 : 2 * n - 1 - p;
    }
  }
  return y[p];
}

static double
window_at(const CudafftFeaturesConfig *c, long len, long i)
{
  const double d = c->window_symmetric ? (double)len - 1.0 : (double)len;
  const double x = d > 0 ? 2.0 * pi * (double)i / d : pi;
  switch (c->window) {
  case CUDAFFT_FEATURES_WINDOW_HANN:
    return 0.5 - 0.5 * cos(x);
  case CUDAFFT_FEATURES_WINDOW_HAMMING:
    return 0.54 - 0.46 * cos(x);
  case CUDAFFT_FEATURES_WINDOW_POVEY:
    return pow(0.5 - 0.5 * cos(x), 0.85);
  case CUDAFFT_FEATURES_WINDOW_BLACKMAN:
    return 0.42 - 0.5 * cos(x) + 0.08 * cos(2.0 * x);
  default:
    return 1.0;
  }
}

static double
to_mel(CudafftMelScale scale, double f)
{
  if (scale == CUDAFFT_MEL_SCALE_HTK)
    return 2595.0 * log10(1.0 + f / 700.0);
  return f < 1000.0 ? f / (200.0 / 3.0) : 15.0 + 27.0 * log(f / 1000.0) / log(6.4);
}

static double
from_mel(CudafftMelScale scale, double m)
{
  if (scale == CUDAFFT_MEL_SCALE_HTK)
    return 700.0 * (pow(10.0, m / 2595.0) - 1.0);
  return m < 15.0 ? m * (200.0 / 3.0) : 1000.0 * exp((m - 15.0) * log(6.4) / 27.0);
}

/* W[j][k] (step 5). */
static double
weight(const CudafftFeaturesConfig *c, unsigned j, long k)
{
  const double rate = c->sample_rate, nyquist = rate / 2.0;
  const double f_hi = c->f_max > 0.0 ? c->f_max : nyquist + c->f_max;
  const double lo = to_mel(c->mel_scale, c->f_min), hi = to_mel(c->mel_scale, f_hi);
  double p[3], h[3];
  for (int e = 0; e < 3; e++) {
    p[e] = lo + (double)(j + e) * (hi - lo) / (double)(c->n_mels + 1);
    h[e] = from_mel(c->mel_scale, p[e]);
  }
  const double fk = (double)k * rate / (double)c->fft_size;
  double w = 0.0;
  if (c->filters == CUDAFFT_MEL_FILTERS_HZ) {
    w = fmax(0.0, fmin((fk - h[0]) / (h[1] - h[0]), (h[2] - fk) / (h[2] - h[1])));
  } else if (c->filters == CUDAFFT_MEL_FILTERS_MEL) {
    const double q = to_mel(c->mel_scale, fk);
    if (q > p[0] && q <= p[1])
      w = (q - p[0]) / (p[1] - p[0]);
    else if (q > p[1] && q < p[2])
      w = (p[2] - q) / (p[2] - p[1]);
  } else {
    double b[3];
    for (int e = 0; e < 3; e++)
      b[e] = floor(((double)c->fft_size + 1.0) * h[e] / rate);
    if (k >= b[0] && k < b[1])
      w = ((double)k - b[0]) / (b[1] - b[0]);
    else if (k >= b[1] && k < b[2])
      w = (b[2] - (double)k) / (b[2] - b[1]);
  }
  if (c->mel_norm == CUDAFFT_MEL_NORM_SLANEY)
    w *= 2.0 / (h[2] - h[0]);
  return w;
}

static uint64_t
splitmix(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double
gauss(uint64_t seed, unsigned channel, uint64_t frame, uint64_t i)
{
  const uint64_t h = splitmix(seed ^ ((uint64_t)channel << 48) ^ (frame << 16) ^ i);
  const double u1 = (double)((h >> 40) + 1) / 16777216.0;
  const double u2 = (double)((h >> 16) & 0xffffff) / 16777216.0;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * pi * u2);
}

typedef struct {
  double *log_mel; /* frames x M: m (MEL) or l, before the unit's clamp */
  double *energy;  /* frames: e_log */
  long frames;
} Utterance;

/* Steps 2 to 7 for one channel's utterance y of n samples. */
static void
utterance(const CudafftFeaturesConfig *c, unsigned channel, const double *y, long n, Utterance *u)
{
  const Frames f = frames_of(c);
  const long rule = rule_frames(c, &f, n);
  u->frames = rule > (long)(c->drop_last != 0) ? rule - (c->drop_last != 0) : 0;
  const unsigned m = c->n_mels;
  u->log_mel = test_malloc((size_t)(u->frames ? u->frames : 1) * m * sizeof(double));
  u->energy = test_malloc((size_t)(u->frames ? u->frames : 1) * sizeof(double));
  double *in = fftw_malloc((size_t)f.n * sizeof(double));
  fftw_complex *out = fftw_malloc((size_t)(f.n / 2 + 1) * sizeof(fftw_complex));
  fftw_plan plan = fftw_plan_dft_r2c_1d((int)f.n, in, out, FFTW_ESTIMATE);
  double *x = test_malloc((size_t)f.len * sizeof(double));
  const long bins = f.n / 2 + 1;
  double window_energy = 0.0;
  for (long i = 0; i < f.len; i++)
    window_energy += window_at(c, f.len, i) * window_at(c, f.len, i);
  double *weights = test_malloc((size_t)m * (size_t)bins * sizeof(double));
  for (unsigned j = 0; j < m; j++)
    for (long k = 0; k < bins; k++)
      weights[j * bins + k] = weight(c, j, k);
  const double s = c->normalized == 1   ? 1.0 / (double)f.n
                   : c->normalized == 2 ? 1.0 / window_energy
                                        : 1.0;
  for (long fr = 0; fr < u->frames; fr++) {
    const long start = fr * f.hop - f.pad_in + f.offset;
    for (long i = 0; i < f.len; i++) {
      x[i] = padded(c, y, n, start + i);
      if (c->dither > 0.0f)
        x[i] += (double)c->dither * gauss(c->dither_seed, channel, (uint64_t)fr, (uint64_t)i);
    }
    if (c->remove_dc) {
      double mean = 0.0;
      for (long i = 0; i < f.len; i++)
        mean += x[i];
      mean /= (double)f.len;
      for (long i = 0; i < f.len; i++)
        x[i] -= mean;
    }
    double energy = 0.0;
    if (c->energy == CUDAFFT_FEATURES_ENERGY_RAW)
      for (long i = 0; i < f.len; i++)
        energy += x[i] * x[i];
    if (c->preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_FRAME) {
      for (long i = f.len - 1; i > 0; i--)
        x[i] -= c->preemph_coeff * x[i - 1];
      x[0] -= c->preemph_coeff * x[0];
    }
    memset(in, 0, (size_t)f.n * sizeof(double));
    for (long i = 0; i < f.len; i++)
      in[i] = x[i] * window_at(c, f.len, i);
    if (c->energy == CUDAFFT_FEATURES_ENERGY_WINDOWED)
      for (long i = 0; i < f.len; i++)
        energy += in[i] * in[i];
    fftw_execute(plan);
    double *v = test_malloc((size_t)bins * sizeof(double));
    for (long k = 0; k < bins; k++) {
      const double power = (out[k][0] * out[k][0] + out[k][1] * out[k][1]) * s;
      v[k] = c->power == 1 ? sqrt(power) : power;
      if (c->energy == CUDAFFT_FEATURES_ENERGY_SPECTRUM)
        energy += v[k];
    }
    for (unsigned j = 0; j < m; j++) {
      double mel = 0.0;
      for (long k = 0; k < bins; k++)
        mel += weights[j * bins + k] * v[k];
      double l = mel;
      const double e = c->log_floor;
      if (c->kind != CUDAFFT_FEATURES_MEL) {
        switch (c->log) {
        case CUDAFFT_FEATURES_LOG10:
          l = log10(mel < e ? e : mel);
          break;
        case CUDAFFT_FEATURES_LN_ADD:
          l = log(mel + e);
          break;
        case CUDAFFT_FEATURES_LN_GUARD:
          l = log(mel < e ? e : mel);
          break;
        default:
          l = 10.0 * log10(mel < e ? e : mel) - 10.0 * log10(e > c->db_ref ? e : c->db_ref);
        }
      }
      u->log_mel[fr * m + j] = l;
    }
    free(v);
    double e_log = c->log == CUDAFFT_FEATURES_LN_ADD
                       ? log(energy + c->log_floor)
                       : log(energy < c->log_floor ? c->log_floor : energy);
    if (c->energy_floor > 0.0f && e_log < log((double)c->energy_floor))
      e_log = log((double)c->energy_floor);
    u->energy[fr] = e_log;
  }
  free(x);
  free(weights);
  fftw_destroy_plan(plan);
  fftw_free(in);
  fftw_free(out);
}

static size_t
base_count(const CudafftFeaturesConfig *c)
{
  if (c->kind == CUDAFFT_FEATURES_MFCC)
    return c->n_mfcc;
  return c->n_mels + (c->kind == CUDAFFT_FEATURES_LOG_MEL && c->energy);
}

/* Steps 6 (the clamp), 8 and 9 for frame fr of an utterance, with floor lo. */
static void
base_vector(const CudafftFeaturesConfig *c, const Utterance *u, long fr, double lo, double *b)
{
  const unsigned m = c->n_mels;
  const double *lm = u->log_mel + fr * m;
  const int energy = c->energy != CUDAFFT_FEATURES_ENERGY_NONE;
  double l[CUDAFFT_FEATURES_MAX_MELS];
  for (unsigned j = 0; j < m; j++)
    l[j] = ((lm[j] < lo ? lo : lm[j]) + c->shift) * c->scale;
  if (c->kind == CUDAFFT_FEATURES_MEL) {
    memcpy(b, lm, m * sizeof *b);
  } else if (c->kind == CUDAFFT_FEATURES_LOG_MEL) {
    if (energy)
      *b++ = u->energy[fr];
    memcpy(b, l, m * sizeof *b);
  } else {
    for (unsigned q = 0; q < c->n_mfcc; q++) {
      double sum = 0.0;
      for (unsigned j = 0; j < m; j++)
        sum += sqrt((q == 0 ? 1.0 : 2.0) / m) * cos(pi * q * (j + 0.5) / m) * l[j];
      const double k = c->lifter;
      if (k > 0.0)
        sum *= 1.0 +
               k / 2.0 *
                   sin(pi *
                       (double)(c->lifter_kind == CUDAFFT_FEATURES_LIFTER_LIBROSA ? q + 1 : q) / k);
      b[q] = sum;
    }
    if (energy)
      b[0] = u->energy[fr];
  }
}

/* The polynomial of degree `order` fitted (least squares) to y[0 .. width - 1] at x = 0 ..
 * width - 1, its derivative of order `order` (a constant: order! a[order]). */
static double
fitted_derivative(const double *y, int width, unsigned order)
{
  double g[3][4] = {{0}};
  const int dim = (int)order + 1;
  for (int i = 0; i < width; i++) {
    const double p[3] = {1.0, (double)i, (double)i * i};
    for (int a = 0; a < dim; a++) {
      for (int b = 0; b < dim; b++)
        g[a][b] += p[a] * p[b];
      g[a][dim] += p[a] * y[i];
    }
  }
  for (int col = 0; col < dim; col++) /* Gaussian elimination */
    for (int row = col + 1; row < dim; row++) {
      const double f = g[row][col] / g[col][col];
      for (int k = col; k <= dim; k++)
        g[row][k] -= f * g[col][k];
    }
  double a[3];
  for (int row = dim - 1; row >= 0; row--) {
    double sum = g[row][dim];
    for (int k = row + 1; k < dim; k++)
      sum -= g[row][k] * a[k];
    a[row] = sum / g[row][row];
  }
  return order == 2 ? 2.0 * a[2] : a[1];
}

/* The features of frames e0 .. e1 - 1 of a unit (a window's frames; FRAMES: the utterance), each
 * frame's clamp from per_frame or the unit's maximum, into out[(fr - e0) * D + i]. */
static void
unit_features(const CudafftFeaturesConfig *c, const Utterance *u, long e0, long e1, int per_frame,
              double *out)
{
  const size_t base = base_count(c), d = base * (1 + c->delta_order);
  const long frames = e1 - e0;
  double *b = test_malloc((size_t)(frames ? frames : 1) * base * sizeof(double));
  const int ranged = c->kind != CUDAFFT_FEATURES_MEL && c->range > 0.0f;
  double unit_max = -INFINITY;
  for (long fr = e0; fr < e1; fr++)
    for (unsigned j = 0; j < c->n_mels; j++)
      if (isfinite(u->log_mel[fr * c->n_mels + j]) && u->log_mel[fr * c->n_mels + j] > unit_max)
        unit_max = u->log_mel[fr * c->n_mels + j];
  for (long fr = e0; fr < e1; fr++) {
    double max = unit_max;
    if (per_frame) {
      max = -INFINITY;
      for (unsigned j = 0; j < c->n_mels; j++)
        if (isfinite(u->log_mel[fr * c->n_mels + j]) && u->log_mel[fr * c->n_mels + j] > max)
          max = u->log_mel[fr * c->n_mels + j];
    }
    base_vector(c, u, fr, ranged ? max - c->range : -INFINITY, b + (fr - e0) * base);
  }
  const int r = c->delta_order ? (int)(c->delta_width - 1) / 2 : 0;
  double norm = 0.0;
  for (int k = 1; k <= r; k++)
    norm += 2.0 * k * k;
  double *d1 = test_malloc((size_t)(frames ? frames : 1) * base * sizeof(double));
  for (long t = 0; t < frames; t++)
    for (size_t i = 0; i < base; i++) {
      out[t * d + i] = b[t * base + i];
      if (c->delta_order == 0)
        continue;
      if (c->delta_style == CUDAFFT_FEATURES_DELTAS_REGRESSION) {
        double sum = 0.0;
        for (int k = 1; k <= r; k++) {
          const long up = t + k < frames ? t + k : frames - 1, down = t - k > 0 ? t - k : 0;
          sum += k * (b[up * base + i] - b[down * base + i]);
        }
        d1[t * base + i] = sum / norm;
      }
    }
  for (long t = 0; t < frames && c->delta_order; t++)
    for (size_t i = 0; i < base; i++)
      for (unsigned order = 1; order <= c->delta_order; order++) {
        double value;
        if (c->delta_style == CUDAFFT_FEATURES_DELTAS_REGRESSION) {
          if (order == 1) {
            value = d1[t * base + i];
          } else {
            double sum = 0.0;
            for (int k = 1; k <= r; k++) {
              const long up = t + k < frames ? t + k : frames - 1, down = t - k > 0 ? t - k : 0;
              sum += k * (d1[up * base + i] - d1[down * base + i]);
            }
            value = sum / norm;
          }
        } else if (frames < 2 * r + 1) {
          value = 0.0;
        } else {
          long first = t - r < 0 ? 0 : t - r;
          first = first > frames - (2 * r + 1) ? frames - (2 * r + 1) : first;
          double y[CUDAFFT_FEATURES_MAX_DELTA_WIDTH];
          for (int k = 0; k < 2 * r + 1; k++)
            y[k] = b[(first + k) * base + i];
          /* the fitted polynomial's derivative, constant for order 1 and 2 */
          value = fitted_derivative(y, 2 * r + 1, order);
        }
        out[t * d + order * base + i] = value;
      }
  free(b);
  free(d1);
}

void
features_model(FeaturesModel *model, const CudafftFeaturesConfig *c, const void *raw,
               size_t samples)
{
  memset(model, 0, sizeof *model);
  const unsigned channels = c->channels;
  const size_t base = base_count(c), d = base * (1 + c->delta_order);
  const long chunk = c->output == CUDAFFT_FEATURES_OUTPUT_CHUNKS ? (long)c->chunk_samples : 0;
  const long utterances = chunk ? ((long)samples + chunk - 1) / chunk : 1;
  const long per_utt = chunk ? chunk : (long)samples;
  /* frames per output unit */
  const Frames fr = frames_of(c);
  long t_frames = 1;
  if (c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS)
    t_frames = (long)c->window_frames;
  else if (chunk) {
    const long rule = rule_frames(c, &fr, chunk);
    t_frames = rule - (c->drop_last != 0);
  }
  model->values = channels * (size_t)t_frames * d;
  size_t capacity = 64;
  model->data = test_malloc(capacity * model->values * sizeof(double));
  model->frames = test_malloc(capacity * sizeof(size_t));
  double *y = test_malloc((size_t)(per_utt ? per_utt : 1) * sizeof(double));
  for (long k = 0; k < utterances; k++) {
    Utterance u[CUDAFFT_MAX_CHANNELS];
    const long length = chunk ? chunk : (long)samples;
    for (unsigned ch = 0; ch < channels; ch++) {
      double previous = 0.0;
      for (long i = 0; i < length; i++) {
        const long at = k * per_utt + i;
        const double x = at < (long)samples
                             ? test_sample_value(c->format, raw, (size_t)at * channels + ch,
                                                 TEST_READ_POW2 | TEST_READ_F64_AS_FLOAT) *
                                   (double)c->sample_scale
                             : 0.0;
        y[i] = c->preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL && i > 0
                   ? x - c->preemph_coeff * previous
                   : x;
        previous = x;
      }
      utterance(c, ch, y, length, &u[ch]);
    }
    const long frames = u[0].frames;
    long units = 1;
    if (c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES)
      units = frames;
    else if (c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS) {
      const long stride = (long)c->window_stride;
      units = frames < t_frames ? 0 : (frames - t_frames) / stride + 1;
      if (c->pad_partial && units * stride < frames)
        units++;
    }
    if (model->outputs + (size_t)units > capacity) {
      capacity = 2 * (model->outputs + (size_t)units);
      model->data = realloc(model->data, capacity * model->values * sizeof(double));
      model->frames = realloc(model->frames, capacity * sizeof(size_t));
      if (!model->data || !model->frames)
        test_abort("out of memory for the model");
    }
    if (c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES) {
      double *all = test_malloc((size_t)(frames ? frames : 1) * d * sizeof(double));
      for (unsigned ch = 0; ch < channels; ch++) {
        unit_features(c, &u[ch], 0, frames, 1, all);
        for (long t = 0; t < frames; t++)
          memcpy(model->data + (model->outputs + (size_t)t) * model->values + ch * d, all + t * d,
                 d * sizeof(double));
      }
      for (long t = 0; t < frames; t++)
        model->frames[model->outputs + (size_t)t] = 1;
      free(all);
    } else {
      double *unit = test_malloc((size_t)t_frames * d * sizeof(double));
      for (long w = 0; w < units; w++) {
        const long e0 =
            c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS ? w * (long)c->window_stride : 0;
        const long e1 = e0 + t_frames < frames ? e0 + t_frames : frames;
        double *dst = model->data + (model->outputs + (size_t)w) * model->values;
        model->frames[model->outputs + (size_t)w] = (size_t)(e1 - e0);
        for (unsigned ch = 0; ch < channels; ch++) {
          unit_features(c, &u[ch], e0, e1, 0, unit);
          for (long t = 0; t < t_frames; t++)
            for (size_t i = 0; i < d; i++) {
              const double value = t < e1 - e0 ? unit[t * d + i] : c->pad_value;
              const size_t at = c->layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR
                                    ? i * (size_t)t_frames + (size_t)t
                                    : (size_t)t * d + i;
              dst[ch * (size_t)t_frames * d + at] = value;
            }
        }
      }
      free(unit);
    }
    model->outputs += (size_t)units;
    for (unsigned ch = 0; ch < channels; ch++) {
      free(u[ch].log_mel);
      free(u[ch].energy);
    }
  }
  free(y);
}

void
features_model_clear(FeaturesModel *model)
{
  free(model->data);
  free(model->frames);
  memset(model, 0, sizeof *model);
}
