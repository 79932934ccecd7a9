/* scope_reference.c: see the header. Everything is double precision and written from
 * cudafft/scope.h's text, not from the library's code. */
#include "scope_reference.h"

#include "scope_colormaps.h" /* the tables: data, not code */
#include "test_harness.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

struct ScopeRef {
  CudafftScopeConfig config;
  CudafftScopeOptions options, pending;
  int has_pending;

  /* history: every sample since the start or reset, per channel */
  double **history;
  size_t samples, capacity;

  size_t n, bins;
  double *window, norm;
  double *in;
  fftw_complex *out;
  fftw_plan plan;
  double *power; /* channels x ffts x bins */

  /* layout */
  unsigned lanes, lane_height, bands, hold, marker;
  CudafftBandBins *weights;
  float *gains;
  int *map; /* spectrogram: lane_height rows from the top; bars: width columns */

  /* state */
  uint64_t frame;
  double *smoothed, *level, *peak, *decayed, *held; /* held: hold x cells */
  double *columns;                                  /* rows x width */
};

static void
free_layout(ScopeRef *r)
{
  free(r->weights);
  free(r->gains);
  free(r->map);
  free(r->smoothed);
  free(r->level);
  free(r->peak);
  free(r->decayed);
  free(r->held);
  free(r->columns);
  r->weights = NULL;
  r->gains = NULL;
  r->map = NULL;
  r->smoothed = r->level = r->peak = r->decayed = r->held = r->columns = NULL;
}

static void *
xcalloc(size_t n, size_t size)
{
  void *p = calloc(n ? n : 1, size);
  if (!p)
    test_abort("scope reference: out of memory");
  return p;
}

static unsigned
hold_frames(const CudafftScopeConfig *c, const CudafftScopeOptions *o)
{
  double h = floor(o->peak_hold_ms / 1000.0 / c->frame_seconds + 0.5);
  if (h < 1.0)
    h = 1.0;
  return h > 1024.0 ? 1024u : (unsigned)h;
}

/* The layout of the options in use and a fresh display. 0 where the layout is invalid. */
static int
make_layout(ScopeRef *r)
{
  free_layout(r);
  const CudafftScopeConfig *c = &r->config;
  const CudafftScopeOptions *o = &r->options;
  r->lanes = o->multi_channel ? c->channels : 1;
  r->lane_height = c->height / r->lanes;
  const int spectrogram = o->style == CUDAFFT_SCOPE_SPECTROGRAM;
  CudafftBandLayout layout = {o->scale, spectrogram ? r->lane_height : c->width,
                              o->bands_per_octave, o->min_frequency, o->max_frequency};
  if (cudafft_band_layout_resolve(&layout, c->rate) != CUDAFFT_STATUS_OK)
    return 0;
  r->bands = (unsigned)cudafft_band_count(&layout);
  r->weights = xcalloc(r->bands, sizeof *r->weights);
  r->gains = xcalloc(r->bins, sizeof *r->gains);
  if (cudafft_band_bins(&layout, r->n, c->rate, r->weights) != CUDAFFT_STATUS_OK ||
      cudafft_weighting_gains(o->weighting, r->n, c->rate, r->gains) != CUDAFFT_STATUS_OK)
    return 0;
  const unsigned h = r->lane_height, w = c->width, n = r->bands;
  const int octave = o->scale == CUDAFFT_SCALE_OCTAVE;
  if (spectrogram) {
    r->map = xcalloc(h, sizeof *r->map);
    for (unsigned row = 0; row < h; row++) {
      const unsigned j = h - 1 - row;
      r->map[row] = octave ? (int)(((uint64_t)2 * j + 1) * n / (2 * (uint64_t)h)) : (int)j;
    }
  } else {
    r->map = xcalloc(w, sizeof *r->map);
    for (unsigned x = 0; x < w; x++) {
      if (!octave) {
        r->map[x] = (int)x;
        continue;
      }
      /* the band whose span floor(b W / N) .. floor((b + 1) W / N) - 1 holds x */
      int band = -1;
      for (unsigned b = 0; b < n; b++) {
        const uint64_t x0 = (uint64_t)b * w / n, x1 = ((uint64_t)b + 1) * w / n;
        if (x >= x0 && x < x1) {
          const uint64_t span = x1 - x0;
          band = x - x0 < span - span / 8 ? (int)b : -1;
          break;
        }
      }
      r->map[x] = band;
    }
  }
  r->hold = hold_frames(c, o);
  r->marker = h / 64 > 1 ? h / 64 : 1;
  const size_t cells = (size_t)r->lanes * n;
  r->smoothed = xcalloc(cells, sizeof(double));
  r->level = xcalloc(cells, sizeof(double));
  r->peak = xcalloc(cells, sizeof(double));
  r->decayed = xcalloc(cells, sizeof(double));
  r->held = xcalloc(cells * r->hold, sizeof(double));
  r->columns = xcalloc((size_t)r->lanes * h * w, sizeof(double));
  for (size_t i = 0; i < cells; i++)
    r->level[i] = r->peak[i] = r->decayed[i] = -300.0;
  for (size_t i = 0; i < cells * r->hold; i++)
    r->held[i] = -300.0;
  for (size_t i = 0; i < (size_t)r->lanes * h * w; i++)
    r->columns[i] = -300.0;
  r->frame = 0;
  return 1;
}

