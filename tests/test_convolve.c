/* test_convolve.c: the streaming convolution of cudafft_convolve.h against a double-precision
 * reference of the header's formulas (the convolution sum in double; for long inputs and kernels
 * the same sum through FFTW double, spot-checked against the direct sum), on fresh random input
 * pushed in pieces of 1, 100, 4096, 100000 frames and random mixtures: kernels of 1 to 48000 taps
 * on both paths, 1/2/6 channels, one kernel for all channels or one per channel, F32 and F64, the
 * lag invariant after every push (and cudafft_convolve_output_frames() exact before it), drain
 * with and without the tail, reset, mix, kernel changes with their crossover (between and across
 * paths, replaced, queued, pending at a drain or reset), a delta kernel's exact output, NaN and Inf
 * confined to the output they reach, and the statuses of invalid calls; the backend's direct path
 * (through its table) up to B taps; F64 in double precision end to end (check_f64_precision).
 * Argument: cpu or cuda.
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup. */
#include <cudafft/convolve.h>
#include "backend_choice.h"
#include "convolve_backend.h"
#include "convolve_reference.h"
#include "test_signal.h"
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B ((size_t)CUDAFFT_CONVOLVE_BLOCK)
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Relative L2 error of every window of WINDOW output frames of a channel, F32 (and F64 outside
 * check_f64_precision and check_block_sizes, whose bound is TOLERANCE_F64): the bound. The
 * partitioned path's float FFTs and sums of P products give about 1e-6; the direct path's double
 * sum only the float rounding of the input and output (6e-8). A misplaced sample, block or
 * partition, a wrong blend or mix costs orders of magnitude more. Windows rather than the whole
 * stream so that one wrong block cannot hide in a long stream. */
#define TOLERANCE 1e-5
/* F64 streams are filtered in double end to end: a double FFT's error over a few
 * thousand points and the sums of P products stay near 1e-15 relative, the direct sum's near
 * 1e-16; anything that passes through a float costs 1e-8. */
#define TOLERANCE_F64 1e-12
#define WINDOW ((size_t)4096)
/* The FFT reference against the direct sum, relative to |h| |x| (L2 norms): double rounding. */
#define REFERENCE_TOLERANCE 1e-12
/* Frames past the end of every output buffer that must stay poisoned. */
#define GUARD ((size_t)17)

static size_t
min_size(size_t a, size_t b)
{
  return a < b ? a : b;
}

/* The latency of a kernel at a block size (the header's paths). */
static size_t
latency_at(size_t taps, size_t block_size)
{
  return taps < CUDAFFT_CONVOLVE_DIRECT_TAPS ? 0 : block_size;
}

static size_t
path_latency(size_t taps)
{
  return latency_at(taps, B);
}

/* A filter's share of a crossover's length: its block size, 0 counting as the smallest. */
static size_t
span_at(size_t block_size)
{
  return block_size ? block_size : CUDAFFT_CONVOLVE_MIN_BLOCK;
}

static size_t
max_size(size_t a, size_t b)
{
  return a > b ? a : b;
}

static size_t
round_up(size_t n, size_t grid)
{
  return (n + grid - 1) / grid * grid;
}

/* The formats the convolution takes. */
static const CudafftSampleFormat formats[2] = {CUDAFFT_SAMPLE_F32, CUDAFFT_SAMPLE_F64};

/* Signals -------------------------------------------------------------------------------------- */

/* Random samples, full scale: exact floats for F32; for F64 with more bits than a float holds, so
 * that the rounding to float is exercised. The values are the samples' own. */
static void
make_input(TestSignal *input, TestRng *rng, CudafftSampleFormat format, unsigned channels,
           size_t frames)
{
  test_signal_random(input, rng, format, channels, 0, frames, TEST_READ_POW2);
}

/* Sessions: one engine, its output collected as doubles ----------------------------------------
 */

