/* test_stft.c: the streaming STFT of cudafft_stft.h. Analysis against FFTW in double precision on
 * the same windowed frames, for every size class, hop kind, window, representation, sample format
 * and a range of channel counts, with the signal pushed in pieces of awkward sizes and every output
 * value checked; zeros from in == NULL, reset, NaN confined to its frames; synthesis against the
 * header's formula in double and as the inverse of analysis; the window values, which window and
 * hop pairs synthesis supports, and the statuses of invalid calls. Argument: cpu or cuda.
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup. */
#include <cudafft/stft.h>
#include "fft_reference.h"
#include "stft_reference.h"
#include "test_signal.h"
#include "test_util.h"

#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

/* Floats after every output that a push must leave alone. */
#define GUARD FFT_GUARD_FLOATS
#define MAX_PIECES 24

/* dB: a bin of magnitude m computed with an absolute error of at most e lies between
 * 10 log10 (m - e)^2 and 10 log10 (m + e)^2 (both floored at -200 dB); DB_SLACK dB more for the
 * logarithm in float. e is DB_ERROR_RMS times the FFT's relative L2 tolerance times the rms of the
 * row's magnitudes: the FFT's error spread over the bins, with room for the largest of a million
 * bins. Where m is well above e this is DB_SLACK dB and a little: within 2e-3 dB wherever m is
 * above 2.6 % of the row's rms at n = 4096, and random input puts most bins far above that; a bin
 * 1e-4 of the rms down cannot be resolved in float and only has to lie in its wider interval. */
#define DB_SLACK 1e-3
#define DB_ERROR_RMS 10.0
/* A single frame-channel row may be this many times worse than the whole output. */
#define ROW_TOLERANCE_FACTOR 4.0
/* Synthesis: inverse FFT, window and overlap-add against the double reference. */
#define SYNTHESIS_TOLERANCE(n) (2.0 * fft_tolerance(n))
/* Analysis then synthesis of samples in [-1, 1): the brief's bound on the relative L2 error, and a
 * loose one on the largest error of any sample (the measured values are far below both). */
#define ROUND_TRIP_REL_TOLERANCE 1e-5
#define ROUND_TRIP_ABS_TOLERANCE 1e-4

static const char *const window_names[CUDAFFT_WINDOW_COUNT_] = {
    [CUDAFFT_WINDOW_RECTANGULAR] = "rectangular",
    [CUDAFFT_WINDOW_HANN] = "hann",
    [CUDAFFT_WINDOW_HAMMING] = "hamming",
    [CUDAFFT_WINDOW_BLACKMAN] = "blackman",
    [CUDAFFT_WINDOW_BLACKMAN_HARRIS] = "blackman-harris",
};
static const char *const representation_names[CUDAFFT_REPRESENTATION_COUNT_] = {
    [CUDAFFT_REPRESENTATION_COMPLEX] = "complex",
    [CUDAFFT_REPRESENTATION_MAGNITUDE] = "magnitude",
    [CUDAFFT_REPRESENTATION_POWER] = "power",
    [CUDAFFT_REPRESENTATION_DB] = "dB",
};
/* Configurations and labels -------------------------------------------------------------------- */

static CudafftStftConfig
make_config(size_t n, size_t hop, CudafftWindow window, CudafftRepresentation representation,
            CudafftSampleFormat format, unsigned channels)
{
  CudafftStftConfig config = {
      .fft_size = n,
      .hop = hop,
      .channels = channels,
      .window = window,
      .representation = representation,
      .format = format,
  };
  return config;
}

static void
describe(const CudafftStftConfig *cfg, char *label, size_t size)
{
  snprintf(label, size, "n=%zu hop=%zu %s %s %s ch=%u", cfg->fft_size, cfg->hop,
           window_names[cfg->window], representation_names[cfg->representation],
           test_format_name(cfg->format), cfg->channels);
}

static size_t
bins_of(const CudafftStftConfig *cfg)
{
  return cfg->fft_size / 2 + 1;
}

/* Floats of one frame, from the header's layout: channels rows of n/2 + 1 bins. */
static size_t
frame_floats_of(const CudafftStftConfig *cfg)
{
  const size_t parts = cfg->representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1;
  return cfg->channels * bins_of(cfg) * parts;
}

/* Frames complete in a signal of length samples per channel. */
static size_t
frames_in(size_t length, size_t n, size_t hop)
{
  return length < n ? 0 : (length - n) / hop + 1;
}

/* Windows -------------------------------------------------------------------------------------- */

/* The header's formulas, written out independently of the library. */
static double
window_formula(CudafftWindow window, size_t n, size_t i)
{
  const double x = 2.0 * pi * (double)i / (double)n;
  switch (window) {
  case CUDAFFT_WINDOW_RECTANGULAR:
    return 1.0;
  case CUDAFFT_WINDOW_HANN:
    return 0.5 - 0.5 * cos(x);
  case CUDAFFT_WINDOW_HAMMING:
    return 0.54 - 0.46 * cos(x);
  case CUDAFFT_WINDOW_BLACKMAN:
    return 0.42 - 0.5 * cos(x) + 0.08 * cos(2.0 * x);
  case CUDAFFT_WINDOW_BLACKMAN_HARRIS:
    return 0.35875 - 0.48829 * cos(x) + 0.14128 * cos(2.0 * x) - 0.01168 * cos(3.0 * x);
  case CUDAFFT_WINDOW_COUNT_:
    break;
  }
  return NAN;
}

static void
check_window_values(void)
{
  static const size_t sizes[] = {16, 256, 400, 1125, 4096, 16384};
  TestRng rng = test_rng("window values");
  for (int w = 0; w < CUDAFFT_WINDOW_COUNT_; w++) {
    double worst = -1.0;
    size_t worst_n = 0, worst_i = 0, points = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      const size_t n = sizes[s];
      const size_t at[] = {0,     1,         n / 8,     n / 4, n / 3,
                           n / 2, n / 2 + 1, 3 * n / 4, n - 1, test_rng_range(&rng, 0, n - 1)};
      for (size_t k = 0; k < sizeof at / sizeof at[0]; k++, points++) {
        double got = cudafft_window_value((CudafftWindow)w, n, at[k]);
        double diff = fabs(got - window_formula((CudafftWindow)w, n, at[k]));
        if (!(diff <= worst)) { /* also catches NaN */
          worst = diff;
          worst_n = n;
          worst_i = at[k];
        }
      }
    }
    test_check(worst <= 1e-12,
               "window_value(%s) follows the header's periodic formula at %zu points: worst "
               "|difference| %.1e (n=%zu i=%zu)",
               window_names[w], points, worst, worst_n, worst_i);
  }
}

/* S[r] = sum_j w[r + j hop]^2 for r < hop: the header's overlap sum. */
static double *
overlap_sum(CudafftWindow window, size_t n, size_t hop)
{
  double *s = test_malloc(hop * sizeof(double));
  for (size_t r = 0; r < hop; r++) {
    s[r] = 0.0;
    for (size_t i = r; i < n; i += hop) {
      double w = window_formula(window, n, i);
      s[r] += w * w;
    }
  }
  return s;
}

static double
overlap_ratio(CudafftWindow window, size_t n, size_t hop)
{
  double *s = overlap_sum(window, n, hop);
  double lo = s[0], hi = s[0];
  for (size_t r = 1; r < hop; r++) {
    lo = fmin(lo, s[r]);
    hi = fmax(hi, s[r]);
  }
  free(s);
  return lo / hi;
}

/* g[i] = w[i] / S[i mod hop]. */
static double *
synthesis_window(CudafftWindow window, size_t n, size_t hop)
{
  double *s = overlap_sum(window, n, hop);
  double *g = test_malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++)
    g[i] = window_formula(window, n, i) / s[i % hop];
  free(s);
  return g;
}

/* Signals -------------------------------------------------------------------------------------- */

/* Fresh random samples, full scale, for cfg: the values are as the library must read them
 * (integers divided by 2^15 or 2^31, floats as they are). */
static void
make_signal(TestSignal *signal, TestRng *rng, const CudafftStftConfig *cfg, size_t length)
{
  test_signal_random(signal, rng, cfg->format, cfg->channels, 0, length, TEST_READ_POW2);
}

/* Zeros samples [from, from + samples) of every channel. */
static void
zero_signal(TestSignal *signal, size_t from, size_t samples)
{
  for (size_t f = from; f < from + samples; f++)
    for (unsigned c = 0; c < signal->channels; c++)
      test_signal_set(signal, f, c, 0.0);
}

/* Pieces of a push sequence -------------------------------------------------------------------- */

typedef struct {
  size_t samples; /* per channel */
  int zeros;      /* pushed as in == NULL: the signal holds zeros there */
} Piece;

