/* spectrum_reference.c: see spectrum_reference.h. */
#include "spectrum_reference.h"
#include "test_harness.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_SECOND UINT64_C(1000000000)
/* e = ERROR_RMS x the relative error x the rms of the FFT's magnitudes, or of the channels' where
 * the mix cancels (spectrum_reference.h). */
#define ERROR_RMS 10.0
/* Radians from +-pi where a float phase may come out with the other sign. */
#define PHASE_WRAP_MARGIN 1e-3

static const double pi = 3.14159265358979323846;

struct SpectrumRef {
  unsigned channels, rate;
  SpectrumRefSettings settings, pending;
  int has_pending;
  SpectrumRefErrorFn error_fn;
  size_t nfft, rows;
  uint64_t frames_per_interval, error_per_interval, accumulated_error;
  size_t frames_todo, num_frames, num_fft;
  size_t first, total; /* the open interval's first frame; frames since the start or reset */
  double *history;     /* the last nfft frames, a ring of nfft x channels values */
  size_t input_pos;    /* the ring's oldest frame, where the next one goes */
  double *window, *input;
  fftw_complex *bins;
  fftw_plan plan;
  double rel_error;
  /* The open interval, rows x bands each: sums of the clamped levels (level, lo, hi) and of the
   * phases, the extremes of the unclamped levels, the largest e / |X|, whether a phase came near
   * +-pi. At an emit, level, lo, hi and phase hold means. */
  double *level, *lo, *hi, *phase, *min_level, *max_level, *phase_error;
  unsigned char *wrap;
};

static void *
zeroed(size_t count, size_t size)
{
  void *p = calloc(count + 1, size);
  if (!p)
    test_abort("spectrum reference: no memory for %zu values", count);
  return p;
}

/* spectrum's frames_per_interval = uint64_scale (interval, rate, GST_SECOND), exactly in 128
 * bits, and its error_per_interval; at least one frame per interval (set_interval in spectrum.c).
 */
static void
set_interval(SpectrumRef *r)
{
  const unsigned __int128 product = (unsigned __int128)r->settings.interval_ns * r->rate;
  const unsigned __int128 frames = product / NS_PER_SECOND;
  r->frames_per_interval = frames > SIZE_MAX ? SIZE_MAX : (uint64_t)frames;
  if (r->frames_per_interval == 0)
    r->frames_per_interval = 1;
  r->error_per_interval = (uint64_t)(product % NS_PER_SECOND);
  r->accumulated_error = 0;
  r->frames_todo = (size_t)r->frames_per_interval;
}

static void
clear_sums(SpectrumRef *r)
{
  const size_t count = r->rows * r->settings.bands;
  for (size_t i = 0; i < count; i++) {
    r->level[i] = r->lo[i] = r->hi[i] = r->phase[i] = r->phase_error[i] = 0.0;
    r->max_level[i] = -INFINITY;
    r->min_level[i] = INFINITY;
    r->wrap[i] = 0;
  }
}

static void
free_sums(SpectrumRef *r)
{
  free(r->level);
  free(r->lo);
  free(r->hi);
  free(r->phase);
  free(r->min_level);
  free(r->max_level);
  free(r->phase_error);
  free(r->wrap);
}

static void
alloc_sums(SpectrumRef *r)
{
  free_sums(r);
  const size_t count = r->rows * r->settings.bands;
  r->level = zeroed(count, sizeof(double));
  r->lo = zeroed(count, sizeof(double));
  r->hi = zeroed(count, sizeof(double));
  r->phase = zeroed(count, sizeof(double));
  r->min_level = zeroed(count, sizeof(double));
  r->max_level = zeroed(count, sizeof(double));
  r->phase_error = zeroed(count, sizeof(double));
  r->wrap = zeroed(count, 1);
  clear_sums(r);
}

static void
free_transform(SpectrumRef *r)
{
  if (r->plan)
    fftw_destroy_plan(r->plan);
  fftw_free(r->input);
  fftw_free(r->bins);
  free(r->window);
  r->plan = NULL;
}

