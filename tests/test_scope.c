/* test_scope.c: the spectrum scope (cudafft/scope.h) on one backend against the double-precision
 * model of scope_reference.h: every pixel of every frame, for both styles, every frequency scale
 * and weighting, lanes and the mixed lane, every sample format and pixel layout, frames that bring
 * no samples, fewer than half an FFT and several FFTs' worth, FFT sizes with fused kernels and
 * without (even, odd, below 256, the largest odd one, which an sm_90 GPU's shared memory cannot
 * hold), option changes while running and resets; tones in the row and column the scale's formula
 * puts them, at the level the header's normalisation promises; and the statuses of invalid calls.
 * Argument: cpu or cuda. */
#include "scope_reference.h"
#include "test_signal.h"
#include "test_util.h"

#include <cudafft/scope.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;
static CudafftBackend backend;

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
/* Pixels may differ from the model by one rounding step: the model is double precision, the scope
 * float (cudafft/scope.h: every pixel is a continuous function of the levels). */
#define PIXEL_TOLERANCE 1
/* The byte row padding is poisoned with, which no render may touch. */
#define PAD_BYTE 0xa5

static CudafftScopeOptions
default_options(void)
{
  const CudafftScopeOptions o = {
      .style = CUDAFFT_SCOPE_SPECTROGRAM,
      .multi_channel = 1,
      .scale = CUDAFFT_SCALE_LOG,
      .bands_per_octave = 3,
      .min_frequency = 0.0,
      .max_frequency = 0.0,
      .weighting = CUDAFFT_WEIGHTING_Z,
      .db_min = -90.0f,
      .db_max = 0.0f,
      .colormap = CUDAFFT_COLORMAP_VIRIDIS,
      .smoothing_ms = 0.0f,
      .peak_hold_ms = 500.0f,
      .peak_decay_db_per_s = 20.0f,
  };
  return o;
}

static CudafftScopeConfig
make_config(unsigned channels, unsigned rate, CudafftSampleFormat format, size_t fft_size,
            unsigned width, unsigned height, CudafftPixelFormat pixels, size_t max_frames,
            const CudafftScopeOptions *options)
{
  const size_t bpp = cudafft_scope_pixel_bytes(pixels);
  const CudafftScopeConfig c = {
      .channels = channels,
      .rate = rate,
      .format = format,
      .fft_size = fft_size,
      .max_frames = max_frames,
      .width = width,
      .height = height,
      .pixels = pixels,
      .stride = (width * bpp + 3) / 4 * 4 + 8, /* padding to check that it stays untouched */
      .frame_seconds = 1.0 / 60.0,
      .options = *options,
  };
  return c;
}

/* Noise of amplitude `noise` plus, in each channel, a tone at its own frequency. */
static void
make_signal(TestSignal *s, const char *label, CudafftSampleFormat format, unsigned channels,
            unsigned rate, size_t frames, double noise, double amplitude, double base_hz)
{
  TestRng rng = test_rng("%s", label);
  test_signal_alloc(s, format, channels, rate, frames, TEST_READ_POW2 | TEST_READ_F64_AS_FLOAT);
  for (unsigned c = 0; c < channels; c++) {
    const double f = base_hz * (1.0 + 0.37 * c), phase = test_rng_uniform(&rng) * pi;
    for (size_t j = 0; j < frames; j++) {
      const double x = amplitude * sin(2.0 * pi * f * (double)j / rate + phase) +
                       noise * test_rng_uniform53(&rng);
      test_signal_set(s, j, c, x);
    }
  }
}

typedef struct {
  CudafftScope *scope;
  ScopeRef *ref;
  CudafftScopeConfig config;
  uint8_t *got, *want;
  size_t bytes;
} Pair;

static int
pair_open(Pair *p, const CudafftScopeConfig *config, const char *what)
{
  memset(p, 0, sizeof *p);
  p->config = *config;
  const CudafftStatus status = cudafft_scope_create(&p->scope, backend, -1, config);
  if (!test_check(status == CUDAFFT_STATUS_OK && cudafft_scope_get_backend(p->scope) == backend,
                  "%s: create (%s: %s)", what, cudafft_status_name(status),
                  cudafft_last_error_message()))
    return 0;
  p->ref = scope_ref_new(config);
  if (!p->ref)
    test_abort("%s: the model rejects the options", what);
  p->bytes = config->stride * config->height;
  p->got = test_malloc(p->bytes);
  p->want = test_malloc(p->bytes);
  return 1;
}

static void
pair_close(Pair *p)
{
  cudafft_scope_destroy(p->scope);
  scope_ref_free(p->ref);
  free(p->got);
  free(p->want);
  memset(p, 0, sizeof *p);
}