static void
add_piece(Piece *pieces, size_t *count, size_t samples, int zeros)
{
  if (samples == 0)
    return;
  if (*count == MAX_PIECES)
    test_abort("more than %d pieces", MAX_PIECES);
  pieces[(*count)++] = (Piece){samples, zeros};
}

/* Splits length samples into pieces of 1, 17, 1000 and 4096 samples and the rest (fewer where
 * length runs out first). */
static void
add_awkward_pieces(Piece *pieces, size_t *count, size_t length)
{
  static const size_t sizes[] = {1, 17, 1000, 4096};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && length > 0; i++) {
    size_t samples = sizes[i] < length ? sizes[i] : length;
    add_piece(pieces, count, samples, 0);
    length -= samples;
  }
  add_piece(pieces, count, length, 0);
}

/* Splits length samples into random pieces of 1 to about length / 6 samples. */
static void
add_random_pieces(TestRng *rng, Piece *pieces, size_t *count, size_t length)
{
  while (length > 0) {
    size_t samples = *count + 1 == MAX_PIECES ? length : test_rng_range(rng, 1, length / 6 + 1);
    samples = samples < length ? samples : length;
    add_piece(pieces, count, samples, 0);
    length -= samples;
  }
}

static size_t
pieces_length(const Piece *pieces, size_t count)
{
  size_t length = 0;
  for (size_t p = 0; p < count; p++)
    length += pieces[p].samples;
  return length;
}

/* Analysis: running it ------------------------------------------------------------------------- */

/* Creates an analyser and checks what it says of itself; NULL after a reported failure. */
static CudafftStft *
create_stft(CudafftBackend backend, const CudafftStftConfig *cfg, const char *label)
{
  CudafftStft *stft = NULL;
  CudafftStatus status = cudafft_stft_create(&stft, backend, -1, cfg);
  if (status != CUDAFFT_STATUS_OK || !stft) {
    test_check(0, "%s: stft_create on %s: %s: %s", label, test_backend_name(backend),
               cudafft_status_name(status), cudafft_last_error_message());
    return NULL;
  }
  const CudafftBackend got = cudafft_stft_get_backend(stft);
  const size_t floats = cudafft_stft_frame_floats(stft), held = cudafft_stft_held(stft);
  if (got != backend || floats != frame_floats_of(cfg) || held != 0) {
    test_check(0,
               "%s: stft_create gives a %s analyser (want %s) of %zu floats a frame (want %zu)"
               " holding %zu samples (want 0)",
               label, test_backend_name(got), test_backend_name(backend), floats,
               frame_floats_of(cfg), held);
    cudafft_stft_destroy(stft);
    return NULL;
  }
  return stft;
}

/* One push, checked: frames_for() predicts the frames the push returns, which are what the frame
 * arithmetic says (*written so far, *pushed samples so far); held() is what no frame has used
 * yet, less than n; nothing is written past the new frames; the input is unchanged. Advances
 * *pushed and *written. Returns 1, or 0 with the reason in why. */
static int
push_checked(CudafftStft *stft, const CudafftStftConfig *cfg, const void *in, size_t samples,
             float *out, size_t *pushed, size_t *written, int want_count, char *why, size_t size)
{
  const size_t n = cfg->fft_size, hop = cfg->hop;
  const size_t frame_floats = frame_floats_of(cfg);
  const size_t in_bytes = samples * cfg->channels * test_sample_bytes(cfg->format);
  const size_t want = frames_in(*pushed + samples, n, hop) - *written;
  const size_t predicted = cudafft_stft_frames_for(stft, samples);
  if (predicted != want) {
    snprintf(why, size, "frames_for(%zu) after %zu samples says %zu, want %zu", samples, *pushed,
             predicted, want);
    return 0;
  }
  float *dst = out + *written * frame_floats;
  test_poison(dst, want * frame_floats + GUARD);
  const uint64_t in_hash = in ? test_hash(in, in_bytes) : 0;
  size_t frames = (size_t)-1;
  CudafftStatus status = cudafft_stft_push(stft, in, samples, dst, want_count ? &frames : NULL);
  if (status != CUDAFFT_STATUS_OK) {
    snprintf(why, size, "push of %zu samples after %zu: %s (%s)", samples, *pushed,
             cudafft_status_name(status), cudafft_last_error_message());
    return 0;
  }
  *pushed += samples;
  *written += want;
  const size_t overrun = test_count_unpoisoned(dst + want * frame_floats, GUARD);
  const size_t held = cudafft_stft_held(stft), want_held = *pushed - *written * hop;
  if (want_count && frames != want)
    snprintf(why, size, "push of %zu samples after %zu returned %zu frames, want %zu", samples,
             *pushed - samples, frames, want);
  else if (overrun)
    snprintf(why, size, "push of %zu samples after %zu wrote %zu values past its %zu frames",
             samples, *pushed - samples, overrun, want);
  else if (in && test_hash(in, in_bytes) != in_hash)
    snprintf(why, size, "push of %zu samples after %zu modified its input", samples,
             *pushed - samples);
  else if (held != want_held || held >= n)
    snprintf(why, size, "held() is %zu after %zu samples and %zu frames, want %zu", held, *pushed,
             *written, want_held);
  else
    return 1;
  return 0;
}

/* Pushes the pieces of signal (interleaved, cfg->format) into an analyser that has just been
 * created or reset, each push checked by push_checked(), every other one without asking for the
 * frame count. out receives every frame (room for them and GUARD floats). Returns 1, or 0 with
 * the reason in why. */
static int
run_analysis(CudafftStft *stft, const CudafftStftConfig *cfg, const void *signal,
             const Piece *pieces, size_t count, float *out, char *why, size_t size)
{
  const size_t stride = cfg->channels * test_sample_bytes(cfg->format);
  size_t pushed = 0, written = 0;
  for (size_t p = 0; p < count; p++) {
    const void *in = pieces[p].zeros ? NULL : (const unsigned char *)signal + pushed * stride;
    char detail[200];
    if (!push_checked(stft, cfg, in, pieces[p].samples, out, &pushed, &written, p % 2 == 0, detail,
                      sizeof detail)) {
      snprintf(why, size, "push %zu of %zu: %s", p + 1, count, detail);
      return 0;
    }
  }
  return 1;
}

/* Analysis: the reference and the comparison --------------------------------------------------- */

/* Frames 0 .. frames - 1 of x (interleaved doubles), from its first sample: frames x channels rows
 * of n/2 + 1 complex bins in ref. */
static void
analysis_reference(const CudafftStftConfig *cfg, const double *x, size_t frames, double *ref)
{
  const size_t span = frames ? (frames - 1) * cfg->hop + cfg->fft_size : 0;
  stft_reference_frames(cfg->fft_size, cfg->hop, cfg->window, x, cfg->channels, span, 0, frames,
                        ref);
}

/* Relative L2 tolerance: complex and magnitude as the FFT tests; power, being a square, twice. */
static double
representation_tolerance(CudafftRepresentation representation, size_t n)
{
  return (representation == CUDAFFT_REPRESENTATION_POWER ? 2.0 : 1.0) * fft_tolerance(n);
}

static double
db_of_power(double power)
{
  return 10.0 * log10(fmax(power, 1e-20));
}

/* What the library should write for the bin (re, im): part 0 or 1 of it for COMPLEX. */
static double
expected_value(CudafftRepresentation representation, const double *bin, int part)
{
  const double power = bin[0] * bin[0] + bin[1] * bin[1];
  switch (representation) {
  case CUDAFFT_REPRESENTATION_COMPLEX:
    return bin[part];
  case CUDAFFT_REPRESENTATION_MAGNITUDE:
    return sqrt(power);
  case CUDAFFT_REPRESENTATION_POWER:
    return power;
  case CUDAFFT_REPRESENTATION_DB:
  case CUDAFFT_REPRESENTATION_COUNT_:
    break;
  }
  return db_of_power(power);
}

/* What the comparison of a whole output found. */
typedef struct {
  double err2, ref2;      /* L2 sums over the rows compared by L2 */
  double worst_row_error; /* relative L2 error of the worst row */
  size_t worst_row;       /* its index, frame * channels + channel */
  size_t nonfinite;       /* values not finite where finite ones were due */
  size_t first_nonfinite; /* index of the first */
  size_t wrong;           /* values outside their interval (dB bins, rows of zeros) */
  size_t first_wrong;     /* index of the first */
  double wrong_got, wrong_want;
  double worst_db;        /* largest dB error where the bin is above 5 % of its row's rms */
  size_t nan_rows_finite; /* rows due to be non-finite that were all finite */
  size_t zero_rows;       /* rows of silent frames, checked for exact zeros (or -200 dB) */
} Tally;

static void
tally_wrong(Tally *t, size_t index, double got, double want)
{
  if (t->wrong++ == 0) {
    t->first_wrong = index;
    t->wrong_got = got;
    t->wrong_want = want;
  }
}

