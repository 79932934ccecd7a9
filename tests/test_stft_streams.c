/* test_stft_streams.c: many STFT analysers and synthesisers in one process, as a media server runs
 * them (on the CUDA backend they share their device's executor, which batches their work). What it
 * checks:
 * - 64 objects of random configurations (powers of two 256..16384 and sizes of the mixed-radix
 *   kernels, even and odd, in the same batches; hops n/2, n/4, odd ones and n, 1 to 8
 *   channels, every window, representation and input format; two of them so wide that one frame
 *   exceeds an executor job), on 8 threads at once, each thread stepping through its objects'
 *   sessions in turn: random-sized pushes (single samples, live 480-sample buffers, hops, pushes of
 *   hundreds of thousands of samples, pushes of zeros), resets before sessions (after junk),
 *   synthesis drains. Every output value of every object is compared with its own
 *   double-precision reference (stft_reference.h: the windowed frames through FFTW double; the
 *   synthesis formula in double), with test_stft's tolerances; outputs are NaN-poisoned with a
 *   guard after them; frame counts and held() follow the frame arithmetic.
 * - while they stream: 100 create / session / destroy cycles on another thread, and (CUDA) an
 *   analyser whose state cannot fit the device's memory (the rest of it taken by the test): a clear
 *   DEVICE_OUT_OF_MEMORY at creation naming the sizes, the streaming objects unaffected, and the
 *   same analyser made once the memory is back.
 * Argument: cpu or cuda (exit 77 without a device). Random data from CUDAFFT_TEST_SEED or
 * /dev/urandom (the seed is printed). */
#define _POSIX_C_SOURCE 200809L

#include <cudafft/stft.h>
#include "cudafft_config.h"
#include "fft_reference.h"
#include "stft_reference.h"
#include "test_signal.h"
#include "test_util.h"
#include "streams_util.h"
#include "worker_util.h"

#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define OBJECTS_PER_THREAD 8
#define SESSIONS 3
#define CYCLES 100
#define GUARD FFT_GUARD_FLOATS
#define MAX_PIECES 64

/* Tolerances: test_stft's (see there for why). */
#define DB_SLACK 1e-3
#define DB_ERROR_RMS 10.0
#define ROW_TOLERANCE_FACTOR 4.0
#define SYNTHESIS_TOLERANCE(n) (2.0 * fft_tolerance(n))

static CudafftBackend backend;
/* FFTW's planner is not thread-safe: the references plan under this lock. */
static pthread_mutex_t fftw_lock = PTHREAD_MUTEX_INITIALIZER;

/* Configurations ------------------------------------------------------------------------------ */

typedef struct {
  CudafftStftConfig cfg;
  int synthesis;
  int wide; /* one frame exceeds an executor job: one heavy session */
} Spec;

static const char *const representation_names[] = {"complex", "magnitude", "power", "dB"};

static void
describe(const Spec *s, char *label, size_t size)
{
  snprintf(label, size, "%s n=%zu hop=%zu window %d %s %s ch=%u",
           s->synthesis ? "synthesiser" : "analyser", s->cfg.fft_size, s->cfg.hop,
           (int)s->cfg.window, representation_names[s->cfg.representation],
           test_format_name(s->cfg.format), s->cfg.channels);
}

/* A random configuration; small: sizes up to 1024 and few channels (the create/destroy cycles).
 * The sizes mix the fused power-of-two kernels with the mixed-radix ones (odd sizes too), so that
 * a batch holds several sizes of both. */
