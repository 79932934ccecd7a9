/* test_convolve_streams.c: many convolution objects in one process at once, as a media server runs
 * them (on the CUDA backend they share the device's executor, whose batches mix every object's
 * work). Every output value of every object is checked against its own double-precision reference
 * (convolve_reference.h), window by window, with test_convolve.c's tolerances (F64 streams at the
 * double bound: they are filtered in double end to end); outputs are NaN-poisoned with a guard
 * after them. What runs at once:
 * - WORKERS threads, each streaming STREAMS_PER_WORKER objects (64 in all) of random
 *   configurations: kernels of 10 to 200000 taps (both paths, one and many partitions), 1 to 8
 *   channels, one kernel row or one per channel, F32 and F64, a random mix; random-sized pushes
 *   (single frames to several jobs' worth), kernel changes, mix changes and resets mid-stream,
 *   drains with and without the tail. An object that has run its segments is destroyed and a new
 *   one takes its place, until the main thread is done: objects come and go while others stream.
 * - Meanwhile on the main thread: an object whose state cannot fit (2^26 taps on 1024 channels:
 *   an out-of-memory status naming the sizes, and the others unaffected); objects of 1024 channels
 *   of F32 and 520 of F64, whose blocks are larger than an executor job; then CYCLES cycles of
 *   create, stream, drain, check, destroy.
 * Argument: cpu or cuda (77 without a device). The CPU backend runs the same checks (its objects
 * are independent; the front end's thread safety across objects is what they check there). */
#define _POSIX_C_SOURCE 200809L

#include <cudafft/convolve.h>
#include "convolve_reference.h"
#include "test_signal.h"
#include "test_util.h"
#include "worker_util.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B ((size_t)CUDAFFT_CONVOLVE_BLOCK)
/* test_convolve.c's bounds and windows (it says why): F32 and F64 (double end to end). */
#define TOLERANCE 1e-5
#define TOLERANCE_F64 1e-12
#define WINDOW ((size_t)4096)
#define GUARD ((size_t)17) /* frames after each output that must stay poisoned */
#define MAX_KERNELS 5      /* kernels of one segment: the first and up to 4 changes */

#define WORKERS 8
#define STREAMS_PER_WORKER 8
#define SEGMENTS 2 /* of an object, each ended by a drain or a reset */
/* Objects one after another in a worker's place, at most (a bound on the run's length). */
#define MAX_LIVES 4
#define CYCLES 100

static CudafftBackend backend;
/* The reference (FFTW's planner, its audit counters) is not thread-safe: one at a time. */
static pthread_mutex_t reference_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop_replacing;

/* Kernel lengths: the direct path, one partition, a few up to a second, long ones up to 200000
 * taps (about 4 s at 48 kHz). */
static size_t
pick_taps(TestRng *rng, size_t most)
{
  size_t taps;
  const size_t pick = test_rng_range(rng, 0, 19);
  if (pick < 5)
    taps = test_rng_range(rng, 10, CUDAFFT_CONVOLVE_DIRECT_TAPS - 1);
  else if (pick < 10)
    taps = test_rng_range(rng, CUDAFFT_CONVOLVE_DIRECT_TAPS, B);
  else if (pick < 17)
    taps = test_rng_range(rng, B + 1, 48000);
  else
    taps = test_rng_range(rng, 48001, 200000);
  return taps < most ? taps : most;
}

/* Streams: one object, its segments and their output --------------------------------------- */

typedef struct {
  CudafftConvolve *cv;
  CudafftSampleFormat format;
  unsigned channels, rows;
  size_t frame_bytes;
  size_t most_taps; /* of its kernels */
  TestRng rng;
  char label[192];
  int segments_left;

  /* the segment: the stream since create or the last drain or reset */
  TestSignal input; /* the frames it may push */
  size_t pushed, produced;
  ConvolveRefKernel kernels[MAX_KERNELS]; /* kernels[0]: from frame 0 */
  size_t count;
  double mix;
  double *out, *mix_of; /* produced x channels values, the wet fraction of each frame */
  size_t capacity;      /* frames */
  uint8_t *buffer;      /* one call's output and its guard */
  size_t buffer_frames;

  size_t calls, segments;
  double worst;
  int failed;
  char why[512]; /* the first failure */
  int on_worker; /* failures are noted for the main thread (worker_fail) as well */
} Stream;

static void stream_fail(Stream *s, const char *format, ...) TEST_PRINTF(2, 3);