/* Renders one frame on both and compares every pixel (and that the padding stayed). Returns the
 * largest difference, or 1000 for a failed call or touched padding; *where says where. */
static int
pair_frame(Pair *p, const TestSignal *s, size_t first, size_t frames, char *where, size_t size)
{
  const CudafftScopeConfig *c = &p->config;
  memset(p->got, PAD_BYTE, p->bytes);
  memset(p->want, PAD_BYTE, p->bytes);
  const size_t fb = test_signal_frame_bytes(s);
  const CudafftStatus status =
      cudafft_scope_render(p->scope, frames ? s->raw + first * fb : NULL, frames, p->got);
  if (status != CUDAFFT_STATUS_OK) {
    snprintf(where, size, "render: %s (%s)", cudafft_status_name(status),
             cudafft_last_error_message());
    return 1000;
  }
  scope_ref_render(p->ref, s->values + first * c->channels, frames, p->want);
  const size_t bpp = cudafft_scope_pixel_bytes(c->pixels), row = c->width * bpp;
  int worst = 0;
  for (unsigned y = 0; y < c->height; y++) {
    for (size_t i = 0; i < c->stride; i++) {
      const size_t at = (size_t)y * c->stride + i;
      if (i >= row) {
        if (p->got[at] != PAD_BYTE) {
          snprintf(where, size, "row %u: padding byte %zu written", y, i - row);
          return 1000;
        }
        continue;
      }
      const int d = abs((int)p->got[at] - (int)p->want[at]);
      if (d > worst) {
        worst = d;
        snprintf(where, size, "pixel (%zu, %u) byte %zu: %d, model %d", i / bpp, y, i % bpp,
                 p->got[at], p->want[at]);
      }
    }
  }
  return worst;
}

/* Frames of the given sizes (cycled), every pixel compared; one reported check. */
static void
run_frames(Pair *p, const TestSignal *s, const size_t *sizes, size_t n_sizes, unsigned frames,
           const char *what)
{
  size_t at = 0;
  int worst = 0;
  char where[256] = "";
  for (unsigned f = 0; f < frames; f++) {
    size_t count = sizes[f % n_sizes];
    if (at + count > s->frames)
      count = 0;
    char here[200];
    const int d = pair_frame(p, s, at, count, here, sizeof here);
    if (d > worst) {
      worst = d;
      snprintf(where, sizeof where, "frame %u: %s", f, here);
    }
    at += count;
    if (worst > PIXEL_TOLERANCE)
      break;
  }
  test_check(worst <= PIXEL_TOLERANCE, "%s: %u frames, every pixel within %d of the model%s%s",
             what, frames, PIXEL_TOLERANCE, worst ? "; largest: " : "", where);
}

/* Styles, scales, weightings, lanes, formats, pixel layouts ------------------------------------ */

static const struct {
  CudafftScopeStyle style;
  CudafftFrequencyScale scale;
  CudafftWeighting weighting;
  int multi;
  unsigned channels, width, height;
  CudafftSampleFormat format;
  CudafftPixelFormat pixels;
  size_t fft_size;
  CudafftColormap colormap;
  float smoothing_ms;
} layouts[] = {
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_Z, 1, 2, 96, 64,
     CUDAFFT_SAMPLE_S16, CUDAFFT_PIXELS_BGRX, 4096, CUDAFFT_COLORMAP_VIRIDIS, 0.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_A, 1, 3, 80, 61,
     CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_RGB, 1024, CUDAFFT_COLORMAP_MAGMA, 50.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_C, 0, 4, 64, 48,
     CUDAFFT_SAMPLE_S24, CUDAFFT_PIXELS_XRGB, 2048, CUDAFFT_COLORMAP_GREY, 0.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_Z, 1, 1, 70, 50,
     CUDAFFT_SAMPLE_F64, CUDAFFT_PIXELS_XBGR, 8192, CUDAFFT_COLORMAP_VIRIDIS, 125.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_A, 1, 2, 120, 80, CUDAFFT_SAMPLE_S32,
     CUDAFFT_PIXELS_RGBX, 4096, CUDAFFT_COLORMAP_MAGMA, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_C, 1, 3, 101, 90,
     CUDAFFT_SAMPLE_S16, CUDAFFT_PIXELS_BGR, 2048, CUDAFFT_COLORMAP_VIRIDIS, 30.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_Z, 0, 2, 77, 33,
     CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGRX, 512, CUDAFFT_COLORMAP_GREY, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_Z, 1, 1, 64, 64, CUDAFFT_SAMPLE_F32,
     CUDAFFT_PIXELS_XRGB, 256, CUDAFFT_COLORMAP_VIRIDIS, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_Z, 1, 2, 200, 60,
     CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_RGBX, 16384, CUDAFFT_COLORMAP_MAGMA, 0.0f},
    /* sizes without a fused kernel: even ones (a real split of n / 2 points), odd ones (n complex
     * points, no Nyquist bin), powers of two below 256, the largest */
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_A, 1, 2, 96, 64,
     CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGRX, 400, CUDAFFT_COLORMAP_VIRIDIS, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_C, 1, 2, 101, 90,
     CUDAFFT_SAMPLE_S16, CUDAFFT_PIXELS_RGBX, 1125, CUDAFFT_COLORMAP_MAGMA, 30.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_Z, 0, 3, 64, 48,
     CUDAFFT_SAMPLE_S24, CUDAFFT_PIXELS_XBGR, 3000, CUDAFFT_COLORMAP_GREY, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_Z, 1, 1, 77, 33,
     CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGR, 16, CUDAFFT_COLORMAP_VIRIDIS, 0.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_Z, 1, 1, 70, 50,
     CUDAFFT_SAMPLE_F64, CUDAFFT_PIXELS_RGB, 375, CUDAFFT_COLORMAP_VIRIDIS, 0.0f},
    {CUDAFFT_SCOPE_BARS, CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_A, 0, 2, 60, 40, CUDAFFT_SAMPLE_F32,
     CUDAFFT_PIXELS_RGBX, 15360, CUDAFFT_COLORMAP_MAGMA, 0.0f},
    {CUDAFFT_SCOPE_SPECTROGRAM, CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_Z, 1, 2, 50, 60,
     CUDAFFT_SAMPLE_F32, CUDAFFT_PIXELS_BGRX, 128, CUDAFFT_COLORMAP_GREY, 0.0f},
};