static Spec
random_spec(TestRng *rng, int synthesis, int small)
{
  static const size_t sizes[] = {256,  400,  375,  512,  480,  1024,  16,  1000,
                                 2048, 3000, 4096, 4096, 8192, 16384, 6615};
  static const CudafftSampleFormat formats[] = {CUDAFFT_SAMPLE_S16, CUDAFFT_SAMPLE_S32,
                                                CUDAFFT_SAMPLE_F32, CUDAFFT_SAMPLE_F64};
  Spec s = {.synthesis = synthesis};
  CudafftStftConfig *c = &s.cfg;
  c->fft_size = sizes[test_rng_range(rng, 0, small ? 7 : 14)];
  const size_t n = c->fft_size;
  const size_t hops[] = {n / 2, n / 4, test_rng_range(rng, 1, n - 1) | 1, n}; /* odd: 1..n-1 */
  c->hop = hops[test_rng_range(rng, 0, 3)];
  c->channels = (unsigned)test_rng_range(rng, 1, small ? 3 : 8);
  c->window = (CudafftWindow)test_rng_range(rng, 0, CUDAFFT_WINDOW_COUNT_ - 1);
  c->representation =
      synthesis ? CUDAFFT_REPRESENTATION_COMPLEX : (CudafftRepresentation)test_rng_range(rng, 0, 3);
  c->format = formats[test_rng_range(rng, 0, 3)];
  /* synthesis: a hop its window reconstructs from (n/4 always does) */
  if (synthesis && cudafft_stft_check_synthesis(c->window, n, c->hop, NULL) != CUDAFFT_STATUS_OK)
    c->hop = n / 4;
  return s;
}

/* One frame of it exceeds an executor job (8 MB): a 16384-point analyser of 160 channels, or a
 * synthesiser of 128. */
static Spec
wide_spec(int synthesis)
{
  Spec s = {.synthesis = synthesis, .wide = 1};
  s.cfg = (CudafftStftConfig){16384,
                              synthesis ? 4096 : 8192,
                              synthesis ? 128u : 160u,
                              CUDAFFT_WINDOW_HANN,
                              CUDAFFT_REPRESENTATION_COMPLEX,
                              CUDAFFT_SAMPLE_F32};
  return s;
}

static size_t
bins_of(const CudafftStftConfig *c)
{
  return c->fft_size / 2 + 1;
}

static size_t
frame_floats(const CudafftStftConfig *c)
{
  return c->channels * bins_of(c) * (c->representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1);
}

static size_t
frames_in(size_t length, size_t n, size_t hop)
{
  return length < n ? 0 : (length - n) / hop + 1;
}

/* Objects ------------------------------------------------------------------------------------- */

typedef struct {
  Spec spec;
  char label[160];
  CudafftStft *stft;
  CudafftIstft *istft;
} Object;

static int
object_create(Object *o, const Spec *spec)
{
  memset(o, 0, sizeof *o);
  o->spec = *spec;
  describe(spec, o->label, sizeof o->label);
  pthread_rwlock_rdlock(&streams_create_lock);
  const CudafftStatus status = spec->synthesis
                                   ? cudafft_istft_create(&o->istft, backend, -1, &spec->cfg)
                                   : cudafft_stft_create(&o->stft, backend, -1, &spec->cfg);
  pthread_rwlock_unlock(&streams_create_lock);
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s: create: %s: %s", o->label, cudafft_status_name(status),
                cudafft_last_error_message());
    return 0;
  }
  return 1;
}

static void
object_destroy(Object *o)
{
  cudafft_stft_destroy(o->stft);
  cudafft_istft_destroy(o->istft);
  o->stft = NULL;
  o->istft = NULL;
}

/* Sessions: one signal (or one set of frames) through an object, step by step ------------------ */

typedef struct {
  size_t samples; /* analysis: samples per channel; synthesis: frames */
  int zeros;      /* analysis: pushed as in == NULL */
} Piece;

typedef struct {
  Object *o;
  TestRng rng;
  Piece pieces[MAX_PIECES];
  size_t count, next;
  /* analysis */
  TestSignal signal;
  size_t pushed, written, total_frames;
  /* synthesis */
  float *spectra;
  size_t frames, done;
  float *out; /* every output value, GUARD floats more */
  size_t out_floats;
  int failed;
} Session;