ScopeRef *
scope_ref_new(const CudafftScopeConfig *config)
{
  ScopeRef *r = xcalloc(1, sizeof *r);
  r->config = *config;
  r->options = config->options;
  r->n = config->fft_size;
  r->bins = r->n / 2 + 1;
  r->window = xcalloc(r->n, sizeof(double));
  double s2 = 0.0;
  for (size_t i = 0; i < r->n; i++) {
    r->window[i] = 0.5 - 0.5 * cos(2.0 * pi * (double)i / (double)r->n);
    s2 += r->window[i] * r->window[i];
  }
  r->norm = 4.0 / ((double)r->n * s2);
  r->in = fftw_malloc(r->n * sizeof(double));
  r->out = fftw_malloc(r->bins * sizeof(fftw_complex));
  if (!r->in || !r->out)
    test_abort("scope reference: out of memory");
  r->plan = fftw_plan_dft_r2c_1d((int)r->n, r->in, r->out, FFTW_ESTIMATE);
  r->power = xcalloc((size_t)config->channels * 64 * r->bins, sizeof(double));
  r->history = xcalloc(config->channels, sizeof(double *));
  if (!make_layout(r)) {
    scope_ref_free(r);
    return NULL;
  }
  return r;
}

void
scope_ref_free(ScopeRef *r)
{
  if (!r)
    return;
  free_layout(r);
  for (unsigned c = 0; c < r->config.channels; c++)
    free(r->history[c]);
  free(r->history);
  if (r->plan)
    fftw_destroy_plan(r->plan);
  fftw_free(r->in);
  fftw_free(r->out);
  free(r->window);
  free(r->power);
  free(r);
}

static int
same_layout(const ScopeRef *r, const CudafftScopeOptions *a, const CudafftScopeOptions *b)
{
  return a->style == b->style && !a->multi_channel == !b->multi_channel && a->scale == b->scale &&
         a->bands_per_octave == b->bands_per_octave && a->min_frequency == b->min_frequency &&
         a->max_frequency == b->max_frequency && a->weighting == b->weighting &&
         hold_frames(&r->config, a) == hold_frames(&r->config, b);
}

void
scope_ref_set_options(ScopeRef *r, const CudafftScopeOptions *options)
{
  /* compared with the latest options asked for, as the library does */
  const CudafftScopeOptions *latest = r->has_pending ? &r->pending : &r->options;
  const int fresh = !same_layout(r, latest, options) ||
                    (r->has_pending && !same_layout(r, &r->options, &r->pending));
  r->pending = *options;
  r->has_pending = fresh ? 2 : 1; /* 2: a new layout at the next frame */
}

void
scope_ref_reset(ScopeRef *r)
{
  r->samples = 0;
  if (r->has_pending == 2) {
    r->options = r->pending;
    r->has_pending = 0;
  }
  make_layout(r);
}

static double
sample(const ScopeRef *r, unsigned c, long long i)
{
  return i < 0 ? 0.0 : r->history[c][i];
}