static void
test_layouts(void)
{
  /* 0 samples, under half an FFT, one frame at 60 fps, several FFTs' worth (K > 1) */
  static const size_t sizes[] = {800, 0, 37, 800, 5000, 801, 1, 12000};
  for (size_t i = 0; i < COUNT(layouts); i++) {
    CudafftScopeOptions o = default_options();
    o.style = layouts[i].style;
    o.scale = layouts[i].scale;
    o.weighting = layouts[i].weighting;
    o.multi_channel = layouts[i].multi;
    o.colormap = layouts[i].colormap;
    o.smoothing_ms = layouts[i].smoothing_ms;
    o.bands_per_octave = i % 2 ? 3 : 6;
    o.db_min = -70.0f;
    const CudafftScopeConfig config =
        make_config(layouts[i].channels, 48000, layouts[i].format, layouts[i].fft_size,
                    layouts[i].width, layouts[i].height, layouts[i].pixels, 12000, &o);
    char what[160];
    snprintf(what, sizeof what, "%s %s %s %s, %u channels %s, %s, %zu points",
             o.style ? "bars" : "spectrogram",
             (const char *[]){"linear", "log", "mel", "octave"}[o.scale],
             (const char *[]){"Z", "A", "C"}[o.weighting], test_format_name(config.format),
             config.channels, o.multi_channel ? "in lanes" : "mixed",
             (const char *[]){"RGBx", "BGRx", "xRGB", "xBGR", "RGB", "BGR"}[config.pixels],
             config.fft_size);
    TestSignal s;
    make_signal(&s, what, config.format, config.channels, config.rate, 60000, 0.05, 0.5, 700.0);
    Pair p;
    if (pair_open(&p, &config, what))
      run_frames(&p, &s, sizes, COUNT(sizes), 40, what);
    pair_close(&p);
    test_signal_clear(&s);
  }
  test_section_done("layouts");
}

/* Option changes, silence, bursts, resets ------------------------------------------------------ */