typedef struct {
  CudafftConvolve *cv;
  CudafftSampleFormat format;
  unsigned channels;
  size_t frame_bytes;
  size_t pushed, produced; /* since create, the last drain or reset */
  double *out, *mix_of;    /* produced x channels values, and the wet fraction of each frame */
  size_t capacity;         /* frames */
  double mix;
  uint8_t *buffer; /* the output of one call, with its guard */
  size_t buffer_frames;
  size_t calls, failures;
  size_t grid;      /* nonzero: the lag must be pushed mod grid after every push (no change
                       pending) */
  double tolerance; /* of a window's relative L2 error */
  TestRng rng;      /* the session's piece sizes and signals */
  char why[512];
  char label[256];
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

static int
session_open(Session *ss, CudafftBackend backend, const CudafftConvolveConfig *config,
             const char *label)
{
  memset(ss, 0, sizeof *ss);
  snprintf(ss->label, sizeof ss->label, "%s", label);
  ss->tolerance = TOLERANCE;
  ss->rng = test_rng("%s", label);
  const CudafftStatus status = cudafft_convolve_create(&ss->cv, backend, -1, config);
  if (status != CUDAFFT_STATUS_OK) {
    test_check(0, "%s: convolve_create on %s: %s: %s", label, test_backend_name(backend),
               cudafft_status_name(status), cudafft_last_error_message());
    return 0;
  }
  ss->format = config->format;
  ss->channels = config->channels;
  ss->frame_bytes = config->channels * test_sample_bytes(config->format);
  ss->mix = config->mix;
  if (cudafft_convolve_get_backend(ss->cv) != backend)
    session_fail(ss, "a %s filter, want %s",
                 test_backend_name(cudafft_convolve_get_backend(ss->cv)),
                 test_backend_name(backend));
  if (cudafft_convolve_frame_bytes(ss->cv) != ss->frame_bytes)
    session_fail(ss, "frame_bytes %zu, want %zu", cudafft_convolve_frame_bytes(ss->cv),
                 ss->frame_bytes);
  if (cudafft_convolve_latency(ss->cv) != path_latency(config->kernel.taps))
    session_fail(ss, "latency %zu for %zu taps, want %zu", cudafft_convolve_latency(ss->cv),
                 config->kernel.taps, path_latency(config->kernel.taps));
  return 1;
}

static void
session_close(Session *ss)
{
  cudafft_convolve_destroy(ss->cv);
  free(ss->out);
  free(ss->mix_of);
  free(ss->buffer);
}

/* A poisoned output buffer for `frames` frames and the guard. */
static uint8_t *
session_buffer(Session *ss, size_t frames)
{
  if (frames + GUARD > ss->buffer_frames) {
    free(ss->buffer);
    ss->buffer_frames = frames + GUARD;
    ss->buffer = test_malloc(ss->buffer_frames * ss->frame_bytes);
  }
  test_poison_samples(ss->format, ss->buffer, (frames + GUARD) * ss->channels);
  return ss->buffer;
}

/* Appends `count` frames of the call's output to the collected stream. */
static void
session_collect(Session *ss, size_t count)
{
  if (ss->produced + count > ss->capacity) {
    size_t capacity = ss->capacity ? ss->capacity : 65536;
    while (capacity < ss->produced + count)
      capacity *= 2;
    ss->out = realloc(ss->out, capacity * ss->channels * sizeof *ss->out);
    ss->mix_of = realloc(ss->mix_of, capacity * sizeof *ss->mix_of);
    if (!ss->out || !ss->mix_of)
      test_abort("session_collect: no memory for %zu frames", capacity);
    ss->capacity = capacity;
  }
  for (size_t i = 0; i < count; i++) {
    for (unsigned c = 0; c < ss->channels; c++)
      ss->out[(ss->produced + i) * ss->channels + c] =
          test_sample_value(ss->format, ss->buffer, i * ss->channels + c, TEST_READ_POW2);
    ss->mix_of[ss->produced + i] = ss->mix;
  }
  ss->produced += count;
}

/* The header's invariant: produced + lag = pushed, lag < latency (or 0 when latency is 0). */
static void
session_check_lag(Session *ss, const char *after)
{
  const size_t lag = cudafft_convolve_lag(ss->cv), latency = cudafft_convolve_latency(ss->cv);
  if (ss->produced + lag != ss->pushed || (latency == 0 ? lag != 0 : lag >= latency))
    session_fail(ss, "after %s: %zu frames produced, lag %zu, latency %zu, %zu pushed", after,
                 ss->produced, lag, latency, ss->pushed);
  /* each block of the block size comes out as soon as its last frame is in */
  if (ss->grid && lag != ss->pushed % ss->grid)
    session_fail(ss, "after %s: lag %zu after %zu frames, want %zu (block %zu)", after, lag,
                 ss->pushed, ss->pushed % ss->grid, ss->grid);
}

static void
session_push(Session *ss, const uint8_t *in, size_t frames)
{
  const size_t max = cudafft_convolve_max_output(ss->cv, frames);
  if (max != frames + cudafft_convolve_lag(ss->cv))
    session_fail(ss, "max_output(%zu) %zu with lag %zu", frames, max, cudafft_convolve_lag(ss->cv));
  uint8_t *out = session_buffer(ss, max);
  size_t produced = SIZE_MAX;
  const size_t expected = cudafft_convolve_output_frames(ss->cv, frames);
  const CudafftStatus status = cudafft_convolve_push(ss->cv, in, frames, out, &produced);
  ss->calls++;
  if (status != CUDAFFT_STATUS_OK) {
    session_fail(ss, "push of %zu frames after %zu: %s: %s", frames, ss->pushed,
                 cudafft_status_name(status), cudafft_last_error_message());
    return;
  }
  if (produced > max) {
    session_fail(ss, "push of %zu frames after %zu produced %zu, max_output %zu", frames,
                 ss->pushed, produced, max);
    return;
  }
  if (produced != expected) {
    session_fail(ss, "push of %zu frames after %zu produced %zu, output_frames said %zu", frames,
                 ss->pushed, produced, expected);
    return;
  }
  const size_t changed =
      test_count_unpoisoned_samples(ss->format, out, max * ss->channels + GUARD * ss->channels);
  const size_t written = test_count_unpoisoned_samples(ss->format, out, produced * ss->channels);
  if (changed != written || written != produced * ss->channels)
    session_fail(ss, "push of %zu frames after %zu: %zu values written, %zu produced x %u channels",
                 frames, ss->pushed, changed, produced, ss->channels);
  ss->pushed += frames;
  session_collect(ss, produced);
  session_check_lag(ss, "a push");
}

typedef enum {
  PIECES_1,
  PIECES_100,
  PIECES_4096,
  PIECES_100000,
  PIECES_MIXED,
  PIECES_COUNT_
} Pieces;

static const char *const pieces_names[PIECES_COUNT_] = {
    "pieces of 1", "pieces of 100", "pieces of 4096", "pieces of 100000", "mixed pieces"};

static size_t
next_piece(TestRng *rng, Pieces pieces)
{
  switch (pieces) {
  case PIECES_1:
    return 1;
  case PIECES_100:
    return 100;
  case PIECES_4096:
    return 4096;
  case PIECES_100000:
    return 100000;
  default:
    break;
  }
  switch (test_rng_range(rng, 0, 9)) {
  case 0:
    return 0;
  case 1:
    return 1;
  case 2:
    return test_rng_range(rng, 1, 50);
  case 3:
    return B;
  case 4:
    return B - 1;
  case 5:
    return test_rng_range(rng, 3 * B, 10 * B);
  default:
    return test_rng_range(rng, 1, 3000);
  }
}

/* Pushes frames [from, to) of data in pieces. */
static void
session_push_range(Session *ss, const uint8_t *data, size_t from, size_t to, Pieces pieces)
{
  size_t done = from;
  while (done < to && ss->failures == 0) {
    const size_t size = min_size(next_piece(&ss->rng, pieces), to - done);
    session_push(ss, data + done * ss->frame_bytes, size);
    done += size;
  }
}

/* Drains; want_tail: the taps - 1 frames the tail must add. */
static void
session_drain(Session *ss, int tail, size_t want_tail)
{
  const size_t lag = cudafft_convolve_lag(ss->cv);
  const size_t frames = cudafft_convolve_drain_frames(ss->cv, tail);
  if (frames != lag + (tail ? want_tail : 0))
    session_fail(ss, "drain_frames(%d) %zu with lag %zu, want %zu", tail, frames, lag,
                 lag + (tail ? want_tail : 0));
  uint8_t *out = session_buffer(ss, frames);
  size_t produced = SIZE_MAX;
  const CudafftStatus status = cudafft_convolve_drain(ss->cv, tail, out, &produced);
  ss->calls++;
  if (status != CUDAFFT_STATUS_OK || produced != frames) {
    session_fail(ss, "drain(%d) after %zu: %s, %zu frames for %zu: %s", tail, ss->pushed,
                 cudafft_status_name(status), produced, frames, cudafft_last_error_message());
    return;
  }
  const size_t changed =
      test_count_unpoisoned_samples(ss->format, out, (frames + GUARD) * ss->channels);
  if (changed != frames * ss->channels)
    session_fail(ss, "drain of %zu frames: %zu values written", frames, changed);
  session_collect(ss, frames);
  if (cudafft_convolve_lag(ss->cv) != 0)
    session_fail(ss, "lag %zu after a drain", cudafft_convolve_lag(ss->cv));
}

static void
session_set_kernel(Session *ss, const double *h, size_t taps, unsigned rows)
{
  const CudafftConvolveKernel kernel = {.taps_data = h, .taps = taps, .rows = rows};
  const CudafftStatus status = cudafft_convolve_set_kernel(ss->cv, &kernel);
  ss->calls++;
  if (status != CUDAFFT_STATUS_OK)
    session_fail(ss, "set_kernel(%zu taps) after %zu: %s: %s", taps, ss->pushed,
                 cudafft_status_name(status), cudafft_last_error_message());
  session_check_lag(ss, "set_kernel");
}

static void
session_set_mix(Session *ss, double mix)
{
  const CudafftStatus status = cudafft_convolve_set_mix(ss->cv, mix);
  if (status != CUDAFFT_STATUS_OK)
    session_fail(ss, "set_mix(%g): %s", mix, cudafft_status_name(status));
  ss->mix = mix;
}

/* Forgets the collected output too: the next stream starts at frame 0. */
static void
session_restart(Session *ss)
{
  ss->pushed = ss->produced = 0;
}

/* Output frames [first, last) of channel c against the reference, window by window; returns the
 * worst relative L2 error (NaN fails). A float FFT's error is relative to the level of the signal
 * it transforms, not to each output: where the exact output is (nearly) zero, such as after a
 * short kernel's tail or a block after the input ended whose spectra still hold it, the partitioned
 * path leaves noise at the stream's level times 1e-7. So a window's error is taken relative to
 * its own level or the channel's mean level over the whole output, whichever is higher, that mean
 * plus dry_power (the mean power of the dry term, see session_compare). */
static double
session_compare_range(Session *ss, const double *ref, unsigned c, size_t first, size_t last,
                      double dry_power, const char *what)
{
  double mean_power = 0.0;
  for (size_t n = 0; n < ss->produced; n++)
    mean_power += ref[n * ss->channels + c] * ref[n * ss->channels + c];
  mean_power /= (double)(ss->produced ? ss->produced : 1);
  mean_power += dry_power;
  double worst = 0.0;
  for (size_t w = first; w < last; w += WINDOW) {
    const size_t end = min_size(w + WINDOW, last);
    double err = 0.0, norm = 0.0;
    for (size_t n = w; n < end; n++) {
      const double d = ss->out[n * ss->channels + c] - ref[n * ss->channels + c];
      err += d * d;
      norm += ref[n * ss->channels + c] * ref[n * ss->channels + c];
    }
    const double level = fmax(norm, mean_power * (double)(end - w));
    const double rel = level > 0.0 ? sqrt(err / level) : err == 0.0 ? 0.0 : INFINITY;
    if (!(rel <= ss->tolerance)) {
      size_t at = w;
      for (size_t n = w; n < end; n++) {
        const double d = fabs(ss->out[n * ss->channels + c] - ref[n * ss->channels + c]);
        if (!(d <= ss->tolerance * sqrt(level / (double)(end - w)))) {
          at = n;
          break;
        }
      }
      session_fail(ss,
                   "%s: channel %u frames %zu..%zu: relative L2 error %.3g (tolerance %.0e); "
                   "frame %zu is %.9g, reference %.9g",
                   what, c, w, end - 1, rel, ss->tolerance, at, ss->out[at * ss->channels + c],
                   ref[at * ss->channels + c]);
      return INFINITY;
    }
    worst = rel > worst ? rel : worst;
  }
  return worst;
}

/* The whole collected stream against the reference for x with these kernels. */
static double
session_compare(Session *ss, const ConvolveRefKernel *kernels, size_t count, const double *x,
                size_t x_frames, size_t want_frames, const char *what)
{
  if (ss->produced != want_frames) {
    session_fail(ss, "%s: %zu frames out for %zu in, want %zu", what, ss->produced, x_frames,
                 want_frames);
    return INFINITY;
  }
  double *ref = test_malloc((want_frames + 1) * ss->channels * sizeof *ref);
  convolve_reference_stream(kernels, count, B, x, ss->channels, x_frames, want_frames, ss->mix_of,
                            ref);
  double worst = 0.0;
  for (unsigned c = 0; c < ss->channels && ss->failures == 0; c++) {
    /* With a mix below 1 the output is wet + dry, which can cancel (a tap near -(1 - mix) / mix):
     * the rounding of a float path is relative to the terms, so the dry one's level counts too. */
    double dry_power = 0.0;
    for (size_t n = 0; n < want_frames && n < x_frames; n++) {
      const double dry = (1.0 - ss->mix_of[n]) * x[n * ss->channels + c];
      dry_power += dry * dry;
    }
    dry_power /= (double)(want_frames ? want_frames : 1);
    const double e = session_compare_range(ss, ref, c, 0, want_frames, dry_power, what);
    worst = e > worst ? e : worst;
  }
  free(ref);
  return worst;
}

static int
session_report(Session *ss, double worst, const char *detail)
{
  return test_check(ss->failures == 0, "%s: %zu calls, worst window error %.2e%s%s%s", ss->label,
                    ss->calls, worst, detail ? detail : "", ss->failures ? ": " : "",
                    ss->failures ? ss->why : "");
}

/* Streams, scripted: kernel and mix changes at given frames ----------------------------------- */

typedef enum { EVENT_KERNEL, EVENT_MIX, EVENT_BLOCK } EventKind;

typedef struct {
  size_t at; /* before input frame `at` */
  EventKind kind;
  size_t taps; /* EVENT_KERNEL: a new random kernel; EVENT_BLOCK: the new block size */
  double mix;  /* EVENT_MIX */
} Event;

typedef enum { END_DRAIN, END_DRAIN_TAIL, END_RESET } Ending;

typedef struct {
  CudafftSampleFormat format;
  unsigned channels;
  int per_channel; /* rows = channels, else 1 */
  size_t taps;
  double mix;
  size_t frames;
  Pieces pieces;
  Ending ending;
  const Event *events;
  size_t event_count;
  int set_block;     /* block_size set before the first frame; else the default */
  size_t block_size; /* 0 (zero latency) or a power of two up to B */
  double tolerance;  /* 0: TOLERANCE */
} Script;

#define MAX_KERNELS 8

/* Sets the block size; checks the latency it gives the newest kernel alone. */
static void
session_set_block_size(Session *ss, size_t block_size)
{
  const CudafftStatus status = cudafft_convolve_set_block_size(ss->cv, block_size);
  ss->calls++;
  if (status != CUDAFFT_STATUS_OK)
    session_fail(ss, "set_block_size(%zu) after %zu: %s: %s", block_size, ss->pushed,
                 cudafft_status_name(status), cudafft_last_error_message());
  if (cudafft_convolve_get_block_size(ss->cv) != block_size)
    session_fail(ss, "get_block_size %zu after set_block_size(%zu)",
                 cudafft_convolve_get_block_size(ss->cv), block_size);
  session_check_lag(ss, "set_block_size");
}

/* The grid the lag must follow with `taps` alone in force at block size block_size. */
static size_t
grid_at(size_t taps, size_t block_size)
{
  return taps < CUDAFFT_CONVOLVE_DIRECT_TAPS || block_size == 0 ? 1 : block_size;
}

/* Runs a script; then, after its drain or reset, a second short stream that must see the newest
 * kernel with no history. The kernels' block sizes and change points follow the header: a change
 * starts at the first multiple of X at or after the frames pushed (X: the larger span of the
 * filter before and the new one), replacing a change not yet begun; during a crossover it follows
 * that crossover, from the first multiple of its X after it ends. */
static void
run_script(CudafftBackend backend, const Script *sc, const char *what)
{
  const unsigned rows = sc->per_channel ? sc->channels : 1;
  char label[256], block_label[32] = "";
  if (sc->set_block)
    snprintf(block_label, sizeof block_label, ", block size %zu", sc->block_size);
  snprintf(label, sizeof label, "%s: %zu taps x %u row%s, %u channel%s %s, %zu frames in %s, %s%s",
           what, sc->taps, rows, rows > 1 ? "s" : "", sc->channels, sc->channels > 1 ? "s" : "",
           test_format_name(sc->format), sc->frames, pieces_names[sc->pieces],
           sc->ending == END_RESET        ? "reset"
           : sc->ending == END_DRAIN_TAIL ? "drained with the tail"
                                          : "drained without the tail",
           block_label);
  TestRng kernel_rng = test_rng("%s kernels", label);
  ConvolveRefKernel kernels[MAX_KERNELS];
  size_t block_of[MAX_KERNELS]; /* the block size each kernel's filter was made for */
  size_t count = 1;
  kernels[0] =
      (ConvolveRefKernel){test_random_doubles(&kernel_rng, rows * sc->taps), sc->taps, rows, 0, 0};
  block_of[0] = B;
  const CudafftConvolveConfig config = {
      .channels = sc->channels,
      .format = sc->format,
      .kernel = {.taps_data = kernels[0].h, .taps = sc->taps, .rows = rows},
      .mix = sc->mix,
  };
  Session ss;
  if (!session_open(&ss, backend, &config, label)) {
    free((void *)kernels[0].h);
    return;
  }
  if (sc->set_block) {
    /* before the first frame: at once, no crossover */
    session_set_block_size(&ss, sc->block_size);
    block_of[0] = sc->block_size;
    if (cudafft_convolve_latency(ss.cv) != latency_at(sc->taps, sc->block_size))
      session_fail(&ss, "latency %zu at block size %zu, want %zu", cudafft_convolve_latency(ss.cv),
                   sc->block_size, latency_at(sc->taps, sc->block_size));
  }
  ss.grid = grid_at(sc->taps, block_of[0]);
  if (sc->tolerance > 0.0)
    ss.tolerance = sc->tolerance;
  TestSignal input;
  make_input(&input, &ss.rng, sc->format, sc->channels, sc->frames);
  const double *x = input.values;
  const uint8_t *data = input.raw;

  size_t done = 0;
  for (size_t e = 0; e <= sc->event_count && ss.failures == 0; e++) {
    const size_t at = e < sc->event_count ? sc->events[e].at : sc->frames;
    session_push_range(&ss, data, done, at, sc->pieces);
    done = at;
    if (e == sc->event_count)
      break;
    const Event *ev = &sc->events[e];
    if (ev->kind == EVENT_MIX) {
      session_set_mix(&ss, ev->mix);
      continue;
    }
    const ConvolveRefKernel *last = &kernels[count - 1];
    const size_t block = ev->kind == EVENT_BLOCK ? ev->taps : block_of[count - 1];
    const size_t taps = ev->kind == EVENT_BLOCK ? last->taps : ev->taps;
    double *h;
    if (ev->kind == EVENT_BLOCK) {
      h = test_malloc(rows * taps * sizeof *h);
      memcpy(h, last->h, rows * taps * sizeof *h);
    } else {
      h = test_random_doubles(&kernel_rng, rows * taps);
    }
    if (ev->kind == EVENT_BLOCK && done == 0 && count == 1) {
      /* before the first frame with nothing pending: the filter is remade at once */
      free(h);
      block_of[0] = block;
      session_set_block_size(&ss, block);
      ss.grid = grid_at(taps, block);
      continue;
    }
    /* a change not yet begun is replaced */
    if (count > 1 && kernels[count - 1].change >= done) {
      free((void *)kernels[count - 1].h);
      count--;
    }
    if (count == MAX_KERNELS)
      test_abort("run_script: more than %d kernels", MAX_KERNELS);
    const ConvolveRefKernel *before = &kernels[count - 1];
    const size_t span = max_size(span_at(block_of[count - 1]), span_at(block));
    const int crossing = count > 1 && done > before->change && done < before->change + before->span;
    const size_t change =
        crossing ? round_up(before->change + before->span, span) : round_up(done, span);
    block_of[count] = block;
    kernels[count++] = (ConvolveRefKernel){h, taps, rows, change, span};
    if (ev->kind == EVENT_BLOCK)
      session_set_block_size(&ss, block);
    else
      session_set_kernel(&ss, h, taps, rows);
    ss.grid = 0; /* a change pending: the lag follows both filters */
    size_t want_latency = 0;
    for (size_t k = 0; k < count; k++)
      if (k == count - 1 || kernels[k + 1].change + kernels[k + 1].span > done)
        want_latency = max_size(want_latency, latency_at(kernels[k].taps, block_of[k]));
    if (cudafft_convolve_latency(ss.cv) != want_latency)
      session_fail(&ss,
                   "latency %zu after the change to %zu taps at block size %zu at %zu, want "
                   "%zu",
                   cudafft_convolve_latency(ss.cv), taps, block, done, want_latency);
  }

  const ConvolveRefKernel *newest = &kernels[count - 1];
  const size_t newest_latency = latency_at(newest->taps, block_of[count - 1]);
  double worst = 0.0;
  if (sc->ending == END_RESET) {
    cudafft_convolve_reset(ss.cv);
    if (cudafft_convolve_lag(ss.cv) != 0 || cudafft_convolve_latency(ss.cv) != newest_latency)
      session_fail(&ss, "after reset: lag %zu, latency %zu (want 0, %zu)",
                   cudafft_convolve_lag(ss.cv), cudafft_convolve_latency(ss.cv), newest_latency);
    /* what came out before the reset */
    if (ss.failures == 0)
      worst = session_compare(&ss, kernels, count, x, sc->frames, ss.produced, "before the reset");
  } else {
    const int tail = sc->ending == END_DRAIN_TAIL;
    session_drain(&ss, tail, newest->taps - 1);
    if (ss.failures == 0)
      worst = session_compare(&ss, kernels, count, x, sc->frames,
                              sc->frames + (tail ? newest->taps - 1 : 0), "the stream");
    if (cudafft_convolve_latency(ss.cv) != newest_latency)
      session_fail(&ss, "after the drain: latency %zu, want %zu", cudafft_convolve_latency(ss.cv),
                   newest_latency);
  }
  test_signal_clear(&input);

  /* The second stream: the newest kernel alone, from zero history, drained with the tail unless
   * the script drains the first without it (10 s tails cost most of this program's time). */
  const int tail2 = sc->ending != END_DRAIN;
  session_restart(&ss);
  ss.grid = grid_at(newest->taps, block_of[count - 1]);
  const size_t frames2 = test_rng_range(&ss.rng, 1, 3 * B);
  TestSignal input2;
  make_input(&input2, &ss.rng, sc->format, sc->channels, frames2);
  ConvolveRefKernel second = *newest;
  second.change = 0;
  if (ss.failures == 0) {
    session_push_range(&ss, input2.raw, 0, frames2, PIECES_MIXED);
    session_drain(&ss, tail2, newest->taps - 1);
  }
  if (ss.failures == 0) {
    const double e = session_compare(&ss, &second, 1, input2.values, frames2,
                                     frames2 + (tail2 ? newest->taps - 1 : 0), "the next stream");
    worst = e > worst ? e : worst;
  }
  test_signal_clear(&input2);
  char detail[64];
  snprintf(detail, sizeof detail, " (%zu kernel%s)", count, count > 1 ? "s" : "");
  session_report(&ss, worst, detail);
  for (size_t k = 0; k < count; k++)
    free((void *)kernels[k].h);
  session_close(&ss);
}

static void
check_streams(CudafftBackend backend)
{
  static const size_t taps[] = {1, 5, 63, 64, 2048, 2049};
  static const unsigned channels[] = {1, 2, 6};
  TestRng rng = test_rng("stream lengths");
  size_t index = 0;
  for (size_t t = 0; t < COUNT(taps); t++)
    for (size_t c = 0; c < COUNT(channels); c++)
      for (int p = 0; p < PIECES_COUNT_; p++, index++) {
        /* more than two pieces of 100000; otherwise several blocks and partitions */
        const size_t frames = p == PIECES_100000
                                  ? 230000 + test_rng_range(&rng, 0, B)
                                  : 4 * B + 2 * taps[t] + test_rng_range(&rng, 0, 2 * B);
        const Script sc = {
            .format = (index / 2) % 2 ? CUDAFFT_SAMPLE_F64 : CUDAFFT_SAMPLE_F32,
            .channels = channels[c],
            .per_channel = channels[c] > 1 && index % 2,
            .taps = taps[t],
            .mix = 1.0,
            .frames = frames,
            .pieces = (Pieces)p,
            .ending = (Ending)(index % 3 == 2 ? END_DRAIN : END_DRAIN_TAIL),
        };
        run_script(backend, &sc, "stream");
      }
  /* 48000 taps (a 1 s response, 24 partitions): fewer combinations, for time */
  const Script long_kernels[] = {
      {CUDAFFT_SAMPLE_F32, 1, 0, 48000, 1.0, 150000, PIECES_4096, END_DRAIN_TAIL, NULL, 0, 0, 0,
       0.0},
      {CUDAFFT_SAMPLE_F64, 2, 1, 48000, 1.0, 120000, PIECES_MIXED, END_DRAIN_TAIL, NULL, 0, 0, 0,
       0.0},
      {CUDAFFT_SAMPLE_F32, 6, 0, 48000, 1.0, 210000, PIECES_100000, END_DRAIN, NULL, 0, 0, 0, 0.0},
      {CUDAFFT_SAMPLE_F32, 2, 0, 48000, 1.0, 60000, PIECES_100, END_DRAIN_TAIL, NULL, 0, 0, 0, 0.0},
  };
  for (size_t i = 0; i < COUNT(long_kernels); i++)
    run_script(backend, &long_kernels[i], "stream");
}

/* A scripted change case: a stream of `taps` at block size block_size (B: the default, not set)
 * with its events, pushed in pieces of 100 and in mixed pieces; format, channels and rows vary
 * with the case's index. */
typedef struct {
  size_t taps;
  size_t block_size;
  const Event *events;
  size_t count;
  size_t frames;
  Ending ending;
  const char *what;
} ChangeCase;

static void
run_change_cases(CudafftBackend backend, const ChangeCase *cases, size_t count, const char *kind)
{
  for (size_t i = 0; i < count; i++)
    for (int pieces = 0; pieces < 2; pieces++) {
      const Script sc = {
          .format = i % 2 ? CUDAFFT_SAMPLE_F64 : CUDAFFT_SAMPLE_F32,
          .channels = (unsigned)(1 + i % 3),
          .per_channel = i % 2,
          .taps = cases[i].taps,
          .mix = 1.0,
          .frames = cases[i].frames,
          .pieces = pieces ? PIECES_MIXED : PIECES_100,
          .ending = cases[i].ending,
          .events = cases[i].events,
          .event_count = cases[i].count,
          .set_block = cases[i].block_size != B,
          .block_size = cases[i].block_size,
      };
      char what[128];
      snprintf(what, sizeof what, "%s %s", kind, cases[i].what);
      run_script(backend, &sc, what);
    }
}

/* Block sizes: every block size x the response lengths x 1, 2 and 6 channels x both
 * formats, pushed in random pieces (one frame at a time for some), against the reference, the lag
 * exactly the frames since the last block boundary of the block size. */
static const size_t block_sizes[] = {0, 32, 64, 128, 256, 512, 1024, 2048};

static void
check_block_sizes(CudafftBackend backend)
{
  static const size_t taps[] = {1, 63, 64, 2047, 2048, 48000, 480000};
  static const unsigned channels[] = {1, 2, 6};
  TestRng rng = test_rng("block size streams");
  size_t index = 0;
  for (size_t b = 0; b < COUNT(block_sizes); b++)
    for (size_t t = 0; t < COUNT(taps); t++)
      for (size_t c = 0; c < COUNT(channels); c++)
        for (int f = 0; f < 2; f++, index++) {
          const int longest = taps[t] > 100000;
          const Script sc = {
              .format = formats[f],
              .channels = channels[c],
              .per_channel = channels[c] > 1 && index % 3 == 1,
              .taps = taps[t],
              .mix = index % 5 == 4 ? 0.7 : 1.0,
              .frames = 2 * B + test_rng_range(&rng, 0, 3 * B),
              .pieces = index % 11 == 3 ? PIECES_1 : PIECES_MIXED,
              /* the longest response's whole tail (10 s of output, most of this table's time)
               * at one block size below B and one channel count only */
              .ending = longest && !(block_sizes[b] == 64 && channels[c] == 2) ? END_DRAIN
                                                                               : END_DRAIN_TAIL,
              .set_block = 1,
              .block_size = block_sizes[b],
              .tolerance = formats[f] == CUDAFFT_SAMPLE_F64 ? TOLERANCE_F64 : TOLERANCE,
          };
          run_script(backend, &sc, "block size stream");
        }
}

/* Block size and kernel changes while streaming: the crossover of the header (X the larger block
 * size) between block sizes, kernels at a small block size, a block size change replacing a
 * kernel change not yet begun and following one under way, and at the end. */
static void
check_block_size_changes(CudafftBackend backend)
{
  const size_t a = 3 * B + 700; /* mid-block */
  const Event to_small[] = {{a, EVENT_BLOCK, 64, 0}};
  const Event to_default[] = {{a + 5, EVENT_BLOCK, B, 0}};
  const Event to_zero[] = {{a, EVENT_BLOCK, 0, 0}, {5 * B + 3, EVENT_BLOCK, 32, 0}};
  const Event kernels_at_small[] = {{1000, EVENT_KERNEL, 3000, 0},
                                    {1017, EVENT_KERNEL, 20, 0},
                                    {4 * B + 33, EVENT_KERNEL, 50000, 0},
                                    {4 * B + 40, EVENT_MIX, 0, 0.4}};
  const Event block_after_kernel[] = {{a, EVENT_KERNEL, 5000, 0}, {a + 10, EVENT_BLOCK, 128, 0}};
  const Event kernel_after_block[] = {{a, EVENT_BLOCK, 256, 0}, {4 * B + 10, EVENT_KERNEL, 90, 0}};
  const Event at_start[] = {{0, EVENT_BLOCK, 512, 0}, {0, EVENT_KERNEL, 7000, 0}};
  const Event pending_at_end[] = {{6 * B - 50, EVENT_BLOCK, 32, 0}};
  const ChangeCase cases[] = {
      {3000, B, to_small, 1, 7 * B, END_DRAIN_TAIL, "2048 to 64"},
      {70000, 64, to_default, 1, 7 * B + 9, END_DRAIN_TAIL, "64 to 2048"},
      {2100, 256, to_zero, 2, 8 * B, END_DRAIN_TAIL, "256 to 0 to 32"},
      {100, 64, kernels_at_small, 4, 7 * B, END_DRAIN_TAIL, "kernel changes at 64"},
      {4000, 32, block_after_kernel, 2, 7 * B, END_DRAIN_TAIL, "a block size after a kernel"},
      {5000, 0, kernel_after_block, 2, 7 * B, END_DRAIN, "a kernel during a block size change"},
      {3000, B, at_start, 2, 5 * B, END_DRAIN_TAIL, "before the first frame"},
      {3000, 1024, pending_at_end, 1, 6 * B - 50, END_DRAIN_TAIL, "pending when drained"},
      {40, 128, pending_at_end, 1, 6 * B - 50, END_RESET, "pending at a reset"},
  };
  run_change_cases(backend, cases, COUNT(cases), "block size change");
}

/* Mix: set at create and changed between pushes, on both paths. */
static void
check_mix(CudafftBackend backend)
{
  static const size_t taps[] = {5, 3000};
  for (size_t t = 0; t < COUNT(taps); t++) {
    const Event events[] = {
        {1000, EVENT_MIX, 0, 0.0},
        {5000, EVENT_MIX, 0, 1.0},
        {9001, EVENT_MIX, 0, 0.3},
    };
    const Script sc = {
        CUDAFFT_SAMPLE_F32, 2, 0, taps[t], 0.3, 14000, PIECES_MIXED, END_DRAIN_TAIL, events,
        COUNT(events),      0, 0, 0.0};
    run_script(backend, &sc, "mix 0.3, then 0, 1, 0.3");
    const Script zero = {CUDAFFT_SAMPLE_F64, 1,    0, taps[t], 0.0, 9000, PIECES_100,
                         END_DRAIN_TAIL,     NULL, 0, 0,       0,   0.0};
    run_script(backend, &zero, "mix 0");
  }
}

/* Kernel changes: the crossover of the header between and across paths, replaced before its
 * change point, queued during another, pending or under way at a drain or reset. */
static void
check_kernel_changes(CudafftBackend backend)
{
  const size_t a = 3 * B + 700; /* mid-block */
  const Event direct_direct[] = {{a, EVENT_KERNEL, 33, 0}};
  const Event direct_partitioned[] = {{a, EVENT_KERNEL, 3000, 0}};
  const Event partitioned_direct[] = {{a, EVENT_KERNEL, 7, 0}};
  const Event partitioned_partitioned[] = {{a, EVENT_KERNEL, 4097, 0}};
  const Event on_boundary[] = {{4 * B, EVENT_KERNEL, 100, 0}, {6 * B, EVENT_KERNEL, 9, 0}};
  const Event at_start[] = {{0, EVENT_KERNEL, 2500, 0}};
  const Event replaced[] = {{a, EVENT_KERNEL, 5000, 0}, {a + 300, EVENT_KERNEL, 12, 0}};
  const Event queued[] = {{a, EVENT_KERNEL, 100, 0},
                          {4 * B + 5, EVENT_KERNEL, 20, 0},
                          {4 * B + 900, EVENT_KERNEL, 2100, 0}};
  const Event with_mix[] = {{a, EVENT_KERNEL, 3000, 0}, {4 * B + 100, EVENT_MIX, 0, 0.3}};
  const Event pending_at_end[] = {{6 * B - 50, EVENT_KERNEL, 3000, 0}};
  const Event running_at_end[] = {{5 * B - 50, EVENT_KERNEL, 40, 0}};
  const ChangeCase cases[] = {
      {5, B, direct_direct, 1, 7 * B, END_DRAIN_TAIL, "direct to direct"},
      {5, B, direct_partitioned, 1, 8 * B + 3, END_DRAIN_TAIL, "direct to partitioned"},
      {2049, B, partitioned_direct, 1, 7 * B + 11, END_DRAIN_TAIL, "partitioned to direct"},
      {2049, B, partitioned_partitioned, 1, 9 * B, END_DRAIN, "partitioned to partitioned"},
      {5000, B, on_boundary, 2, 9 * B + 1, END_DRAIN_TAIL, "on block boundaries"},
      {7, B, at_start, 1, 5 * B, END_DRAIN_TAIL, "before the first frame"},
      {64, B, replaced, 2, 7 * B, END_DRAIN_TAIL, "replaced before its change point"},
      {3000, B, queued, 3, 9 * B, END_DRAIN_TAIL, "changed during a crossover (queued), twice"},
      {10, B, with_mix, 2, 7 * B, END_DRAIN_TAIL, "with a mix change in the crossover"},
      {2049, B, pending_at_end, 1, 6 * B - 50, END_DRAIN_TAIL, "pending when drained"},
      {5, B, pending_at_end, 1, 6 * B - 50, END_DRAIN, "pending when drained without the tail"},
      {2049, B, running_at_end, 1, 5 * B + 200, END_DRAIN_TAIL, "under way when drained"},
      {3000, B, running_at_end, 1, 5 * B + 200, END_RESET, "under way at a reset"},
      {33, B, pending_at_end, 1, 6 * B - 50, END_RESET, "pending at a reset"},
  };
  run_change_cases(backend, cases, COUNT(cases), "kernel change");
}

/* Random scripts: kernel changes of random lengths on either path and mix changes at random
 * frames (several within one block, some during a crossover), random pieces and endings. */
static void
check_random_scripts(CudafftBackend backend, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    TestRng rng = test_rng("random script %zu", i);
    Event events[6];
    const size_t frames = test_rng_range(&rng, 2 * B, 12 * B);
    const size_t event_count = test_rng_range(&rng, 1, COUNT(events));
    size_t at[COUNT(events)];
    for (size_t e = 0; e < event_count; e++)
      at[e] = test_rng_range(&rng, 0, frames);
    for (size_t e = 1; e < event_count; e++) /* sorted */
      for (size_t j = e; j > 0 && at[j - 1] > at[j]; j--) {
        const size_t t = at[j];
        at[j] = at[j - 1];
        at[j - 1] = t;
      }
    for (size_t e = 0; e < event_count; e++) {
      const size_t kind = test_rng_range(&rng, 0, 5);
      const size_t taps =
          test_rng_range(&rng, 0, 1) ? test_rng_range(&rng, 1, 63) : test_rng_range(&rng, 64, 6000);
      const size_t block = block_sizes[test_rng_range(&rng, 0, COUNT(block_sizes) - 1)];
      events[e] = (Event){at[e],
                          kind == 0   ? EVENT_MIX
                          : kind == 1 ? EVENT_BLOCK
                                      : EVENT_KERNEL,
                          kind == 1 ? block : taps, (double)test_rng_range(&rng, 0, 10) / 10.0};
    }
    const size_t first_block = block_sizes[test_rng_range(&rng, 0, COUNT(block_sizes) - 1)];
    const Script sc = {
        .format = formats[test_rng_range(&rng, 0, 1)],
        .channels = (unsigned)test_rng_range(&rng, 1, 3),
        .per_channel = (int)test_rng_range(&rng, 0, 1),
        .taps = test_rng_range(&rng, 0, 1) ? test_rng_range(&rng, 1, 63)
                                           : test_rng_range(&rng, 64, 6000),
        .mix = (double)test_rng_range(&rng, 0, 10) / 10.0,
        .frames = frames,
        .pieces = (Pieces)test_rng_range(&rng, 0, PIECES_COUNT_ - 1),
        .ending = (Ending)test_rng_range(&rng, 0, 2),
        .events = events,
        .event_count = event_count,
        .set_block = (int)test_rng_range(&rng, 0, 1),
        .block_size = first_block,
    };
    char what[64];
    snprintf(what, sizeof what, "random script %zu (%zu events)", i, event_count);
    run_script(backend, &sc, what);
  }
}