static void
stream_fail(Stream *s, const char *format, ...)
{
  if (s->failed++)
    return;
  va_list args;
  va_start(args, format);
  vsnprintf(s->why, sizeof s->why, format, args);
  va_end(args);
  if (s->on_worker)
    worker_fail("%s: %s", s->label, s->why);
}

/* Makes the stream's object: a random configuration from its own random stream. Returns 0 (a
 * failure noted) if it cannot be made. */
static int
stream_open(Stream *s, const char *label, size_t most_taps, int segments, int on_worker)
{
  memset(s, 0, sizeof *s);
  s->on_worker = on_worker;
  s->rng = test_rng("%s", label);
  s->channels = (unsigned)test_rng_range(&s->rng, 1, 8);
  s->rows = test_rng_range(&s->rng, 0, 2) == 0 ? s->channels : 1;
  s->format = test_rng_range(&s->rng, 0, 1) ? CUDAFFT_SAMPLE_F64 : CUDAFFT_SAMPLE_F32;
  s->frame_bytes = s->channels * test_sample_bytes(s->format);
  /* mixes are whole 1/1024ths: the engine takes the mix as a float, which holds them exactly, so
   * that an F64 stream meets the double bound with any of them */
  s->mix = test_rng_range(&s->rng, 0, 3) == 0 ? test_rng_range(&s->rng, 0, 1024) / 1024.0 : 1.0;
  s->most_taps = most_taps;
  const size_t taps = pick_taps(&s->rng, most_taps);
  snprintf(s->label, sizeof s->label, "%s (%u channel%s %s, %s, first kernel %zu taps)", label,
           s->channels, s->channels > 1 ? "s" : "", test_format_name(s->format),
           s->rows > 1 ? "a row per channel" : "one row", taps);
  s->kernels[0] =
      (ConvolveRefKernel){test_random_doubles(&s->rng, taps * s->rows), taps, s->rows, 0, 0};
  s->count = 1;
  s->segments_left = segments;
  const CudafftConvolveConfig config = {
      .channels = s->channels,
      .format = s->format,
      .kernel = {.taps_data = s->kernels[0].h, .taps = taps, .rows = s->rows},
      .mix = s->mix,
  };
  const CudafftStatus status = cudafft_convolve_create(&s->cv, backend, -1, &config);
  if (status != CUDAFFT_STATUS_OK) {
    stream_fail(s, "create: %s: %s", cudafft_status_name(status), cudafft_last_error_message());
    s->segments_left = 0;
    return 0;
  }
  return 1;
}

static void
stream_close(Stream *s)
{
  cudafft_convolve_destroy(s->cv);
  for (size_t k = 0; k < s->count; k++)
    free((void *)s->kernels[k].h);
  test_signal_clear(&s->input);
  free(s->out);
  free(s->mix_of);
  free(s->buffer);
  s->cv = NULL;
}

/* A segment of `frames` frames of fresh input, from zero history with the newest kernel. */
static void
segment_begin(Stream *s, size_t frames)
{
  test_signal_clear(&s->input);
  test_signal_random(&s->input, &s->rng, s->format, s->channels, 0, frames, TEST_READ_POW2);
  s->pushed = s->produced = 0;
}

/* A poisoned output buffer for `frames` frames and the guard. */
static uint8_t *
stream_buffer(Stream *s, size_t frames)
{
  if (frames + GUARD > s->buffer_frames) {
    free(s->buffer);
    s->buffer_frames = frames + GUARD;
    s->buffer = test_malloc(s->buffer_frames * s->frame_bytes);
  }
  test_poison_samples(s->format, s->buffer, (frames + GUARD) * s->channels);
  return s->buffer;
}

/* The call wrote exactly `produced` frames of `room` (and nothing of the guard): appends them. */
static void
stream_collect(Stream *s, size_t produced, size_t room, const char *what)
{
  const size_t changed =
      test_count_unpoisoned_samples(s->format, s->buffer, (room + GUARD) * s->channels);
  const size_t written =
      test_count_unpoisoned_samples(s->format, s->buffer, produced * s->channels);
  if (changed != written || written != produced * s->channels) {
    stream_fail(s, "%s at frame %zu: %zu values written, %zu produced x %u channels", what,
                s->pushed, changed, produced, s->channels);
    return;
  }
  if (s->produced + produced > s->capacity) {
    size_t capacity = s->capacity ? s->capacity : 16384;
    while (capacity < s->produced + produced)
      capacity *= 2;
    s->out = realloc(s->out, capacity * s->channels * sizeof *s->out);
    s->mix_of = realloc(s->mix_of, capacity * sizeof *s->mix_of);
    if (!s->out || !s->mix_of)
      test_abort("stream_collect: no memory for %zu frames", capacity);
    s->capacity = capacity;
  }
  for (size_t i = 0; i < produced; i++) {
    for (unsigned c = 0; c < s->channels; c++)
      s->out[(s->produced + i) * s->channels + c] =
          test_sample_value(s->format, s->buffer, i * s->channels + c, TEST_READ_POW2);
    s->mix_of[s->produced + i] = s->mix;
  }
  s->produced += produced;
}