static void
append(ScopeRef *r, const double *values, size_t frames)
{
  const unsigned channels = r->config.channels;
  if (r->samples + frames > r->capacity) {
    r->capacity = 2 * (r->samples + frames);
    for (unsigned c = 0; c < channels; c++) {
      r->history[c] = realloc(r->history[c], r->capacity * sizeof(double));
      if (!r->history[c])
        test_abort("scope reference: out of memory");
    }
  }
  for (size_t j = 0; j < frames; j++)
    for (unsigned c = 0; c < channels; c++)
      r->history[c][r->samples + j] = values[j * channels + c];
  r->samples += frames;
}

/* K (cudafft/scope.h) */
static unsigned
fft_count(size_t frames, size_t n)
{
  if (2 * frames <= n)
    return 1;
  const size_t k = (2 * frames + n - 1) / n;
  return k > 64 ? 64 : (unsigned)k;
}

static double
band_power(const ScopeRef *r, unsigned b, const double *power)
{
  const CudafftBandBins *w = &r->weights[b];
  double sum = 0.0;
  for (unsigned k = w->first; k <= w->last; k++) {
    const double a = k == w->first ? w->first_weight : k == w->last ? w->last_weight : 1.0;
    sum += a * r->gains[k] * power[k];
  }
  return sum;
}

static void
analyse(ScopeRef *r, size_t frames)
{
  const unsigned channels = r->config.channels, ffts = fft_count(frames, r->n);
  for (unsigned c = 0; c < channels; c++)
    for (unsigned j = 0; j < ffts; j++) {
      const long long end = (long long)r->samples - (long long)((size_t)j * frames / ffts);
      for (size_t i = 0; i < r->n; i++)
        r->in[i] = sample(r, c, end - (long long)r->n + (long long)i) * r->window[i];
      fftw_execute(r->plan);
      double *p = r->power + ((size_t)c * ffts + j) * r->bins;
      for (size_t k = 0; k < r->bins; k++) {
        const double v = (r->out[k][0] * r->out[k][0] + r->out[k][1] * r->out[k][1]) * r->norm;
        p[k] = isfinite(v) ? v : 0.0;
      }
    }
  const CudafftScopeOptions *o = &r->options;
  const double dt = r->config.frame_seconds;
  const double alpha = o->smoothing_ms > 0 ? 1.0 - exp(-dt / (o->smoothing_ms / 1000.0)) : 1.0;
  const double decay = o->peak_decay_db_per_s * dt;
  const unsigned per_lane = o->multi_channel ? 1 : channels;
  const size_t cells = (size_t)r->lanes * r->bands;
  const unsigned slot = (unsigned)(r->frame % r->hold);
  for (unsigned lane = 0; lane < r->lanes; lane++)
    for (unsigned b = 0; b < r->bands; b++) {
      const size_t cell = (size_t)lane * r->bands + b;
      double p = 0.0;
      for (unsigned s = 0; s < per_lane * ffts; s++)
        p += band_power(r, b, r->power + ((size_t)lane * per_lane * ffts + s) * r->bins);
      p /= per_lane * ffts;
      r->smoothed[cell] = alpha >= 1.0 ? p : r->smoothed[cell] + alpha * (p - r->smoothed[cell]);
      const double s = r->smoothed[cell];
      r->level[cell] = s > 1e-30 ? 10.0 * log10(s) : -300.0;
      /* peaks: the level that left the hold window starts to fall */
      double *window = r->held + cell;
      double d = fmax(r->decayed[cell], window[(size_t)slot * cells]) - decay;
      r->decayed[cell] = fmax(d, -300.0);
      window[(size_t)slot * cells] = r->level[cell];
      double peak = r->decayed[cell];
      for (unsigned i = 0; i < r->hold; i++)
        peak = fmax(peak, window[(size_t)i * cells]);
      r->peak[cell] = peak;
    }
}

static double
fraction(const ScopeRef *r, double level)
{
  const double t = (level - r->options.db_min) / (r->options.db_max - r->options.db_min);
  return t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
}

static void
colour(const ScopeRef *r, double t, double *rgb)
{
  const float *table = cudafft_scope_colormap_table(r->options.colormap);
  if (!table) {
    rgb[0] = rgb[1] = rgb[2] = t;
    return;
  }
  const double u = t * 255.0;
  int i = (int)floor(u);
  if (i > 254)
    i = 254;
  const double f = u - i;
  for (int c = 0; c < 3; c++)
    rgb[c] = table[3 * i + c] + (table[3 * i + 3 + c] - table[3 * i + c]) * f;
}