static void
test_changes(void)
{
  CudafftScopeOptions o = default_options();
  o.style = CUDAFFT_SCOPE_BARS;
  o.peak_hold_ms = 100.0f;
  o.peak_decay_db_per_s = 60.0f;
  const CudafftScopeConfig config =
      make_config(2, 44100, CUDAFFT_SAMPLE_F32, 2048, 90, 70, CUDAFFT_PIXELS_BGRX, 4000, &o);
  TestSignal s;
  make_signal(&s, "changes", config.format, 2, config.rate, 200000, 0.02, 0.7, 300.0);
  /* a burst, then silence: the peaks hold, then fall */
  for (size_t j = 20000; j < 60000; j++)
    for (unsigned c = 0; c < 2; c++)
      test_signal_set(&s, j, c, j < 25000 ? 0.9 * sin(2.0 * pi * 2000.0 * j / 44100.0) : 0.0);
  Pair p;
  if (!pair_open(&p, &config, "changes")) {
    test_signal_clear(&s);
    return;
  }
  static const size_t sizes[] = {735};
  run_frames(&p, &s, sizes, 1, 30, "bars: a burst, silence, peaks held and falling");

  CudafftScopeOptions next = o;
  next.db_min = -50.0f;
  next.db_max = -5.0f;
  next.colormap = CUDAFFT_COLORMAP_GREY;
  next.smoothing_ms = 200.0f;
  next.peak_decay_db_per_s = 5.0f;
  test_check(cudafft_scope_set_options(p.scope, &next) == CUDAFFT_STATUS_OK,
             "set_options: colours, smoothing, decay");
  scope_ref_set_options(p.ref, &next);
  run_frames(&p, &s, sizes, 1, 10, "after a change of colours, smoothing and decay");

  next.style = CUDAFFT_SCOPE_SPECTROGRAM;
  next.scale = CUDAFFT_SCALE_OCTAVE;
  next.bands_per_octave = 12;
  next.multi_channel = 0;
  test_check(cudafft_scope_set_options(p.scope, &next) == CUDAFFT_STATUS_OK,
             "set_options: style, scale, lanes");
  scope_ref_set_options(p.ref, &next);
  run_frames(&p, &s, sizes, 1, 12, "after a change of style, scale and lanes");

  /* two changes before a frame: the last counts, from the next frame */
  next.style = CUDAFFT_SCOPE_BARS;
  test_check(cudafft_scope_set_options(p.scope, &next) == CUDAFFT_STATUS_OK, "set_options: bars");
  scope_ref_set_options(p.ref, &next);
  next.weighting = CUDAFFT_WEIGHTING_A;
  next.min_frequency = 100.0;
  next.max_frequency = 8000.0;
  test_check(cudafft_scope_set_options(p.scope, &next) == CUDAFFT_STATUS_OK,
             "set_options: weighting and range");
  scope_ref_set_options(p.ref, &next);
  run_frames(&p, &s, sizes, 1, 8, "after two changes between frames");

  /* a refused change leaves everything as it was */
  CudafftScopeOptions bad = next;
  bad.min_frequency = 30000.0; /* above the Nyquist frequency */
  test_check(cudafft_scope_set_options(p.scope, &bad) == CUDAFFT_STATUS_INVALID_VALUE,
             "set_options: a range above the Nyquist frequency is refused (%s)",
             cudafft_last_error_message());
  run_frames(&p, &s, sizes, 1, 4, "after a refused change");

  test_check(cudafft_scope_reset(p.scope) == CUDAFFT_STATUS_OK, "reset");
  scope_ref_reset(p.ref);
  run_frames(&p, &s, sizes, 1, 8, "after a reset");
  pair_close(&p);
  test_signal_clear(&s);
  test_section_done("changes");
}

/* Tones in the expected row, column and level ---------------------------------------------- */

/* The grey value (0..255) of a pixel of a 4-byte frame. */
static int
grey_at(const uint8_t *pixels, size_t stride, unsigned x, unsigned y)
{
  return pixels[(size_t)y * stride + (size_t)x * 4];
}

/* The centre of band i of n on a scale from lo to hi, by the scale's formula. */
static double
centre_by_formula(CudafftFrequencyScale scale, double lo, double hi, unsigned n, unsigned i)
{
  const double f = (double)i / (n - 1);
  if (scale == CUDAFFT_SCALE_LOG)
    return lo * pow(hi / lo, f);
  if (scale == CUDAFFT_SCALE_MEL) {
    const double m_lo = 2595.0 * log10(1.0 + lo / 700.0), m_hi = 2595.0 * log10(1.0 + hi / 700.0);
    return 700.0 * (pow(10.0, (m_lo + f * (m_hi - m_lo)) / 2595.0) - 1.0);
  }
  return lo + f * (hi - lo);
}

/* Tones on the bin nearest a band's centre (fractions of the way up the axis), with bands at
 * least two bins wide there, so that the tone's strongest bin lies inside its band: the brightest
 * row of the newest spectrogram column and the tallest bar must be the band the scale's formula
 * puts the tone in. */