/* A row whose frame was all zeros: every value exactly 0, or -200 dB within DB_SLACK. */
static void
tally_zero_row(const CudafftStftConfig *cfg, const float *o, size_t base, Tally *t)
{
  const size_t count = frame_floats_of(cfg) / cfg->channels;
  const int db = cfg->representation == CUDAFFT_REPRESENTATION_DB;
  const double want = db ? db_of_power(0.0) : 0.0;
  for (size_t i = 0; i < count; i++)
    if (fabs(o[i] - want) > (db ? DB_SLACK : 0.0))
      tally_wrong(t, base + i, o[i], want);
}

static void
tally_db_row(const CudafftStftConfig *cfg, const float *o, const double *bins, size_t base,
             Tally *t)
{
  const size_t count = bins_of(cfg);
  double sum = 0.0;
  for (size_t k = 0; k < count; k++)
    sum += bins[2 * k] * bins[2 * k] + bins[2 * k + 1] * bins[2 * k + 1];
  const double rms = sqrt(sum / (double)count);
  const double e = DB_ERROR_RMS * fft_tolerance(cfg->fft_size) * rms;
  for (size_t k = 0; k < count; k++) {
    const double m = hypot(bins[2 * k], bins[2 * k + 1]), want = db_of_power(m * m);
    const double lo = db_of_power(fmax(m - e, 0.0) * fmax(m - e, 0.0)) - DB_SLACK;
    const double hi = db_of_power((m + e) * (m + e)) + DB_SLACK;
    if (!(o[k] >= lo && o[k] <= hi))
      tally_wrong(t, base + k, o[k], want);
    if (m > 0.05 * rms)
      t->worst_db = fmax(t->worst_db, fabs(o[k] - want));
  }
}

static void
tally_l2_row(const CudafftStftConfig *cfg, const float *o, const double *bins, size_t row, Tally *t)
{
  const int parts = cfg->representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1;
  double err2 = 0.0, ref2 = 0.0;
  for (size_t k = 0; k < bins_of(cfg); k++)
    for (int part = 0; part < parts; part++) {
      const double want = expected_value(cfg->representation, bins + 2 * k, part);
      const double d = o[k * parts + part] - want;
      err2 += d * d;
      ref2 += want * want;
    }
  t->err2 += err2;
  t->ref2 += ref2;
  const double row_error = sqrt(err2 / ref2);
  if (row_error > t->worst_row_error) {
    t->worst_row_error = row_error;
    t->worst_row = row;
  }
}

static int
is_zero_row(const double *bins, size_t count)
{
  for (size_t i = 0; i < 2 * count; i++)
    if (bins[i] != 0.0)
      return 0;
  return 1;
}

static void
tally_row(const CudafftStftConfig *cfg, const float *out, const double *ref, size_t row,
          int nan_row, Tally *t)
{
  const size_t per_row = frame_floats_of(cfg) / cfg->channels;
  const float *o = out + row * per_row;
  const double *bins = ref + row * bins_of(cfg) * 2;
  size_t first = 0, nonfinite = test_count_nonfinite(o, per_row, &first);
  if (nan_row) {
    t->nan_rows_finite += nonfinite == 0;
    return;
  }
  if (nonfinite) {
    if (t->nonfinite == 0)
      t->first_nonfinite = row * per_row + first;
    t->nonfinite += nonfinite;
  } else if (is_zero_row(bins, bins_of(cfg))) {
    tally_zero_row(cfg, o, row * per_row, t);
    t->zero_rows++;
  } else if (cfg->representation == CUDAFFT_REPRESENTATION_DB) {
    tally_db_row(cfg, o, bins, row * per_row, t);
  } else {
    tally_l2_row(cfg, o, bins, row, t);
  }
}

/* Compares frames of output with the reference, every value: one reported check. Rows flagged
 * in nan_rows (may be NULL) must hold a non-finite value; all others must be finite and correct.
 * Returns whether it passed. */
static int
check_spectra(const CudafftStftConfig *cfg, const float *out, const double *ref, size_t frames,
              const unsigned char *nan_rows, const char *label)
{
  const size_t rows = frames * cfg->channels, per_row = frame_floats_of(cfg) / cfg->channels;
  const double tol = representation_tolerance(cfg->representation, cfg->fft_size);
  const double row_tol = ROW_TOLERANCE_FACTOR * tol;
  Tally t = {0};
  for (size_t r = 0; r < rows; r++)
    tally_row(cfg, out, ref, r, nan_rows && nan_rows[r], &t);

  const double err = t.ref2 > 0.0 ? sqrt(t.err2 / t.ref2) : 0.0;
  const size_t wf = t.first_wrong / per_row / cfg->channels,
               wc = t.first_wrong / per_row % cfg->channels;
  if (t.nonfinite || t.nan_rows_finite)
    return test_check(0,
                      "%s: %zu frames: %zu values not finite (NaN means unwritten), first at "
                      "frame %zu; %zu rows that should be non-finite are finite",
                      label, frames, t.nonfinite, t.first_nonfinite / per_row / cfg->channels,
                      t.nan_rows_finite);
  if (t.wrong)
    return test_check(0,
                      "%s: %zu frames: %zu values outside their bounds, first frame %zu "
                      "channel %zu value %zu: %.7g, want %.7g",
                      label, frames, t.wrong, wf, wc, t.first_wrong % per_row, t.wrong_got,
                      t.wrong_want);
  char silent[80] = "";
  if (t.zero_rows)
    snprintf(silent, sizeof silent, "; %zu rows of silent frames exactly %s", t.zero_rows,
             cfg->representation == CUDAFFT_REPRESENTATION_DB ? "-200 dB" : "0");
  if (cfg->representation == CUDAFFT_REPRESENTATION_DB)
    return test_check(1,
                      "%s: %zu frames: every dB bin within its float-error interval; largest "
                      "error %.1e dB where above 5%% of the row's rms (slack %.0e dB)%s",
                      label, frames, t.worst_db, DB_SLACK, silent);
  const int ok = err <= tol && t.worst_row_error <= row_tol;
  return test_check(ok,
                    "%s: %zu frames: relative L2 error %.2e %s %.2e; worst row (frame %zu "
                    "channel %zu) %.2e %s %.2e%s",
                    label, frames, err, err <= tol ? "<=" : "EXCEEDS", tol,
                    t.worst_row / cfg->channels, t.worst_row % cfg->channels, t.worst_row_error,
                    t.worst_row_error <= row_tol ? "<=" : "EXCEEDS", row_tol, silent);
}

/* Runs the pieces of signal through a fresh or reset analyser and checks the bookkeeping (one
 * check) and every output value against the reference from x (another). */
static void
analyse_and_check(CudafftStft *stft, const CudafftStftConfig *cfg, const TestSignal *signal,
                  const Piece *pieces, size_t count, const unsigned char *nan_rows,
                  const char *label)
{
  const size_t length = pieces_length(pieces, count);
  const size_t frames = frames_in(length, cfg->fft_size, cfg->hop);
  const size_t floats = frames * frame_floats_of(cfg);
  float *out = test_malloc((floats + GUARD) * sizeof(float));
  double *ref = test_malloc((frames * cfg->channels * bins_of(cfg) * 2 + 1) * sizeof(double));
  char why[320];
  int ok = run_analysis(stft, cfg, signal->raw, pieces, count, out, why, sizeof why);
  test_check(ok, "%s: %zu samples in %zu pushes: frames_for, frames, held as predicted%s%s", label,
             length, count, ok ? "" : ": ", ok ? "" : why);
  if (ok) {
    analysis_reference(cfg, signal->values, frames, ref);
    check_spectra(cfg, out, ref, frames, nan_rows, label);
  }
  free(out);
  free(ref);
}

/* A fresh random signal of `length` samples through an analyser that is new or has just been reset,
 * in awkward pieces, checked by analyse_and_check. */
static void
analyse_fresh_signal(CudafftStft *stft, const CudafftStftConfig *cfg, TestRng *rng, size_t length,
                     const char *label)
{
  TestSignal signal;
  make_signal(&signal, rng, cfg, length);
  Piece pieces[MAX_PIECES];
  size_t count = 0;
  add_awkward_pieces(pieces, &count, length);
  analyse_and_check(stft, cfg, &signal, pieces, count, NULL, label);
  test_signal_clear(&signal);
}

/* Analysis: the cases -------------------------------------------------------------------------- */

typedef struct {
  size_t n, hop;
  CudafftWindow window;
  CudafftRepresentation representation;
  CudafftSampleFormat format;
  unsigned channels;
  size_t frames; /* the signal makes this many frames and part of another */
} AnalysisCase;