static void
stream_push(Stream *s, size_t frames)
{
  const size_t room = cudafft_convolve_max_output(s->cv, frames);
  uint8_t *out = stream_buffer(s, room);
  size_t produced = SIZE_MAX;
  const CudafftStatus status = cudafft_convolve_push(
      s->cv, s->input.raw + s->pushed * s->frame_bytes, frames, out, &produced);
  s->calls++;
  if (status != CUDAFFT_STATUS_OK || produced > room) {
    stream_fail(s, "push of %zu frames at frame %zu: %s (%zu produced, room %zu): %s", frames,
                s->pushed, cudafft_status_name(status), produced, room,
                cudafft_last_error_message());
    return;
  }
  stream_collect(s, produced, room, "push");
  s->pushed += frames;
  if (s->produced + cudafft_convolve_lag(s->cv) != s->pushed)
    stream_fail(s, "after a push: %zu produced, lag %zu, %zu pushed", s->produced,
                cudafft_convolve_lag(s->cv), s->pushed);
}

/* A new kernel from the first block boundary not yet passed; one with the same change point as
 * the previous change replaces it (the header's rule, which the reference follows). */
static void
stream_set_kernel(Stream *s)
{
  const size_t change = (s->pushed + B - 1) / B * B;
  const int replaces = s->count > 1 && s->kernels[s->count - 1].change == change;
  if (!replaces && s->count == MAX_KERNELS)
    return;
  const size_t taps = pick_taps(&s->rng, s->most_taps);
  double *h = test_random_doubles(&s->rng, taps * s->rows);
  const CudafftConvolveKernel kernel = {.taps_data = h, .taps = taps, .rows = s->rows};
  const CudafftStatus status = cudafft_convolve_set_kernel(s->cv, &kernel);
  s->calls++;
  if (status != CUDAFFT_STATUS_OK) {
    stream_fail(s, "set_kernel(%zu taps) at frame %zu: %s: %s", taps, s->pushed,
                cudafft_status_name(status), cudafft_last_error_message());
    free(h);
    return;
  }
  if (replaces)
    free((void *)s->kernels[--s->count].h);
  s->kernels[s->count++] = (ConvolveRefKernel){h, taps, s->rows, change, 0};
}

/* Output frames against the reference, channel by channel, window by window (test_convolve.c's
 * measure: a window's error relative to its own level or the channel's mean level, whichever is
 * higher). Takes the reference lock. */
static void
stream_compare(Stream *s, const char *what)
{
  if (s->produced == 0 || s->failed)
    return;
  const size_t frames = s->produced, channels = s->channels;
  const double tolerance = s->format == CUDAFFT_SAMPLE_F64 ? TOLERANCE_F64 : TOLERANCE;
  double *ref = test_malloc((frames + 1) * channels * sizeof *ref);
  pthread_mutex_lock(&reference_lock);
  convolve_reference_stream(s->kernels, s->count, B, s->input.values, s->channels, s->pushed,
                            frames, s->mix_of, ref);
  pthread_mutex_unlock(&reference_lock);
  for (unsigned c = 0; c < s->channels && !s->failed; c++) {
    double mean_power = 0.0;
    for (size_t n = 0; n < frames; n++)
      mean_power += ref[n * channels + c] * ref[n * channels + c];
    mean_power /= (double)frames;
    for (size_t w = 0; w < frames; w += WINDOW) {
      const size_t end = w + WINDOW < frames ? w + WINDOW : frames;
      double err = 0.0, norm = 0.0;
      for (size_t n = w; n < end; n++) {
        const double d = s->out[n * channels + c] - ref[n * channels + c];
        err += d * d;
        norm += ref[n * channels + c] * ref[n * channels + c];
      }
      const double level = fmax(norm, mean_power * (double)(end - w));
      const double rel = level > 0.0 ? sqrt(err / level) : err == 0.0 ? 0.0 : INFINITY;
      if (!(rel <= tolerance)) {
        stream_fail(s,
                    "%s (segment %zu, %zu kernels, %zu frames in, %zu out): channel %u frames "
                    "%zu..%zu: relative L2 error %.3g (tolerance %.0e); frame %zu is %.9g, "
                    "reference %.9g",
                    what, s->segments, s->count, s->pushed, frames, c, w, end - 1, rel, tolerance,
                    w, s->out[w * channels + c], ref[w * channels + c]);
        break;
      }
      s->worst = rel > s->worst ? rel : s->worst;
    }
  }
  free(ref);
}