static void
test_tone_rows_and_columns(void)
{
  static const CudafftFrequencyScale scales[] = {CUDAFFT_SCALE_LINEAR, CUDAFFT_SCALE_LOG,
                                                 CUDAFFT_SCALE_MEL, CUDAFFT_SCALE_OCTAVE};
  static const double fractions[] = {0.2, 0.5, 0.85};
  const double rate = 48000.0, n_fft = 16384.0, d = rate / n_fft, lo = 50.0, hi = 20000.0;
  const unsigned w = 160, h = 60, frame = 800;
  for (size_t si = 0; si < COUNT(scales); si++)
    for (int bars = 0; bars < 2; bars++)
      for (size_t fi = 0; fi < COUNT(fractions); fi++) {
        const CudafftFrequencyScale scale = scales[si];
        const char *name = (const char *[]){"linear", "log", "mel", "octave"}[scale];
        /* bands: one per row or column; octave: IEC 61260-1 1/3-octave bands x0 .. x0 + n - 1 */
        const int x0 = (int)ceil(10.0 * log10(lo / 1000.0));
        const int x1 = (int)floor(10.0 * log10(hi / 1000.0));
        const unsigned n = scale == CUDAFFT_SCALE_OCTAVE ? (unsigned)(x1 - x0 + 1) : bars ? w : h;
        const unsigned target = (unsigned)floor(fractions[fi] * (n - 1) + 0.5);
        const double centre = scale == CUDAFFT_SCALE_OCTAVE
                                  ? 1000.0 * pow(10.0, (x0 + (int)target) / 10.0)
                                  : centre_by_formula(scale, lo, hi, n, target);
        const double hz = floor(centre / d + 0.5) * d;
        unsigned band;
        if (scale == CUDAFFT_SCALE_OCTAVE) {
          band = (unsigned)((int)floor(10.0 * log10(hz / 1000.0) + 0.5) - x0);
        } else {
          double s_lo = lo, s_hi = hi, s_f = hz;
          if (scale == CUDAFFT_SCALE_LOG) {
            s_lo = log(lo);
            s_hi = log(hi);
            s_f = log(hz);
          } else if (scale == CUDAFFT_SCALE_MEL) {
            s_lo = 2595.0 * log10(1.0 + lo / 700.0);
            s_hi = 2595.0 * log10(1.0 + hi / 700.0);
            s_f = 2595.0 * log10(1.0 + hz / 700.0);
          }
          band = (unsigned)floor((s_f - s_lo) / (s_hi - s_lo) * (n - 1) + 0.5);
        }

        CudafftScopeOptions o = default_options();
        o.style = bars ? CUDAFFT_SCOPE_BARS : CUDAFFT_SCOPE_SPECTROGRAM;
        o.scale = scale;
        o.colormap = CUDAFFT_COLORMAP_GREY;
        o.min_frequency = lo;
        o.max_frequency = hi;
        o.db_min = -100.0f;
        const CudafftScopeConfig config =
            make_config(1, (unsigned)rate, CUDAFFT_SAMPLE_F32, (size_t)n_fft, w, h,
                        CUDAFFT_PIXELS_RGBX, frame, &o);
        TestSignal s;
        test_signal_alloc(&s, CUDAFFT_SAMPLE_F32, 1, (unsigned)rate, 25 * frame, TEST_READ_POW2);
        for (size_t j = 0; j < s.frames; j++)
          test_signal_set(&s, j, 0, 0.5 * sin(2.0 * pi * hz * j / rate));
        CudafftScope *scope = NULL;
        uint8_t *pixels = test_malloc(config.stride * h);
        if (cudafft_scope_create(&scope, backend, -1, &config) != CUDAFFT_STATUS_OK) {
          test_check(0, "tone: create: %s", cudafft_last_error_message());
          free(pixels);
          test_signal_clear(&s);
          continue;
        }
        for (unsigned f = 0; f < 25; f++)
          cudafft_scope_render(scope, s.raw + (size_t)f * frame * 4, frame, pixels);
        test_check(cudafft_scope_bands(scope, NULL) == n, "%s scale: %u bands (%zu)", name, n,
                   cudafft_scope_bands(scope, NULL));
        unsigned best = 0;
        long best_value = -1;
        if (bars) {
          for (unsigned x = 0; x < w; x++) {
            long sum = 0;
            for (unsigned y = 0; y < h; y++)
              sum += grey_at(pixels, config.stride, x, y);
            if (sum > best_value) {
              best_value = sum;
              best = x;
            }
          }
          const unsigned first = scale == CUDAFFT_SCALE_OCTAVE ? band * w / n : band;
          const unsigned last = scale == CUDAFFT_SCALE_OCTAVE ? (band + 1) * w / n - 1 : band;
          test_check(best >= first && best <= last,
                     "bars, %s scale: a %.2f Hz tone tops column %u (formula: band %u, columns "
                     "%u to %u)",
                     name, hz, best, band, first, last);
        } else {
          for (unsigned y = 0; y < h; y++) {
            const int v = grey_at(pixels, config.stride, w - 1, y);
            if (v > best_value) {
              best_value = v;
              best = y;
            }
          }
          const unsigned row = h - 1 - best; /* from the bottom */
          const unsigned shown =
              scale == CUDAFFT_SCALE_OCTAVE ? (unsigned)((2ull * row + 1) * n / (2ull * h)) : row;
          test_check(shown == band,
                     "spectrogram, %s scale: a %.2f Hz tone brightest in row %u from the bottom, "
                     "band %u (formula: band %u of %u)",
                     name, hz, row, shown, band, n);
        }
        cudafft_scope_destroy(scope);
        free(pixels);
        test_signal_clear(&s);
      }
  test_section_done("tone rows and columns");
}

