/* test_spectrum.c: the interval spectra of cudafft_spectrum.h against an independent model of
 * GStreamer's spectrum element in double precision: its own ring buffer and transform_ip loop
 * (frames_todo with the interval carry, FFTs after every nfft frames of an interval and at its end
 * when none ran), FFTW double for the transforms, levels clamped per FFT and averaged in double.
 * Every band of every result is compared, for all sample formats, channel layouts, power-of-two
 * and other FFT sizes, intervals shorter and longer than an FFT and with a carry, thresholds,
 * phase, with random input pushed in awkward pieces and early stops; also a known sine level,
 * finish, reset, options changed mid-stream, NaN and Inf confined to their FFT windows, and the
 * statuses of invalid calls. Argument: cpu or cuda. */
#include <cudafft/spectrum.h>
#include "fft_reference.h"
#include "test_util.h"

#include <fftw3.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

#define NS_PER_SECOND UINT64_C(1000000000)
#define MS UINT64_C(1000000)
#define ALL_RESULTS SIZE_MAX

/* dB. Ours is a float FFT of float samples, its level taken with log10f and averaged in float:
 * within 1e-3 dB of the reference for the bands near a row's typical level, so 0.01 dB leaves a
 * wide margin and still catches a wrong window, scale, sample conversion or misplaced FFT (all
 * cost far more). A band far below its row is resolved only to the float FFT's absolute error e
 * (rounding is relative to the whole row, not to the band): there the reference widens the
 * interval, FFT by FFT, to the levels of |X| - e and |X| + e, and LEVEL_TOLERANCE is added to
 * that. The real DC and Nyquist bands fall 70 dB below their row often enough to need it. */
#define LEVEL_TOLERANCE 0.01
/* e = DB_ERROR_RMS x the relative L2 error of the float result x the rms of the row's magnitudes:
 * the error spread over the bands, with room for the largest of a million. The relative error is
 * the FFT's (fft_tolerance) plus the samples' roundings before it: the conversion to float, the
 * channel mix, the window value and the windowing product, each 2^-24 at most. */
#define DB_ERROR_RMS 10.0
#define INPUT_ROUNDING (4.0 * 0x1p-24)
/* dB around the threshold where a level may be clamped in one implementation and not the other:
 * where every FFT's level is this far below the threshold, ours must be the threshold exactly. */
#define CLAMP_MARGIN 1.0
/* Radians. A phase is off by at most about e / |X|; phases are compared where that is below
 * PHASE_TOLERANCE / 10 in every FFT of the interval, every FFT's level is above the threshold, and
 * none is within PHASE_WRAP_MARGIN of +-pi, where a rounding flips the sign. */
#define PHASE_TOLERANCE 1e-3
#define PHASE_WRAP_MARGIN 1e-3
/* Two analysers of one backend given the same input agree to this (dB and rad): the sums are the
 * same, though a GPU may add them in another order. */
#define SAME_TOLERANCE 1e-4

static const char *const format_names[CUDAFFT_SAMPLE_COUNT_] = {"S16", "S24", "S32", "F32", "F64"};
static const size_t format_bytes[CUDAFFT_SAMPLE_COUNT_] = {2, 3, 4, 4, 8};

static size_t
min_size(size_t a, size_t b)
{
  return a < b ? a : b;
}

/* Signals -------------------------------------------------------------------------------------- */

/* Random frames at the given amplitude (a fraction of full scale), in the format's bytes. */
static uint8_t *
make_signal(CudafftSampleFormat format, unsigned channels, size_t frames, double amplitude)
{
  const size_t count = frames * channels, bytes = format_bytes[format];
  uint8_t *data = test_malloc(count * bytes);
  for (size_t i = 0; i < count; i++) {
    uint8_t *p = data + i * bytes;
    const double u = test_random_uniform() * amplitude;
    switch (format) {
    case CUDAFFT_SAMPLE_S16: {
      const int16_t v = (int16_t)lrint(u * 32767.0);
      memcpy(p, &v, 2);
      break;
    }
    case CUDAFFT_SAMPLE_S24: {
      const int32_t v = (int32_t)lrint(u * 8388607.0);
      p[0] = (uint8_t)(v & 0xff);
      p[1] = (uint8_t)((v >> 8) & 0xff);
      p[2] = (uint8_t)((v >> 16) & 0xff);
      break;
    }
    case CUDAFFT_SAMPLE_S32: {
      const int32_t v = (int32_t)llrint(u * 2147483647.0);
      memcpy(p, &v, 4);
      break;
    }
    case CUDAFFT_SAMPLE_F32: {
      const float v = (float)u;
      memcpy(p, &v, 4);
      break;
    }
    default: {
      /* more bits than a float holds, so that the rounding to float is exercised */
      const double v = u + amplitude * (double)(test_random_u64() >> 40) * 0x1p-50;
      memcpy(p, &v, 8);
      break;
    }
    }
  }
  return data;
}

static void
set_f32(uint8_t *data, unsigned channels, size_t frame, unsigned channel, float value)
{
  memcpy(data + (frame * channels + channel) * 4, &value, 4);
}

/* The header's scaling, restated in double. */
static double
ref_sample(CudafftSampleFormat format, const uint8_t *p)
{
  switch (format) {
  case CUDAFFT_SAMPLE_S16: {
    int16_t v;
    memcpy(&v, p, 2);
    return v / 32767.0;
  }
  case CUDAFFT_SAMPLE_S24: {
    int32_t v = p[0] | (p[1] << 8) | (p[2] << 16);
    if (v >= 0x800000)
      v -= 0x1000000;
    return v / 8388607.0;
  }
  case CUDAFFT_SAMPLE_S32: {
    int32_t v;
    memcpy(&v, p, 4);
    return v / 2147483647.0;
  }
  case CUDAFFT_SAMPLE_F32: {
    float v;
    memcpy(&v, p, 4);
    return v;
  }
  default: {
    double v;
    memcpy(&v, p, 8);
    return v;
  }
  }
}

/* The reference: spectrum's transform_ip in double -------------------------------------------- */

typedef struct Ref Ref;
typedef void (*RefEmit)(void *context, const Ref *ref);

struct Ref {
  CudafftSpectrumConfig config; /* config.options: the open interval's */
  CudafftSpectrumOptions pending;
  int has_pending;
  size_t nfft, bands, spectra, frame_bytes;
  uint64_t frames_per_interval, error_per_interval, accumulated_error;
  size_t frames_todo, num_frames, num_fft, input_pos;
  double *ring;   /* spectra rings of nfft samples */
  double *window; /* nfft */
  double *input;
  fftw_complex *bins;
  fftw_plan plan;
  double rel_error; /* of the float result: the FFT's and the samples' roundings */
  /* The open interval, spectra x bands each: sums of the clamped levels, of the clamped levels of
   * |X| - e and |X| + e (lo, hi) and of phases; the extremes of the unclamped levels; the largest
   * e / |X|; whether a phase came near +-pi. At an emit, level, lo, hi and phase hold means. */
  double *level, *lo, *hi, *phase, *max_level, *min_level, *phase_error;
  unsigned char *wrap;
};

/* spectrum's frames_per_interval = uint64_scale (interval, rate, GST_SECOND), exactly in 128 bits,
 * and its error_per_interval; at least one frame per interval (see set_interval in spectrum.c). */
static void
ref_set_interval(Ref *r, uint64_t interval_ns)
{
  const unsigned __int128 product = (unsigned __int128)interval_ns * r->config.rate;
  const unsigned __int128 frames = product / NS_PER_SECOND;
  r->frames_per_interval = frames > SIZE_MAX ? SIZE_MAX : (uint64_t)frames;
  if (r->frames_per_interval == 0)
    r->frames_per_interval = 1;
  r->error_per_interval = (uint64_t)(product % NS_PER_SECOND);
}

static void
ref_clear_sums(Ref *r)
{
  const size_t count = r->spectra * r->bands;
  for (size_t i = 0; i < count; i++) {
    r->level[i] = 0.0;
    r->lo[i] = 0.0;
    r->hi[i] = 0.0;
    r->phase[i] = 0.0;
    r->phase_error[i] = 0.0;
    r->max_level[i] = -INFINITY;
    r->min_level[i] = INFINITY;
    r->wrap[i] = 0;
  }
}