/* A reset mid-stream (a partial block staged): the next stream sees no history. */
static void
check_reset(CudafftBackend backend)
{
  static const size_t taps[] = {5, 2049};
  for (size_t t = 0; t < COUNT(taps); t++) {
    const Script sc = {CUDAFFT_SAMPLE_F32, 2,    1, taps[t], 1.0, 3 * B + 123, PIECES_MIXED,
                       END_RESET,          NULL, 0, 0,       0,   0.0};
    run_script(backend, &sc, "reset mid-block");
  }
}

/* A delayed delta kernel (tap `delay` of `taps`): on the direct path the input comes back
 * exactly, `delay` frames late, with exact zeros first (F32 and F64 alike: F64 is summed in
 * double); zero-padded to 64 taps or more (partitioned) within the FFT's error, which is the
 * format's tolerance. */
static void
delta_case(CudafftBackend backend, CudafftSampleFormat format, size_t taps, size_t delay)
{
  const int partitioned = taps >= CUDAFFT_CONVOLVE_DIRECT_TAPS;
  const double tolerance = format == CUDAFFT_SAMPLE_F64 ? TOLERANCE_F64 : TOLERANCE;
  const size_t frames = 3 * B + 77;
  const unsigned channels = 2;
  double *h = calloc(taps, sizeof *h);
  if (!h)
    test_abort("delta_case: no memory for %zu taps", taps);
  h[delay] = 1.0;
  const CudafftConvolveConfig config = {channels, format, {h, taps, 1}, 1.0};
  char label[128];
  snprintf(label, sizeof label, "delta kernel (tap %zu of %zu, %s path) %s", delay, taps,
           partitioned ? "partitioned" : "direct", test_format_name(format));
  Session ss;
  if (!session_open(&ss, backend, &config, label)) {
    free(h);
    return;
  }
  ss.tolerance = tolerance;
  TestSignal input;
  make_input(&input, &ss.rng, format, channels, frames);
  const double *x = input.values;
  session_push_range(&ss, input.raw, 0, frames, PIECES_MIXED);
  session_drain(&ss, 1, taps - 1);
  size_t inexact = 0, first_inexact = 0;
  double worst = 0.0, worst_zero = 0.0;
  if (ss.failures == 0 && ss.produced == frames + taps - 1) {
    for (size_t n = 0; n < ss.produced; n++)
      for (unsigned c = 0; c < channels; c++) {
        const double y = ss.out[n * channels + c];
        const double want = n >= delay && n - delay < frames ? x[(n - delay) * channels + c] : 0.0;
        if (memcmp(&y, &want, sizeof y) != 0 && !inexact++)
          first_inexact = n;
        if (n < delay)
          worst_zero = fabs(y) > worst_zero || isnan(y) ? fabs(y) : worst_zero;
      }
    ConvolveRefKernel kern = {h, taps, 1, 0, 0};
    worst = session_compare(&ss, &kern, 1, x, frames, frames + taps - 1, "delta");
  } else if (ss.failures == 0) {
    session_fail(&ss, "%zu frames out, want %zu", ss.produced, frames + taps - 1);
  }
  if (!partitioned && inexact)
    session_fail(&ss, "%zu values differ from the input's bits, the first at frame %zu", inexact,
                 first_inexact);
  /* The FFT's absolute error at full-scale input is about the format's epsilon: the first frames
   * must be as quiet as the tolerance relative to the input's level (rms 0.58) allows. */
  if (partitioned && !(worst_zero <= tolerance * 0.58))
    session_fail(&ss, "the first %zu frames reach %.3g", delay, worst_zero);
  char detail[96];
  snprintf(detail, sizeof detail, "; %zu values not bit-exact, first %zu frames within %.1e",
           inexact, delay, worst_zero);
  session_report(&ss, worst, detail);
  test_signal_clear(&input);
  session_close(&ss);
  free(h);
}