static void session_fail(Session *ss, const char *format, ...) TEST_PRINTF(2, 3);

static void
session_fail(Session *ss, const char *format, ...)
{
  char why[400];
  va_list args;
  va_start(args, format);
  vsnprintf(why, sizeof why, format, args);
  va_end(args);
  worker_fail("%s: %s", ss->o->label, why);
  ss->failed = 1;
}

static void
add_piece(Session *ss, size_t samples, int zeros)
{
  if (samples == 0)
    return;
  if (ss->count == MAX_PIECES - 1) /* the last piece takes the rest */
    ss->pieces[ss->count - 1].samples += samples;
  else
    ss->pieces[ss->count++] = (Piece){samples, zeros};
}

/* Analysis pieces: single samples, a third of a hop, live 480-sample buffers, about a hop, several
 * hops, zeros, the rest. */
static void
analysis_pieces(Session *ss, size_t length)
{
  const size_t hop = ss->o->spec.cfg.hop;
  while (length > 0) {
    size_t samples;
    int zeros = 0;
    switch (test_rng_range(&ss->rng, 0, 9)) {
    case 0:
      samples = 1;
      break;
    case 1:
    case 2:
      samples = test_rng_range(&ss->rng, 1, hop / 3 + 1);
      break;
    case 3:
    case 4:
      samples = 480;
      break;
    case 5:
      samples = test_rng_range(&ss->rng, hop / 2 + 1, 2 * hop);
      break;
    case 6:
      samples = test_rng_range(&ss->rng, 2 * hop, 8 * hop);
      break;
    case 7:
      samples = test_rng_range(&ss->rng, 1, hop + 1);
      zeros = 1;
      break;
    default:
      samples = length;
      break;
    }
    samples = samples < length ? samples : length;
    add_piece(ss, samples, zeros);
    length -= samples;
  }
}

/* A fresh analysis session after a reset (the last session's held samples, or junk). */
static void
analysis_start(Session *ss)
{
  const CudafftStftConfig *c = &ss->o->spec.cfg;
  const size_t n = c->fft_size, hop = c->hop;
  if (test_rng_range(&ss->rng, 0, 2) == 0) {
    /* junk: part of a frame or a few frames, forgotten by the reset */
    const size_t junk = test_rng_range(&ss->rng, 1, n + 3 * hop);
    const size_t frames = cudafft_stft_frames_for(ss->o->stft, junk);
    float *out = test_malloc((frames * frame_floats(c) + 1) * sizeof(float));
    const CudafftStatus status = cudafft_stft_push(ss->o->stft, NULL, junk, out, NULL);
    free(out);
    if (status != CUDAFFT_STATUS_OK)
      session_fail(ss, "push of %zu junk samples: %s", junk, cudafft_status_name(status));
  }
  cudafft_stft_reset(ss->o->stft);
  size_t length = n + test_rng_range(&ss->rng, 3, 40) * hop + test_rng_range(&ss->rng, 0, hop - 1);
  if (ss->o->spec.wide)
    length = n + 3 * hop + 100;
  else if (n <= 1024 && c->channels <= 2 && hop >= n / 4 && test_rng_range(&ss->rng, 0, 5) == 0)
    length = test_rng_range(&ss->rng, 300000, 600000); /* more than one job holds */
  test_signal_random(&ss->signal, &ss->rng, c->format, c->channels, 0, length, TEST_READ_POW2);
  analysis_pieces(ss, length);
  size_t at = 0;
  for (size_t p = 0; p < ss->count; p++) {
    if (ss->pieces[p].zeros)
      for (size_t f = at; f < at + ss->pieces[p].samples; f++)
        for (unsigned ch = 0; ch < c->channels; ch++)
          test_signal_set(&ss->signal, f, ch, 0.0);
    at += ss->pieces[p].samples;
  }
  ss->total_frames = frames_in(length, n, hop);
  ss->out_floats = ss->total_frames * frame_floats(c);
  ss->out = test_malloc((ss->out_floats + GUARD) * sizeof(float));
}