#define RECT CUDAFFT_WINDOW_RECTANGULAR
#define HANN CUDAFFT_WINDOW_HANN
#define HAMMING CUDAFFT_WINDOW_HAMMING
#define BLACKMAN CUDAFFT_WINDOW_BLACKMAN
#define BH CUDAFFT_WINDOW_BLACKMAN_HARRIS
#define CPX CUDAFFT_REPRESENTATION_COMPLEX
#define MAG CUDAFFT_REPRESENTATION_MAGNITUDE
#define POW CUDAFFT_REPRESENTATION_POWER
#define DB CUDAFFT_REPRESENTATION_DB
#define S16 CUDAFFT_SAMPLE_S16
#define S32 CUDAFFT_SAMPLE_S32
#define F32 CUDAFFT_SAMPLE_F32
#define F64 CUDAFFT_SAMPLE_F64

/* Every size class with hops n/2, n/4 and an odd one, then every window, representation, format
 * and channel count spread over them; and hop 1, hop n, the most channels. */
static const AnalysisCase analysis_cases[] = {
    {256, 128, HANN, CPX, F32, 1, 8},
    {256, 64, HAMMING, MAG, S16, 2, 8},
    {256, 129, BLACKMAN, POW, S32, 3, 8},
    {256, 128, BH, DB, F64, 8, 8},
    {256, 64, RECT, CPX, S16, 3, 8},
    {256, 129, HANN, DB, S32, 8, 8},
    {256, 1, HANN, CPX, F32, 1, 5000},
    {256, 256, RECT, POW, F32, 2, 8},
    {256, 256, HAMMING, CPX, S16, CUDAFFT_MAX_CHANNELS, 3},
    {1024, 512, HAMMING, CPX, S32, 8, 8},
    {1024, 256, BLACKMAN, DB, F32, 1, 8},
    {1024, 1001, BH, MAG, F64, 2, 8},
    {1024, 512, RECT, POW, S16, 3, 8},
    {1024, 256, HANN, POW, F64, 8, 8},
    {1024, 1001, HAMMING, CPX, F32, 3, 8},
    {1024, 512, BLACKMAN, MAG, S32, 1, 8},
    {1024, 256, BH, CPX, S16, 2, 8},
    {4096, 2048, BLACKMAN, CPX, F64, 3, 8},
    {4096, 1024, BH, POW, S32, 1, 8},
    {4096, 1001, RECT, DB, S16, 8, 8},
    {4096, 2048, HANN, MAG, F32, 2, 8},
    {4096, 1024, HAMMING, DB, F64, 3, 8},
    {4096, 2049, BLACKMAN, CPX, S32, 2, 8},
    {4096, 2048, BH, MAG, S16, 8, 8},
    {4096, 1024, RECT, CPX, F32, 1, 8},
    {16384, 8192, BH, CPX, S16, 2, 8},
    {16384, 4096, RECT, MAG, F64, 1, 8},
    {16384, 1001, HANN, POW, F32, 8, 8},
    {16384, 8192, HAMMING, DB, S32, 3, 8},
    {16384, 4096, BLACKMAN, CPX, F32, 8, 8},
    {16384, 12289, BH, DB, F64, 1, 8},
    {16384, 8192, RECT, CPX, S32, 2, 8},
    {16384, 4096, HANN, MAG, S16, 3, 8},
    /* sizes on the mixed-radix kernels: the smallest powers of two, Whisper's 400 / 160, 10 ms
     * at 48 kHz, odd sizes (complex transforms), every radix, the largest */
    {16, 8, HANN, CPX, F32, 2, 8},
    {16, 3, BH, DB, S16, 1, 8},
    {128, 32, HAMMING, POW, F64, 3, 8},
    {400, 160, HANN, CPX, F32, 1, 8},
    {400, 160, HANN, POW, S16, 2, 8},
    {480, 240, HAMMING, DB, S32, 2, 8},
    {480, 120, BLACKMAN, CPX, F64, 8, 8},
    {1000, 250, HANN, MAG, F32, 3, 8},
    {1000, 501, RECT, CPX, S16, 1, 8},
    {3000, 1500, BH, CPX, F32, 2, 8},
    {3000, 750, HANN, DB, F64, 1, 8},
    {25, 5, HANN, CPX, F32, 2, 8},
    {375, 125, HAMMING, POW, S32, 3, 8},
    {1029, 343, BLACKMAN, CPX, F64, 1, 8},
    {2187, 729, RECT, MAG, S16, 2, 8},
    {15625, 5000, HANN, CPX, F32, 1, 8},
    {16200, 4050, BH, CPX, S32, 2, 8},
    {3000, 1, HANN, CPX, F32, 1, 300},
    {400, 160, HANN, CPX, S16, CUDAFFT_MAX_CHANNELS, 3},
};

static void
check_analysis_case(CudafftBackend backend, const AnalysisCase *ac)
{
  const CudafftStftConfig cfg =
      make_config(ac->n, ac->hop, ac->window, ac->representation, ac->format, ac->channels);
  char label[128];
  describe(&cfg, label, sizeof label);
  CudafftStft *stft = create_stft(backend, &cfg, label);
  if (!stft)
    return;
  TestRng rng = test_rng("%s", label);
  const size_t length = ac->n + ac->frames * ac->hop + test_rng_range(&rng, 0, ac->hop - 1);
  TestSignal signal;
  make_signal(&signal, &rng, &cfg, length);
  Piece pieces[MAX_PIECES];
  size_t count = 0;
  add_awkward_pieces(pieces, &count, length);
  analyse_and_check(stft, &cfg, &signal, pieces, count, NULL, label);

  /* The same signal again after a reset, in random pieces: the same frames. */
  cudafft_stft_reset(stft);
  count = 0;
  add_random_pieces(&rng, pieces, &count, length);
  char again[192];
  snprintf(again, sizeof again, "%s, again in random pieces", label);
  analyse_and_check(stft, &cfg, &signal, pieces, count, NULL, again);
  cudafft_stft_destroy(stft);
  test_signal_clear(&signal);
}

/* in == NULL and reset ------------------------------------------------------------------------- */

/* A signal with stretches of zeros, pushed once with those stretches as in == NULL and, after a
 * reset, once as explicit zeros: both against the same reference, frames wholly inside the zeros
 * exactly 0 (or -200 dB). Then a reset in the middle of a frame and a fresh signal, which must
 * come out as if the analyser were new. */
static void
check_zeros_and_reset(CudafftBackend backend, CudafftRepresentation representation)
{
  const CudafftStftConfig cfg = make_config(1024, 256, HANN, representation, S16, 2);
  char label[320], base[128];
  describe(&cfg, base, sizeof base);
  CudafftStft *stft = create_stft(backend, &cfg, base);
  if (!stft)
    return;
  TestRng rng = test_rng("%s zeros and reset", base);
  Piece pieces[MAX_PIECES];
  size_t count = 0;
  add_piece(pieces, &count, 700, 0);
  add_piece(pieces, &count, 3000, 1); /* frames 3 .. 10 lie wholly inside */
  add_piece(pieces, &count, 1, 0);
  add_piece(pieces, &count, 1499, 0);
  add_piece(pieces, &count, 17, 1);
  add_piece(pieces, &count, 900 + test_rng_range(&rng, 0, 255), 0);
  add_piece(pieces, &count, 5, 1);
  const size_t length = pieces_length(pieces, count);
  TestSignal signal;
  make_signal(&signal, &rng, &cfg, length);
  for (size_t p = 0, at = 0; p < count; at += pieces[p++].samples)
    if (pieces[p].zeros)
      zero_signal(&signal, at, pieces[p].samples);

  snprintf(label, sizeof label, "%s, zeros pushed as in == NULL", base);
  analyse_and_check(stft, &cfg, &signal, pieces, count, NULL, label);

  cudafft_stft_reset(stft);
  for (size_t p = 0; p < count; p++)
    pieces[p].zeros = 0;
  snprintf(label, sizeof label, "%s, after reset, the same zeros pushed explicitly", base);
  analyse_and_check(stft, &cfg, &signal, pieces, count, NULL, label);
  test_signal_clear(&signal);

  /* Leave part of a frame held, then reset: the next push starts a new signal. */
  const size_t partial = 1500;
  TestSignal junk;
  make_signal(&junk, &rng, &cfg, partial);
  /* (continuing the signal above, which ended part-way into a frame) */
  const size_t junk_frames = cudafft_stft_frames_for(stft, partial);
  float *junk_out = test_malloc((junk_frames * frame_floats_of(&cfg) + GUARD) * sizeof(float));
  CudafftStatus status = cudafft_stft_push(stft, junk.raw, partial, junk_out, NULL);
  const size_t held_before = cudafft_stft_held(stft);
  cudafft_stft_reset(stft);
  const size_t held_after = cudafft_stft_held(stft);
  test_check(status == CUDAFFT_STATUS_OK && held_before > 0 && held_after == 0,
             "%s: push %s, holding %zu samples; after reset held() is %zu", base,
             cudafft_status_name(status), held_before, held_after);
  test_signal_clear(&junk);
  free(junk_out);

  snprintf(label, sizeof label, "%s, new signal after a reset mid-frame", base);
  analyse_fresh_signal(stft, &cfg, &rng, 3000 + test_rng_range(&rng, 0, 1000), label);
  cudafft_stft_destroy(stft);
}