/* Ends the segment (a drain, with or without the tail, or a reset), checks it, and starts the next
 * one with the newest kernel alone. */
static void
stream_end_segment(Stream *s, int reset)
{
  const char *what;
  if (reset) {
    cudafft_convolve_reset(s->cv);
    s->calls++;
    what = "before a reset";
    if (cudafft_convolve_lag(s->cv) != 0)
      stream_fail(s, "lag %zu after a reset", cudafft_convolve_lag(s->cv));
  } else {
    const int tail = (int)test_rng_range(&s->rng, 0, 1);
    const size_t want = s->pushed - s->produced + (tail ? s->kernels[s->count - 1].taps - 1 : 0);
    const size_t frames = cudafft_convolve_drain_frames(s->cv, tail);
    uint8_t *out = stream_buffer(s, frames);
    size_t produced = SIZE_MAX;
    const CudafftStatus status = cudafft_convolve_drain(s->cv, tail, out, &produced);
    s->calls++;
    what = tail ? "drained with the tail" : "drained without the tail";
    if (frames != want || status != CUDAFFT_STATUS_OK || produced != frames)
      stream_fail(s, "drain(%d) after %zu frames: %s, %zu frames of %zu (want %zu): %s", tail,
                  s->pushed, cudafft_status_name(status), produced, frames, want,
                  cudafft_last_error_message());
    else
      stream_collect(s, produced, frames, "drain");
  }
  stream_compare(s, what);
  s->segments++;
  s->segments_left--;
  for (size_t k = 0; k + 1 < s->count; k++)
    free((void *)s->kernels[k].h);
  s->kernels[0] = s->kernels[s->count - 1];
  s->kernels[0].change = 0;
  s->count = 1;
  s->produced = 0;
}

/* Pieces: nothing, single frames, a few, a live buffer (480 frames), a block and one less, many
 * blocks (several jobs), and anything up to 3000. */
static size_t
next_piece(TestRng *rng)
{
  switch (test_rng_range(rng, 0, 11)) {
  case 0:
    return 0;
  case 1:
    return 1;
  case 2:
    return test_rng_range(rng, 2, 50);
  case 3:
  case 4:
    return 480;
  case 5:
    return B;
  case 6:
    return B - 1;
  case 7:
    return test_rng_range(rng, 3 * B, 20 * B);
  default:
    return test_rng_range(rng, 1, 3000);
  }
}

/* One step of a stream: a push, a change, or the end of a segment. Returns whether the stream has
 * segments left. */
static int
stream_step(Stream *s)
{
  if (s->failed || s->segments_left <= 0)
    return 0;
  if (s->input.frames == 0)
    segment_begin(s, test_rng_range(&s->rng, 2000, 20000));
  const size_t left = s->input.frames - s->pushed;
  const size_t pick = test_rng_range(&s->rng, 0, 99);
  if (left == 0 || (pick == 0 && s->pushed > 0)) {
    stream_end_segment(s, left > 0 || test_rng_range(&s->rng, 0, 3) == 0);
    if (s->segments_left > 0 && !s->failed)
      segment_begin(s, test_rng_range(&s->rng, 2000, 20000));
    return s->segments_left > 0 && !s->failed;
  }
  if (pick < 4) {
    stream_set_kernel(s);
  } else if (pick < 6) {
    s->mix = test_rng_range(&s->rng, 0, 1024) / 1024.0;
    if (cudafft_convolve_set_mix(s->cv, s->mix) != CUDAFFT_STATUS_OK)
      stream_fail(s, "set_mix(%g): %s", s->mix, cudafft_last_error_message());
  } else {
    const size_t piece = next_piece(&s->rng);
    stream_push(s, piece < left ? piece : left);
  }
  return !s->failed;
}

/* Workers: each streams its objects in random turns, replacing each that ends ----------------- */