/* One push, checked as test_stft's push_checked: frames_for() and the frames returned follow the
 * frame arithmetic, held() is what no frame used yet, nothing is written past the new frames, the
 * input is unchanged. */
static void
analysis_step(Session *ss)
{
  const CudafftStftConfig *c = &ss->o->spec.cfg;
  const Piece *piece = &ss->pieces[ss->next++];
  const size_t stride = c->channels * test_sample_bytes(c->format);
  const void *in = piece->zeros ? NULL : ss->signal.raw + ss->pushed * stride;
  const size_t want = frames_in(ss->pushed + piece->samples, c->fft_size, c->hop) - ss->written;
  const size_t predicted = cudafft_stft_frames_for(ss->o->stft, piece->samples);
  float *dst = ss->out + ss->written * frame_floats(c);
  test_poison(dst, want * frame_floats(c) + GUARD);
  const uint64_t hash = in ? test_hash(in, piece->samples * stride) : 0;
  size_t frames = (size_t)-1;
  const CudafftStatus status = cudafft_stft_push(ss->o->stft, in, piece->samples, dst, &frames);
  if (status != CUDAFFT_STATUS_OK) {
    session_fail(ss, "push of %zu samples after %zu: %s: %s", piece->samples, ss->pushed,
                 cudafft_status_name(status), cudafft_last_error_message());
    return;
  }
  ss->pushed += piece->samples;
  ss->written += want;
  const size_t held = cudafft_stft_held(ss->o->stft);
  const size_t overrun = test_count_unpoisoned(dst + want * frame_floats(c), GUARD);
  if (predicted != want || frames != want || held != ss->pushed - ss->written * c->hop ||
      held >= c->fft_size || overrun || (in && test_hash(in, piece->samples * stride) != hash))
    session_fail(ss,
                 "push of %zu samples after %zu: frames_for %zu, returned %zu, want %zu; held "
                 "%zu, want %zu; %zu values past its frames; input %s",
                 piece->samples, ss->pushed - piece->samples, predicted, frames, want, held,
                 ss->pushed - ss->written * c->hop, overrun,
                 in && test_hash(in, piece->samples * stride) != hash ? "MODIFIED" : "unchanged");
}

static double
db_of_power(double power)
{
  return 10.0 * log10(fmax(power, 1e-20));
}

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
  default:
    return db_of_power(power);
  }
}

/* Every value of the session's frames against the reference, as test_stft's check_spectra: rows of
 * silent frames exactly 0 (-200 dB within DB_SLACK); dB bins within their float-error interval;
 * the other representations within the FFT's relative L2 tolerance (twice for power) over the
 * whole output and four times it in every row. */
