/* test_spectrum.c: the interval spectra of cudafft/spectrum.h against the double-precision model
 * of GStreamer's spectrum element (spectrum_reference.h): every band of every result is compared,
 * for all sample formats, channel layouts, power-of-two and other FFT sizes, intervals shorter and
 * longer than an FFT and with a carry, thresholds, phase, with random input pushed in awkward
 * pieces and early stops; also a known sine level, finish, reset, options changed mid-stream, NaN
 * and Inf confined to their FFT windows, and the statuses of invalid calls. Argument: cpu or cuda.
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup.
 */
#include <cudafft/spectrum.h>
#include "fft_reference.h"
#include "spectrum_reference.h"
#include "test_signal.h"
#include "test_util.h"

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
#define COUNT(array) (sizeof(array) / sizeof((array)[0]))
/* How the analysis reads samples (cudafft/spectrum.h): integers as spectrum scales them. F64 stays
 * exact here: the reference sees the samples' own values, and INPUT_ROUNDING below allows for the
 * analysis's rounding of them to float. */
#define READ TEST_READ_SPECTRUM

/* dB. Ours is a float FFT of float samples, its level taken with log10f and averaged in float:
 * within 1e-3 dB of the reference for the bands near a row's typical level, so 0.01 dB leaves a
 * wide margin and still catches a wrong window, scale, sample conversion or misplaced FFT (all
 * cost far more). A band far below its row is resolved only to the float FFT's absolute error e
 * (rounding is relative to the whole row, not to the band): there the reference widens the
 * interval, FFT by FFT, to the levels of |X| - e and |X| + e, and LEVEL_TOLERANCE is added to
 * that. The real DC and Nyquist bands fall 70 dB below their row often enough to need it. */
#define LEVEL_TOLERANCE 0.01
/* e (spectrum_reference.h) = 10 x the relative L2 error of the float result x the rms of the row's
 * magnitudes: the error spread over the bands, with room for the largest of a million. The
 * relative error is the FFT's (fft_tolerance) plus the samples' roundings before it: the
 * conversion to float, the channel mix, the window value and the windowing product, each 2^-24 at
 * most. */
#define INPUT_ROUNDING (4.0 * 0x1p-24)
/* dB around the threshold where a level may be clamped in one implementation and not the other:
 * where every FFT's level is this far below the threshold, ours must be the threshold exactly. */
#define CLAMP_MARGIN 1.0
/* Radians. A phase is off by at most about e / |X|; phases are compared where that is below
 * PHASE_TOLERANCE / 10 in every FFT of the interval, every FFT's level is above the threshold, and
 * none is within 1e-3 of +-pi (the model's wrap flag), where a rounding flips the sign. */
#define PHASE_TOLERANCE 1e-3
/* Two analysers of one backend given the same input agree to this (dB and rad): the sums are the
 * same, though a GPU may add them in another order. */
#define SAME_TOLERANCE 1e-4

static size_t
min_size(size_t a, size_t b)
{
  return a < b ? a : b;
}

static double
float_error(size_t nfft)
{
  return fft_tolerance(nfft) + INPUT_ROUNDING;
}

static SpectrumRefSettings
settings_of(const CudafftSpectrumConfig *config, const CudafftSpectrumOptions *options)
{
  const SpectrumRefSettings settings = {config->bands, config->multi_channel, options->interval_ns,
                                        options->threshold, options->phase};
  return settings;
}

/* A session: our analyser and the reference fed the same frames, every result compared ---------
 */

typedef struct {
  CudafftSpectrum *sp;
  CudafftSpectrumConfig config;
  SpectrumRef *ref;
  TestRng rng; /* the session's signals and piece sizes */
  char label[200];
  size_t ours_count, ours_next; /* results of our last call, and how many were matched */
  size_t results, nan_rows, finite_after_nan, level_values, phase_values, widened;
  double worst_level, worst_phase;
  int saw_nan;
  unsigned failures;
  char why[400];
} Session;