typedef struct {
  unsigned id;
  pthread_t thread;
  Stream streams[STREAMS_PER_WORKER];
  int live[STREAMS_PER_WORKER];
  unsigned lives_of[STREAMS_PER_WORKER];
  unsigned lives; /* objects made so far */
  size_t calls, segments;
  double worst;
} Worker;

static void
worker_open(Worker *w, unsigned slot)
{
  char label[64];
  snprintf(label, sizeof label, "worker %u object %u", w->id, w->lives++);
  w->lives_of[slot]++;
  w->live[slot] = stream_open(&w->streams[slot], label, 200000, SEGMENTS, 1);
  if (!w->live[slot])
    stream_close(&w->streams[slot]); /* its failure is noted */
}

static void
worker_retire(Worker *w, unsigned slot)
{
  Stream *s = &w->streams[slot];
  w->calls += s->calls;
  w->segments += s->segments;
  w->worst = s->worst > w->worst ? s->worst : w->worst;
  stream_close(s);
  w->live[slot] = 0;
}

static void *
worker_main(void *arg)
{
  Worker *w = arg;
  TestRng rng = test_rng("worker %u turns", w->id);
  for (unsigned slot = 0; slot < STREAMS_PER_WORKER; slot++)
    worker_open(w, slot);
  for (;;) {
    unsigned live[STREAMS_PER_WORKER], count = 0;
    for (unsigned slot = 0; slot < STREAMS_PER_WORKER; slot++)
      if (w->live[slot])
        live[count++] = slot;
    if (count == 0)
      break;
    const unsigned slot = live[test_rng_range(&rng, 0, count - 1)];
    if (!stream_step(&w->streams[slot])) {
      worker_retire(w, slot);
      if (!atomic_load(&stop_replacing) && w->lives_of[slot] < MAX_LIVES)
        worker_open(w, slot);
    }
  }
  return NULL;
}

/* The main thread's checks, while the workers stream ----------------------------------------- */

/* 2^26 taps (23 minutes at 48 kHz) on 1024 channels: over 500 GB of state, refused at create with
 * an out-of-memory status and the sizes in the message, while the other objects keep running. */
static void
check_too_large(void)
{
  const size_t huge = (size_t)1 << 26;
  double *zeros = calloc(huge, sizeof *zeros); /* zero pages: no memory until touched */
  if (!zeros) {
    test_check(0, "too large: cannot allocate the taps");
    return;
  }
  const CudafftConvolveConfig config = {
      CUDAFFT_MAX_CHANNELS, CUDAFFT_SAMPLE_F32, {zeros, huge, 1}, 1.0};
  CudafftConvolve *cv = (CudafftConvolve *)&cv; /* not NULL: create must clear it */
  const CudafftStatus status = cudafft_convolve_create(&cv, backend, -1, &config);
  const CudafftStatus want = backend == CUDAFFT_BACKEND_CUDA ? CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY
                                                             : CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  const char *message = cudafft_last_error_message();
  test_check(status == want && cv == NULL && strstr(message, " MB") != NULL,
             "an object of 2^26 taps on 1024 channels while 64 others stream -> %s (want %s), "
             "the object NULL, the sizes in the message: %s",
             cudafft_status_name(status), cudafft_status_name(want), message);
  if (status == CUDAFFT_STATUS_OK)
    cudafft_convolve_destroy(cv);
  free(zeros);
}

/* Objects whose blocks are more than an executor job holds (2048 frames of 1024 channels of F32,
 * 520 of F64): a few blocks in pieces of every kind, drained with the tail. */