static void
ref_restart(Ref *r)
{
  r->accumulated_error = 0;
  r->frames_todo = (size_t)r->frames_per_interval;
  r->num_frames = 0;
  r->num_fft = 0;
  ref_clear_sums(r);
}

static void
ref_apply_pending(Ref *r)
{
  if (!r->has_pending)
    return;
  r->has_pending = 0;
  const int new_interval = r->pending.interval_ns != r->config.options.interval_ns;
  r->config.options = r->pending;
  if (new_interval) {
    ref_set_interval(r, r->config.options.interval_ns);
    r->accumulated_error = 0;
    r->frames_todo = (size_t)r->frames_per_interval;
  }
}

static void
ref_init(Ref *r, const CudafftSpectrumConfig *config)
{
  memset(r, 0, sizeof *r);
  r->config = *config;
  r->bands = config->bands;
  r->nfft = 2 * config->bands - 2;
  r->spectra = config->multi_channel ? config->channels : 1;
  r->frame_bytes = config->channels * format_bytes[config->format];
  r->ring = calloc(r->spectra * r->nfft, sizeof *r->ring);
  r->window = test_malloc(r->nfft * sizeof *r->window);
  r->input = fftw_malloc(r->nfft * sizeof *r->input);
  r->bins = fftw_malloc(r->bands * sizeof *r->bins);
  const size_t count = r->spectra * r->bands;
  r->level = test_malloc(count * sizeof *r->level);
  r->lo = test_malloc(count * sizeof *r->lo);
  r->hi = test_malloc(count * sizeof *r->hi);
  r->phase_error = test_malloc(count * sizeof *r->phase_error);
  r->phase = test_malloc(count * sizeof *r->phase);
  r->max_level = test_malloc(count * sizeof *r->max_level);
  r->min_level = test_malloc(count * sizeof *r->min_level);
  r->wrap = test_malloc(count);
  if (!r->ring || !r->input || !r->bins)
    test_abort("reference: no memory for %zu bands", r->bands);
  r->plan = fftw_plan_dft_r2c_1d((int)r->nfft, r->input, r->bins, FFTW_ESTIMATE);
  if (!r->plan)
    test_abort("reference: FFTW cannot plan %zu points", r->nfft);
  r->rel_error = fft_tolerance(r->nfft) + INPUT_ROUNDING;
  for (size_t i = 0; i < r->nfft; i++)
    r->window[i] = 0.53836 - 0.46164 * cos(2.0 * pi * (double)i / (double)r->nfft);
  ref_set_interval(r, config->options.interval_ns);
  ref_restart(r);
}

static void
ref_fini(Ref *r)
{
  fftw_destroy_plan(r->plan);
  fftw_free(r->input);
  fftw_free(r->bins);
  free(r->ring);
  free(r->window);
  free(r->level);
  free(r->lo);
  free(r->hi);
  free(r->phase_error);
  free(r->phase);
  free(r->max_level);
  free(r->min_level);
  free(r->wrap);
}

/* gst_spectrum_run_fft for signal s: the nfft most recent samples, oldest first. A window holding
 * a NaN or Inf gives NaN in every band, as the header specifies. */
static void
ref_fft(Ref *r, size_t s)
{
  const size_t nfft = r->nfft;
  const double *ring = r->ring + s * nfft;
  int finite = 1;
  for (size_t i = 0; i < nfft; i++) {
    const double x = ring[(r->input_pos + i) % nfft];
    finite &= isfinite(x) != 0;
    r->input[i] = x * r->window[i];
  }
  if (finite)
    fftw_execute(r->plan);
  const int threshold = r->config.options.threshold;
  const double nfft_d = (double)nfft;
  double energy = 0.0;
  for (size_t k = 0; finite && k < r->bands; k++)
    energy += r->bins[k][0] * r->bins[k][0] + r->bins[k][1] * r->bins[k][1];
  const double e = DB_ERROR_RMS * r->rel_error * sqrt(energy / (double)r->bands);
  for (size_t k = 0; k < r->bands; k++) {
    const size_t at = s * r->bands + k;
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
    if (r->config.options.phase) {
      const double phase = atan2(im, re), error = m > 0.0 ? e / m : INFINITY;
      r->phase[at] += phase;
      r->phase_error[at] = error > r->phase_error[at] ? error : r->phase_error[at];
      r->wrap[at] |= fabs(fabs(phase) - pi) < PHASE_WRAP_MARGIN;
    }
  }
}

/* Hands the closed interval's means to emit and starts the next interval's sums. */
static void
ref_emit(Ref *r, RefEmit emit, void *context)
{
  const size_t count = r->spectra * r->bands;
  for (size_t i = 0; i < count; i++) {
    r->level[i] /= (double)r->num_fft;
    r->lo[i] /= (double)r->num_fft;
    r->hi[i] /= (double)r->num_fft;
    r->phase[i] /= (double)r->num_fft;
  }
  emit(context, r);
  ref_clear_sums(r);
}

/* transform_ip's loop. */
static void
ref_push(Ref *r, const uint8_t *data, size_t frames, RefEmit emit, void *context)
{
  const size_t nfft = r->nfft;
  const unsigned channels = r->config.channels;
  const size_t sample_bytes = format_bytes[r->config.format];
  while (frames > 0) {
    const size_t fft_todo = nfft - r->num_frames % nfft;
    const size_t msg_todo = r->frames_todo - r->num_frames;
    const size_t block = min_size(min_size(msg_todo, frames), fft_todo);
    for (size_t s = 0; s < r->spectra; s++) {
      double *ring = r->ring + s * nfft;
      for (size_t j = 0; j < block; j++) {
        const uint8_t *frame = data + j * r->frame_bytes;
        double v;
        if (r->config.multi_channel) {
          v = ref_sample(r->config.format, frame + s * sample_bytes);
        } else {
          v = 0.0;
          for (unsigned c = 0; c < channels; c++)
            v += ref_sample(r->config.format, frame + c * sample_bytes);
          v /= channels;
        }
        ring[(r->input_pos + j) % nfft] = v;
      }
    }
    data += block * r->frame_bytes;
    frames -= block;
    r->input_pos = (r->input_pos + block) % nfft;
    r->num_frames += block;
    const int full = r->num_frames == r->frames_todo;
    if (r->num_frames % nfft == 0 || (full && r->num_fft == 0)) {
      for (size_t s = 0; s < r->spectra; s++)
        ref_fft(r, s);
      r->num_fft++;
    }
    if (full) {
      r->frames_todo = (size_t)r->frames_per_interval;
      if (r->accumulated_error >= NS_PER_SECOND) {
        r->accumulated_error -= NS_PER_SECOND;
        r->frames_todo++;
      }
      r->accumulated_error += r->error_per_interval;
      ref_emit(r, emit, context);
      r->num_frames = 0;
      r->num_fft = 0;
      ref_apply_pending(r);
    }
  }
}

/* The header's finish: the partial interval, with its one FFT if none ran; the framing restarts. */
static void
ref_finish(Ref *r, RefEmit emit, void *context)
{
  if (r->num_frames > 0) {
    if (r->num_fft == 0) {
      for (size_t s = 0; s < r->spectra; s++)
        ref_fft(r, s);
      r->num_fft = 1;
    }
    ref_emit(r, emit, context);
  }
  ref_apply_pending(r);
  ref_restart(r);
}

static void
ref_reset(Ref *r)
{
  memset(r->ring, 0, r->spectra * r->nfft * sizeof *r->ring);
  r->input_pos = 0;
  ref_apply_pending(r);
  ref_restart(r);
}

static void
ref_set_options(Ref *r, const CudafftSpectrumOptions *options)
{
  r->pending = *options;
  r->has_pending = 1;
  if (r->num_frames == 0)
    ref_apply_pending(r);
}

/* A session: our analyser and the reference fed the same frames, every result compared ----------
 */

typedef struct {
  CudafftSpectrum *sp;
  Ref ref;
  char label[160];
  size_t ours_count, ours_next; /* results of our last call, and how many were matched */
  size_t results, nan_rows, finite_after_nan, level_values, phase_values, widened;
  double worst_level, worst_phase;
  int saw_nan;
  unsigned failures;
  char why[400];
} Session;