/* NaN ------------------------------------------------------------------------------------------ */

/* A NaN in one sample of one channel spoils that channel's rows of the frames that contain the
 * sample and nothing else (in dB too, where it must not pass for silence); a NaN held in the
 * unfinished tail is gone after a reset. */
static void
check_nan(CudafftBackend backend, CudafftRepresentation representation)
{
  const CudafftStftConfig cfg = make_config(256, 64, BLACKMAN, representation, F32, 3);
  const size_t n = cfg.fft_size, hop = cfg.hop, channels = cfg.channels;
  char label[320], base[128];
  describe(&cfg, base, sizeof base);
  TestRng rng = test_rng("%s NaN", base);
  const size_t length = n + 40 * hop + test_rng_range(&rng, 1, hop - 1);
  const size_t frames = frames_in(length, n, hop);
  const size_t t0 = test_rng_range(&rng, 800, 1600), c0 = 1;
  CudafftStft *stft = create_stft(backend, &cfg, base);
  if (!stft)
    return;
  TestSignal signal;
  make_signal(&signal, &rng, &cfg, length);
  test_signal_set(&signal, t0, c0, NAN);
  /* and in the last sample, which no complete frame reaches */
  test_signal_set(&signal, length - 1, 0, NAN);
  unsigned char *nan_rows = calloc(frames * channels, 1);
  if (!nan_rows)
    test_abort("no memory");
  size_t spoilt = 0;
  for (size_t f = 0; f < frames; f++)
    if (f * hop <= t0 && t0 < f * hop + n) {
      nan_rows[f * channels + c0] = 1;
      spoilt++;
    }
  Piece pieces[MAX_PIECES];
  size_t count = 0;
  add_awkward_pieces(pieces, &count, length);
  snprintf(label, sizeof label,
           "%s, NaN at sample %zu channel %zu: %zu rows non-finite, the rest "
           "finite and correct",
           base, t0, c0, spoilt);
  analyse_and_check(stft, &cfg, &signal, pieces, count, nan_rows, label);
  test_signal_clear(&signal);
  free(nan_rows);

  cudafft_stft_reset(stft);
  snprintf(label, sizeof label, "%s, after a NaN and a reset", base);
  analyse_fresh_signal(stft, &cfg, &rng, 2000 + test_rng_range(&rng, 0, 500), label);
  cudafft_stft_destroy(stft);
}

/* Push errors ---------------------------------------------------------------------------------- */

/* A push that would complete frames with out == NULL fails with NULL_POINTER and, as the header
 * says of every failure, resets the analyser: held() is 0 and the next push starts a new signal,
 * its frame 0 at that push's first sample. */
static void
check_push_errors(CudafftBackend backend)
{
  const CudafftStftConfig cfg = make_config(256, 128, HANN, CPX, F32, 2);
  const size_t first = 200, second = 300, length = first + second;
  const size_t frames = frames_in(second, 256, 128);
  char base[160];
  describe(&cfg, base, sizeof base);
  CudafftStft *stft = create_stft(backend, &cfg, base);
  if (!stft)
    return;
  TestRng rng = test_rng("%s push errors", base);
  TestSignal signal;
  make_signal(&signal, &rng, &cfg, length);
  const float *samples = (const float *)signal.raw;
  /* room for the frames of the whole signal, should the failed push not have reset */
  const size_t room = frames_in(length, 256, 128) * frame_floats_of(&cfg) + GUARD;
  float *out = test_malloc(room * sizeof(float));
  double *ref = test_malloc(frames * cfg.channels * bins_of(&cfg) * 2 * sizeof(double));

  CudafftStatus s1 = cudafft_stft_push(stft, samples, first, out, NULL);
  CudafftStatus s2 = cudafft_stft_push(stft, samples + first * cfg.channels, second, NULL, NULL);
  const size_t held = cudafft_stft_held(stft);
  test_check(s1 == CUDAFFT_STATUS_OK && s2 == CUDAFFT_STATUS_NULL_POINTER && held == 0,
             "%s: push completing frames with out == NULL -> %s (want %s), held() %zu (want 0: a "
             "failure resets)",
             base, cudafft_status_name(s2), cudafft_status_name(CUDAFFT_STATUS_NULL_POINTER), held);
  size_t got = 0;
  test_poison(out, room);
  CudafftStatus s3 = cudafft_stft_push(stft, samples + first * cfg.channels, second, out, &got);
  if (test_check(s3 == CUDAFFT_STATUS_OK && got == frames &&
                     test_count_unpoisoned(out + frames * frame_floats_of(&cfg), GUARD) == 0,
                 "%s: the same push again with out -> %s, %zu frames (want %zu)", base,
                 cudafft_status_name(s3), got, frames)) {
    analysis_reference(&cfg, signal.values + first * cfg.channels, frames, ref);
    check_spectra(&cfg, out, ref, frames, NULL,
                  "  ... and they are the frames of a signal starting at that push");
  }
  test_signal_clear(&signal);
  free(out);
  free(ref);
  cudafft_stft_destroy(stft);
}

/* Synthesis: running it ------------------------------------------------------------------------ */

static CudafftIstft *
create_istft(CudafftBackend backend, const CudafftStftConfig *cfg, const char *label)
{
  CudafftIstft *istft = NULL;
  CudafftStatus status = cudafft_istft_create(&istft, backend, -1, cfg);
  if (status != CUDAFFT_STATUS_OK || !istft) {
    test_check(0, "%s: istft_create on %s: %s: %s", label, test_backend_name(backend),
               cudafft_status_name(status), cudafft_last_error_message());
    return NULL;
  }
  const CudafftBackend got = cudafft_istft_get_backend(istft);
  if (got != backend) {
    test_check(0, "%s: istft_create gives a %s synthesiser, want %s", label, test_backend_name(got),
               test_backend_name(backend));
    cudafft_istft_destroy(istft);
    return NULL;
  }
  return istft;
}

/* Pushes frames of complex spectra in pieces of piece_frames[] frames (fewer where the frames run
 * out; the rest in a last push), then drains. Each call must return OK, write nothing past its
 * samples and leave its input alone. out receives frames x hop + n - hop samples per channel
 * (room for GUARD floats more). Returns 1, or 0 with the reason in why. */
static int
run_synthesis(CudafftIstft *istft, const CudafftStftConfig *cfg, const float *spectra,
              size_t frames, const size_t *piece_frames, size_t pieces, float *out, char *why,
              size_t size)
{
  const size_t frame_floats = frame_floats_of(cfg), step = cfg->hop * cfg->channels;
  size_t done = 0;
  for (size_t p = 0; done < frames; p++) {
    size_t count = p < pieces ? piece_frames[p] : frames - done;
    count = count < frames - done ? count : frames - done;
    const float *in = spectra + done * frame_floats;
    float *dst = out + done * step;
    const uint64_t hash = test_hash(in, count * frame_floats * sizeof(float));
    test_poison(dst, count * step + GUARD);
    CudafftStatus status = cudafft_istft_push(istft, in, count, dst);
    const size_t overrun = test_count_unpoisoned(dst + count * step, GUARD);
    if (status != CUDAFFT_STATUS_OK || overrun ||
        test_hash(in, count * frame_floats * sizeof(float)) != hash) {
      snprintf(why, size,
               "istft_push of %zu frames after %zu: %s (%s), %zu values written past "
               "its samples, input %s",
               count, done, cudafft_status_name(status), status ? cudafft_last_error_message() : "",
               overrun,
               test_hash(in, count * frame_floats * sizeof(float)) != hash ? "MODIFIED"
                                                                           : "unchanged");
      return 0;
    }
    done += count;
  }
  const size_t tail = (cfg->fft_size - cfg->hop) * cfg->channels;
  float *dst = out + frames * step;
  test_poison(dst, tail + GUARD);
  CudafftStatus status = cudafft_istft_drain(istft, dst);
  const size_t overrun = test_count_unpoisoned(dst + tail, GUARD);
  if (status != CUDAFFT_STATUS_OK || overrun) {
    snprintf(why, size,
             "istft_drain after %zu frames: %s (%s), %zu values written past its "
             "samples",
             frames, cudafft_status_name(status), status ? cudafft_last_error_message() : "",
             overrun);
    return 0;
  }
  return 1;
}

/* The relative L2 error and the largest error of out against ref, every value: one check.
 * abs_tol may be INFINITY. */