static void
check_wide(unsigned channels, CudafftSampleFormat format, unsigned rows)
{
  char label[96];
  snprintf(label, sizeof label, "wide: %u channels %s, 2100 taps x %u row%s", channels,
           test_format_name(format), rows, rows > 1 ? "s" : "");
  Stream s;
  memset(&s, 0, sizeof s);
  s.rng = test_rng("%s", label);
  snprintf(s.label, sizeof s.label, "%s", label);
  s.channels = channels;
  s.rows = rows;
  s.format = format;
  s.frame_bytes = channels * test_sample_bytes(format);
  s.mix = 1.0;
  s.kernels[0] = (ConvolveRefKernel){test_random_doubles(&s.rng, 2100 * rows), 2100, rows, 0, 0};
  s.count = 1;
  const CudafftConvolveConfig config = {channels, format, {s.kernels[0].h, 2100, rows}, 1.0};
  const CudafftStatus status = cudafft_convolve_create(&s.cv, backend, -1, &config);
  if (status != CUDAFFT_STATUS_OK) {
    test_check(0, "%s: create: %s: %s", label, cudafft_status_name(status),
               cudafft_last_error_message());
    free((void *)s.kernels[0].h);
    return;
  }
  segment_begin(&s, 2 * B + 100);
  const size_t pieces[] = {100, B, 1, B - 1};
  for (size_t i = 0; i < sizeof pieces / sizeof pieces[0] && !s.failed; i++)
    stream_push(&s, pieces[i]);
  if (!s.failed) {
    s.segments_left = 1;
    /* drain with the tail: stream_end_segment picks at random; this one wants the tail */
    const size_t frames = cudafft_convolve_drain_frames(s.cv, 1);
    uint8_t *out = stream_buffer(&s, frames);
    size_t produced = SIZE_MAX;
    const CudafftStatus drained = cudafft_convolve_drain(s.cv, 1, out, &produced);
    if (drained != CUDAFFT_STATUS_OK || produced != frames || frames != 100 + 2099)
      stream_fail(&s, "drain: %s, %zu frames of %zu: %s", cudafft_status_name(drained), produced,
                  frames, cudafft_last_error_message());
    else
      stream_collect(&s, produced, frames, "drain");
    stream_compare(&s, "the stream");
  }
  test_check(!s.failed, "%s: %zu calls, worst window error %.2e%s%s", label, s.calls, s.worst,
             s.failed ? ": " : "", s.why);
  stream_close(&s);
}

/* Cycles of create, a short stream, drain, check and destroy (shorter kernels, so that the cycles
 * are many), while the workers stream. */
static void
check_cycles(void)
{
  size_t calls = 0, made = 0, failed = 0;
  double worst = 0.0;
  char first[768] = "";
  for (unsigned i = 0; i < CYCLES; i++) {
    char label[48];
    snprintf(label, sizeof label, "cycle %u", i);
    Stream s;
    if (stream_open(&s, label, 20000, 1, 0)) {
      made++;
      segment_begin(&s, test_rng_range(&s.rng, 1, 6000));
      while (s.pushed < s.input.frames && !s.failed) {
        const size_t piece = next_piece(&s.rng), left = s.input.frames - s.pushed;
        stream_push(&s, piece < left ? piece : left);
      }
      if (!s.failed)
        stream_end_segment(&s, 0);
      calls += s.calls;
      worst = s.worst > worst ? s.worst : worst;
    }
    if (s.failed && failed++ == 0)
      snprintf(first, sizeof first, "%s: %s", s.label, s.why);
    stream_close(&s);
  }
  test_check(failed == 0 && made == CYCLES,
             "%d cycles of create, stream, drain, check, destroy while the workers stream: %zu "
             "objects made, %zu calls, worst window error %.2e; %zu failed%s%s",
             CYCLES, made, calls, worst, failed, failed ? "; first: " : "", first);
}

int
main(int argc, char **argv)
{
  backend = test_begin(argc, argv);
  Worker *workers = calloc(WORKERS, sizeof *workers);
  if (!workers)
    test_abort("no memory for the workers");
  for (unsigned i = 0; i < WORKERS; i++) {
    workers[i].id = i;
    if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0)
      test_abort("cannot start worker %u", i);
  }

  check_too_large();
  check_wide(CUDAFFT_MAX_CHANNELS, CUDAFFT_SAMPLE_F32, 1);
  check_wide(520, CUDAFFT_SAMPLE_F64, 520);
  test_section_done("too large and wide objects while others stream");
  check_cycles();
  test_section_done("create/destroy cycles while others stream");

  atomic_store(&stop_replacing, 1);
  size_t objects = 0, calls = 0, segments = 0;
  double worst = 0.0;
  for (unsigned i = 0; i < WORKERS; i++) {
    pthread_join(workers[i].thread, NULL);
    objects += workers[i].lives;
    calls += workers[i].calls;
    segments += workers[i].segments;
    worst = workers[i].worst > worst ? workers[i].worst : worst;
  }
  report_worker_failures("every output of every streaming object against its reference");
  test_check(objects >= WORKERS * STREAMS_PER_WORKER,
             "%zu objects streamed by %d threads (%d at a time): %zu segments, %zu calls, worst "
             "window error %.2e",
             objects, WORKERS, WORKERS * STREAMS_PER_WORKER, segments, calls, worst);
  test_section_done("streams");
  free(workers);
  return test_finish();
}