static void
analysis_check(Session *ss)
{
  const CudafftStftConfig *c = &ss->o->spec.cfg;
  const size_t n = c->fft_size, bins = bins_of(c), frames = ss->total_frames;
  const size_t parts = c->representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1;
  const size_t rows = frames * c->channels, per_row = bins * parts;
  double *ref = test_malloc((rows * bins * 2 + 1) * sizeof(double));
  const size_t span = frames ? (frames - 1) * c->hop + n : 0;
  pthread_mutex_lock(&fftw_lock);
  stft_reference_frames(n, c->hop, c->window, ss->signal.values, c->channels, span, 0, frames, ref);
  pthread_mutex_unlock(&fftw_lock);
  const double tol =
      (c->representation == CUDAFFT_REPRESENTATION_POWER ? 2.0 : 1.0) * fft_tolerance(n);
  const int db = c->representation == CUDAFFT_REPRESENTATION_DB;
  double err2 = 0.0, ref2 = 0.0;
  for (size_t r = 0; r < rows && !ss->failed; r++) {
    const float *o = ss->out + r * per_row;
    const double *b = ref + r * bins * 2;
    size_t first = 0;
    if (test_count_nonfinite(o, per_row, &first)) {
      session_fail(ss, "frame %zu channel %zu value %zu is not finite (NaN: unwritten)",
                   r / c->channels, r % c->channels, first);
      break;
    }
    int silent = 1;
    double sum = 0.0;
    for (size_t k = 0; k < bins; k++) {
      silent &= b[2 * k] == 0.0 && b[2 * k + 1] == 0.0;
      sum += b[2 * k] * b[2 * k] + b[2 * k + 1] * b[2 * k + 1];
    }
    if (silent) {
      const double want = db ? db_of_power(0.0) : 0.0;
      for (size_t i = 0; i < per_row && !ss->failed; i++)
        if (fabs(o[i] - want) > (db ? DB_SLACK : 0.0))
          session_fail(ss, "silent frame %zu channel %zu value %zu is %.7g, not %g",
                       r / c->channels, r % c->channels, i, o[i], want);
      continue;
    }
    if (db) {
      const double e = DB_ERROR_RMS * fft_tolerance(n) * sqrt(sum / (double)bins);
      for (size_t k = 0; k < bins && !ss->failed; k++) {
        const double m = hypot(b[2 * k], b[2 * k + 1]);
        const double lo = db_of_power(fmax(m - e, 0.0) * fmax(m - e, 0.0)) - DB_SLACK;
        const double hi = db_of_power((m + e) * (m + e)) + DB_SLACK;
        if (!(o[k] >= lo && o[k] <= hi))
          session_fail(ss, "frame %zu channel %zu bin %zu: %.7g dB, want %.7g (%.7g to %.7g)",
                       r / c->channels, r % c->channels, k, o[k], db_of_power(m * m), lo, hi);
      }
      continue;
    }
    double row_err2 = 0.0, row_ref2 = 0.0;
    for (size_t k = 0; k < bins; k++)
      for (size_t part = 0; part < parts; part++) {
        const double want = expected_value(c->representation, b + 2 * k, (int)part);
        const double d = o[k * parts + part] - want;
        row_err2 += d * d;
        row_ref2 += want * want;
      }
    err2 += row_err2;
    ref2 += row_ref2;
    if (!(sqrt(row_err2 / row_ref2) <= ROW_TOLERANCE_FACTOR * tol))
      session_fail(ss, "frame %zu channel %zu: relative L2 error %.2e exceeds %.2e",
                   r / c->channels, r % c->channels, sqrt(row_err2 / row_ref2),
                   ROW_TOLERANCE_FACTOR * tol);
  }
  if (!ss->failed && ref2 > 0.0 && !(sqrt(err2 / ref2) <= tol))
    session_fail(ss, "%zu frames: relative L2 error %.2e exceeds %.2e", frames, sqrt(err2 / ref2),
                 tol);
  free(ref);
}

/* The header's synthesis in double: each frame's real inverse DFT (imaginary parts of bins 0 and
 * n/2 taken as zero) / n, times g = w / S, overlap-added at f hop. */