static void
check_delta(CudafftBackend backend)
{
  delta_case(backend, CUDAFFT_SAMPLE_F32, 6, 5);
  delta_case(backend, CUDAFFT_SAMPLE_F32, 64, 5);
}

/* The direct path of a backend, made through its table with spec.path = DIRECT, as the front end
 * will make the split path's time-domain head (kernels up to B taps, which the front end alone
 * would give the partitioned path): kernels of 100, 1000 and B taps (and 1 and 63, the ring's
 * edges) on 1, 2, 6 and 37 channels (more than a tile's 32), one row or one per channel, mix 1 or
 * 0.5 (exact in float), random call sizes (the split path's 32..2048 frames, and any), the
 * history carried across calls, then a drain with zero input (in NULL); every output sample of
 * the calls against the double-precision sum, the channel's relative L2 error within the
 * format's tolerance, and nothing written past a call's frames. */
static void
check_direct_backend(CudafftBackend backend, CudafftSampleFormat format, double tolerance)
{
  const CudafftConvolveBackend *table =
      CUDAFFT_BACKEND_TABLE(backend, cudafft_convolve_cpu_backend, cudafft_convolve_cuda_backend);
  if (!table) {
    test_check(0, "direct path: no %s backend table in this build", test_backend_name(backend));
    return;
  }
  static const size_t taps_list[] = {100, 1000, B, 1, 63};
  static const unsigned channels_list[] = {1, 2, 6, 37};
  size_t index = 0;
  for (size_t t = 0; t < COUNT(taps_list); t++)
    for (size_t ch = 0; ch < COUNT(channels_list); ch++, index++) {
      const size_t taps = taps_list[t];
      const unsigned channels = channels_list[ch];
      const unsigned rows = channels > 1 && index % 2 ? channels : 1;
      const double mix = index % 3 == 2 ? 0.5 : 1.0;
      char label[160];
      snprintf(label, sizeof label,
               "direct path of the %s backend: %zu taps x %u row%s, %u channel%s %s, mix %g",
               test_backend_name(backend), taps, rows, rows > 1 ? "s" : "", channels,
               channels > 1 ? "s" : "", test_format_name(format), mix);
      TestRng rng = test_rng("%s", label);
      double *h = test_random_doubles(&rng, taps * rows);
      const size_t frames = 2 * B + 2 * taps + test_rng_range(&rng, 0, B);
      const size_t total = frames + taps - 1; /* the input, then the tail from zeros */
      TestSignal input;
      make_input(&input, &rng, format, channels, frames);
      const CudafftConvolveSpec spec = {.channels = channels,
                                        .format = format,
                                        .kernel = {h, taps, rows},
                                        .path = CUDAFFT_CONVOLVE_DIRECT,
                                        .device_id = -1};
      void *impl = NULL;
      CudafftStatus status = table->create(&spec, &impl);
      if (status != CUDAFFT_STATUS_OK) {
        test_check(0, "%s: create: %s: %s", label, cudafft_status_name(status),
                   cudafft_last_error_message());
        free(h);
        test_signal_clear(&input);
        continue;
      }
      const size_t frame_bytes = channels * test_sample_bytes(format);
      uint8_t *out = test_malloc((total + GUARD) * frame_bytes);
      double *y = test_malloc(total * channels * sizeof *y);
      char why[256] = "";
      size_t calls = 0;
      for (size_t done = 0; done < total && !why[0]; calls++) {
        size_t size;
        switch (test_rng_range(&rng, 0, 3)) {
        case 0: /* the split path's block sizes */
          size = (size_t)32 << test_rng_range(&rng, 0, 6);
          break;
        case 1:
          size = test_rng_range(&rng, 1, 40);
          break;
        default:
          size = test_rng_range(&rng, 1, 3000);
          break;
        }
        /* a call never straddles the input's end: the tail's calls take zeros (in NULL) */
        size = min_size(size, done < frames ? frames - done : total - done);
        test_poison_samples(format, out, (size + GUARD) * channels);
        const CudafftConvolveJob job = {.in = done < frames ? input.raw + done * frame_bytes : NULL,
                                        .out = out,
                                        .frames = size,
                                        .mix = mix};
        status = table->run(impl, &job);
        if (status != CUDAFFT_STATUS_OK) {
          snprintf(why, sizeof why, "run of %zu frames after %zu: %s: %s", size, done,
                   cudafft_status_name(status), cudafft_last_error_message());
          break;
        }
        const size_t written =
            test_count_unpoisoned_samples(format, out, (size + GUARD) * channels);
        if (written != size * channels)
          snprintf(why, sizeof why, "run of %zu frames after %zu wrote %zu values, want %zu", size,
                   done, written, size * channels);
        for (size_t i = 0; i < size * channels; i++)
          y[done * channels + i] = test_sample_value(format, out, i, TEST_READ_POW2);
        done += size;
      }
      double worst = 0.0;
      double *ref = test_malloc(total * sizeof *ref);
      for (unsigned c = 0; c < channels && !why[0]; c++) {
        convolve_reference_channel(h + (rows > 1 ? c : 0) * taps, taps, input.values, channels, c,
                                   frames, 0, total, ref);
        double err = 0.0, norm = 0.0;
        for (size_t n = 0; n < total; n++) {
          const double dry = n < frames ? input.values[n * channels + c] : 0.0;
          const double want = mix * ref[n] + (1.0 - mix) * dry;
          const double d = y[n * channels + c] - want;
          err += d * d;
          norm += want * want;
        }
        const double rel = norm > 0.0 ? sqrt(err / norm) : err == 0.0 ? 0.0 : INFINITY;
        if (!(rel <= tolerance))
          snprintf(why, sizeof why, "channel %u: relative L2 error %.3g (tolerance %.0e)", c, rel,
                   tolerance);
        worst = rel > worst ? rel : worst;
      }
      test_check(!why[0], "%s: %zu calls, %zu frames, relative L2 error %.2e%s%s", label, calls,
                 total, worst, why[0] ? ": " : "", why);
      table->destroy(impl);
      free(ref);
      free(y);
      free(out);
      free(h);
      test_signal_clear(&input);
    }
}