static int
check_samples(const float *out, const double *ref, size_t count, double rel_tol, double abs_tol,
              const char *label)
{
  size_t first = 0, nonfinite = test_count_nonfinite(out, count, &first);
  if (nonfinite)
    return test_check(0, "%s: %zu of %zu samples not finite (NaN means unwritten), first at %zu",
                      label, nonfinite, count, first);
  double err2 = 0.0, ref2 = 0.0, worst = 0.0;
  size_t worst_at = 0;
  for (size_t i = 0; i < count; i++) {
    const double d = fabs(out[i] - ref[i]);
    err2 += d * d;
    ref2 += ref[i] * ref[i];
    if (d > worst) {
      worst = d;
      worst_at = i;
    }
  }
  const double err = sqrt(err2 / ref2);
  return test_check(err <= rel_tol && worst <= abs_tol,
                    "%s: %zu samples: relative L2 error %.2e %s %.2e, largest error %.2e at %zu%s",
                    label, count, err, err <= rel_tol ? "<=" : "EXCEEDS", rel_tol, worst, worst_at,
                    worst <= abs_tol ? "" : " EXCEEDS the bound");
}

/* Synthesis against its formula ---------------------------------------------------------------- */

typedef struct {
  size_t n, hop;
  CudafftWindow window;
  unsigned channels;
} SynthesisCase;

/* The header's synthesis in double: each frame's real inverse DFT (imaginary parts of bins 0 and
 * n/2 taken as zero) / n, times g, overlap-added at f hop; frames x hop + n - hop samples per
 * channel, interleaved, in y. */
static void
synthesis_reference(const CudafftStftConfig *cfg, const float *spectra, size_t frames, double *y)
{
  const size_t n = cfg->fft_size, bins = bins_of(cfg), channels = cfg->channels;
  double *g = synthesis_window(cfg->window, n, cfg->hop);
  fftw_complex *in = fftw_malloc(bins * sizeof(fftw_complex));
  double *frame = fftw_malloc(n * sizeof(double));
  fftw_plan plan = in && frame ? fftw_plan_dft_c2r_1d((int)n, in, frame, FFTW_ESTIMATE) : NULL;
  if (!plan)
    test_abort("FFTW double could not plan a C2R of n=%zu", n);
  memset(y, 0, ((frames - 1) * cfg->hop + n) * channels * sizeof(double));
  for (size_t f = 0; f < frames; f++)
    for (size_t c = 0; c < channels; c++) {
      const float *src = spectra + (f * channels + c) * bins * 2;
      for (size_t k = 0; k < bins; k++) {
        in[k][0] = src[2 * k];
        /* the imaginary parts synthesis ignores: bin 0's, and bin n/2's of an even n */
        in[k][1] = k == 0 || (k == bins - 1 && n % 2 == 0) ? 0.0 : src[2 * k + 1];
      }
      fftw_execute(plan); /* destroys in, which is refilled for every frame */
      for (size_t i = 0; i < n; i++)
        y[(f * cfg->hop + i) * channels + c] += frame[i] / (double)n * g[i];
    }
  fftw_destroy_plan(plan);
  fftw_free(in);
  fftw_free(frame);
  free(g);
}

static void
check_synthesis_reference(CudafftBackend backend, const SynthesisCase *sc)
{
  const CudafftStftConfig cfg = make_config(sc->n, sc->hop, sc->window, CPX, F32, sc->channels);
  char label[320], base[128];
  describe(&cfg, base, sizeof base);
  TestRng rng = test_rng("%s synthesis", base);
  const size_t bins = bins_of(&cfg), frames = test_rng_range(&rng, 5, 12);
  const size_t samples = (frames * cfg.hop + cfg.fft_size - cfg.hop) * cfg.channels;
  CudafftIstft *istft = create_istft(backend, &cfg, base);
  if (!istft)
    return;
  float *spectra = test_malloc(frames * frame_floats_of(&cfg) * sizeof(float));
  float *out = test_malloc((samples + GUARD) * sizeof(float));
  double *ref = test_malloc(samples * sizeof(double));
  test_rng_fill(&rng, spectra, frames * frame_floats_of(&cfg));
  /* Large imaginary parts for bins 0 and n/2 (even n), which synthesis must ignore; an odd n's
   * last bin is an ordinary one. */
  for (size_t row = 0; row < frames * cfg.channels; row++) {
    spectra[row * bins * 2 + 1] = 100.0f * (float)test_rng_uniform(&rng);
    if (cfg.fft_size % 2 == 0)
      spectra[row * bins * 2 + 2 * bins - 1] = 100.0f * (float)test_rng_uniform(&rng);
  }
  synthesis_reference(&cfg, spectra, frames, ref);
  static const size_t piece_frames[] = {2, 1};
  char why[320];
  snprintf(label, sizeof label, "%s, istft of %zu random frames against the formula", base, frames);
  if (run_synthesis(istft, &cfg, spectra, frames, piece_frames, 2, out, why, sizeof why))
    check_samples(out, ref, samples, SYNTHESIS_TOLERANCE(cfg.fft_size), INFINITY, label);
  else
    test_check(0, "%s: %s", label, why);
  free(spectra);
  free(out);
  free(ref);
  cudafft_istft_destroy(istft);
}

/* Round trips ---------------------------------------------------------------------------------- */

/* One analysis-synthesis pass over fresh random samples: n - hop zeros (in == NULL), the samples
 * in awkward pieces, n zeros (in == NULL), so that every sample lies in all the frames that
 * cover it; the frames into synthesis in pieces of piece_frames, then a drain. The output must be
 * that whole signal, zeros included (the first n - hop samples too: a sum of silent parts). */
static void
round_trip_pass(CudafftStft *stft, CudafftIstft *istft, const CudafftStftConfig *cfg,
                const size_t *piece_frames, size_t pieces, const char *label)
{
  const size_t n = cfg->fft_size, hop = cfg->hop, channels = cfg->channels;
  TestRng rng = test_rng("%s", label);
  const size_t input = 4 * n + test_rng_range(&rng, 1, hop - 1);
  Piece list[MAX_PIECES];
  size_t count = 0;
  add_piece(list, &count, n - hop, 1);
  add_awkward_pieces(list, &count, input);
  add_piece(list, &count, n, 1);
  const size_t length = pieces_length(list, count), frames = frames_in(length, n, hop);
  const size_t samples = (frames * hop + n - hop) * channels;
  TestSignal signal;
  make_signal(&signal, &rng, cfg, length);
  zero_signal(&signal, 0, n - hop);
  zero_signal(&signal, length - n, n);
  float *spectra = test_malloc((frames * frame_floats_of(cfg) + GUARD) * sizeof(float));
  float *out = test_malloc((samples + GUARD) * sizeof(float));
  char why[320];
  if (!run_analysis(stft, cfg, signal.raw, list, count, spectra, why, sizeof why))
    test_check(0, "%s: analysis: %s", label, why);
  else if (!run_synthesis(istft, cfg, spectra, frames, piece_frames, pieces, out, why, sizeof why))
    test_check(0, "%s: synthesis: %s", label, why);
  else
    check_samples(out, signal.values, samples, ROUND_TRIP_REL_TOLERANCE, ROUND_TRIP_ABS_TOLERANCE,
                  label);
  test_signal_clear(&signal);
  free(spectra);
  free(out);
}

/* Two passes through the same pair of objects: the first after some junk frames and an
 * istft_reset, the second relying on the drain's reset (and stft_reset). */
static void
check_round_trip(CudafftBackend backend, const SynthesisCase *sc)
{
  const CudafftStftConfig cfg = make_config(sc->n, sc->hop, sc->window, CPX, F32, sc->channels);
  char label[320], base[128];
  describe(&cfg, base, sizeof base);
  CudafftStft *stft = create_stft(backend, &cfg, base);
  CudafftIstft *istft = stft ? create_istft(backend, &cfg, base) : NULL;
  if (!istft) {
    cudafft_stft_destroy(stft);
    return;
  }
  const size_t junk_frames = 2, junk_floats = junk_frames * frame_floats_of(&cfg);
  float *junk = test_malloc(junk_floats * sizeof(float));
  float *junk_out = test_malloc(junk_frames * cfg.hop * cfg.channels * sizeof(float));
  TestRng rng = test_rng("%s junk frames", base);
  test_rng_fill(&rng, junk, junk_floats);
  CudafftStatus status = cudafft_istft_push(istft, junk, junk_frames, junk_out);
  if (status != CUDAFFT_STATUS_OK)
    test_check(0, "%s: istft_push of junk frames: %s", base, cudafft_status_name(status));
  cudafft_istft_reset(istft);
  free(junk);
  free(junk_out);

  static const size_t first[] = {1, 3, 7}, second[] = {5, 2};
  snprintf(label, sizeof label, "%s, round trip after istft_reset", base);
  round_trip_pass(stft, istft, &cfg, first, 3, label);
  cudafft_stft_reset(stft);
  snprintf(label, sizeof label, "%s, round trip again after the drain", base);
  round_trip_pass(stft, istft, &cfg, second, 2, label);
  cudafft_stft_destroy(stft);
  cudafft_istft_destroy(istft);
}