/* The level of a tone in a band wide enough to hold its main lobe: 20 log10(A) + W(f), read from a
 * grey spectrogram whose range is 5.1 dB around it (0.02 dB a grey step). */
static void
test_tone_levels(void)
{
  static const struct {
    CudafftFrequencyScale scale;
    CudafftWeighting weighting;
    unsigned rows, bands_per_octave;
    double hz, amplitude;
    size_t n;
  } cases[] = {
      {CUDAFFT_SCALE_LINEAR, CUDAFFT_WEIGHTING_Z, 24, 3, 3000.0, 0.5, 16384},
      {CUDAFFT_SCALE_LOG, CUDAFFT_WEIGHTING_Z, 32, 3, 1000.0, 0.25, 16384},
      {CUDAFFT_SCALE_MEL, CUDAFFT_WEIGHTING_Z, 32, 3, 1500.0, 0.9, 16384},
      {CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_Z, 60, 3, 1000.0, 0.1, 16384},
      {CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_A, 60, 1, 500.0, 0.5, 16384},
      {CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_C, 60, 1, 63.0, 0.5, 16384},
      {CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_A, 60, 1, 8000.0, 0.5, 16384},
      /* sizes without a fused kernel, odd and even: octaves hold the main lobe of their bins */
      {CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_Z, 60, 1, 1000.0, 0.5, 1125},
      {CUDAFFT_SCALE_OCTAVE, CUDAFFT_WEIGHTING_A, 60, 1, 4000.0, 0.3, 400},
  };
  for (size_t i = 0; i < COUNT(cases); i++) {
    const double rate = 48000.0, n = (double)cases[i].n;
    /* the tone on a bin centre, in the middle of its band */
    CudafftBandLayout layout = {cases[i].scale, cases[i].rows, cases[i].bands_per_octave, 0.0, 0.0};
    cudafft_band_layout_resolve(&layout, rate);
    const size_t count = cudafft_band_count(&layout);
    double *centre = test_malloc(count * sizeof *centre);
    cudafft_band_edges(&layout, NULL, centre, NULL);
    size_t band = 0;
    for (size_t b = 1; b < count; b++)
      if (fabs(log(centre[b] / cases[i].hz)) < fabs(log(centre[band] / cases[i].hz)))
        band = b;
    const double hz = floor(centre[band] / (rate / n) + 0.5) * (rate / n);
    const double want =
        20.0 * log10(cases[i].amplitude) + cudafft_weighting_db(cases[i].weighting, hz);
    free(centre);

    CudafftScopeOptions o = default_options();
    o.scale = cases[i].scale;
    o.weighting = cases[i].weighting;
    o.bands_per_octave = cases[i].bands_per_octave;
    o.colormap = CUDAFFT_COLORMAP_GREY;
    o.db_min = (float)(want - 2.55);
    o.db_max = (float)(want + 2.55);
    const unsigned w = 8;
    const CudafftScopeConfig config = make_config(1, (unsigned)rate, CUDAFFT_SAMPLE_F64, (size_t)n,
                                                  w, cases[i].rows, CUDAFFT_PIXELS_RGBX, 800, &o);
    TestSignal s;
    test_signal_alloc(&s, CUDAFFT_SAMPLE_F64, 1, (unsigned)rate, 24000, TEST_READ_POW2);
    for (size_t j = 0; j < s.frames; j++)
      test_signal_set(&s, j, 0, cases[i].amplitude * sin(2.0 * pi * hz * j / rate + 0.3));
    CudafftScope *scope = NULL;
    uint8_t *pixels = test_malloc(config.stride * config.height);
    if (cudafft_scope_create(&scope, backend, -1, &config) != CUDAFFT_STATUS_OK) {
      test_check(0, "level: create: %s", cudafft_last_error_message());
      free(pixels);
      test_signal_clear(&s);
      continue;
    }
    for (int f = 0; f < 30; f++)
      cudafft_scope_render(scope, s.raw + (size_t)f * 800 * 8, 800, pixels);
    const unsigned h = config.height;
    unsigned row = h - 1 - (unsigned)band;
    if (o.scale == CUDAFFT_SCALE_OCTAVE) /* the band's top row */
      for (row = 0; row < h; row++)
        if ((unsigned)((2ull * (h - 1 - row) + 1) * count / (2ull * h)) == band)
          break;
    const int v = grey_at(pixels, config.stride, w - 1, row);
    const double got = o.db_min + v / 255.0 * (o.db_max - o.db_min);
    test_check(v > 0 && v < 255 && fabs(got - want) <= 0.05,
               "%s scale, %s weighting, %zu points: a sine of amplitude %.2f at %.2f Hz reads "
               "%.3f dB, expected 20 log10 A + W(f) = %.3f dB (within 0.05)",
               (const char *[]){"linear", "log", "mel", "octave"}[o.scale],
               (const char *[]){"Z", "A", "C"}[o.weighting], cases[i].n, cases[i].amplitude, hz,
               got, want);
    cudafft_scope_destroy(scope);
    free(pixels);
    test_signal_clear(&s);
  }
  test_section_done("tone levels");
}