/* A transform of nfft points; the history keeps its most recent frames (zeros before them). */
static void
set_nfft(SpectrumRef *r, size_t nfft)
{
  const size_t old = r->nfft, ch = r->channels;
  double *history = zeroed(nfft * ch, sizeof(double));
  const size_t keep = old < nfft ? old : nfft;
  for (size_t i = 0; i < keep; i++) {
    const size_t from = (r->input_pos + old - keep + i) % old;
    memcpy(history + (nfft - keep + i) * ch, r->history + from * ch, ch * sizeof(double));
  }
  free(r->history);
  r->history = history;
  r->input_pos = 0;
  free_transform(r);
  r->nfft = nfft;
  r->window = zeroed(nfft, sizeof(double));
  r->input = fftw_malloc(nfft * sizeof(double));
  r->bins = fftw_malloc((nfft / 2 + 1) * sizeof(fftw_complex));
  if (!r->input || !r->bins)
    test_abort("spectrum reference: no memory for %zu points", nfft);
  r->plan = fftw_plan_dft_r2c_1d((int)nfft, r->input, r->bins, FFTW_ESTIMATE);
  if (!r->plan)
    test_abort("spectrum reference: FFTW cannot plan %zu points", nfft);
  for (size_t i = 0; i < nfft; i++)
    r->window[i] = 0.53836 - 0.46164 * cos(2.0 * pi * (double)i / (double)nfft);
  r->rel_error = r->error_fn ? r->error_fn(nfft) : 0.0;
}

static void
apply(SpectrumRef *r, const SpectrumRefSettings *settings, int first_time)
{
  const SpectrumRefSettings old = r->settings;
  r->settings = *settings;
  if (first_time || settings->bands != old.bands)
    set_nfft(r, 2 * settings->bands - 2);
  if (first_time || settings->bands != old.bands || settings->multi_channel != old.multi_channel) {
    r->rows = settings->multi_channel ? r->channels : 1;
    alloc_sums(r);
  }
  if (first_time || settings->interval_ns != old.interval_ns)
    set_interval(r);
}

static void
apply_pending(SpectrumRef *r)
{
  if (!r->has_pending)
    return;
  r->has_pending = 0;
  apply(r, &r->pending, 0);
}

static void
restart(SpectrumRef *r)
{
  r->accumulated_error = 0;
  r->frames_todo = (size_t)r->frames_per_interval;
  r->num_frames = 0;
  r->num_fft = 0;
  r->first = r->total;
  clear_sums(r);
}

SpectrumRef *
spectrum_ref_new(unsigned channels, unsigned rate, const SpectrumRefSettings *settings,
                 SpectrumRefErrorFn error)
{
  SpectrumRef *r = zeroed(1, sizeof *r);
  r->channels = channels;
  r->rate = rate;
  r->error_fn = error;
  apply(r, settings, 1);
  restart(r);
  return r;
}

void
spectrum_ref_free(SpectrumRef *r)
{
  if (!r)
    return;
  free_transform(r);
  free_sums(r);
  free(r->history);
  free(r);
}

/* gst_spectrum_run_fft for row s: the nfft most recent frames, oldest first. A window holding a
 * NaN or Inf gives NaN in every band, as the header specifies. */
static void
run_fft(SpectrumRef *r, size_t s)
{
  const size_t nfft = r->nfft, bands = r->settings.bands, ch = r->channels;
  int finite = 1;
  /* The windowed samples' energy with each sample taken as the mean of its channels' magnitudes:
   * a float mix rounds relative to the channels, not to their mean, which can be far smaller
   * where channels cancel (four channels near +-0.5 mixing to 1e-3). */
  double magnitude_energy = 0.0;
  for (size_t i = 0; i < nfft; i++) {
    const double *frame = r->history + (r->input_pos + i) % nfft * ch;
    double x, magnitude;
    if (r->settings.multi_channel) {
      x = frame[s];
      magnitude = fabs(x);
    } else {
      x = magnitude = 0.0;
      for (size_t c = 0; c < ch; c++) {
        x += frame[c];
        magnitude += fabs(frame[c]);
      }
      x /= (double)ch;
      magnitude /= (double)ch;
    }
    finite &= isfinite(x) != 0;
    r->input[i] = x * r->window[i];
    magnitude_energy += (magnitude * r->window[i]) * (magnitude * r->window[i]);
  }
  if (finite)
    fftw_execute(r->plan);
  const int threshold = r->settings.threshold;
  const double nfft_d = (double)nfft;
  double energy = 0.0;
  for (size_t k = 0; finite && k < bands; k++)
    energy += r->bins[k][0] * r->bins[k][0] + r->bins[k][1] * r->bins[k][1];
  /* The bands' rms is about the windowed samples' L2 norm (Parseval); the channels' magnitudes
   * bound the mix's rounding where that norm is the smaller. */
  const double scale = sqrt(fmax(energy / (double)bands, magnitude_energy));
  const double e = ERROR_RMS * r->rel_error * scale;
  for (size_t k = 0; k < bands; k++) {
    const size_t at = s * bands + k;
    if (!finite) {
      r->level[at] = r->lo[at] = r->hi[at] = r->phase[at] = NAN;
      continue;
    }
    const double re = r->bins[k][0], im = r->bins[k][1], m = hypot(re, im);
    const double level = 20.0 * log10(m / nfft_d);
    const double lo = m > e ? 20.0 * log10((m - e) / nfft_d) : -INFINITY;
    const double hi = 20.0 * log10((m + e) / nfft_d);
    r->level[at] += level < threshold ? threshold : level;
    r->lo[at] += lo < threshold ? threshold : lo;
    r->hi[at] += hi < threshold ? threshold : hi;
    r->max_level[at] = level > r->max_level[at] ? level : r->max_level[at];
    r->min_level[at] = level < r->min_level[at] ? level : r->min_level[at];
    const double phase = atan2(im, re), error = m > 0.0 ? e / m : INFINITY;
    r->phase[at] += phase;
    r->phase_error[at] = error > r->phase_error[at] ? error : r->phase_error[at];
    r->wrap[at] |= fabs(fabs(phase) - pi) < PHASE_WRAP_MARGIN;
  }
}