static void
synthesis_reference(const CudafftStftConfig *c, const float *spectra, size_t frames, double *y)
{
  const size_t n = c->fft_size, hop = c->hop, bins = bins_of(c), channels = c->channels;
  double *g = test_malloc(n * sizeof(double)), *s = test_malloc(hop * sizeof(double));
  for (size_t r = 0; r < hop; r++)
    s[r] = 0.0;
  for (size_t i = 0; i < n; i++) {
    const double w = cudafft_window_value(c->window, n, i);
    s[i % hop] += w * w;
  }
  for (size_t i = 0; i < n; i++)
    g[i] = cudafft_window_value(c->window, n, i) / s[i % hop];
  pthread_mutex_lock(&fftw_lock);
  fftw_complex *in = fftw_malloc(bins * sizeof(fftw_complex));
  double *frame = fftw_malloc(n * sizeof(double));
  fftw_plan plan = in && frame ? fftw_plan_dft_c2r_1d((int)n, in, frame, FFTW_ESTIMATE) : NULL;
  pthread_mutex_unlock(&fftw_lock);
  if (!plan)
    test_abort("FFTW double could not plan a C2R of n=%zu", n);
  memset(y, 0, ((frames - 1) * hop + n) * channels * sizeof(double));
  for (size_t f = 0; f < frames; f++)
    for (size_t ch = 0; ch < channels; ch++) {
      const float *src = spectra + (f * channels + ch) * bins * 2;
      for (size_t k = 0; k < bins; k++) {
        in[k][0] = src[2 * k];
        /* the imaginary parts synthesis ignores: bin 0's, and bin n/2's of an even n */
        in[k][1] = k == 0 || (k == bins - 1 && n % 2 == 0) ? 0.0 : src[2 * k + 1];
      }
      fftw_execute(plan);
      for (size_t i = 0; i < n; i++)
        y[(f * hop + i) * channels + ch] += frame[i] / (double)n * g[i];
    }
  pthread_mutex_lock(&fftw_lock);
  fftw_destroy_plan(plan);
  fftw_free(in);
  fftw_free(frame);
  pthread_mutex_unlock(&fftw_lock);
  free(g);
  free(s);
}

static void
synthesis_start(Session *ss)
{
  const CudafftStftConfig *c = &ss->o->spec.cfg;
  if (test_rng_range(&ss->rng, 0, 2) == 0) {
    /* junk frames, forgotten by the reset */
    const size_t junk = test_rng_range(&ss->rng, 1, 3);
    float *frames = test_malloc(junk * frame_floats(c) * sizeof(float));
    float *out = test_malloc(junk * c->hop * c->channels * sizeof(float));
    test_rng_fill(&ss->rng, frames, junk * frame_floats(c));
    const CudafftStatus status = cudafft_istft_push(ss->o->istft, frames, junk, out);
    free(frames);
    free(out);
    if (status != CUDAFFT_STATUS_OK)
      session_fail(ss, "push of %zu junk frames: %s", junk, cudafft_status_name(status));
    cudafft_istft_reset(ss->o->istft);
  }
  ss->frames = ss->o->spec.wide ? 3 : test_rng_range(&ss->rng, 2, 30);
  const size_t bins = bins_of(c), floats = ss->frames * frame_floats(c);
  ss->spectra = test_malloc(floats * sizeof(float));
  test_rng_fill(&ss->rng, ss->spectra, floats);
  /* large imaginary parts for bins 0 and n/2 (even n), which synthesis must ignore */
  for (size_t row = 0; row < ss->frames * c->channels; row++) {
    ss->spectra[row * bins * 2 + 1] = 100.0f * (float)test_rng_uniform(&ss->rng);
    if (c->fft_size % 2 == 0)
      ss->spectra[row * bins * 2 + 2 * bins - 1] = 100.0f * (float)test_rng_uniform(&ss->rng);
  }
  for (size_t left = ss->frames; left > 0;) {
    size_t count = test_rng_range(&ss->rng, 0, 3) == 0 ? left : test_rng_range(&ss->rng, 1, 4);
    count = count < left ? count : left;
    add_piece(ss, count, 0);
    left -= count;
  }
  ss->out_floats = (ss->frames * c->hop + c->fft_size - c->hop) * c->channels;
  ss->out = test_malloc((ss->out_floats + GUARD) * sizeof(float));
}

/* One push of frames (the last step also drains), each call checked: OK, nothing written past its
 * samples, its input unchanged. */