/* The largest odd size: 15625 complex points in one block's shared memory (259 KB) on the CUDA
 * backend, more than an sm_90 GPU's 227 KB. The CPU backend, and a GPU that holds it, draw it as
 * the model does; a GPU that does not refuses it with UNSUPPORTED, naming the nearest sizes that
 * fit, which it takes. */
static void
test_size_past_shared_memory(void)
{
  CudafftScopeOptions o = default_options();
  o.style = CUDAFFT_SCOPE_BARS;
  const CudafftScopeConfig config =
      make_config(1, 48000, CUDAFFT_SAMPLE_F32, 15625, 64, 40, CUDAFFT_PIXELS_RGBX, 2000, &o);
  CudafftScope *scope = NULL;
  const CudafftStatus status = cudafft_scope_create(&scope, backend, -1, &config);
  cudafft_scope_destroy(scope);
  if (status != CUDAFFT_STATUS_OK && backend == CUDAFFT_BACKEND_CUDA) {
    const char *text = strstr(cudafft_last_error_message(), "the nearest sizes that fit are ");
    unsigned below = 0, above = 0;
    const int named =
        text && sscanf(text, "the nearest sizes that fit are %u and %u", &below, &above) == 2;
    test_check(status == CUDAFFT_STATUS_UNSUPPORTED && named && below < 15625 && above > 15625,
               "15625 points: UNSUPPORTED where shared memory cannot hold them, naming the nearest "
               "sizes that fit (%s: %s)",
               cudafft_status_name(status), cudafft_last_error_message());
    const size_t sizes[] = {below, above};
    for (size_t i = 0; named && i < COUNT(sizes); i++) {
      CudafftScopeConfig c = config;
      c.fft_size = sizes[i];
      test_check(cudafft_scope_create(&scope, backend, -1, &c) == CUDAFFT_STATUS_OK,
                 "%zu points, named as fitting, are taken (%s)", sizes[i],
                 cudafft_last_error_message());
      cudafft_scope_destroy(scope);
    }
    test_section_done("a size past shared memory");
    return;
  }
  TestSignal s;
  make_signal(&s, "15625 points", config.format, 1, config.rate, 40000, 0.05, 0.5, 900.0);
  static const size_t sizes[] = {800, 2000, 0, 37};
  Pair p;
  if (pair_open(&p, &config, "15625 points"))
    run_frames(&p, &s, sizes, COUNT(sizes), 12, "bars, 15625 points");
  pair_close(&p);
  test_signal_clear(&s);
  test_section_done("a size past shared memory");
}

/* Invalid calls -------------------------------------------------------------------------------- */