static void session_fail(Session *ss, const char *format, ...) TEST_PRINTF(2, 3);

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
 * (lo..hi) and LEVEL_TOLERANCE; the threshold exactly where every FFT is well below it, float
 * error included (a band that cancels to zero is zero only to float resolution, so a float
 * level can rise above a threshold far below that). *diff: the distance to the reference's
 * level. */
static int
level_ok(float ours, const SpectrumRefInterval *r, size_t at, int threshold, double *diff)
{
  *diff = 0.0;
  if (isnan(r->level[at]))
    return isnan(ours);
  if (!isfinite(ours) || ours < (float)threshold)
    return 0;
  if (r->max_level[at] < threshold - CLAMP_MARGIN && r->hi[at] <= (double)threshold)
    return ours == (float)threshold; /* the mean of equal values */
  *diff = fabs(ours - r->level[at]);
  return ours >= r->lo[at] - LEVEL_TOLERANCE && ours <= r->hi[at] + LEVEL_TOLERANCE;
}

/* Compares our next result with the interval the reference just closed. */
static void
session_compare(void *context, const SpectrumRefInterval *r)
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
  const SpectrumRefSettings *settings = &r->settings;
  if (res.frames != r->frames || res.ffts != r->ffts || res.threshold != settings->threshold ||
      (res.phase != NULL) != (settings->phase != 0)) {
    session_fail(ss,
                 "result %zu: %zu frames, %zu FFTs, threshold %d, phase %s; want %zu, %zu, %d, %s",
                 index, res.frames, res.ffts, res.threshold, res.phase ? "on" : "off", r->frames,
                 r->ffts, settings->threshold, settings->phase ? "on" : "off");
    return;
  }
  const int threshold = settings->threshold;
  for (size_t s = 0; s < r->rows; s++) {
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

/* Opens the analyser and the reference; the session's random stream is the label's. */
static int
session_open(Session *ss, CudafftBackend backend, const CudafftSpectrumConfig *config,
             const char *label)
{
  memset(ss, 0, sizeof *ss);
  snprintf(ss->label, sizeof ss->label, "%s", label);
  ss->rng = test_rng("%s", label);
  ss->config = *config;
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
  const SpectrumRefSettings settings = settings_of(config, &config->options);
  ss->ref = spectrum_ref_new(config->channels, config->rate, &settings, float_error);
  return 1;
}

static void
session_close(Session *ss)
{
  cudafft_spectrum_destroy(ss->sp);
  spectrum_ref_free(ss->ref);
}

/* Random noise of the session's format and channels: amplitude is a fraction of full scale. */
static void
session_signal(Session *ss, TestSignal *signal, size_t frames, double amplitude)
{
  test_signal_noise(signal, &ss->rng, ss->config.format, ss->config.channels, ss->config.rate,
                    frames, READ, amplitude);
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
  const size_t want_pending = spectrum_ref_frames_pending(ss->ref);
  const size_t want_left = spectrum_ref_frames_left(ss->ref);
  if (pending != want_pending || left != want_left)
    session_fail(ss, "after %s: frames pending %zu, left %zu; want %zu, %zu", call, pending, left,
                 want_pending, want_left);
}

/* Our analyser's `count` results of a call against the reference fed frames [first, first +
 * frames) of signal. */
static void
session_compare_push(Session *ss, const TestSignal *signal, size_t first, size_t frames,
                     size_t count)
{
  ss->ours_count = count;
  ss->ours_next = 0;
  spectrum_ref_push(ss->ref, signal->values + first * signal->channels, frames, session_compare,
                    ss);
  session_settle(ss, "push");
}

/* A piece size: single frames, small odd ones, the rest of the interval (and one more), blocks
 * of typical buffer sizes, a large one. */
static size_t
next_piece(Session *ss, size_t remaining)
{
  size_t piece;
  switch (test_rng_range(&ss->rng, 0, 9)) {
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
    piece = test_rng_range(&ss->rng, 1, 30000);
    break;
  }
  return min_size(piece, remaining);
}

/* Pushes frames [first, first + frames) of signal in pieces (piece 0: random sizes), each until
 * taken, comparing as it goes. */
static void
session_push(Session *ss, const TestSignal *signal, size_t first, size_t frames, size_t max_results,
             size_t piece)
{
  const size_t frame_bytes = cudafft_spectrum_frame_bytes(ss->sp);
  const size_t limit = min_size(max_results, cudafft_spectrum_max_results(ss->sp));
  size_t done = 0;
  while (done < frames && ss->failures == 0) {
    size_t size = piece ? min_size(piece, frames - done) : next_piece(ss, frames - done);
    /* Single frames come in bursts; each costs a run. */
    const size_t repeat = size == 1 ? test_rng_range(&ss->rng, 1, 40) : 1;
    for (size_t r = 0; r < repeat && done < frames && ss->failures == 0; r++) {
      size = min_size(size, frames - done);
      while (size > 0 && ss->failures == 0) {
        const uint8_t *in = signal->raw + (first + done) * frame_bytes;
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
        session_compare_push(ss, signal, first + done, consumed, count);
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
  spectrum_ref_finish(ss->ref, session_compare, ss);
  session_settle(ss, "finish");
}

static void
session_reset(Session *ss)
{
  cudafft_spectrum_reset(ss->sp);
  spectrum_ref_reset(ss->ref);
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
  const SpectrumRefSettings settings = settings_of(&ss->config, options);
  spectrum_ref_set_settings(ss->ref, &settings);
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
           c->bands, 2 * c->bands - 2, test_format_name(c->format), c->channels,
           c->multi_channel  ? " multi"
           : c->channels > 1 ? " mixed"
                             : "",
           c->rate, (double)c->options.interval_ns / 1e6, c->options.threshold,
           c->options.phase ? "on" : "off");
}

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
    /* nfft 400 (Whisper's, cudaspectrum's fft-size=400), 160 frames: 16 kHz, 10 ms */
    {201, 2, 16000, CUDAFFT_SAMPLE_F32, 1, 10 * MS, -90, 1, 16000, 0.5},
    /* nfft 1000, 2205 frames: two FFTs and a remainder */
    {501, 1, 44100, CUDAFFT_SAMPLE_S16, 0, 50 * MS, -60, 1, 30000, 1.0},
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
  char label[200], base[160];
  describe(&config, base, sizeof base);
  if (max_results == ALL_RESULTS)
    snprintf(label, sizeof label, "%s max_results=all", base);
  else
    snprintf(label, sizeof label, "%s max_results=%zu", base, max_results);
  Session ss;
  if (!session_open(&ss, backend, &config, label))
    return;
  TestSignal signal;
  session_signal(&ss, &signal, sc->frames, sc->amplitude);
  session_push(&ss, &signal, 0, sc->frames, max_results, 0);
  session_report(&ss, NULL);
  test_signal_clear(&signal);
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
    TestSignal signal;
    test_signal_alloc(&signal, config.format, 1, config.rate, frames, READ);
    for (size_t n = 0; n < frames; n++)
      test_signal_set(&signal, n, 0, sin(2.0 * pi * (double)(k * (n % nfft)) / (double)nfft));
    size_t consumed = 0, count = 0;
    const CudafftStatus status =
        cudafft_spectrum_push(ss.sp, signal.raw, frames, ALL_RESULTS, &consumed, &count);
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
    session_compare_push(&ss, &signal, 0, consumed, count);
    session_report(&ss, "against the reference");
    test_signal_clear(&signal);
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
  TestSignal signal;
  session_signal(&ss, &signal, frames, 0.5);
  size_t at = 0;
  expect_finish(&ss, 0, 0, 0, "on a fresh analyser");
  session_push(&ss, &signal, 0, 1000, ALL_RESULTS, 0);
  at += 1000;
  expect_finish(&ss, 1, 1000, 3, "after 1000 frames (FFTs at 256, 512, 768)");
  expect_finish(&ss, 0, 0, 0, "again");
  session_push(&ss, &signal, at, 100, ALL_RESULTS, 0);
  at += 100;
  expect_finish(&ss, 1, 100, 1, "after 100 frames (its one FFT over the history)");
  session_push(&ss, &signal, at, 2 * 4410 + 500, ALL_RESULTS, 0);
  at += 2 * 4410 + 500;
  expect_finish(&ss, 1, 500, 1, "after two intervals and 500 frames");
  session_push(&ss, &signal, at, 4410, ALL_RESULTS, 4410);
  at += 4410;
  expect_finish(&ss, 0, 0, 0, "right after a full interval");
  session_push(&ss, &signal, at, frames - at, 2, 0);
  session_report(&ss, "all results against the reference");
  test_signal_clear(&signal);
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
  TestSignal x, y;
  session_signal(&ss, &x, before, 1.0);
  session_signal(&ss, &y, frames, 1.0);
  test_signal_set(&x, before - 3, 0, NAN);
  session_push(&ss, &x, 0, before, ALL_RESULTS, 0);
  const size_t pending = cudafft_spectrum_frames_pending(ss.sp);
  session_reset(&ss);

  size_t done = 0, compared = 0, mismatches = 0;
  while (done < frames && ss.failures == 0 && mismatches == 0) {
    const size_t size = next_piece(&ss, frames - done);
    const size_t max_results = test_rng_range(&ss.rng, 1, 3) == 1 ? 1 : ALL_RESULTS;
    size_t c1 = 0, n1 = 0, c2 = 0, n2 = 0;
    const CudafftStatus s1 =
        cudafft_spectrum_push(ss.sp, y.raw + done * fb, size, max_results, &c1, &n1);
    const CudafftStatus s2 =
        cudafft_spectrum_push(fresh, y.raw + done * fb, size, max_results, &c2, &n2);
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
    session_compare_push(&ss, &y, done, c1, n1);
    done += c1;
  }
  test_check(pending > 0 && mismatches == 0 && ss.failures == 0 && compared > 0,
             "reset after %zu frames (%zu of an interval pending, a NaN in the history): %zu "
             "results compared with a fresh analyser's, %zu values differ%s%s",
             before, pending, compared, mismatches, ss.failures ? ": " : "",
             ss.failures ? ss.why : "");
  session_report(&ss, "after reset, against the reference");
  test_signal_clear(&x);
  test_signal_clear(&y);
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
  TestRng rng = test_rng("options changes");
  TestSignal data;
  test_signal_noise(&data, &rng, config.format, config.channels, config.rate, frames, READ, 0.01);
  CudafftSpectrumOptions to90 = {.interval_ns = 10 * MS, .threshold = -90, .phase = 1};
  const CudafftSpectrumOptions longer = {.interval_ns = 25 * MS, .threshold = -60, .phase = 0};
  Session ss;

  if (session_open(&ss, backend, &config, "threshold -60 -> -90 and phase on, mid-interval")) {
    session_push(&ss, &data, 0, 200, ALL_RESULTS, 0);
    session_set_options(&ss, &to90);
    session_push(&ss, &data, 200, 1240, ALL_RESULTS, 1240); /* one call: 3 results */
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
    session_push(&ss, &data, 1440, frames - 1440, 2, 0);
    session_report(&ss, "against the reference");
    session_close(&ss);
  }

  if (session_open(&ss, backend, &config, "interval 10 ms -> 25 ms, mid-interval")) {
    session_push(&ss, &data, 0, 200, ALL_RESULTS, 0);
    session_set_options(&ss, &longer);
    session_push(&ss, &data, 200, 2680, ALL_RESULTS, 2680);
    const CudafftSpectrumResult r0 = result_or_empty(&ss, 0), r1 = result_or_empty(&ss, 1),
                                r2 = result_or_empty(&ss, 2);
    test_check(ss.failures == 0 && r0.frames == 480 && r1.frames == 1200 && r2.frames == 1200,
               "%s: intervals of %zu, %zu, %zu frames (want 480, 1200, 1200)%s%s", ss.label,
               r0.frames, r1.frames, r2.frames, ss.failures ? ": " : "", ss.failures ? ss.why : "");
    session_push(&ss, &data, 2880, frames - 2880, ALL_RESULTS, 0);
    session_report(&ss, "against the reference");
    session_close(&ss);
  }

  if (session_open(&ss, backend, &config, "options with no frames pending")) {
    const CudafftSpectrumOptions to30 = {.interval_ns = 10 * MS, .threshold = -30, .phase = 0};
    session_set_options(&ss, &to30);
    session_push(&ss, &data, 0, 480, ALL_RESULTS, 480);
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
    session_push(&ss, &data, 480, 1200, ALL_RESULTS, 1200);
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
    session_push(&ss, &data, 0, 200, ALL_RESULTS, 0);
    session_set_options(&ss, &to90);
    session_finish(&ss);
    const CudafftSpectrumResult f = result_or_empty(&ss, 0);
    session_push(&ss, &data, 200, 480, ALL_RESULTS, 480);
    const CudafftSpectrumResult n = result_or_empty(&ss, 0);
    session_push(&ss, &data, 680, 100, ALL_RESULTS, 0);
    session_set_options(&ss, &longer);
    session_reset(&ss);
    const size_t left = cudafft_spectrum_frames_left(ss.sp);
    session_push(&ss, &data, 780, 5000, ALL_RESULTS, 0);
    test_check(ss.failures == 0 && f.frames == 200 && f.threshold == -60 && n.threshold == -90 &&
                   left == 1200,
               "%s: finish keeps the old threshold (%d), the next interval has the new (%d); "
               "after reset the new interval (%zu frames left)%s%s",
               ss.label, f.threshold, n.threshold, left, ss.failures ? ": " : "",
               ss.failures ? ss.why : "");
    session_report(&ss, "against the reference");
    session_close(&ss);
  }
  test_signal_clear(&data);
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
  TestSignal signal;
  session_signal(&ss, &signal, frames, 1.0);
  test_signal_set(&signal, 2345, 1, bad);
  session_push(&ss, &signal, 0, frames, test_rng_range(&ss.rng, 0, 1) ? 2 : ALL_RESULTS, 0);
  session_report(&ss, NULL);
  /* The comparison required NaN exactly where the reference's windows held the sample; these say
   * that there were such results, and finite ones after them. */
  test_check(ss.nan_rows > 0 && ss.finite_after_nan > 0,
             "%s: %zu NaN rows where the windows hold it, %zu finite rows after them", label,
             ss.nan_rows, ss.finite_after_nan);
  test_signal_clear(&signal);
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
  test_check_create(status, sp, want, also, "spectrum_create", what);
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
      sizes_ok &= cudafft_spectrum_frame_bytes(sp) == 3 * test_sample_bytes(c.format) &&
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
  TestRng rng = test_rng("call errors");
  TestSignal signal;
  test_signal_noise(&signal, &rng, config.format, config.channels, config.rate, frames, READ, 1.0);
  const uint8_t *data = signal.raw;
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
  test_signal_clear(&signal);
  cudafft_spectrum_destroy(sp);
}

/* The DC and Nyquist bins of a real signal's FFT are real: their imaginary parts must be exactly
 * +0, as GStreamer's own FFT gives, so that their phase is 0 or +pi (never -pi, never a rounding
 * error's angle), on every path: the fused kernel's sizes and cuFFT's (the others). One FFT per
 * interval, so that each result is one FFT's phase; the DC level's sign alternates. */
static void
check_edge_phases(CudafftBackend backend)
{
  static const size_t bands[] = {129, 301, 1000, 3001};
  const float half_turn = atan2f(0.0f, -1.0f);
  for (size_t b = 0; b < COUNT(bands); b++) {
    const size_t nfft = 2 * bands[b] - 2;
    const unsigned rate = 50000; /* nfft frames last a whole number of nanoseconds */
    const CudafftSpectrumConfig config =
        make_config(bands[b], 2, rate, CUDAFFT_SAMPLE_F32, 1, nfft * NS_PER_SECOND / rate, -200, 1);
    CudafftSpectrum *sp = NULL;
    if (!test_check(cudafft_spectrum_create(&sp, backend, -1, &config) == CUDAFFT_STATUS_OK,
                    "edge phases, %zu bands: create", bands[b]))
      continue;
    const size_t intervals = 8, frames = intervals * nfft;
    float *in = test_malloc(frames * 2 * sizeof *in);
    TestRng rng = test_rng("edge phases %zu", bands[b]);
    for (size_t j = 0; j < frames; j++)
      for (unsigned c = 0; c < 2; c++) {
        const double dc = ((j / nfft + c) % 2 ? -0.3 : 0.3);
        const double nyquist = (j % 2 ? -0.2 : 0.2) * (c ? -1.0 : 1.0);
        in[2 * j + c] = (float)(dc + nyquist + 0.05 * test_rng_uniform(&rng));
      }
    size_t consumed = 0, results = 0, checked = 0, bad = 0;
    char why[160] = "";
    const CudafftStatus status =
        cudafft_spectrum_push(sp, in, frames, ALL_RESULTS, &consumed, &results);
    for (size_t r = 0; r < results && status == CUDAFFT_STATUS_OK; r++) {
      CudafftSpectrumResult res;
      cudafft_spectrum_result(sp, r, &res);
      for (size_t row = 0; row < 2; row++)
        for (int edge = 0; edge < 2; edge++) {
          const size_t k = edge ? bands[b] - 1 : 0;
          const float phase = res.phase[row * bands[b] + k];
          checked++;
          if (!(phase == 0.0f && !signbit(phase)) && phase != half_turn) {
            if (bad++ == 0)
              snprintf(why, sizeof why, "; interval %zu channel %zu bin %zu: %.9g", r, row, k,
                       phase);
          }
        }
    }
    test_check(status == CUDAFFT_STATUS_OK && results == intervals && bad == 0,
               "%zu bands (nfft %zu): DC and Nyquist phases are +0 or +pi, %zu of %zu not%s",
               bands[b], nfft, bad, checked, why);
    free(in);
    cudafft_spectrum_destroy(sp);
  }
}

/* Main ------------------------------------------------------------------------------------------
 */

int
main(int argc, char **argv)
{
  const CudafftBackend backend = test_begin(argc, argv);

  check_create_errors(backend);
  check_call_errors(backend);
  test_section_done("errors");

  const size_t max_results[] = {1, 2, ALL_RESULTS};
  for (size_t i = 0; i < COUNT(stream_cases); i++)
    for (size_t m = 0; m < COUNT(max_results); m++)
      check_stream_case(backend, &stream_cases[i], max_results[m]);
  test_section_done("streams against the reference");

  check_sine_level(backend);
  check_finish(backend);
  check_reset(backend);
  check_options_changes(backend);
  check_edge_phases(backend);
  test_section_done("sine, finish, reset, options, edge phases");

  for (int multi = 0; multi <= 1; multi++) {
    /* 100 frames (with a carry): windows span three intervals; 1000: several FFTs each */
    check_nonfinite(backend, NAN, multi, 2083333);
    check_nonfinite(backend, INFINITY, multi, 2083333);
    check_nonfinite(backend, NAN, multi, 20833333);
    check_nonfinite(backend, -INFINITY, multi, 20833333);
  }
  test_section_done("NaN and Inf");
  return test_finish();
}