static void
synthesis_step(Session *ss)
{
  const CudafftStftConfig *c = &ss->o->spec.cfg;
  const size_t count = ss->pieces[ss->next++].samples, step = c->hop * c->channels;
  const float *in = ss->spectra + ss->done * frame_floats(c);
  float *dst = ss->out + ss->done * step;
  const size_t in_bytes = count * frame_floats(c) * sizeof(float);
  const uint64_t hash = test_hash(in, in_bytes);
  test_poison(dst, count * step + GUARD);
  CudafftStatus status = cudafft_istft_push(ss->o->istft, in, count, dst);
  size_t overrun = test_count_unpoisoned(dst + count * step, GUARD);
  if (status != CUDAFFT_STATUS_OK || overrun || test_hash(in, in_bytes) != hash) {
    session_fail(ss, "push of %zu frames after %zu: %s (%s), %zu values past its samples", count,
                 ss->done, cudafft_status_name(status), status ? cudafft_last_error_message() : "",
                 overrun);
    return;
  }
  ss->done += count;
  if (ss->next < ss->count)
    return;
  const size_t tail = (c->fft_size - c->hop) * c->channels;
  dst = ss->out + ss->done * step;
  test_poison(dst, tail + GUARD);
  status = cudafft_istft_drain(ss->o->istft, dst);
  overrun = test_count_unpoisoned(dst + tail, GUARD);
  if (status != CUDAFFT_STATUS_OK || overrun)
    session_fail(ss, "drain after %zu frames: %s (%s), %zu values past its samples", ss->done,
                 cudafft_status_name(status), status ? cudafft_last_error_message() : "", overrun);
}

static void
synthesis_check(Session *ss)
{
  const CudafftStftConfig *c = &ss->o->spec.cfg;
  double *ref = test_malloc(ss->out_floats * sizeof(double));
  synthesis_reference(c, ss->spectra, ss->frames, ref);
  size_t first = 0;
  if (test_count_nonfinite(ss->out, ss->out_floats, &first)) {
    session_fail(ss, "sample value %zu of %zu is not finite (NaN: unwritten)", first,
                 ss->out_floats);
  } else {
    double err2 = 0.0, ref2 = 0.0;
    for (size_t i = 0; i < ss->out_floats; i++) {
      const double d = ss->out[i] - ref[i];
      err2 += d * d;
      ref2 += ref[i] * ref[i];
    }
    const double tol = SYNTHESIS_TOLERANCE(c->fft_size);
    if (!(sqrt(err2 / ref2) <= tol))
      session_fail(ss, "%zu frames: relative L2 error %.2e exceeds %.2e", ss->frames,
                   sqrt(err2 / ref2), tol);
  }
  free(ref);
}

static void
session_start(Session *ss, Object *o, const char *label)
{
  memset(ss, 0, sizeof *ss);
  ss->o = o;
  ss->rng = test_rng("%s", label);
  if (o->spec.synthesis)
    synthesis_start(ss);
  else
    analysis_start(ss);
}

/* One push; returns whether the session has ended (and was checked and cleared). */
static int
session_step(Session *ss)
{
  if (!ss->failed && ss->next < ss->count) {
    if (ss->o->spec.synthesis)
      synthesis_step(ss);
    else
      analysis_step(ss);
  }
  if (!ss->failed && ss->next < ss->count)
    return 0;
  if (!ss->failed) {
    if (ss->o->spec.synthesis)
      synthesis_check(ss);
    else
      analysis_check(ss);
  }
  if (ss->failed) {
    /* a failed session leaves the object in an unknown place: it starts afresh */
    cudafft_stft_reset(ss->o->stft);
    cudafft_istft_reset(ss->o->istft);
  }
  test_signal_clear(&ss->signal);
  free(ss->spectra);
  free(ss->out);
  ss->spectra = NULL;
  ss->out = NULL;
  streams_session_done();
  return 1;
}

/* The engine as the streams run it (streams_util.h) ----------------------------------------- */

static unsigned
make_object(void *object, unsigned t, unsigned i)
{
  TestRng rng = test_rng("streamer %u object %u", t, i);
  Spec spec = random_spec(&rng, (int)test_rng_range(&rng, 0, 2) == 0, 0);
  if (t == 0 && i < 2)
    spec = wide_spec((int)i);
  return object_create(object, &spec) ? (spec.wide ? 1 : SESSIONS) : 0;
}