/* F64 in double end to end, on its own so that each backend's double precision is
 * checked in one place: a delayed delta returns every input sample's bits on the direct path
 * (taps < 64, mix 1); random kernels of 1, 63, 64, 2047, 2048 and 48000 taps on 1, 2 and 6
 * channels in random pushes match the double reference within TOLERANCE_F64 on both paths; the
 * direct path of the backend (up to B taps) too. */
static void
check_f64_precision(CudafftBackend backend)
{
  delta_case(backend, CUDAFFT_SAMPLE_F64, 6, 5);
  delta_case(backend, CUDAFFT_SAMPLE_F64, 63, 40);
  delta_case(backend, CUDAFFT_SAMPLE_F64, 64, 5);
  delta_case(backend, CUDAFFT_SAMPLE_F64, 3000, 2100);
  static const size_t taps[] = {1, 63, 64, 2047, 2048, 48000};
  static const unsigned channels[] = {1, 2, 6};
  TestRng rng = test_rng("F64 stream lengths");
  size_t index = 0;
  for (size_t t = 0; t < COUNT(taps); t++)
    for (size_t c = 0; c < COUNT(channels); c++, index++) {
      const size_t frames = taps[t] > B ? 60000 + test_rng_range(&rng, 0, B)
                                        : 4 * B + 2 * taps[t] + test_rng_range(&rng, 0, 2 * B);
      const Script sc = {
          .format = CUDAFFT_SAMPLE_F64,
          .channels = channels[c],
          .per_channel = channels[c] > 1 && index % 2,
          .taps = taps[t],
          .mix = index % 3 == 1 ? 0.3 : 1.0, /* 0.3: no float holds it */
          .frames = frames,
          .pieces = PIECES_MIXED,
          .ending = (Ending)(index % 3 == 2 ? END_DRAIN : END_DRAIN_TAIL),
          .tolerance = TOLERANCE_F64,
      };
      run_script(backend, &sc, "F64 in double");
    }
  check_direct_backend(backend, CUDAFFT_SAMPLE_F64, TOLERANCE_F64);
}