static void
store(const ScopeRef *r, uint8_t *p, const double *rgb)
{
  static const int offsets[CUDAFFT_PIXELS_COUNT_][4] = {
      {0, 1, 2, 3},  /* RGBx */
      {2, 1, 0, 3},  /* BGRx */
      {1, 2, 3, 0},  /* xRGB */
      {3, 2, 1, 0},  /* xBGR */
      {0, 1, 2, -1}, /* RGB */
      {2, 1, 0, -1}, /* BGR */
  };
  const int *o = offsets[r->config.pixels];
  for (int c = 0; c < 3; c++) {
    const double v = rgb[c] < 0.0 ? 0.0 : rgb[c] > 1.0 ? 1.0 : rgb[c];
    p[o[c]] = (uint8_t)floor(v * 255.0 + 0.5);
  }
  if (o[3] >= 0)
    p[o[3]] = 255;
}

static void
draw(ScopeRef *r, uint8_t *pixels)
{
  const CudafftScopeConfig *c = &r->config;
  const size_t bpp = cudafft_scope_pixel_bytes(c->pixels);
  const unsigned h = r->lane_height, rows = r->lanes * h, w = c->width;
  const double black[3] = {0.0, 0.0, 0.0};
  const unsigned column = (unsigned)(r->frame % w);
  if (r->options.style == CUDAFFT_SCOPE_SPECTROGRAM)
    for (unsigned y = 0; y < rows; y++)
      r->columns[(size_t)y * w + column] =
          r->level[(size_t)(y / h) * r->bands + (unsigned)r->map[y % h]];
  for (unsigned y = 0; y < c->height; y++)
    for (unsigned x = 0; x < w; x++) {
      uint8_t *p = pixels + (size_t)y * c->stride + x * bpp;
      double rgb[3];
      if (y >= rows) {
        store(r, p, black);
        continue;
      }
      const unsigned lane = y / h, row = h - 1 - y % h; /* from the bottom */
      if (r->options.style == CUDAFFT_SCOPE_SPECTROGRAM) {
        colour(r, fraction(r, r->columns[(size_t)y * w + (column + 1 + x) % w]), rgb);
        store(r, p, rgb);
        continue;
      }
      const int band = r->map[x];
      if (band < 0) {
        store(r, p, black);
        continue;
      }
      const size_t cell = (size_t)lane * r->bands + (unsigned)band;
      const double bar = fraction(r, r->level[cell]) * h, top = fraction(r, r->peak[cell]) * h;
      double base[3];
      colour(r, (row + 0.5) / h, base);
      const double cover = fmin(fmax(bar - row, 0.0), 1.0);
      const double mark =
          fmin(fmax(fmin(row + 1.0, top) - fmax((double)row, top - r->marker), 0.0), 1.0);
      for (int k = 0; k < 3; k++) {
        const double v = base[k] * cover;
        rgb[k] = v + (1.0 - v) * mark;
      }
      store(r, p, rgb);
    }
}

void
scope_ref_render(ScopeRef *r, const double *values, size_t frames, uint8_t *pixels)
{
  if (r->has_pending) {
    const int fresh = r->has_pending == 2;
    r->options = r->pending;
    r->has_pending = 0;
    if (fresh && !make_layout(r))
      test_abort("scope reference: the options' layout is invalid");
  }
  append(r, values, frames);
  analyse(r, frames);
  draw(r, pixels);
  r->frame++;
}

const double *
scope_ref_levels(const ScopeRef *r)
{
  return r->level;
}

const double *
scope_ref_peaks(const ScopeRef *r)
{
  return r->peak;
}

unsigned
scope_ref_lanes(const ScopeRef *r)
{
  return r->lanes;
}

unsigned
scope_ref_bands(const ScopeRef *r)
{
  return r->bands;
}

unsigned
scope_ref_lane_height(const ScopeRef *r)
{
  return r->lane_height;
}

int
scope_ref_band_of_row(const ScopeRef *r, unsigned row)
{
  return r->map[row];
}

int
scope_ref_band_of_column(const ScopeRef *r, unsigned x)
{
  return r->map[x];
}