/* Every size, hops n/2 and n/4, every window on several sizes, 1, 2 and 8 channels. */
static const SynthesisCase round_trip_cases[] = {
    {256, 128, HANN, 1},
    {256, 64, RECT, 2},
    {512, 256, HAMMING, 8},
    {512, 128, BLACKMAN, 1},
    {1024, 512, BH, 2},
    {1024, 256, HANN, 8},
    {2048, 1024, RECT, 1},
    {2048, 512, HAMMING, 2},
    {4096, 2048, BLACKMAN, 8},
    {4096, 1024, BH, 1},
    {8192, 4096, HANN, 2},
    {8192, 2048, RECT, 8},
    {16384, 8192, BLACKMAN, 1},
    {16384, 4096, HAMMING, 8},
    {16384, 8192, BH, 2},
    {256, 128, BH, 8},
    /* the mixed-radix kernels' sizes: even (real split) and odd (complex) */
    {16, 8, HANN, 1},
    {16, 4, BLACKMAN, 2},
    {400, 200, HANN, 2},
    {400, 160, HAMMING, 1},
    {480, 240, HANN, 8},
    {1000, 250, BH, 2},
    {3000, 1500, HANN, 1},
    {3000, 750, BLACKMAN, 2},
    {25, 5, HANN, 1},
    {375, 125, HAMMING, 2},
    {1125, 375, HANN, 1},
    {2187, 729, BH, 2},
    {15625, 3125, HANN, 1},
};

/* Against the formula: odd and uneven hops too, whose overlap sums are not constant. */
static const SynthesisCase synthesis_cases[] = {
    {256, 64, HANN, 2},  {1024, 513, RECT, 1},      {2048, 768, HANN, 3},
    {4096, 1024, BH, 3}, {8192, 2731, BLACKMAN, 1}, {16384, 8192, HAMMING, 2},
    {16, 5, HANN, 1},    {400, 160, HANN, 2},       {1000, 333, RECT, 1},
    {27, 9, HAMMING, 2}, {1225, 400, BH, 1},        {16000, 4000, HANN, 1},
};

/* Which pairs synthesis supports --------------------------------------------------------------- */

static void
expect_synthesis(CudafftWindow window, size_t n, size_t hop, CudafftStatus want, const char *what)
{
  double ratio = -1.0;
  const double expected = overlap_ratio(window, n, hop);
  CudafftStatus status = cudafft_stft_check_synthesis(window, n, hop, &ratio);
  const int ratio_ok = fabs(ratio - expected) <= 1e-9 ||
                       (status != CUDAFFT_STATUS_OK && ratio == -1.0); /* untouched on failure */
  const int message_ok = status == CUDAFFT_STATUS_OK || *cudafft_last_error_message();
  test_check(status == want && ratio_ok && message_ok,
             "check_synthesis(%s, n=%zu, hop=%zu%s) -> %s (want %s), ratio %.6g (min S / max S "
             "%.6g)%s",
             window_names[window], n, hop, what, cudafft_status_name(status),
             cudafft_status_name(want), ratio, expected, message_ok ? "" : ", no message");
}

/* For every window on a grid of sizes and hops: OK exactly where min S / max S >= 1 %, and the
 * ratio reported as computed here. */
static void
check_synthesis_grid(void)
{
  static const size_t sizes[] = {16, 256, 400, 1125, 2048, 16384};
  size_t pairs = 0, mismatches = 0;
  for (int w = 0; w < CUDAFFT_WINDOW_COUNT_; w++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      const size_t n = sizes[s];
      const size_t hops[] = {1,         n / 8,     n / 4,         n / 3,     n / 2, n / 2 + 1,
                             5 * n / 8, 3 * n / 4, 3 * n / 4 + 1, 7 * n / 8, n - 1, n};
      for (size_t h = 0; h < sizeof hops / sizeof hops[0]; h++) {
        const double expected = overlap_ratio((CudafftWindow)w, n, hops[h]);
        if (fabs(expected - 0.01) < 1e-9)
          continue; /* on the threshold: either answer is right */
        double ratio = -1.0;
        CudafftStatus status = cudafft_stft_check_synthesis((CudafftWindow)w, n, hops[h], &ratio);
        CudafftStatus want = expected >= 0.01 ? CUDAFFT_STATUS_OK : CUDAFFT_STATUS_UNSUPPORTED;
        int ratio_ok =
            fabs(ratio - expected) <= 1e-9 || (status != CUDAFFT_STATUS_OK && ratio == -1.0);
        pairs++;
        if (status != want || !ratio_ok) {
          if (mismatches++ < 10)
            printf("  check_synthesis(%s, n=%zu, hop=%zu) -> %s, ratio %.6g; want %s, %.6g\n",
                   window_names[w], n, hops[h], cudafft_status_name(status), ratio,
                   cudafft_status_name(want), expected);
        }
      }
    }
  test_check(mismatches == 0,
             "check_synthesis on %zu window, size and hop pairs: OK exactly where min S / max S "
             ">= 0.01, ratio as computed here (%zu mismatches)",
             pairs, mismatches);
}

static void
expect_check_invalid(CudafftWindow window, size_t n, size_t hop, CudafftStatus want,
                     const char *what)
{
  double ratio = 0.5;
  CudafftStatus status = cudafft_stft_check_synthesis(window, n, hop, &ratio);
  test_check(status == want, "check_synthesis(%s) -> %s (want %s)", what,
             cudafft_status_name(status), cudafft_status_name(want));
}

static void
check_synthesis_support(void)
{
  static const size_t sizes[] = {256, 400, 480, 4096, 16384};
  for (int w = 0; w < CUDAFFT_WINDOW_COUNT_; w++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      expect_synthesis((CudafftWindow)w, sizes[s], sizes[s] / 2, CUDAFFT_STATUS_OK, " = n/2");
      expect_synthesis((CudafftWindow)w, sizes[s], sizes[s] / 4, CUDAFFT_STATUS_OK, " = n/4");
    }
  expect_synthesis(HANN, 1024, 1024, CUDAFFT_STATUS_UNSUPPORTED, " = n");
  expect_synthesis(BLACKMAN, 1024, 1024, CUDAFFT_STATUS_UNSUPPORTED, " = n");
  expect_synthesis(BH, 1024, 768, CUDAFFT_STATUS_UNSUPPORTED, " = 3n/4");
  expect_synthesis(BH, 16384, 12288, CUDAFFT_STATUS_UNSUPPORTED, " = 3n/4");
  expect_synthesis(RECT, 1024, 1024, CUDAFFT_STATUS_OK, " = n");
  test_check(cudafft_stft_check_synthesis(HANN, 1024, 256, NULL) == CUDAFFT_STATUS_OK,
             "check_synthesis(hann, n=1024, hop=256, ratio NULL) -> OK");
  check_synthesis_grid();

  expect_check_invalid(CUDAFFT_WINDOW_COUNT_, 1024, 512, CUDAFFT_STATUS_INVALID_VALUE,
                       "window COUNT_");
  expect_check_invalid((CudafftWindow)-1, 1024, 512, CUDAFFT_STATUS_INVALID_VALUE, "window -1");
  expect_check_invalid(HANN, 1001, 500, CUDAFFT_STATUS_INVALID_SIZE, "n=1001");
  expect_check_invalid(HANN, 8, 4, CUDAFFT_STATUS_INVALID_SIZE, "n=8");
  expect_check_invalid(HANN, 32768, 16384, CUDAFFT_STATUS_INVALID_SIZE, "n=32768");
  expect_check_invalid(HANN, 0, 1, CUDAFFT_STATUS_INVALID_SIZE, "n=0");
  expect_check_invalid(HANN, 1024, 0, CUDAFFT_STATUS_INVALID_VALUE, "hop=0");
  expect_check_invalid(HANN, 1024, 1025, CUDAFFT_STATUS_INVALID_VALUE, "n=1024, hop=1025");
}

/* Creation errors ------------------------------------------------------------------------------ */

/* create must fail with want and set the object pointer to NULL (it starts non-NULL here, so that
 * leaving it alone shows), with a message. */
static void
expect_create_fails(CudafftStatus want, int synthesis, CudafftBackend backend, int device_id,
                    const CudafftStftConfig *cfg, const char *what)
{
  static char sentinel;
  void *object = &sentinel;
  CudafftStatus status =
      synthesis ? cudafft_istft_create((CudafftIstft **)&object, backend, device_id, cfg)
                : cudafft_stft_create((CudafftStft **)&object, backend, device_id, cfg);
  test_check(status == want && object == NULL && *cudafft_last_error_message(),
             "%s(%s) -> %s (want %s), pointer %s, message \"%s\"",
             synthesis ? "istft_create" : "stft_create", what, cudafft_status_name(status),
             cudafft_status_name(want), object ? "NOT NULL" : "NULL", cudafft_last_error_message());
  if (status == CUDAFFT_STATUS_OK && object != &sentinel) {
    if (synthesis)
      cudafft_istft_destroy(object);
    else
      cudafft_stft_destroy(object);
  }
}