/* NaN and Inf: one bad sample in channel 1 poisons only the output that depends on it (direct:
 * the taps frames from it; partitioned: the P + 2 blocks from its block's start, the spectra that
 * hold it), channel 0 never, and the output is finite and correct after it. */
static void
check_nonfinite(CudafftBackend backend, size_t taps, double bad)
{
  const unsigned channels = 2;
  const size_t parts = (taps + B - 1) / B;
  TestRng rng = test_rng("%s in %zu taps", isnan(bad) ? "NaN" : bad > 0 ? "Inf" : "-Inf", taps);
  const size_t at = 3 * B + test_rng_range(&rng, 0, B - 1);
  const size_t frames = at + (parts + 6) * B + taps;
  char label[128];
  snprintf(label, sizeof label, "%s at frame %zu of channel 1, %zu taps",
           isnan(bad) ? "NaN" : "Inf", at, taps);
  double *h = test_random_doubles(&rng, taps);
  const CudafftConvolveConfig config = {channels, CUDAFFT_SAMPLE_F32, {h, taps, 1}, 1.0};
  Session ss;
  if (!session_open(&ss, backend, &config, label)) {
    free(h);
    return;
  }
  TestSignal input;
  make_input(&input, &ss.rng, config.format, channels, frames);
  test_signal_set(&input, at, 1, bad);
  input.values[at * channels + 1] = 0.0; /* the reference away from it */
  const double *x = input.values;
  session_push_range(&ss, input.raw, 0, frames, PIECES_MIXED);
  session_drain(&ss, 1, taps - 1);
  const size_t total = frames + taps - 1;
  const size_t from = taps < CUDAFFT_CONVOLVE_DIRECT_TAPS ? at : at / B * B;
  const size_t to = taps < CUDAFFT_CONVOLVE_DIRECT_TAPS ? at + taps : (at / B + parts + 2) * B;
  double worst = 0.0;
  size_t poisoned = 0, nonfinite_outside = 0;
  if (ss.failures == 0 && ss.produced == total) {
    double *ref = test_malloc(total * channels * sizeof *ref);
    const ConvolveRefKernel kern = {h, taps, 1, 0, 0};
    convolve_reference_stream(&kern, 1, B, x, channels, frames, total, ss.mix_of, ref);
    worst = session_compare_range(&ss, ref, 0, 0, total, 0.0, "channel 0");
    const double before = session_compare_range(&ss, ref, 1, 0, from, 0.0, "channel 1 before");
    const double after = session_compare_range(&ss, ref, 1, to, total, 0.0, "channel 1 after");
    worst = before > worst ? before : worst;
    worst = after > worst ? after : worst;
    for (size_t n = 0; n < total; n++) {
      const int finite = isfinite(ss.out[n * channels + 1]) && isfinite(ss.out[n * channels]);
      if (n >= from && n < to)
        poisoned += !finite;
      else
        nonfinite_outside += !finite;
    }
    if (isfinite(ss.out[at * channels + 1]))
      session_fail(&ss, "frame %zu, where the bad sample enters, is finite (%g)", at,
                   ss.out[at * channels + 1]);
    if (nonfinite_outside)
      session_fail(&ss, "%zu frames outside %zu..%zu are not finite", nonfinite_outside, from,
                   to - 1);
    free(ref);
  } else if (ss.failures == 0) {
    session_fail(&ss, "%zu frames out, want %zu", ss.produced, total);
  }
  char detail[128];
  snprintf(detail, sizeof detail, "; %zu non-finite frames, all within %zu..%zu", poisoned, from,
           to - 1);
  session_report(&ss, worst, detail);
  test_signal_clear(&input);
  free(h);
  session_close(&ss);
}

/* Invalid calls ---------------------------------------------------------------------------------
 */

static void
expect_create(CudafftStatus want, CudafftStatus also, CudafftBackend backend, int device,
              const CudafftConvolveConfig *config, const char *what)
{
  CudafftConvolve *cv = (CudafftConvolve *)&cv; /* not NULL: create must clear it */
  const CudafftStatus status = cudafft_convolve_create(&cv, backend, device, config);
  test_check_create(status, cv, want, also, "convolve_create", what);
  if (status == CUDAFFT_STATUS_OK)
    cudafft_convolve_destroy(cv);
}