static void session_fail(Session *ss, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void
session_fail(Session *ss, const char *format, ...)
{
  if (ss->failures++ == 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(ss->why, sizeof ss->why, format, args);
    va_end(args);
  }
}

/* One band's level against the reference's: within the float-resolution interval of its FFTs
 * (lo..hi) and LEVEL_TOLERANCE; the threshold exactly where every FFT is well below it. *diff:
 * the distance to the reference's level. */
static int
level_ok(float ours, const Ref *r, size_t at, int threshold, double *diff)
{
  *diff = 0.0;
  if (isnan(r->level[at]))
    return isnan(ours);
  if (!isfinite(ours) || ours < (float)threshold)
    return 0;
  if (r->max_level[at] < threshold - CLAMP_MARGIN)
    return ours == (float)threshold; /* the mean of equal values */
  *diff = fabs(ours - r->level[at]);
  return ours >= r->lo[at] - LEVEL_TOLERANCE && ours <= r->hi[at] + LEVEL_TOLERANCE;
}

/* Compares our next result with the interval the reference just closed. */
static void
session_compare(void *context, const Ref *r)
{
  Session *ss = context;
  const size_t index = ss->results++;
  if (ss->ours_next >= ss->ours_count) {
    session_fail(ss, "result %zu: the reference has it, the analyser gave only %zu", index,
                 ss->ours_count);
    return;
  }
  CudafftSpectrumResult res;
  const CudafftStatus status = cudafft_spectrum_result(ss->sp, ss->ours_next++, &res);
  if (status != CUDAFFT_STATUS_OK) {
    session_fail(ss, "result %zu: cudafft_spectrum_result: %s", index, cudafft_status_name(status));
    return;
  }
  const CudafftSpectrumOptions *options = &r->config.options;
  if (res.frames != r->num_frames || res.ffts != r->num_fft ||
      res.threshold != options->threshold || (res.phase != NULL) != (options->phase != 0)) {
    session_fail(ss,
                 "result %zu: %zu frames, %zu FFTs, threshold %d, phase %s; want %zu, %zu, %d, %s",
                 index, res.frames, res.ffts, res.threshold, res.phase ? "on" : "off",
                 r->num_frames, r->num_fft, options->threshold, options->phase ? "on" : "off");
    return;
  }
  const int threshold = options->threshold;
  for (size_t s = 0; s < r->spectra; s++) {
    int row_nan = 0;
    for (size_t k = 0; k < r->bands; k++) {
      const size_t at = s * r->bands + k;
      const float ours = res.magnitude[at];
      double diff;
      if (!level_ok(ours, r, at, threshold, &diff)) {
        session_fail(ss,
                     "result %zu signal %zu band %zu: level %.6f dB, reference %.6f dB (%.6f to "
                     "%.6f at float resolution; FFTs' unclamped max %.3f, threshold %d)",
                     index, s, k, ours, r->level[at], r->lo[at], r->hi[at], r->max_level[at],
                     threshold);
        return;
      }
      row_nan |= isnan(r->level[at]);
      /* the worst difference where float resolves the band; the others are counted */
      if (r->hi[at] - r->lo[at] <= LEVEL_TOLERANCE)
        ss->worst_level = diff > ss->worst_level ? diff : ss->worst_level;
      else if (!isnan(r->level[at]))
        ss->widened++;
      ss->level_values++;
      if (!res.phase)
        continue;
      const float phase = res.phase[at];
      if (isnan(r->level[at])) {
        if (!isnan(phase)) {
          session_fail(ss, "result %zu signal %zu band %zu: phase %.6f where the level is NaN",
                       index, s, k, phase);
          return;
        }
        continue;
      }
      if (!isfinite(phase) || fabs(phase) > pi + 1e-6) {
        session_fail(ss, "result %zu signal %zu band %zu: phase %g", index, s, k, phase);
        return;
      }
      if (r->wrap[at] || r->phase_error[at] > PHASE_TOLERANCE / 10.0 ||
          r->min_level[at] < threshold + CLAMP_MARGIN)
        continue;
      const double phase_diff = fabs(phase - r->phase[at]);
      if (phase_diff > PHASE_TOLERANCE) {
        session_fail(ss, "result %zu signal %zu band %zu: phase %.6f, reference %.6f", index, s, k,
                     phase, r->phase[at]);
        return;
      }
      ss->worst_phase = phase_diff > ss->worst_phase ? phase_diff : ss->worst_phase;
      ss->phase_values++;
    }
    ss->nan_rows += row_nan;
    ss->saw_nan |= row_nan;
    if (!row_nan && ss->saw_nan)
      ss->finite_after_nan++;
  }
}

static int
session_open(Session *ss, CudafftBackend backend, const CudafftSpectrumConfig *config,
             const char *label)
{
  memset(ss, 0, sizeof *ss);
  snprintf(ss->label, sizeof ss->label, "%s", label);
  const CudafftStatus status = cudafft_spectrum_create(&ss->sp, backend, -1, config);
  if (status != CUDAFFT_STATUS_OK) {
    test_check(0, "%s: spectrum_create on %s: %s: %s", label, test_backend_name(backend),
               cudafft_status_name(status), cudafft_last_error_message());
    return 0;
  }
  if (cudafft_spectrum_get_backend(ss->sp) != backend) {
    test_check(0, "%s: spectrum_create gives a %s analyser, want %s", label,
               test_backend_name(cudafft_spectrum_get_backend(ss->sp)), test_backend_name(backend));
    cudafft_spectrum_destroy(ss->sp);
    return 0;
  }
  ref_init(&ss->ref, config);
  return 1;
}

static void
session_close(Session *ss)
{
  cudafft_spectrum_destroy(ss->sp);
  ref_fini(&ss->ref);
}

/* After a call that returned `count` results: all of them matched, and the interval state agrees.
 */
static void
session_settle(Session *ss, const char *call)
{
  if (ss->ours_next != ss->ours_count)
    session_fail(ss, "%s gave %zu results, the reference %zu", call, ss->ours_count, ss->ours_next);
  const size_t pending = cudafft_spectrum_frames_pending(ss->sp);
  const size_t left = cudafft_spectrum_frames_left(ss->sp);
  const size_t want_left = ss->ref.frames_todo - ss->ref.num_frames;
  if (pending != ss->ref.num_frames || left != want_left)
    session_fail(ss, "after %s: frames pending %zu, left %zu; want %zu, %zu", call, pending, left,
                 ss->ref.num_frames, want_left);
}

/* A piece size: single frames, small odd ones, the rest of the interval (and one more), blocks
 * of typical buffer sizes, a large one. */
static size_t
next_piece(const Session *ss, size_t remaining)
{
  size_t piece;
  switch (test_random_range(0, 9)) {
  case 0:
    piece = 1;
    break;
  case 1:
    piece = 7;
    break;
  case 2:
  case 3:
    piece = 1000;
    break;
  case 4:
    piece = 100000;
    break;
  case 5:
    piece = cudafft_spectrum_frames_left(ss->sp);
    break;
  case 6:
    piece = cudafft_spectrum_frames_left(ss->sp) + 1;
    break;
  default:
    piece = test_random_range(1, 30000);
    break;
  }
  return min_size(piece, remaining);
}

/* Pushes frames in pieces (piece 0: random sizes), each until taken, comparing as it goes. */
static void
session_push(Session *ss, const uint8_t *data, size_t frames, size_t max_results, size_t piece)
{
  const size_t frame_bytes = cudafft_spectrum_frame_bytes(ss->sp);
  const size_t limit = min_size(max_results, cudafft_spectrum_max_results(ss->sp));
  size_t done = 0;
  while (done < frames && ss->failures == 0) {
    size_t size = piece ? min_size(piece, frames - done) : next_piece(ss, frames - done);
    /* Single frames come in bursts; each costs a run. */
    const size_t repeat = size == 1 ? test_random_range(1, 40) : 1;
    for (size_t r = 0; r < repeat && done < frames && ss->failures == 0; r++) {
      size = min_size(size, frames - done);
      while (size > 0 && ss->failures == 0) {
        const uint8_t *in = data + done * frame_bytes;
        size_t consumed = SIZE_MAX, count = SIZE_MAX;
        const CudafftStatus status =
            cudafft_spectrum_push(ss->sp, in, size, max_results, &consumed, &count);
        if (status != CUDAFFT_STATUS_OK) {
          session_fail(ss, "push of %zu frames at %zu: %s: %s", size, done,
                       cudafft_status_name(status), cudafft_last_error_message());
          return;
        }
        if (count > limit || consumed > size || consumed == 0 ||
            (consumed < size && count != limit)) {
          session_fail(ss, "push of %zu frames (max_results %zu): consumed %zu, %zu results", size,
                       max_results, consumed, count);
          return;
        }
        ss->ours_count = count;
        ss->ours_next = 0;
        ref_push(&ss->ref, in, consumed, session_compare, ss);
        session_settle(ss, "push");
        done += consumed;
        size -= consumed;
      }
    }
  }
}

static void
session_finish(Session *ss)
{
  size_t count = SIZE_MAX;
  const CudafftStatus status = cudafft_spectrum_finish(ss->sp, &count);
  if (status != CUDAFFT_STATUS_OK || count > 1) {
    session_fail(ss, "finish: %s, %zu results", cudafft_status_name(status), count);
    return;
  }
  ss->ours_count = count;
  ss->ours_next = 0;
  ref_finish(&ss->ref, session_compare, ss);
  session_settle(ss, "finish");
}

static void
session_reset(Session *ss)
{
  cudafft_spectrum_reset(ss->sp);
  ref_reset(&ss->ref);
  ss->ours_count = ss->ours_next = 0;
  session_settle(ss, "reset");
}

static void
session_set_options(Session *ss, const CudafftSpectrumOptions *options)
{
  const CudafftStatus status = cudafft_spectrum_set_options(ss->sp, options);
  if (status != CUDAFFT_STATUS_OK) {
    session_fail(ss, "set_options: %s", cudafft_status_name(status));
    return;
  }
  ref_set_options(&ss->ref, options);
  ss->ours_count = ss->ours_next = 0;
  session_settle(ss, "set_options");
}

/* The closing line of a session; returns whether it passed. */
static int
session_report(Session *ss, const char *what)
{
  return test_check(ss->failures == 0 && ss->results > 0,
                    "%s%s%s: %zu results (%zu levels, worst %.2e dB, %zu below float resolution; "
                    "%zu phases, worst %.2e rad)%s%s",
                    ss->label, what ? " " : "", what ? what : "", ss->results, ss->level_values,
                    ss->worst_level, ss->widened, ss->phase_values, ss->worst_phase,
                    ss->failures ? ": " : (ss->results ? "" : ": no results"),
                    ss->failures ? ss->why : "");
}

static CudafftSpectrumConfig
make_config(size_t bands, unsigned channels, unsigned rate, CudafftSampleFormat format,
            int multi_channel, uint64_t interval_ns, int threshold, int phase)
{
  CudafftSpectrumConfig config = {
      .bands = bands,
      .channels = channels,
      .rate = rate,
      .format = format,
      .multi_channel = multi_channel,
      .options = {.interval_ns = interval_ns, .threshold = threshold, .phase = phase},
  };
  return config;
}

static void
describe(const CudafftSpectrumConfig *c, char *label, size_t size)
{
  snprintf(label, size, "bands=%zu (nfft %zu) %s ch=%u%s rate=%u interval=%.6g ms thr=%d phase %s",
           c->bands, 2 * c->bands - 2, format_names[c->format], c->channels,
           c->multi_channel  ? " multi"
           : c->channels > 1 ? " mixed"
                             : "",
           c->rate, (double)c->options.interval_ns / 1e6, c->options.threshold,
           c->options.phase ? "on" : "off");
}

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* Random streams against the reference ----------------------------------------------------------
 */

typedef struct {
  size_t bands;
  unsigned channels, rate;
  CudafftSampleFormat format;
  int multi_channel;
  uint64_t interval_ns;
  int threshold, phase;
  size_t frames;
  double amplitude;
} StreamCase;

/* nfft = 2 bands - 2. The CUDA backend has one code path for powers of two from 256 to 16384
 * (bands 129, 513, 2049, 4097, 8193) and another for every other size: both kinds appear, each
 * with intervals shorter than nfft (one FFT at the end), longer (several FFTs and a remainder
 * without one) and with a carry (interval x rate not a whole number of frames). */
static const StreamCase stream_cases[] = {
    /* nfft 2, 8 frames: four FFTs per interval */
    {2, 1, 8000, CUDAFFT_SAMPLE_S16, 0, 1 * MS, -60, 1, 12000, 1.0},
    /* nfft 4, 44.1 frames: carry; S24 with odd frame counts */
    {3, 3, 44100, CUDAFFT_SAMPLE_S24, 1, 1 * MS, -90, 0, 20001, 0.1},
    /* nfft 254, 480 frames: one FFT and a remainder */
    {128, 2, 48000, CUDAFFT_SAMPLE_S32, 0, 10 * MS, -60, 1, 60000, 1.0},
    /* nfft 256 (power of two), 44.1 frames: one FFT at each interval's end, windows overlapping */
    {129, 8, 44100, CUDAFFT_SAMPLE_F32, 1, 1 * MS, -90, 1, 20000, 0.3},
    /* nfft 256, 0.441 frames: intervals of one frame and sometimes two */
    {129, 1, 44100, CUDAFFT_SAMPLE_S16, 0, 10000, -60, 1, 4000, 1.0},
    /* nfft 510, 441 frames: shorter than nfft */
    {256, 3, 22050, CUDAFFT_SAMPLE_S32, 1, 20 * MS, -60, 1, 25000, 0.5},
    /* nfft 1024, 144 frames */
    {513, 2, 48000, CUDAFFT_SAMPLE_S24, 1, 3 * MS, -90, 1, 20001, 0.05},
    /* nfft 1998, 4800 frames: two FFTs and a remainder; a very low threshold */
    {1000, 2, 96000, CUDAFFT_SAMPLE_F64, 1, 50 * MS, -300, 1, 60000, 1.0},
    /* nfft 4096, 4410 frames, quiet: typical levels near -60 dB, so that about half are clamped */
    {2049, 3, 44100, CUDAFFT_SAMPLE_S16, 0, 100 * MS, -60, 0, 60000, 0.3},
    /* nfft 4096, exactly nfft frames per interval */
    {2049, 8, 4096, CUDAFFT_SAMPLE_F32, 0, NS_PER_SECOND, -90, 1, 30000, 1.0},
    /* nfft 8192, 308.7 frames */
    {4097, 1, 44100, CUDAFFT_SAMPLE_F64, 0, 7 * MS, -90, 1, 40000, 1.0},
    /* nfft 9998, 17640 frames */
    {5000, 1, 44100, CUDAFFT_SAMPLE_F32, 0, 400 * MS, -300, 1, 200000, 1.0},
    /* nfft 16384, 48000 frames: two FFTs and a remainder */
    {8193, 2, 48000, CUDAFFT_SAMPLE_F32, 0, NS_PER_SECOND, -90, 1, 300000, 1.0},
    /* nfft 32768, 13230 frames: shorter than nfft */
    {16385, 1, 44100, CUDAFFT_SAMPLE_S24, 0, 300 * MS, -60, 1, 70001, 1.0},
    /* nfft 32768, 96000 frames */
    {16385, 2, 192000, CUDAFFT_SAMPLE_F64, 1, 500 * MS, -300, 0, 600000, 1.0},
};

static void
check_stream_case(CudafftBackend backend, const StreamCase *sc, size_t max_results)
{
  const CudafftSpectrumConfig config =
      make_config(sc->bands, sc->channels, sc->rate, sc->format, sc->multi_channel, sc->interval_ns,
                  sc->threshold, sc->phase);
  char label[160], what[40];
  describe(&config, label, sizeof label);
  if (max_results == ALL_RESULTS)
    snprintf(what, sizeof what, "max_results=all");
  else
    snprintf(what, sizeof what, "max_results=%zu", max_results);
  Session ss;
  if (!session_open(&ss, backend, &config, label))
    return;
  uint8_t *data = make_signal(sc->format, sc->channels, sc->frames, sc->amplitude);
  session_push(&ss, data, sc->frames, max_results, 0);
  session_report(&ss, what);
  free(data);
  session_close(&ss);
}

/* A known value ------------------------------------------------------------------------------- */

/* A full-scale sine at the centre of bin k, over exactly nfft frames per interval: the periodic
 * Hamming window's spectrum has only its 0.53836 term at the bin itself, so |X[k]| = 0.53836 nfft
 * / 2 and the level is 20 log10 (0.53836 / 2); the phase of a sine starting at 0 is -pi/2. */
static void
check_sine_level(CudafftBackend backend)
{
  const size_t bands = 2049, nfft = 4096, intervals = 5, frames = intervals * nfft;
  const size_t bins[] = {1, 100, 1234, 2047};
  const double want_level = 20.0 * log10(0.53836 / 2.0);
  for (size_t b = 0; b < COUNT(bins); b++) {
    const size_t k = bins[b];
    /* 4096 frames at 32 kHz: 128 ms */
    const CudafftSpectrumConfig config =
        make_config(bands, 1, 32000, CUDAFFT_SAMPLE_F32, 0, 128 * MS, -90, 1);
    char label[160];
    snprintf(label, sizeof label, "sine at bin %zu (bands=%zu F32 mono, interval = nfft)", k,
             bands);
    Session ss;
    if (!session_open(&ss, backend, &config, label))
      continue;
    uint8_t *data = test_malloc(frames * 4);
    for (size_t n = 0; n < frames; n++)
      set_f32(data, 1, n, 0, (float)sin(2.0 * pi * (double)(k * (n % nfft)) / (double)nfft));
    size_t consumed = 0, count = 0;
    const CudafftStatus status =
        cudafft_spectrum_push(ss.sp, data, frames, ALL_RESULTS, &consumed, &count);
    double worst_level = 0.0, worst_phase = 0.0;
    int ok = status == CUDAFFT_STATUS_OK && consumed == frames && count == intervals;
    for (size_t i = 0; ok && i < count; i++) {
      CudafftSpectrumResult res;
      ok = cudafft_spectrum_result(ss.sp, i, &res) == CUDAFFT_STATUS_OK && res.ffts == 1 &&
           res.phase != NULL;
      if (!ok)
        break;
      const double dl = fabs(res.magnitude[k] - want_level);
      const double dp = fabs(res.phase[k] + pi / 2.0);
      worst_level = dl > worst_level ? dl : worst_level;
      worst_phase = dp > worst_phase ? dp : worst_phase;
    }
    test_check(ok && worst_level <= LEVEL_TOLERANCE && worst_phase <= PHASE_TOLERANCE,
               "%s: %zu results of %zu (%s), band %zu within %.2e dB of %.4f dB and %.2e rad of "
               "-pi/2",
               label, count, intervals, cudafft_status_name(status), k, worst_level, want_level,
               worst_phase);
    /* the same signal against the reference, every band */
    ss.ours_count = count;
    ss.ours_next = 0;
    ref_push(&ss.ref, data, consumed, session_compare, &ss);
    session_settle(&ss, "push");
    session_report(&ss, "against the reference");
    free(data);
    session_close(&ss);
  }
}

/* finish ----------------------------------------------------------------------------------------
 */

/* Finishes and checks the count, and the frames and FFTs of the one result there may be. */
static void
expect_finish(Session *ss, size_t want_count, size_t want_frames, size_t want_ffts,
              const char *what)
{
  const size_t before = ss->results;
  session_finish(ss);
  const size_t count = ss->results - before;
  CudafftSpectrumResult res = {0};
  if (count == 1)
    cudafft_spectrum_result(ss->sp, 0, &res);
  test_check(ss->failures == 0 && count == want_count &&
                 (count == 0 || (res.frames == want_frames && res.ffts == want_ffts)),
             "%s: finish %s: %zu results (want %zu), %zu frames and %zu FFTs (want %zu, %zu)%s%s",
             ss->label, what, count, want_count, res.frames, res.ffts, want_frames, want_ffts,
             ss->failures ? ": " : "", ss->failures ? ss->why : "");
}

static void
check_finish(CudafftBackend backend)
{
  /* nfft 256, 4410 frames per interval */
  const CudafftSpectrumConfig config =
      make_config(129, 2, 44100, CUDAFFT_SAMPLE_S16, 0, 100 * MS, -90, 1);
  Session ss;
  if (!session_open(&ss, backend, &config, "finish (bands=129 S16 stereo mixed, 4410 frames)"))
    return;
  const size_t frames = 20000;
  uint8_t *data = make_signal(config.format, config.channels, frames, 0.5);
  const size_t fb = cudafft_spectrum_frame_bytes(ss.sp);
  size_t at = 0;
  expect_finish(&ss, 0, 0, 0, "on a fresh analyser");
  session_push(&ss, data, 1000, ALL_RESULTS, 0);
  at += 1000;
  expect_finish(&ss, 1, 1000, 3, "after 1000 frames (FFTs at 256, 512, 768)");
  expect_finish(&ss, 0, 0, 0, "again");
  session_push(&ss, data + at * fb, 100, ALL_RESULTS, 0);
  at += 100;
  expect_finish(&ss, 1, 100, 1, "after 100 frames (its one FFT over the history)");
  session_push(&ss, data + at * fb, 2 * 4410 + 500, ALL_RESULTS, 0);
  at += 2 * 4410 + 500;
  expect_finish(&ss, 1, 500, 1, "after two intervals and 500 frames");
  session_push(&ss, data + at * fb, 4410, ALL_RESULTS, 4410);
  at += 4410;
  expect_finish(&ss, 0, 0, 0, "right after a full interval");
  session_push(&ss, data + at * fb, frames - at, 2, 0);
  session_report(&ss, "all results against the reference");
  free(data);
  session_close(&ss);
}

/* reset -----------------------------------------------------------------------------------------
 */

static int
same_value(float a, float b)
{
  return (isnan(a) && isnan(b)) || fabs((double)a - (double)b) <= SAME_TOLERANCE;
}

/* After reset the analyser gives what a fresh one gives on the same input, although the input
 * before the reset ended mid-interval, with a carry under way and a NaN in the history. */
static void
check_reset(CudafftBackend backend)
{
  /* nfft 512, 44.1 frames per interval */
  const CudafftSpectrumConfig config =
      make_config(257, 2, 44100, CUDAFFT_SAMPLE_F32, 1, 1 * MS, -90, 1);
  Session ss;
  CudafftSpectrum *fresh = NULL;
  if (!session_open(&ss, backend, &config, "reset (bands=257 F32 stereo multi, 44.1 frames)"))
    return;
  if (cudafft_spectrum_create(&fresh, backend, -1, &config) != CUDAFFT_STATUS_OK) {
    test_check(0, "reset: second analyser: %s", cudafft_last_error_message());
    session_close(&ss);
    return;
  }
  const size_t before = 3001, frames = 20000, fb = cudafft_spectrum_frame_bytes(ss.sp);
  uint8_t *x = make_signal(config.format, config.channels, before, 1.0);
  uint8_t *y = make_signal(config.format, config.channels, frames, 1.0);
  set_f32(x, config.channels, before - 3, 0, NAN);
  session_push(&ss, x, before, ALL_RESULTS, 0);
  const size_t pending = cudafft_spectrum_frames_pending(ss.sp);
  session_reset(&ss);

  size_t done = 0, compared = 0, mismatches = 0;
  while (done < frames && ss.failures == 0 && mismatches == 0) {
    const size_t size = next_piece(&ss, frames - done);
    const size_t max_results = test_random_range(1, 3) == 1 ? 1 : ALL_RESULTS;
    size_t c1 = 0, n1 = 0, c2 = 0, n2 = 0;
    const CudafftStatus s1 =
        cudafft_spectrum_push(ss.sp, y + done * fb, size, max_results, &c1, &n1);
    const CudafftStatus s2 =
        cudafft_spectrum_push(fresh, y + done * fb, size, max_results, &c2, &n2);
    if (s1 != CUDAFFT_STATUS_OK || s2 != CUDAFFT_STATUS_OK || c1 != c2 || n1 != n2 || c1 == 0) {
      session_fail(&ss, "push of %zu: %s/%s, consumed %zu/%zu, results %zu/%zu", size,
                   cudafft_status_name(s1), cudafft_status_name(s2), c1, c2, n1, n2);
      break;
    }
    for (size_t i = 0; i < n1 && mismatches == 0; i++, compared++) {
      CudafftSpectrumResult a, b;
      cudafft_spectrum_result(ss.sp, i, &a);
      cudafft_spectrum_result(fresh, i, &b);
      const size_t values = cudafft_spectrum_spectra(fresh) * config.bands;
      mismatches += a.frames != b.frames || a.ffts != b.ffts || a.threshold != b.threshold;
      for (size_t v = 0; v < values; v++)
        mismatches +=
            !same_value(a.magnitude[v], b.magnitude[v]) || !same_value(a.phase[v], b.phase[v]);
    }
    ss.ours_count = n1;
    ss.ours_next = 0;
    ref_push(&ss.ref, y + done * fb, c1, session_compare, &ss);
    session_settle(&ss, "push");
    done += c1;
  }
  test_check(pending > 0 && mismatches == 0 && ss.failures == 0 && compared > 0,
             "reset after %zu frames (%zu of an interval pending, a NaN in the history): %zu "
             "results compared with a fresh analyser's, %zu values differ%s%s",
             before, pending, compared, mismatches, ss.failures ? ": " : "",
             ss.failures ? ss.why : "");
  session_report(&ss, "after reset, against the reference");
  free(x);
  free(y);
  cudafft_spectrum_destroy(fresh);
  session_close(&ss);
}

/* Options changed mid-stream --------------------------------------------------------------------
 */

static CudafftSpectrumResult
result_or_empty(const Session *ss, size_t i)
{
  CudafftSpectrumResult res = {0};
  cudafft_spectrum_result(ss->sp, i, &res);
  return res;
}

static void
check_options_changes(CudafftBackend backend)
{
  /* nfft 256, 480 frames per interval, quiet: levels near -73 dB, so that -60 and -90 differ */
  const CudafftSpectrumConfig config =
      make_config(129, 1, 48000, CUDAFFT_SAMPLE_F32, 0, 10 * MS, -60, 0);
  const size_t frames = 20000;
  uint8_t *data = make_signal(config.format, config.channels, frames, 0.01);
  const size_t fb = 4;
  CudafftSpectrumOptions to90 = {.interval_ns = 10 * MS, .threshold = -90, .phase = 1};
  const CudafftSpectrumOptions longer = {.interval_ns = 25 * MS, .threshold = -60, .phase = 0};
  Session ss;

  if (session_open(&ss, backend, &config, "threshold -60 -> -90 and phase on, mid-interval")) {
    session_push(&ss, data, 200, ALL_RESULTS, 0);
    session_set_options(&ss, &to90);
    session_push(&ss, data + 200 * fb, 1240, ALL_RESULTS, 1240); /* one call: 3 results */
    const CudafftSpectrumResult r0 = result_or_empty(&ss, 0), r1 = result_or_empty(&ss, 1);
    size_t at_old = 0, below_old = 0;
    for (size_t k = 0; r0.magnitude && r1.magnitude && k < config.bands; k++) {
      at_old += r0.magnitude[k] == -60.0f;
      below_old += r1.magnitude[k] < -60.0f;
    }
    test_check(ss.failures == 0 && r0.threshold == -60 && !r0.phase && r0.frames == 480 &&
                   r1.threshold == -90 && r1.phase && at_old > 0 && below_old > 0,
               "%s: the open interval keeps -60 without phase (%zu bands at -60), the next has "
               "-90 with phase (%zu bands below -60)%s%s",
               ss.label, at_old, below_old, ss.failures ? ": " : "", ss.failures ? ss.why : "");
    session_push(&ss, data + 1440 * fb, frames - 1440, 2, 0);
    session_report(&ss, "against the reference");
    session_close(&ss);
  }

  if (session_open(&ss, backend, &config, "interval 10 ms -> 25 ms, mid-interval")) {
    session_push(&ss, data, 200, ALL_RESULTS, 0);
    session_set_options(&ss, &longer);
    session_push(&ss, data + 200 * fb, 2680, ALL_RESULTS, 2680);
    const CudafftSpectrumResult r0 = result_or_empty(&ss, 0), r1 = result_or_empty(&ss, 1),
                                r2 = result_or_empty(&ss, 2);
    test_check(ss.failures == 0 && r0.frames == 480 && r1.frames == 1200 && r2.frames == 1200,
               "%s: intervals of %zu, %zu, %zu frames (want 480, 1200, 1200)%s%s", ss.label,
               r0.frames, r1.frames, r2.frames, ss.failures ? ": " : "", ss.failures ? ss.why : "");
    session_push(&ss, data + 2880 * fb, frames - 2880, ALL_RESULTS, 0);
    session_report(&ss, "against the reference");
    session_close(&ss);
  }

  if (session_open(&ss, backend, &config, "options with no frames pending")) {
    const CudafftSpectrumOptions to30 = {.interval_ns = 10 * MS, .threshold = -30, .phase = 0};
    session_set_options(&ss, &to30);
    session_push(&ss, data, 480, ALL_RESULTS, 480);
    const CudafftSpectrumResult r0 = result_or_empty(&ss, 0);
    session_set_options(&ss, &longer); /* right after an interval: at once too */
    const size_t left = cudafft_spectrum_frames_left(ss.sp);
    test_check(ss.failures == 0 && r0.threshold == -30 && left == 1200,
               "%s: apply at once (threshold %d, want -30; %zu frames left, want 1200)%s%s",
               ss.label, r0.threshold, left, ss.failures ? ": " : "", ss.failures ? ss.why : "");
    const CudafftSpectrumOptions zero = {.interval_ns = 0, .threshold = -60, .phase = 0};
    const CudafftSpectrumOptions above = {.interval_ns = 10 * MS, .threshold = 1, .phase = 0};
    const CudafftStatus a = cudafft_spectrum_set_options(ss.sp, &zero);
    const CudafftStatus b = cudafft_spectrum_set_options(ss.sp, &above);
    const CudafftStatus c = cudafft_spectrum_set_options(ss.sp, NULL);
    const CudafftStatus d = cudafft_spectrum_set_options(NULL, &to90);
    session_push(&ss, data + 480 * fb, 1200, ALL_RESULTS, 1200);
    const CudafftSpectrumResult r1 = result_or_empty(&ss, 0);
    test_check(a == CUDAFFT_STATUS_INVALID_VALUE && b == CUDAFFT_STATUS_INVALID_VALUE &&
                   c == CUDAFFT_STATUS_NULL_POINTER && d == CUDAFFT_STATUS_NULL_POINTER &&
                   r1.frames == 1200 && r1.threshold == -60,
               "set_options interval 0 -> %s, threshold 1 -> %s, NULL options -> %s, NULL "
               "spectrum -> %s; the options stay (%zu frames, threshold %d)",
               cudafft_status_name(a), cudafft_status_name(b), cudafft_status_name(c),
               cudafft_status_name(d), r1.frames, r1.threshold);
    session_report(&ss, "against the reference");
    session_close(&ss);
  }

  if (session_open(&ss, backend, &config, "options pending at finish and at reset")) {
    session_push(&ss, data, 200, ALL_RESULTS, 0);
    session_set_options(&ss, &to90);
    session_finish(&ss);
    const CudafftSpectrumResult f = result_or_empty(&ss, 0);
    session_push(&ss, data + 200 * fb, 480, ALL_RESULTS, 480);
    const CudafftSpectrumResult n = result_or_empty(&ss, 0);
    session_push(&ss, data + 680 * fb, 100, ALL_RESULTS, 0);
    session_set_options(&ss, &longer);
    session_reset(&ss);
    const size_t left = cudafft_spectrum_frames_left(ss.sp);
    session_push(&ss, data + 780 * fb, 5000, ALL_RESULTS, 0);
    test_check(ss.failures == 0 && f.frames == 200 && f.threshold == -60 && n.threshold == -90 &&
                   left == 1200,
               "%s: finish keeps the old threshold (%d), the next interval has the new (%d); "
               "after reset the new interval (%zu frames left)%s%s",
               ss.label, f.threshold, n.threshold, left, ss.failures ? ": " : "",
               ss.failures ? ss.why : "");
    session_report(&ss, "against the reference");
    session_close(&ss);
  }
  free(data);
}

/* NaN and Inf -----------------------------------------------------------------------------------
 */

static void
check_nonfinite(CudafftBackend backend, float bad, int multi_channel, uint64_t interval_ns)
{
  /* nfft 256 */
  const CudafftSpectrumConfig config =
      make_config(129, 2, 48000, CUDAFFT_SAMPLE_F32, multi_channel, interval_ns, -90, 1);
  char label[160];
  snprintf(label, sizeof label, "one %s sample: bands=129 F32 stereo %s, interval %.4g frames",
           isnan(bad) ? "NaN" : "Inf", multi_channel ? "multi" : "mixed",
           (double)interval_ns * 48000 / 1e9);
  Session ss;
  if (!session_open(&ss, backend, &config, label))
    return;
  const size_t frames = 6000;
  uint8_t *data = make_signal(config.format, config.channels, frames, 1.0);
  set_f32(data, config.channels, 2345, 1, bad);
  session_push(&ss, data, frames, test_random_range(0, 1) ? 2 : ALL_RESULTS, 0);
  session_report(&ss, NULL);
  /* The comparison required NaN exactly where the reference's windows held the sample; these say
   * that there were such results, and finite ones after them. */
  test_check(ss.nan_rows > 0 && ss.finite_after_nan > 0,
             "%s: %zu NaN rows where the windows hold it, %zu finite rows after them", label,
             ss.nan_rows, ss.finite_after_nan);
  free(data);
  session_close(&ss);
}

/* Invalid calls ---------------------------------------------------------------------------------
 */

static void
expect_create_status(CudafftStatus want, CudafftStatus also, CudafftBackend backend, int device,
                     const CudafftSpectrumConfig *config, const char *what)
{
  CudafftSpectrum *sp = (CudafftSpectrum *)&sp; /* not NULL: create must clear it */
  const CudafftStatus status = cudafft_spectrum_create(&sp, backend, device, config);
  test_check((status == want || status == also) && (status == CUDAFFT_STATUS_OK) == (sp != NULL),
             "spectrum_create %s -> %s (want %s), spectrum %s%s%s", what,
             cudafft_status_name(status), cudafft_status_name(want), sp ? "set" : "NULL",
             status ? ": " : "", status ? cudafft_last_error_message() : "");
  if (status == CUDAFFT_STATUS_OK)
    cudafft_spectrum_destroy(sp);
}

static void
check_create_errors(CudafftBackend backend)
{
  const CudafftSpectrumConfig good =
      make_config(129, 2, 48000, CUDAFFT_SAMPLE_F32, 0, 10 * MS, -60, 0);
  CudafftSpectrumConfig c;
  const CudafftStatus OK = CUDAFFT_STATUS_OK, SIZE = CUDAFFT_STATUS_INVALID_SIZE;
  const CudafftStatus VALUE = CUDAFFT_STATUS_INVALID_VALUE, NUL = CUDAFFT_STATUS_NULL_POINTER;

  test_check(cudafft_spectrum_create(NULL, backend, -1, &good) == NUL,
             "spectrum_create with a NULL result pointer -> NULL_POINTER");
  expect_create_status(NUL, NUL, backend, -1, NULL, "config NULL");
  expect_create_status(OK, OK, backend, -1, &good, "bands=129 stereo F32");
  c = good, c.bands = 0;
  expect_create_status(SIZE, SIZE, backend, -1, &c, "bands 0");
  c = good, c.bands = 1;
  expect_create_status(SIZE, SIZE, backend, -1, &c, "bands 1");
  c = good, c.bands = CUDAFFT_SPECTRUM_MAX_BANDS + 1;
  expect_create_status(SIZE, SIZE, backend, -1, &c, "bands MAX + 1");
  c = good, c.bands = SIZE_MAX;
  expect_create_status(SIZE, SIZE, backend, -1, &c, "bands SIZE_MAX");
  c = good, c.bands = 2;
  expect_create_status(OK, OK, backend, -1, &c, "bands 2");
  c = good, c.channels = 0;
  expect_create_status(VALUE, VALUE, backend, -1, &c, "channels 0");
  c = good, c.channels = CUDAFFT_MAX_CHANNELS + 1;
  expect_create_status(VALUE, VALUE, backend, -1, &c, "channels MAX + 1");
  c = good, c.channels = CUDAFFT_MAX_CHANNELS, c.multi_channel = 1, c.bands = 3;
  expect_create_status(OK, OK, backend, -1, &c, "channels MAX multi, bands 3");
  c = good, c.rate = 0;
  expect_create_status(VALUE, VALUE, backend, -1, &c, "rate 0");
  c = good, c.rate = UINT_MAX, c.options.interval_ns = UINT64_MAX;
  expect_create_status(OK, OK, backend, -1, &c, "rate UINT_MAX, interval UINT64_MAX");
  c = good, c.format = CUDAFFT_SAMPLE_COUNT_;
  expect_create_status(VALUE, VALUE, backend, -1, &c, "format COUNT_");
  c = good, c.format = (CudafftSampleFormat)-1;
  expect_create_status(VALUE, VALUE, backend, -1, &c, "format -1");
  c = good, c.options.interval_ns = 0;
  expect_create_status(VALUE, VALUE, backend, -1, &c, "interval 0");
  c = good, c.options.interval_ns = 1;
  expect_create_status(OK, OK, backend, -1, &c, "interval 1 ns");
  c = good, c.options.threshold = 1;
  expect_create_status(VALUE, VALUE, backend, -1, &c, "threshold 1");
  c = good, c.options.threshold = INT_MIN;
  expect_create_status(OK, OK, backend, -1, &c, "threshold INT_MIN");
  expect_create_status(VALUE, VALUE, (CudafftBackend)42, -1, &good, "backend 42");
  expect_create_status(VALUE, VALUE, backend, -2, &good, "device -2");
  /* Terabytes: refused from the sizes, before any allocation (the CUDA backend may refuse it for
   * its device first). */
  c = good, c.bands = CUDAFFT_SPECTRUM_MAX_BANDS, c.channels = CUDAFFT_MAX_CHANNELS;
  c.multi_channel = 1;
  expect_create_status(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                       backend == CUDAFFT_BACKEND_CUDA ? CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY
                                                       : CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                       backend, -1, &c, "bands MAX x 1024 channels multi");

  CudafftSpectrum *sp = NULL;
  const CudafftBackend want_auto =
      cudafft_cuda_device_count() > 0 ? CUDAFFT_BACKEND_CUDA : CUDAFFT_BACKEND_CPU;
  const CudafftStatus s = cudafft_spectrum_create(&sp, CUDAFFT_BACKEND_AUTO, -1, &good);
  test_check(s == OK && cudafft_spectrum_get_backend(sp) == want_auto,
             "spectrum_create AUTO -> %s, a %s analyser (want %s)", cudafft_status_name(s),
             test_backend_name(cudafft_spectrum_get_backend(sp)), test_backend_name(want_auto));
  cudafft_spectrum_destroy(sp);

  int sizes_ok = 1;
  for (int f = 0; f < CUDAFFT_SAMPLE_COUNT_; f++)
    for (int multi = 0; multi <= 1; multi++) {
      c = good, c.format = (CudafftSampleFormat)f, c.channels = 3, c.multi_channel = multi;
      sp = NULL;
      if (cudafft_spectrum_create(&sp, backend, -1, &c) != OK) {
        sizes_ok = 0;
        continue;
      }
      sizes_ok &= cudafft_spectrum_frame_bytes(sp) == 3 * format_bytes[f] &&
                  cudafft_spectrum_spectra(sp) == (multi ? 3u : 1u) &&
                  cudafft_spectrum_max_results(sp) >= 1 &&
                  cudafft_spectrum_frames_left(sp) == 480 &&
                  cudafft_spectrum_frames_pending(sp) == 0;
      cudafft_spectrum_destroy(sp);
    }
  test_check(sizes_ok, "frame_bytes, spectra, max_results, frames_left, frames_pending of new "
                       "analysers in every format, mixed and multi");

  cudafft_spectrum_destroy(NULL);
  cudafft_spectrum_reset(NULL);
  test_check(cudafft_spectrum_spectra(NULL) == 0 && cudafft_spectrum_frame_bytes(NULL) == 0 &&
                 cudafft_spectrum_max_results(NULL) == 0 &&
                 cudafft_spectrum_frames_left(NULL) == 0 &&
                 cudafft_spectrum_frames_pending(NULL) == 0 &&
                 cudafft_spectrum_get_backend(NULL) == CUDAFFT_BACKEND_AUTO,
             "destroy(NULL) and reset(NULL) return; the accessors of NULL give 0 (AUTO)");
}

static void
check_call_errors(CudafftBackend backend)
{
  /* nfft 256, 480 frames */
  const CudafftSpectrumConfig config =
      make_config(129, 2, 48000, CUDAFFT_SAMPLE_S16, 0, 10 * MS, INT_MIN, 1);
  CudafftSpectrum *sp = NULL;
  if (cudafft_spectrum_create(&sp, backend, -1, &config) != CUDAFFT_STATUS_OK) {
    test_check(0, "call errors: spectrum_create: %s", cudafft_last_error_message());
    return;
  }
  const size_t frames = 2000;
  uint8_t *data = make_signal(config.format, config.channels, frames, 1.0);
  size_t consumed = 7, count = 7;
  CudafftStatus s;

  s = cudafft_spectrum_push(NULL, data, 10, 1, &consumed, &count);
  test_check(s == CUDAFFT_STATUS_NULL_POINTER && consumed == 0 && count == 0,
             "push(NULL spectrum) -> %s, consumed %zu, results %zu", cudafft_status_name(s),
             consumed, count);
  const struct {
    const void *in;
    size_t frames, max_results;
    int null_consumed, null_results;
    CudafftStatus want;
    const char *what;
  } bad[] = {
      {NULL, 10, 1, 0, 0, CUDAFFT_STATUS_NULL_POINTER, "in NULL"},
      {data, 10, 1, 1, 0, CUDAFFT_STATUS_NULL_POINTER, "consumed NULL"},
      {data, 10, 1, 0, 1, CUDAFFT_STATUS_NULL_POINTER, "results NULL"},
      {data, 10, 0, 0, 0, CUDAFFT_STATUS_INVALID_VALUE, "max_results 0"},
      {data, SIZE_MAX, 1, 0, 0, CUDAFFT_STATUS_INVALID_VALUE, "SIZE_MAX frames"},
  };
  for (size_t i = 0; i < COUNT(bad); i++) {
    size_t ignored;
    s = cudafft_spectrum_push(sp, data, 100, 1, &ignored, &ignored); /* something to forget */
    const size_t pending = cudafft_spectrum_frames_pending(sp);
    consumed = count = 7;
    s = cudafft_spectrum_push(sp, bad[i].in, bad[i].frames, bad[i].max_results,
                              bad[i].null_consumed ? NULL : &consumed,
                              bad[i].null_results ? NULL : &count);
    test_check(s == bad[i].want && (bad[i].null_consumed || consumed == 0) &&
                   (bad[i].null_results || count == 0) && pending > 0 &&
                   cudafft_spectrum_frames_pending(sp) == 0,
               "push %s -> %s (want %s), consumed %zu, results %zu, and it resets (%zu frames "
               "pending before)",
               bad[i].what, cudafft_status_name(s), cudafft_status_name(bad[i].want), consumed,
               count, pending);
  }
  s = cudafft_spectrum_push(sp, NULL, 0, 1, &consumed, &count);
  test_check(s == CUDAFFT_STATUS_OK && consumed == 0 && count == 0,
             "push of 0 frames from NULL -> %s, consumed %zu, results %zu", cudafft_status_name(s),
             consumed, count);

  /* Two intervals of silence at threshold INT_MIN: log10 (0) = -inf, raised to the threshold. */
  uint8_t *silence = calloc(960, cudafft_spectrum_frame_bytes(sp));
  if (!silence)
    test_abort("no memory");
  cudafft_spectrum_reset(sp);
  s = cudafft_spectrum_push(sp, silence, 960, ALL_RESULTS, &consumed, &count);
  CudafftSpectrumResult res = {0};
  size_t at_threshold = 0;
  const CudafftStatus r0 = cudafft_spectrum_result(sp, 1, &res);
  for (size_t k = 0; r0 == CUDAFFT_STATUS_OK && k < config.bands; k++)
    at_threshold += res.magnitude[k] == (float)INT_MIN;
  test_check(s == CUDAFFT_STATUS_OK && count == 2 && at_threshold == config.bands,
             "silence at threshold INT_MIN: %zu of %zu bands at the threshold", at_threshold,
             config.bands);
  free(silence);

  s = cudafft_spectrum_push(sp, data, frames, ALL_RESULTS, &consumed, &count);
  CudafftSpectrumResult out;
  const CudafftStatus in_range = cudafft_spectrum_result(sp, count - 1, &out);
  const CudafftStatus past = cudafft_spectrum_result(sp, count, &out);
  const CudafftStatus huge = cudafft_spectrum_result(sp, SIZE_MAX, &out);
  const CudafftStatus null_out = cudafft_spectrum_result(sp, 0, NULL);
  const CudafftStatus null_sp = cudafft_spectrum_result(NULL, 0, &out);
  test_check(s == CUDAFFT_STATUS_OK && count == 4 && in_range == CUDAFFT_STATUS_OK &&
                 past == CUDAFFT_STATUS_INVALID_VALUE && huge == CUDAFFT_STATUS_INVALID_VALUE &&
                 null_out == CUDAFFT_STATUS_NULL_POINTER && null_sp == CUDAFFT_STATUS_NULL_POINTER,
             "result %zu of %zu -> %s, result %zu -> %s, result SIZE_MAX -> %s, NULL result -> "
             "%s, NULL spectrum -> %s",
             count - 1, count, cudafft_status_name(in_range), count, cudafft_status_name(past),
             cudafft_status_name(huge), cudafft_status_name(null_out),
             cudafft_status_name(null_sp));

  size_t n = 7;
  const CudafftStatus f1 = cudafft_spectrum_finish(NULL, &n);
  const size_t n_after_null = n;
  const CudafftStatus f2 = cudafft_spectrum_finish(sp, NULL);
  test_check(f1 == CUDAFFT_STATUS_NULL_POINTER && n_after_null == 0 &&
                 f2 == CUDAFFT_STATUS_NULL_POINTER,
             "finish(NULL) -> %s (results %zu), finish(results NULL) -> %s",
             cudafft_status_name(f1), n_after_null, cudafft_status_name(f2));
  free(data);
  cudafft_spectrum_destroy(sp);
}

/* Main ------------------------------------------------------------------------------------------
 */

int
main(int argc, char **argv)
{
  CudafftBackend backend = test_backend_from_args(argc, argv);
  test_seed_init();
  double start = test_seconds(), section = start;
#define SECTION_DONE(name)                                                                         \
  do {                                                                                             \
    printf("# %s took %.2f s\n", name, test_seconds() - section);                                  \
    fflush(stdout);                                                                                \
    section = test_seconds();                                                                      \
  } while (0)

  check_create_errors(backend);
  check_call_errors(backend);
  SECTION_DONE("errors");

  const size_t max_results[] = {1, 2, ALL_RESULTS};
  for (size_t i = 0; i < COUNT(stream_cases); i++)
    for (size_t m = 0; m < COUNT(max_results); m++)
      check_stream_case(backend, &stream_cases[i], max_results[m]);
  SECTION_DONE("streams against the reference");

  check_sine_level(backend);
  check_finish(backend);
  check_reset(backend);
  check_options_changes(backend);
  SECTION_DONE("sine, finish, reset, options");

  for (int multi = 0; multi <= 1; multi++) {
    /* 100 frames (with a carry): windows span three intervals; 1000: several FFTs each */
    check_nonfinite(backend, NAN, multi, 2083333);
    check_nonfinite(backend, INFINITY, multi, 2083333);
    check_nonfinite(backend, NAN, multi, 20833333);
    check_nonfinite(backend, -INFINITY, multi, 20833333);
  }
  SECTION_DONE("NaN and Inf");

  printf("# %s backend, total %.2f s\n", test_backend_name(backend), test_seconds() - start);
  return test_finish();
}