static void
run_ffts(SpectrumRef *r)
{
  for (size_t s = 0; s < r->rows; s++)
    run_fft(r, s);
  r->num_fft++;
}

/* Hands the closed interval's means to emit and starts the next interval's sums. */
static void
emit_interval(SpectrumRef *r, int partial, SpectrumRefEmit emit, void *context)
{
  const size_t count = r->rows * r->settings.bands;
  for (size_t i = 0; i < count; i++) {
    r->level[i] /= (double)r->num_fft;
    r->lo[i] /= (double)r->num_fft;
    r->hi[i] /= (double)r->num_fft;
    r->phase[i] /= (double)r->num_fft;
  }
  const SpectrumRefInterval interval = {
      .settings = r->settings,
      .first = r->first,
      .frames = r->num_frames,
      .ffts = r->num_fft,
      .partial = partial,
      .rows = (unsigned)r->rows,
      .bands = r->settings.bands,
      .level = r->level,
      .lo = r->lo,
      .hi = r->hi,
      .phase = r->phase,
      .min_level = r->min_level,
      .max_level = r->max_level,
      .phase_error = r->phase_error,
      .wrap = r->wrap,
  };
  emit(context, &interval);
  clear_sums(r);
}

static size_t
min_size(size_t a, size_t b)
{
  return a < b ? a : b;
}

/* transform_ip's loop. */
void
spectrum_ref_push(SpectrumRef *r, const double *values, size_t frames, SpectrumRefEmit emit,
                  void *context)
{
  const size_t ch = r->channels;
  while (frames > 0) {
    const size_t nfft = r->nfft;
    const size_t fft_todo = nfft - r->num_frames % nfft;
    const size_t msg_todo = r->frames_todo - r->num_frames;
    const size_t block = min_size(min_size(msg_todo, frames), fft_todo);
    for (size_t j = 0; j < block; j++)
      memcpy(r->history + (r->input_pos + j) % nfft * ch, values + j * ch, ch * sizeof(double));
    values += block * ch;
    frames -= block;
    r->input_pos = (r->input_pos + block) % nfft;
    r->num_frames += block;
    r->total += block;
    const int full = r->num_frames == r->frames_todo;
    if (r->num_frames % nfft == 0 || (full && r->num_fft == 0))
      run_ffts(r);
    if (full) {
      r->frames_todo = (size_t)r->frames_per_interval;
      if (r->accumulated_error >= NS_PER_SECOND) {
        r->accumulated_error -= NS_PER_SECOND;
        r->frames_todo++;
      }
      r->accumulated_error += r->error_per_interval;
      emit_interval(r, 0, emit, context);
      r->num_frames = 0;
      r->num_fft = 0;
      r->first = r->total;
      apply_pending(r);
    }
  }
}

void
spectrum_ref_finish(SpectrumRef *r, SpectrumRefEmit emit, void *context)
{
  if (r->num_frames > 0) {
    if (r->num_fft == 0)
      run_ffts(r);
    emit_interval(r, 1, emit, context);
  }
  apply_pending(r);
  restart(r);
}

void
spectrum_ref_reset(SpectrumRef *r)
{
  memset(r->history, 0, r->nfft * r->channels * sizeof(double));
  r->input_pos = 0;
  r->total = 0;
  apply_pending(r);
  restart(r);
}

void
spectrum_ref_set_settings(SpectrumRef *r, const SpectrumRefSettings *settings)
{
  r->pending = *settings;
  r->has_pending = 1;
  if (r->num_frames == 0)
    apply_pending(r);
}

size_t
spectrum_ref_frames_pending(const SpectrumRef *r)
{
  return r->num_frames;
}

size_t
spectrum_ref_frames_left(const SpectrumRef *r)
{
  return r->frames_todo - r->num_frames;
}