static void
check_create_errors(CudafftBackend backend)
{
  const CudafftStatus OK = CUDAFFT_STATUS_OK, SIZE = CUDAFFT_STATUS_INVALID_SIZE;
  const CudafftStatus VALUE = CUDAFFT_STATUS_INVALID_VALUE, NUL = CUDAFFT_STATUS_NULL_POINTER;
  double taps[3 * 70];
  TestRng rng = test_rng("create errors");
  for (size_t i = 0; i < COUNT(taps); i++)
    taps[i] = test_rng_uniform(&rng);
  const CudafftConvolveConfig good = {2, CUDAFFT_SAMPLE_F32, {taps, 70, 1}, 1.0};
  CudafftConvolveConfig c;

  test_check(cudafft_convolve_create(NULL, backend, -1, &good) == NUL,
             "convolve_create with a NULL result pointer -> NULL_POINTER");
  expect_create(NUL, NUL, backend, -1, NULL, "config NULL");
  expect_create(OK, OK, backend, -1, &good, "70 taps stereo F32");
  c = good, c.channels = 0;
  expect_create(VALUE, VALUE, backend, -1, &c, "channels 0");
  c = good, c.channels = CUDAFFT_MAX_CHANNELS + 1;
  expect_create(VALUE, VALUE, backend, -1, &c, "channels 1025");
  c = good, c.channels = CUDAFFT_MAX_CHANNELS, c.kernel.taps = 5;
  expect_create(OK, OK, backend, -1, &c, "channels 1024, 5 taps");
  c = good, c.format = CUDAFFT_SAMPLE_COUNT_;
  expect_create(VALUE, VALUE, backend, -1, &c, "format COUNT_");
  c = good, c.format = (CudafftSampleFormat)-1;
  expect_create(VALUE, VALUE, backend, -1, &c, "format -1");
  c = good, c.kernel.taps = 0;
  expect_create(SIZE, SIZE, backend, -1, &c, "taps 0");
  c = good, c.kernel.taps = SIZE_MAX;
  expect_create(SIZE, SIZE, backend, -1, &c, "taps SIZE_MAX");
  c = good, c.kernel.taps = (size_t)1 << 40;
  expect_create(SIZE, SIZE, backend, -1, &c, "taps 2^40");
  c = good, c.kernel.taps_data = NULL;
  expect_create(NUL, NUL, backend, -1, &c, "taps_data NULL");
  c = good, c.kernel.rows = 0;
  expect_create(VALUE, VALUE, backend, -1, &c, "rows 0");
  c = good, c.kernel.rows = 3;
  expect_create(VALUE, VALUE, backend, -1, &c, "rows 3 for 2 channels");
  c = good, c.kernel.rows = 2;
  expect_create(OK, OK, backend, -1, &c, "rows 2 for 2 channels");
  c = good, c.channels = 3, c.kernel.rows = 3;
  expect_create(OK, OK, backend, -1, &c, "rows 3 for 3 channels");
  c = good, c.mix = NAN;
  expect_create(VALUE, VALUE, backend, -1, &c, "mix NaN");
  c = good, c.mix = -0.1;
  expect_create(VALUE, VALUE, backend, -1, &c, "mix -0.1");
  c = good, c.mix = 1.1;
  expect_create(VALUE, VALUE, backend, -1, &c, "mix 1.1");
  c = good, c.mix = INFINITY;
  expect_create(VALUE, VALUE, backend, -1, &c, "mix Inf");
  c = good, c.mix = 0.0;
  expect_create(OK, OK, backend, -1, &c, "mix 0");
  taps[69] = NAN;
  expect_create(VALUE, VALUE, backend, -1, &good, "a NaN tap");
  taps[69] = -INFINITY;
  expect_create(VALUE, VALUE, backend, -1, &good, "an Inf tap");
  /* finite, but Inf once rounded to the float the filter computes in */
  taps[69] = 1e39;
  expect_create(VALUE, VALUE, backend, -1, &good, "a tap of 1e39 (beyond float)");
  taps[69] = -3.5e38;
  expect_create(VALUE, VALUE, backend, -1, &good, "a tap of -3.5e38 (beyond float)");
  taps[69] = 3.4e38; /* within it */
  expect_create(OK, OK, backend, -1, &good, "a tap of 3.4e38");
  /* F64 streams filter in double precision: any finite tap */
  taps[69] = 1e300;
  expect_create(VALUE, VALUE, backend, -1, &good, "a tap of 1e300 on F32");
  c = good, c.format = CUDAFFT_SAMPLE_F64;
  expect_create(OK, OK, backend, -1, &c, "a tap of 1e300 on F64");
  taps[69] = -1e39;
  expect_create(OK, OK, backend, -1, &c, "a tap of -1e39 on F64");
  taps[69] = INFINITY;
  expect_create(VALUE, VALUE, backend, -1, &c, "an Inf tap on F64");
  taps[69] = 0.5;
  expect_create(VALUE, VALUE, (CudafftBackend)42, -1, &good, "backend 42");
  expect_create(VALUE, VALUE, backend, -2, &good, "device -2");

  /* 2^26 taps (23 minutes at 48 kHz) on 1024 channels: over 500 GB of spectra and delay lines,
   * refused from the sizes before anything is allocated (zero pages: the taps cost no memory). */
  const size_t huge = (size_t)1 << 26;
  double *zeros = calloc(huge, sizeof *zeros);
  if (zeros) {
    c = good, c.channels = CUDAFFT_MAX_CHANNELS, c.kernel.taps_data = zeros;
    c.kernel.taps = huge;
    expect_create(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                  backend == CUDAFFT_BACKEND_CUDA ? CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY
                                                  : CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                  backend, -1, &c, "2^26 taps on 1024 channels");
    free(zeros);
  }

  CudafftConvolve *cv = NULL;
  const CudafftBackend want_auto =
      cudafft_cuda_device_count() > 0 ? CUDAFFT_BACKEND_CUDA : CUDAFFT_BACKEND_CPU;
  const CudafftStatus s = cudafft_convolve_create(&cv, CUDAFFT_BACKEND_AUTO, -1, &good);
  test_check(s == OK && cudafft_convolve_get_backend(cv) == want_auto,
             "convolve_create AUTO -> %s, a %s filter (want %s)", cudafft_status_name(s),
             test_backend_name(cudafft_convolve_get_backend(cv)), test_backend_name(want_auto));
  cudafft_convolve_destroy(cv);

  int sizes_ok = 1;
  for (int f = 0; f < 2; f++)
    for (size_t t = 5; t <= 70; t += 65) {
      c = good, c.format = formats[f], c.channels = 3, c.kernel.taps = t;
      cv = NULL;
      if (cudafft_convolve_create(&cv, backend, -1, &c) != OK) {
        sizes_ok = 0;
        continue;
      }
      sizes_ok &= cudafft_convolve_frame_bytes(cv) == 3 * test_sample_bytes(c.format) &&
                  cudafft_convolve_latency(cv) == path_latency(t) &&
                  cudafft_convolve_lag(cv) == 0 && cudafft_convolve_max_output(cv, 10) == 10 &&
                  cudafft_convolve_drain_frames(cv, 0) == 0 &&
                  cudafft_convolve_drain_frames(cv, 1) == t - 1;
      cudafft_convolve_destroy(cv);
    }
  test_check(sizes_ok, "frame_bytes, latency, lag, max_output, drain_frames of new filters (F32, "
                       "F64; 5 and 70 taps)");

  cudafft_convolve_destroy(NULL);
  cudafft_convolve_reset(NULL);
  test_check(cudafft_convolve_frame_bytes(NULL) == 0 && cudafft_convolve_latency(NULL) == 0 &&
                 cudafft_convolve_lag(NULL) == 0 && cudafft_convolve_max_output(NULL, 5) == 0 &&
                 cudafft_convolve_drain_frames(NULL, 1) == 0 &&
                 cudafft_convolve_get_backend(NULL) == CUDAFFT_BACKEND_AUTO,
             "destroy(NULL) and reset(NULL) return; the accessors of NULL give 0 (AUTO)");
}