static void
test_errors(void)
{
  const CudafftScopeOptions o = default_options();
  const CudafftScopeConfig good =
      make_config(2, 48000, CUDAFFT_SAMPLE_F32, 4096, 64, 48, CUDAFFT_PIXELS_BGRX, 800, &o);
  static const struct {
    const char *what;
    CudafftStatus want;
  } cases[] = {
      {"fft_size 1001 (a prime factor above 7)", CUDAFFT_STATUS_INVALID_SIZE},
      {"fft_size 32768", CUDAFFT_STATUS_INVALID_SIZE},
      {"0 channels", CUDAFFT_STATUS_INVALID_VALUE},
      {"1025 channels", CUDAFFT_STATUS_INVALID_VALUE},
      {"rate 0", CUDAFFT_STATUS_INVALID_VALUE},
      {"width 0", CUDAFFT_STATUS_INVALID_SIZE},
      {"height 20000", CUDAFFT_STATUS_INVALID_SIZE},
      {"stride too small", CUDAFFT_STATUS_INVALID_VALUE},
      {"stride not a multiple of 4 for 4-byte pixels", CUDAFFT_STATUS_INVALID_VALUE},
      {"max_frames 0", CUDAFFT_STATUS_INVALID_VALUE},
      {"frame_seconds 0", CUDAFFT_STATUS_INVALID_VALUE},
      {"5 bands per octave", CUDAFFT_STATUS_INVALID_VALUE},
      {"db_min = db_max", CUDAFFT_STATUS_INVALID_VALUE},
      {"NaN smoothing", CUDAFFT_STATUS_INVALID_VALUE},
      {"negative peak hold", CUDAFFT_STATUS_INVALID_VALUE},
      {"min above max frequency", CUDAFFT_STATUS_INVALID_VALUE},
      {"more lanes than rows", CUDAFFT_STATUS_INVALID_VALUE},
      {"unknown pixels", CUDAFFT_STATUS_INVALID_VALUE},
      {"unknown style", CUDAFFT_STATUS_INVALID_VALUE},
  };
  for (size_t i = 0; i < COUNT(cases); i++) {
    CudafftScopeConfig c = good;
    switch (i) {
    case 0:
      c.fft_size = 1001;
      break;
    case 1:
      c.fft_size = 32768;
      break;
    case 2:
      c.channels = 0;
      break;
    case 3:
      c.channels = 1025;
      break;
    case 4:
      c.rate = 0;
      break;
    case 5:
      c.width = 0;
      break;
    case 6:
      c.height = 20000;
      break;
    case 7:
      c.stride = 64 * 4 - 1;
      break;
    case 8:
      c.stride = 64 * 4 + 2;
      break;
    case 9:
      c.max_frames = 0;
      break;
    case 10:
      c.frame_seconds = 0.0;
      break;
    case 11:
      c.options.bands_per_octave = 5;
      break;
    case 12:
      c.options.db_min = c.options.db_max;
      break;
    case 13:
      c.options.smoothing_ms = NAN;
      break;
    case 14:
      c.options.peak_hold_ms = -1.0f;
      break;
    case 15:
      c.options.min_frequency = 5000.0;
      c.options.max_frequency = 1000.0;
      break;
    case 16:
      c.channels = 60;
      break;
    case 17:
      c.pixels = CUDAFFT_PIXELS_COUNT_;
      break;
    default:
      c.options.style = CUDAFFT_SCOPE_STYLE_COUNT_;
      break;
    }
    CudafftScope *scope = (CudafftScope *)&c; /* must come back NULL */
    const CudafftStatus status = cudafft_scope_create(&scope, backend, -1, &c);
    test_check_create(status, scope, cases[i].want, cases[i].want, "cudafft_scope_create",
                      cases[i].what);
    cudafft_scope_destroy(scope);
  }
  CudafftScopeConfig odd = good;
  odd.fft_size = 1001;
  CudafftScope *scope = NULL;
  cudafft_scope_create(&scope, backend, -1, &odd);
  test_check(scope == NULL && strstr(cudafft_last_error_message(), "the nearest are 1000 and 1008"),
             "fft_size 1001: the message names the nearest sizes (%s)",
             cudafft_last_error_message());
  if (!test_check(cudafft_scope_create(&scope, backend, -1, &good) == CUDAFFT_STATUS_OK,
                  "create for the call checks"))
    return;
  uint8_t *pixels = test_malloc(good.stride * good.height);
  float samples[2 * 801] = {0};
  test_check(cudafft_scope_render(scope, samples, 801, pixels) == CUDAFFT_STATUS_INVALID_VALUE,
             "render: more frames than max_frames is refused");
  test_check(cudafft_scope_render(scope, NULL, 10, pixels) == CUDAFFT_STATUS_NULL_POINTER,
             "render: NULL input with frames is refused");
  test_check(cudafft_scope_render(scope, samples, 10, NULL) == CUDAFFT_STATUS_NULL_POINTER,
             "render: NULL pixels are refused");
  test_check(cudafft_scope_render(scope, NULL, 0, pixels) == CUDAFFT_STATUS_OK,
             "render: a frame without samples");
  CudafftScopeOptions bad = o;
  bad.colormap = CUDAFFT_COLORMAP_COUNT_;
  test_check(cudafft_scope_set_options(scope, &bad) == CUDAFFT_STATUS_INVALID_VALUE,
             "set_options: an unknown colormap is refused");
  test_check(cudafft_scope_set_options(NULL, &o) == CUDAFFT_STATUS_NULL_POINTER,
             "set_options: NULL scope");
  test_check(cudafft_scope_bands(scope, NULL) == 48 / 2, "bands: one per row of a lane");
  free(pixels);
  cudafft_scope_destroy(scope);
  cudafft_scope_destroy(NULL);
  test_section_done("errors");
}

int
main(int argc, char **argv)
{
  backend = test_begin(argc, argv);
  test_layouts();
  test_changes();
  test_tone_rows_and_columns();
  test_tone_levels();
  test_size_past_shared_memory();
  test_errors();
  return test_finish();
}