static void
expect_create_ok(int synthesis, CudafftBackend backend, const CudafftStftConfig *cfg,
                 const char *what)
{
  void *object = NULL;
  CudafftStatus status = synthesis
                             ? cudafft_istft_create((CudafftIstft **)&object, backend, -1, cfg)
                             : cudafft_stft_create((CudafftStft **)&object, backend, -1, cfg);
  test_check(status == CUDAFFT_STATUS_OK && object, "%s(%s) -> %s%s%s",
             synthesis ? "istft_create" : "stft_create", what, cudafft_status_name(status),
             status ? ": " : "", status ? cudafft_last_error_message() : "");
  if (synthesis)
    cudafft_istft_destroy(object);
  else
    cudafft_stft_destroy(object);
}

/* The errors both constructors share. */
static void
check_config_errors(CudafftBackend backend, int synthesis)
{
  const CudafftStftConfig good = make_config(1024, 256, HANN, CPX, F32, 2);
  CudafftStftConfig cfg;
  char what[96];
#define BAD(want, field, value, ...)                                                               \
  do {                                                                                             \
    cfg = good;                                                                                    \
    cfg.field = value;                                                                             \
    snprintf(what, sizeof what, __VA_ARGS__);                                                      \
    expect_create_fails(want, synthesis, backend, -1, &cfg, what);                                 \
  } while (0)
  static const size_t bad_sizes[] = {0, 8, 15, 255, 1001, 4097, 16385, 32768};
  for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++)
    BAD(CUDAFFT_STATUS_INVALID_SIZE, fft_size, bad_sizes[i], "n=%zu", bad_sizes[i]);
  BAD(CUDAFFT_STATUS_INVALID_VALUE, channels, 0, "0 channels");
  BAD(CUDAFFT_STATUS_INVALID_VALUE, channels, CUDAFFT_MAX_CHANNELS + 1, "%d channels",
      CUDAFFT_MAX_CHANNELS + 1);
  BAD(CUDAFFT_STATUS_INVALID_VALUE, hop, 0, "hop 0");
  BAD(CUDAFFT_STATUS_INVALID_VALUE, hop, 1025, "n=1024, hop 1025");
  BAD(CUDAFFT_STATUS_INVALID_VALUE, window, CUDAFFT_WINDOW_COUNT_, "window COUNT_");
  BAD(CUDAFFT_STATUS_INVALID_VALUE, window, (CudafftWindow)-1, "window -1");
  BAD(CUDAFFT_STATUS_INVALID_VALUE, representation, CUDAFFT_REPRESENTATION_COUNT_,
      "representation COUNT_");
  BAD(CUDAFFT_STATUS_INVALID_VALUE, representation, (CudafftRepresentation)-1, "representation -1");
  if (!synthesis) { /* synthesis ignores the format */
    BAD(CUDAFFT_STATUS_INVALID_VALUE, format, CUDAFFT_SAMPLE_COUNT_, "format COUNT_");
    BAD(CUDAFFT_STATUS_INVALID_VALUE, format, (CudafftSampleFormat)-1, "format -1");
  }
#undef BAD
  expect_create_fails(CUDAFFT_STATUS_NULL_POINTER, synthesis, backend, -1, NULL, "config NULL");
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, synthesis, (CudafftBackend)3, -1, &good,
                      "backend 3");
  expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, synthesis, backend, -2, &good, "device -2");
  CudafftStatus status = synthesis ? cudafft_istft_create(NULL, backend, -1, &good)
                                   : cudafft_stft_create(NULL, backend, -1, &good);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER, "%s(pointer NULL) -> %s (want %s)",
             synthesis ? "istft_create" : "stft_create", cudafft_status_name(status),
             cudafft_status_name(CUDAFFT_STATUS_NULL_POINTER));

  static const size_t edges[][3] = {
      {256, 1, 1}, {256, 256, 1}, {16384, 8192, 2}, {256, 128, CUDAFFT_MAX_CHANNELS}};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
    cfg = make_config(edges[i][0], edges[i][1], RECT, CPX, S16, (unsigned)edges[i][2]);
    snprintf(what, sizeof what, "rectangular, n=%zu, hop=%zu, %zu channels", edges[i][0],
             edges[i][1], edges[i][2]);
    expect_create_ok(synthesis, backend, &cfg, what);
  }
}

static void
check_create_errors(CudafftBackend backend)
{
  check_config_errors(backend, 0);
  check_config_errors(backend, 1);

  CudafftStftConfig cfg = make_config(1024, 512, HANN, MAG, F32, 1);
  for (int r = CUDAFFT_REPRESENTATION_MAGNITUDE; r < CUDAFFT_REPRESENTATION_COUNT_; r++) {
    cfg.representation = (CudafftRepresentation)r;
    char what[64];
    snprintf(what, sizeof what, "representation %s", representation_names[r]);
    expect_create_fails(CUDAFFT_STATUS_INVALID_VALUE, 1, backend, -1, &cfg, what);
  }
  cfg.representation = CPX;
  cfg.hop = 1024;
  expect_create_fails(CUDAFFT_STATUS_UNSUPPORTED, 1, backend, -1, &cfg, "hann, hop = n");
  cfg.window = BLACKMAN;
  expect_create_fails(CUDAFFT_STATUS_UNSUPPORTED, 1, backend, -1, &cfg, "blackman, hop = n");
  cfg.window = BH;
  cfg.hop = 768;
  expect_create_fails(CUDAFFT_STATUS_UNSUPPORTED, 1, backend, -1, &cfg,
                      "blackman-harris, hop = 3n/4");
  cfg.hop = 256;
  cfg.format = S32;
  expect_create_ok(1, backend, &cfg, "blackman-harris, hop = n/4, format S32 (ignored)");

  cudafft_stft_destroy(NULL);
  cudafft_istft_destroy(NULL);
  test_check(1, "stft_destroy(NULL) and istft_destroy(NULL) return");
}

static void
check_istft_null_pointers(CudafftBackend backend)
{
  const CudafftStftConfig cfg = make_config(256, 128, HANN, CPX, F32, 1);
  CudafftIstft *istft = create_istft(backend, &cfg, "istft n=256 hop=128");
  if (!istft)
    return;
  float *frames = test_malloc(frame_floats_of(&cfg) * sizeof(float));
  float *out = test_malloc(cfg.fft_size * sizeof(float));
  TestRng rng = test_rng("istft null pointers");
  test_rng_fill(&rng, frames, frame_floats_of(&cfg));
  CudafftStatus a = cudafft_istft_push(istft, NULL, 1, out);
  CudafftStatus b = cudafft_istft_push(istft, frames, 1, NULL);
  CudafftStatus c = cudafft_istft_drain(istft, NULL);
  test_check(a == CUDAFFT_STATUS_NULL_POINTER && b == CUDAFFT_STATUS_NULL_POINTER &&
                 c == CUDAFFT_STATUS_NULL_POINTER,
             "istft_push(in NULL) -> %s, istft_push(out NULL) -> %s, istft_drain(out NULL) -> %s "
             "(want %s)",
             cudafft_status_name(a), cudafft_status_name(b), cudafft_status_name(c),
             cudafft_status_name(CUDAFFT_STATUS_NULL_POINTER));
  free(frames);
  free(out);
  cudafft_istft_destroy(istft);
}

/* Main ----------------------------------------------------------------------------------------- */

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

int
main(int argc, char **argv)
{
  const CudafftBackend backend = test_begin(argc, argv);

  check_window_values();
  check_synthesis_support();
  check_create_errors(backend);
  check_istft_null_pointers(backend);
  check_push_errors(backend);
  test_section_done("windows, synthesis support, errors");

  for (size_t i = 0; i < COUNT(analysis_cases); i++)
    check_analysis_case(backend, &analysis_cases[i]);
  test_section_done("analysis");

  check_zeros_and_reset(backend, CPX);
  check_zeros_and_reset(backend, DB);
  check_nan(backend, CPX);
  check_nan(backend, DB);
  test_section_done("zeros, reset, NaN");

  for (size_t i = 0; i < COUNT(synthesis_cases); i++)
    check_synthesis_reference(backend, &synthesis_cases[i]);
  for (size_t i = 0; i < COUNT(round_trip_cases); i++)
    check_round_trip(backend, &round_trip_cases[i]);
  test_section_done("synthesis");
  return test_finish();
}