static void
check_call_errors(CudafftBackend backend)
{
  double taps[100];
  TestRng rng = test_rng("call errors");
  for (size_t i = 0; i < COUNT(taps); i++)
    taps[i] = test_rng_uniform(&rng);
  const CudafftConvolveConfig config = {2, CUDAFFT_SAMPLE_F32, {taps, 100, 1}, 1.0};
  CudafftConvolve *cv = NULL;
  if (cudafft_convolve_create(&cv, backend, -1, &config) != CUDAFFT_STATUS_OK) {
    test_check(0, "call errors: convolve_create: %s", cudafft_last_error_message());
    return;
  }
  const size_t frames = 3000;
  float *in = test_malloc(frames * 2 * sizeof *in);
  float *out = test_malloc((frames + B) * 2 * sizeof *out);
  test_rng_fill(&rng, in, frames * 2);
  size_t produced = 7;
  CudafftStatus s;

  s = cudafft_convolve_push(NULL, in, 10, out, &produced);
  test_check(s == CUDAFFT_STATUS_NULL_POINTER && produced == 0,
             "push(NULL convolve) -> %s, produced %zu", cudafft_status_name(s), produced);
  const struct {
    const void *in;
    size_t frames;
    void *out;
    int null_produced;
    CudafftStatus want;
    const char *what;
  } bad[] = {
      {NULL, 10, out, 0, CUDAFFT_STATUS_NULL_POINTER, "in NULL"},
      {in, 2 * CUDAFFT_CONVOLVE_BLOCK, NULL, 0, CUDAFFT_STATUS_NULL_POINTER,
       "out NULL where frames come out"},
      {in, 10, out, 1, CUDAFFT_STATUS_NULL_POINTER, "produced NULL"},
      {in, SIZE_MAX, out, 0, CUDAFFT_STATUS_INVALID_VALUE, "SIZE_MAX frames"},
      {in, SIZE_MAX / 8, out, 0, CUDAFFT_STATUS_INVALID_VALUE, "SIZE_MAX / 8 frames"},
      {in, 100, in + 50, 0, CUDAFFT_STATUS_INVALID_VALUE, "out overlapping in"},
      {out + 20, 100, out, 0, CUDAFFT_STATUS_INVALID_VALUE, "in overlapping out"},
  };
  for (size_t i = 0; i < COUNT(bad); i++) {
    size_t ignored;
    s = cudafft_convolve_push(cv, in, 100, out, &ignored); /* something to forget */
    const size_t lag = cudafft_convolve_lag(cv);
    produced = 7;
    s = cudafft_convolve_push(cv, bad[i].in, bad[i].frames, bad[i].out,
                              bad[i].null_produced ? NULL : &produced);
    test_check(s == bad[i].want && (bad[i].null_produced || produced == 0) && lag > 0 &&
                   cudafft_convolve_lag(cv) == 0,
               "push %s -> %s (want %s), produced %zu, and it resets (lag %zu before)", bad[i].what,
               cudafft_status_name(s), cudafft_status_name(bad[i].want), produced, lag);
  }
  /* out may be NULL where the push produces nothing (cudafft_convolve_output_frames() 0) */
  const size_t comes_out = cudafft_convolve_output_frames(cv, 10);
  s = cudafft_convolve_push(cv, in, 10, NULL, &produced);
  test_check(s == CUDAFFT_STATUS_OK && produced == 0 && comes_out == 0 &&
                 cudafft_convolve_lag(cv) == 10,
             "push of 10 frames to NULL, none to come out (output_frames %zu) -> %s, produced %zu",
             comes_out, cudafft_status_name(s), produced);
  cudafft_convolve_reset(cv);
  s = cudafft_convolve_push(cv, NULL, 0, NULL, &produced);
  test_check(s == CUDAFFT_STATUS_OK && produced == 0,
             "push of 0 frames from NULL to NULL -> %s, produced %zu", cudafft_status_name(s),
             produced);

  /* drain */
  size_t ignored;
  cudafft_convolve_push(cv, in, 100, out, &ignored);
  s = cudafft_convolve_drain(NULL, 1, out, &produced);
  test_check(s == CUDAFFT_STATUS_NULL_POINTER && produced == 0,
             "drain(NULL convolve) -> %s, produced %zu", cudafft_status_name(s), produced);
  s = cudafft_convolve_drain(cv, 1, out, NULL);
  const size_t lag_after = cudafft_convolve_lag(cv);
  test_check(s == CUDAFFT_STATUS_NULL_POINTER && lag_after == 0,
             "drain(produced NULL) -> %s, and it resets (lag %zu)", cudafft_status_name(s),
             lag_after);
  cudafft_convolve_push(cv, in, 100, out, &ignored);
  s = cudafft_convolve_drain(cv, 0, NULL, &produced);
  test_check(s == CUDAFFT_STATUS_NULL_POINTER && produced == 0 && cudafft_convolve_lag(cv) == 0,
             "drain(out NULL) with 100 frames to drain -> %s, and it resets",
             cudafft_status_name(s));
  s = cudafft_convolve_drain(cv, 0, NULL, &produced);
  test_check(s == CUDAFFT_STATUS_OK && produced == 0,
             "drain(out NULL, no tail) with nothing to drain -> %s, produced %zu",
             cudafft_status_name(s), produced);

  /* set_kernel: nothing changes on invalid arguments */
  cudafft_convolve_push(cv, in, 100, out, &ignored);
  const size_t lag = cudafft_convolve_lag(cv);
  const struct {
    CudafftConvolveKernel kernel;
    CudafftStatus want;
    const char *what;
  } bad_kernels[] = {
      {{taps, 0, 1}, CUDAFFT_STATUS_INVALID_SIZE, "taps 0"},
      {{taps, SIZE_MAX, 1}, CUDAFFT_STATUS_INVALID_SIZE, "taps SIZE_MAX"},
      {{NULL, 10, 1}, CUDAFFT_STATUS_NULL_POINTER, "taps_data NULL"},
      {{taps, 10, 3}, CUDAFFT_STATUS_INVALID_VALUE, "rows 3 for 2 channels"},
      {{taps, 10, 0}, CUDAFFT_STATUS_INVALID_VALUE, "rows 0"},
  };
  for (size_t i = 0; i < COUNT(bad_kernels); i++) {
    s = cudafft_convolve_set_kernel(cv, &bad_kernels[i].kernel);
    test_check(
        s == bad_kernels[i].want && cudafft_convolve_lag(cv) == lag &&
            cudafft_convolve_latency(cv) == B && cudafft_convolve_drain_frames(cv, 1) == lag + 99,
        "set_kernel %s -> %s (want %s); lag, latency and drain_frames unchanged",
        bad_kernels[i].what, cudafft_status_name(s), cudafft_status_name(bad_kernels[i].want));
  }
  taps[3] = NAN;
  const CudafftConvolveKernel nan_kernel = {taps, 10, 1};
  s = cudafft_convolve_set_kernel(cv, &nan_kernel);
  taps[3] = 0.25;
  test_check(s == CUDAFFT_STATUS_INVALID_VALUE && cudafft_convolve_drain_frames(cv, 1) == lag + 99,
             "set_kernel with a NaN tap -> %s, nothing changes", cudafft_status_name(s));
  taps[3] = 1e39;
  s = cudafft_convolve_set_kernel(cv, &nan_kernel);
  taps[3] = 0.25;
  test_check(s == CUDAFFT_STATUS_INVALID_VALUE && cudafft_convolve_drain_frames(cv, 1) == lag + 99,
             "set_kernel with a tap of 1e39 -> %s, nothing changes", cudafft_status_name(s));
  CudafftConvolve *f64 = NULL;
  const CudafftConvolveConfig f64_config = {2, CUDAFFT_SAMPLE_F64, {taps, 100, 1}, 1.0};
  if (cudafft_convolve_create(&f64, backend, -1, &f64_config) == CUDAFFT_STATUS_OK) {
    taps[3] = 1e300;
    s = cudafft_convolve_set_kernel(f64, &nan_kernel);
    taps[3] = NAN;
    const CudafftStatus s_nan = cudafft_convolve_set_kernel(f64, &nan_kernel);
    taps[3] = 0.25;
    test_check(s == CUDAFFT_STATUS_OK && s_nan == CUDAFFT_STATUS_INVALID_VALUE,
               "F64: set_kernel with a tap of 1e300 -> %s, with a NaN tap -> %s",
               cudafft_status_name(s), cudafft_status_name(s_nan));
  } else {
    test_check(0, "call errors: F64 convolve_create: %s", cudafft_last_error_message());
  }
  cudafft_convolve_destroy(f64);
  const CudafftConvolveKernel good_kernel = {taps, 10, 2};
  s = cudafft_convolve_set_kernel(NULL, &good_kernel);
  const CudafftStatus s2 = cudafft_convolve_set_kernel(cv, NULL);
  test_check(s == CUDAFFT_STATUS_NULL_POINTER && s2 == CUDAFFT_STATUS_NULL_POINTER,
             "set_kernel(NULL convolve) -> %s, set_kernel(NULL kernel) -> %s",
             cudafft_status_name(s), cudafft_status_name(s2));

  /* A kernel too large for memory: refused at set_kernel, which resets and keeps the old one. */
  const size_t huge = (size_t)1 << 26;
  double *zeros = calloc(huge, sizeof *zeros);
  CudafftConvolve *wide = NULL;
  const CudafftConvolveConfig wide_config = {
      CUDAFFT_MAX_CHANNELS, CUDAFFT_SAMPLE_F32, {taps, 100, 1}, 1.0};
  float *wide_in = calloc(100 * CUDAFFT_MAX_CHANNELS, sizeof *wide_in);
  float *wide_out = calloc((100 + B) * CUDAFFT_MAX_CHANNELS, sizeof *wide_out);
  if (zeros && wide_in && wide_out &&
      cudafft_convolve_create(&wide, backend, -1, &wide_config) == CUDAFFT_STATUS_OK) {
    cudafft_convolve_push(wide, wide_in, 100, wide_out, &ignored);
    const size_t wide_lag = cudafft_convolve_lag(wide);
    const CudafftConvolveKernel huge_kernel = {zeros, huge, 1};
    s = cudafft_convolve_set_kernel(wide, &huge_kernel);
    test_check(
        (s == CUDAFFT_STATUS_HOST_OUT_OF_MEMORY || s == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY) &&
            wide_lag == 100 && cudafft_convolve_lag(wide) == 0 &&
            cudafft_convolve_latency(wide) == B && cudafft_convolve_drain_frames(wide, 1) == 99,
        "set_kernel of 2^26 taps on 1024 channels -> %s (want an out-of-memory status), "
        "resets (lag %zu, was %zu), keeps the 100-tap kernel (drain_frames %zu): %s",
        cudafft_status_name(s), cudafft_convolve_lag(wide), wide_lag,
        cudafft_convolve_drain_frames(wide, 1), cudafft_last_error_message());
  } else {
    test_check(0, "set_kernel out of memory: cannot set up the test: %s",
               cudafft_last_error_message());
  }
  cudafft_convolve_destroy(wide);
  free(zeros);
  free(wide_in);
  free(wide_out);

  /* set_mix */
  const double bad_mix[] = {NAN, -0.1, 1.1, INFINITY, -INFINITY};
  int mix_ok = 1;
  for (size_t i = 0; i < COUNT(bad_mix); i++)
    mix_ok &= cudafft_convolve_set_mix(cv, bad_mix[i]) == CUDAFFT_STATUS_INVALID_VALUE;
  mix_ok &= cudafft_convolve_set_mix(NULL, 0.5) == CUDAFFT_STATUS_NULL_POINTER;
  mix_ok &= cudafft_convolve_set_mix(cv, 0.0) == CUDAFFT_STATUS_OK &&
            cudafft_convolve_set_mix(cv, 1.0) == CUDAFFT_STATUS_OK;
  test_check(mix_ok, "set_mix NaN, -0.1, 1.1, +-Inf -> INVALID_VALUE; NULL -> NULL_POINTER; 0 and "
                     "1 -> OK");
  free(in);
  free(out);
  cudafft_convolve_destroy(cv);
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

  check_delta(backend);
  test_section_done("delta kernel");

  check_direct_backend(backend, CUDAFFT_SAMPLE_F32, TOLERANCE);
  test_section_done("the direct path up to B taps");

  check_f64_precision(backend);
  test_section_done("F64 in double precision");

  check_streams(backend);
  test_section_done("streams against the reference");

  check_mix(backend);
  check_reset(backend);
  check_kernel_changes(backend);
  check_random_scripts(backend, 150);
  test_section_done("mix, reset, kernel changes");

  check_block_sizes(backend);
  check_block_size_changes(backend);
  test_section_done("block sizes");

  check_nonfinite(backend, 40, NAN);
  check_nonfinite(backend, 40, INFINITY);
  check_nonfinite(backend, 5000, NAN);
  check_nonfinite(backend, 5000, -INFINITY);
  check_nonfinite(backend, 2048, INFINITY);
  test_section_done("NaN and Inf");

  size_t reference_points;
  double reference_worst;
  convolve_reference_audit(&reference_points, &reference_worst);
  test_check(reference_points > 0 && reference_worst <= REFERENCE_TOLERANCE,
             "the FFT reference agrees with the direct sum at %zu random points (worst %.2e of "
             "|h| |x|, tolerance %.0e)",
             reference_points, reference_worst, REFERENCE_TOLERANCE);
  return test_finish();
}