static int
make_small_object(void *object, unsigned cycle)
{
  TestRng rng = test_rng("cycle %u", cycle);
  const Spec spec = random_spec(&rng, (int)test_rng_range(&rng, 0, 1), 1);
  return object_create(object, &spec);
}

static const char *
object_label(const void *object)
{
  return ((const Object *)object)->label;
}

/* The cycles' objects are small already: their sessions are the usual ones. */
static void
start_session(void *session, void *object, const char *label, int brief)
{
  (void)brief;
  session_start(session, object, label);
}

static int
step_session(void *session)
{
  return session_step(session);
}

static void
destroy_object(void *object)
{
  object_destroy(object);
}

/* The state too large for the device's memory: a 16384-point analyser of 1024 channels (about
 * 140 MB: its signal buffers). */
static CudafftStatus
create_too_large(void **object)
{
  const CudafftStftConfig big = {16384,
                                 8192,
                                 CUDAFFT_MAX_CHANNELS,
                                 CUDAFFT_WINDOW_HANN,
                                 CUDAFFT_REPRESENTATION_COMPLEX,
                                 CUDAFFT_SAMPLE_F32};
  /* device 0, the one streams_util.c fills (with -1 a host with two GPUs would take it on the
   * other) */
  return cudafft_stft_create((CudafftStft **)object, CUDAFFT_BACKEND_CUDA, 0, &big);
}

static void
destroy_too_large(void *object)
{
  cudafft_stft_destroy(object);
}

#if CUDAFFT_HAVE_CUDA
/* Every kernel the streams may launch, launched once before the device's memory is taken, so that
 * none needs more of the device's memory for its first launch then (its local memory): the fused
 * kernel of each power of two, and the mixed-radix kernels (the smaller powers of two run the even
 * sizes' ones; 375 the odd sizes'). */
static void
warm_up(void)
{
  static const size_t sizes[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 375};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int r = 0; r < CUDAFFT_REPRESENTATION_COUNT_; r++) {
      const size_t n = sizes[s];
      const CudafftStftConfig c = {
          n, n / 2, 1, CUDAFFT_WINDOW_HANN, (CudafftRepresentation)r, CUDAFFT_SAMPLE_F32};
      CudafftStft *stft = NULL;
      CudafftIstft *istft = NULL;
      float *in = calloc(n, sizeof(float)), *out = calloc(2 * n + 2, sizeof(float));
      if (in && out && cudafft_stft_create(&stft, backend, -1, &c) == CUDAFFT_STATUS_OK)
        cudafft_stft_push(stft, in, n, out, NULL);
      if (in && out && r == 0 && cudafft_istft_create(&istft, backend, -1, &c) == CUDAFFT_STATUS_OK)
        cudafft_istft_push(istft, out, 1, in);
      cudafft_stft_destroy(stft);
      cudafft_istft_destroy(istft);
      free(in);
      free(out);
    }
}
#endif

/* Main ----------------------------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
  backend = test_begin(argc, argv);
#if CUDAFFT_HAVE_CUDA
  if (backend == CUDAFFT_BACKEND_CUDA)
    warm_up();
#endif
  const StreamsEngine engine = {sizeof(Object), sizeof(Session), make_object,  make_small_object,
                                object_label,   start_session,   step_session, destroy_object};
  const StreamsTooLarge too_large = {"a 16384-point analyser of 1024 channels", create_too_large,
                                     destroy_too_large, "STFT"};
  streams_run(backend, &engine, THREADS, OBJECTS_PER_THREAD, CYCLES, &too_large);
  report_worker_failures("64 objects on 8 threads and 100 cycles beside them: every push, drain "
                         "and output value against its reference");
  test_section_done("streams");
  return test_finish();
}
