/* test_spectrum_streams.c: many spectrum analysers in one process, as a media server runs them (on
 * the CUDA backend they share their device's executor, which batches their runs). What it checks:
 * - 64 analysers of random configurations (the fused sizes and cuFFT's, 1 to 8 channels mixed or
 *   multi, every sample format, intervals shorter and longer than an FFT with a carry, thresholds,
 *   phase; one with a slot of sums larger than an executor job), on 8 threads at once, each thread
 *   stepping through its analysers' sessions in turn: random-sized pushes (single frames, live
 *   480-frame buffers, the rest of an interval, pushes of up to hundreds of thousands of frames)
 *   with random result limits, options changed mid-stream, finishes, resets between sessions.
 *   Every band of every result of every analyser is compared with its own double-precision model
 *   of GStreamer's spectrum (spectrum_reference.h), with test_spectrum's tolerances; the interval
 *   bookkeeping (frames pending and left) follows the model's.
 * - while they stream: 100 create / session / destroy cycles on another thread, and (CUDA) an
 *   analyser whose state cannot fit the device's memory (the rest of it taken by the test): a clear
 *   DEVICE_OUT_OF_MEMORY at creation naming the sizes, the streaming analysers unaffected, and the
 *   same analyser made once the memory is back.
 * Argument: cpu or cuda (exit 77 without a device). Random data from CUDAFFT_TEST_SEED or
 * /dev/urandom (the seed is printed). */
#define _POSIX_C_SOURCE 200809L

#include <cudafft/spectrum.h>
#include "cudafft_config.h"
#include "fft_reference.h"
#include "spectrum_reference.h"
#include "test_signal.h"
#include "test_util.h"
#include "streams_util.h"
#include "worker_util.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define OBJECTS_PER_THREAD 8
#define SESSIONS 3
#define CYCLES 100
#define ALL_RESULTS SIZE_MAX
#define MS UINT64_C(1000000)
#define NS_PER_SECOND UINT64_C(1000000000)
#define READ TEST_READ_SPECTRUM

/* Tolerances: test_spectrum's (see there for why). */
#define LEVEL_TOLERANCE 0.01
#define INPUT_ROUNDING (4.0 * 0x1p-24)
#define CLAMP_MARGIN 1.0
#define PHASE_TOLERANCE 1e-3

static const double pi = 3.14159265358979323846;

static CudafftBackend backend;
/* FFTW's planner is not thread-safe: the models are made and freed under this lock. */
static pthread_mutex_t fftw_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_size_t results_compared;

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

/* Configurations ------------------------------------------------------------------------------ */

typedef struct {
  CudafftSpectrumConfig config;
  int wide; /* a slot of sums larger than an executor job: one session */
} Spec;

static void
describe(const Spec *s, char *label, size_t size)
{
  const CudafftSpectrumConfig *c = &s->config;
  snprintf(label, size, "bands=%zu (nfft %zu) %s ch=%u%s rate=%u interval=%.6g ms thr=%d phase %s",
           c->bands, 2 * c->bands - 2, test_format_name(c->format), c->channels,
           c->multi_channel  ? " multi"
           : c->channels > 1 ? " mixed"
                             : "",
           c->rate, (double)c->options.interval_ns / 1e6, c->options.threshold,
           c->options.phase ? "on" : "off");
}

/* An interval of about `frames` frames at rate, with a fraction that makes a carry. */
static uint64_t
interval_of(TestRng *rng, size_t frames, unsigned rate)
{
  const uint64_t ns = (uint64_t)frames * NS_PER_SECOND / rate;
  return ns + test_rng_range(rng, 0, NS_PER_SECOND / rate);
}

static CudafftSpectrumOptions
random_options(TestRng *rng, size_t nfft, unsigned rate)
{
  static const int thresholds[] = {-60, -90, -300};
  size_t frames;
  switch (test_rng_range(rng, 0, 3)) {
  case 0:
    frames = test_rng_range(rng, 1, nfft / 4 + 1); /* one FFT at the end */
    break;
  case 1:
    frames = 800; /* cudaspectrum's 60 messages a second at 48 kHz */
    break;
  case 2:
    frames = nfft; /* one FFT, at the end */
    break;
  default:
    frames = test_rng_range(rng, nfft + 1, 6 * nfft); /* several FFTs and a remainder */
    break;
  }
  const CudafftSpectrumOptions options = {interval_of(rng, frames, rate),
                                          thresholds[test_rng_range(rng, 0, 2)],
                                          (int)test_rng_range(rng, 0, 1)};
  return options;
}

/* nfft = 2 bands - 2: powers of two 256..16384 take the fused path on CUDA (129, 257, 1025, 2049,
 * 8193), every other size cuFFT's. */
static Spec
random_spec(TestRng *rng, int small)
{
  static const size_t bands[] = {2,   3,    64,   128,  129,  129,  257,  300,
                                 513, 1000, 1025, 1025, 2049, 4097, 5000, 8193};
  static const unsigned rates[] = {8000, 22050, 44100, 48000, 96000};
  Spec s = {0};
  CudafftSpectrumConfig *c = &s.config;
  c->bands = bands[test_rng_range(rng, 0, small ? 10 : 15)];
  c->channels = (unsigned)test_rng_range(rng, 1, small ? 3 : 8);
  c->rate = rates[test_rng_range(rng, 0, 4)];
  c->format = (CudafftSampleFormat)test_rng_range(rng, 0, CUDAFFT_SAMPLE_COUNT_ - 1);
  c->multi_channel = (int)test_rng_range(rng, 0, 1);
  c->options = random_options(rng, 2 * c->bands - 2, c->rate);
  return s;
}

/* 131073 bands (nfft 262144, cuFFT) of 8 channels multi: 1M floats a slot, whose magnitudes and
 * phases (8 MB) exceed an executor job; intervals of 288000 frames. */
static Spec
wide_spec(void)
{
  Spec s = {.wide = 1};
  s.config = (CudafftSpectrumConfig){
      131073, 8, 48000, CUDAFFT_SAMPLE_F32, 1, {6 * NS_PER_SECOND, -90, 1}, 0};
  return s;
}

static SpectrumRefSettings
settings_of(const CudafftSpectrumConfig *config, const CudafftSpectrumOptions *options)
{
  const SpectrumRefSettings settings = {config->bands, config->multi_channel, options->interval_ns,
                                        options->threshold, options->phase};
  return settings;
}

/* Objects: an analyser and its model ----------------------------------------------------------- */

typedef struct {
  Spec spec;
  char label[200];
  CudafftSpectrum *sp;
  SpectrumRef *ref;
} Object;

static int
object_create(Object *o, const Spec *spec)
{
  memset(o, 0, sizeof *o);
  o->spec = *spec;
  describe(spec, o->label, sizeof o->label);
  pthread_rwlock_rdlock(&streams_create_lock);
  const CudafftStatus status = cudafft_spectrum_create(&o->sp, backend, -1, &spec->config);
  pthread_rwlock_unlock(&streams_create_lock);
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s: create: %s: %s", o->label, cudafft_status_name(status),
                cudafft_last_error_message());
    return 0;
  }
  const SpectrumRefSettings settings = settings_of(&spec->config, &spec->config.options);
  pthread_mutex_lock(&fftw_lock);
  o->ref = spectrum_ref_new(spec->config.channels, spec->config.rate, &settings, float_error);
  pthread_mutex_unlock(&fftw_lock);
  return 1;
}

static void
object_destroy(Object *o)
{
  cudafft_spectrum_destroy(o->sp);
  pthread_mutex_lock(&fftw_lock);
  spectrum_ref_free(o->ref);
  pthread_mutex_unlock(&fftw_lock);
  o->sp = NULL;
  o->ref = NULL;
}

/* Sessions ------------------------------------------------------------------------------------ */

typedef struct {
  Object *o;
  TestRng rng;
  TestSignal signal;
  size_t frames, done;
  size_t ours_count, ours_next; /* results of our last call, and how many were matched */
  size_t results;
  int failed;
} Session;

static void session_fail(Session *ss, const char *format, ...) TEST_PRINTF(2, 3);

static void
session_fail(Session *ss, const char *format, ...)
{
  if (ss->failed)
    return;
  char why[400];
  va_list args;
  va_start(args, format);
  vsnprintf(why, sizeof why, format, args);
  va_end(args);
  worker_fail("%s: %s", ss->o->label, why);
  ss->failed = 1;
}

/* test_spectrum's level_ok: within the float-resolution interval of its FFTs (lo..hi) and
 * LEVEL_TOLERANCE; the threshold exactly where every FFT is well below it, float error
 * included. */
static int
level_ok(float ours, const SpectrumRefInterval *r, size_t at, int threshold)
{
  if (isnan(r->level[at]))
    return isnan(ours);
  if (!isfinite(ours) || ours < (float)threshold)
    return 0;
  if (r->max_level[at] < threshold - CLAMP_MARGIN && r->hi[at] <= (double)threshold)
    return ours == (float)threshold;
  return ours >= r->lo[at] - LEVEL_TOLERANCE && ours <= r->hi[at] + LEVEL_TOLERANCE;
}

/* Our next result against the interval the model just closed (test_spectrum's session_compare):
 * its frames, FFTs, threshold and phase; every band's level; every phase the float result
 * resolves. */
static void
session_compare(void *context, const SpectrumRefInterval *r)
{
  Session *ss = context;
  const size_t index = ss->results++;
  if (ss->failed)
    return;
  if (ss->ours_next >= ss->ours_count) {
    session_fail(ss, "result %zu: the model has it, the analyser gave only %zu", index,
                 ss->ours_count);
    return;
  }
  CudafftSpectrumResult res;
  const CudafftStatus status = cudafft_spectrum_result(ss->o->sp, ss->ours_next++, &res);
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
  for (size_t at = 0; at < r->rows * r->bands; at++) {
    const float ours = res.magnitude[at];
    if (!level_ok(ours, r, at, threshold)) {
      session_fail(ss,
                   "result %zu signal %zu band %zu: level %.6f dB, model %.6f dB (%.6f to %.6f "
                   "at float resolution; FFTs' unclamped max %.3f, threshold %d)",
                   index, at / r->bands, at % r->bands, ours, r->level[at], r->lo[at], r->hi[at],
                   r->max_level[at], threshold);
      return;
    }
    if (!res.phase)
      continue;
    const float phase = res.phase[at];
    if (isnan(r->level[at])) {
      if (!isnan(phase))
        session_fail(ss, "result %zu value %zu: phase %.6f where the level is NaN", index, at,
                     phase);
      continue;
    }
    if (!isfinite(phase) || fabs(phase) > pi + 1e-6) {
      session_fail(ss, "result %zu value %zu: phase %g", index, at, phase);
      return;
    }
    if (r->wrap[at] || r->phase_error[at] > PHASE_TOLERANCE / 10.0 ||
        r->min_level[at] < threshold + CLAMP_MARGIN)
      continue;
    if (fabs(phase - r->phase[at]) > PHASE_TOLERANCE) {
      session_fail(ss, "result %zu value %zu: phase %.6f, model %.6f", index, at, phase,
                   r->phase[at]);
      return;
    }
  }
}

/* After a call: every result matched, and the interval state agrees. */
static void
session_settle(Session *ss, const char *call)
{
  if (ss->ours_next != ss->ours_count)
    session_fail(ss, "%s gave %zu results, the model %zu", call, ss->ours_count, ss->ours_next);
  const size_t pending = cudafft_spectrum_frames_pending(ss->o->sp);
  const size_t left = cudafft_spectrum_frames_left(ss->o->sp);
  const size_t want_pending = spectrum_ref_frames_pending(ss->o->ref);
  const size_t want_left = spectrum_ref_frames_left(ss->o->ref);
  if (pending != want_pending || left != want_left)
    session_fail(ss, "after %s: frames pending %zu, left %zu; want %zu, %zu", call, pending, left,
                 want_pending, want_left);
}

static void
session_finish(Session *ss)
{
  size_t count = SIZE_MAX;
  const CudafftStatus status = cudafft_spectrum_finish(ss->o->sp, &count);
  if (status != CUDAFFT_STATUS_OK || count > 1) {
    session_fail(ss, "finish: %s, %zu results", cudafft_status_name(status), count);
    return;
  }
  ss->ours_count = count;
  ss->ours_next = 0;
  spectrum_ref_finish(ss->o->ref, session_compare, ss);
  session_settle(ss, "finish");
}

static void
session_set_options(Session *ss, const CudafftSpectrumOptions *options)
{
  const CudafftStatus status = cudafft_spectrum_set_options(ss->o->sp, options);
  if (status != CUDAFFT_STATUS_OK) {
    session_fail(ss, "set_options: %s", cudafft_status_name(status));
    return;
  }
  const SpectrumRefSettings settings = settings_of(&ss->o->spec.config, options);
  spectrum_ref_set_settings(ss->o->ref, &settings);
  ss->ours_count = ss->ours_next = 0;
  session_settle(ss, "set_options");
}

/* A session after a reset (new options at once, now and then): fresh noise of a random level. */
static void
session_start(Session *ss, Object *o, const char *label)
{
  memset(ss, 0, sizeof *ss);
  ss->o = o;
  ss->rng = test_rng("%s", label);
  const CudafftSpectrumConfig *c = &o->spec.config;
  cudafft_spectrum_reset(o->sp);
  spectrum_ref_reset(o->ref);
  session_settle(ss, "reset");
  if (!o->spec.wide && test_rng_range(&ss->rng, 0, 2) == 0) {
    const CudafftSpectrumOptions options = random_options(&ss->rng, 2 * c->bands - 2, c->rate);
    session_set_options(ss, &options);
  }
  const size_t nfft = 2 * c->bands - 2;
  ss->frames = test_rng_range(&ss->rng, 2000, 40000);
  if (o->spec.wide)
    ss->frames = 600000;
  else if (nfft <= 2048 && c->channels <= 2 && test_rng_range(&ss->rng, 0, 5) == 0)
    ss->frames = test_rng_range(&ss->rng, 200000, 400000); /* more than a run holds */
  const double amplitude = test_rng_range(&ss->rng, 0, 1) ? 1.0 : 0.01;
  test_signal_noise(&ss->signal, &ss->rng, c->format, c->channels, c->rate, ss->frames, READ,
                    amplitude);
}

/* A piece: single frames, live buffers of 480, the rest of the interval (and one more), random
 * sizes, everything left. */
static size_t
next_piece(Session *ss, size_t remaining)
{
  size_t piece;
  switch (test_rng_range(&ss->rng, 0, 9)) {
  case 0:
    piece = 1;
    break;
  case 1:
  case 2:
  case 3:
    piece = 480;
    break;
  case 4:
    piece = cudafft_spectrum_frames_left(ss->o->sp);
    break;
  case 5:
    piece = cudafft_spectrum_frames_left(ss->o->sp) + 1;
    break;
  case 6:
    piece = remaining;
    break;
  default:
    piece = test_rng_range(&ss->rng, 1, 30000);
    break;
  }
  return min_size(piece, remaining);
}

/* One piece, pushed until taken (a result limit may stop a push early), each call's results
 * against the model's; now and then options change (pending for the next interval) or the open
 * interval is finished. */
static void
session_push_piece(Session *ss)
{
  const CudafftSpectrumConfig *c = &ss->o->spec.config;
  const size_t frame_bytes = cudafft_spectrum_frame_bytes(ss->o->sp);
  const size_t limits[] = {1, 2, ALL_RESULTS};
  const size_t max_results = limits[test_rng_range(&ss->rng, 0, 2)];
  const size_t limit = min_size(max_results, cudafft_spectrum_max_results(ss->o->sp));
  size_t size = next_piece(ss, ss->frames - ss->done);
  while (size > 0 && !ss->failed) {
    const uint8_t *in = ss->signal.raw + ss->done * frame_bytes;
    size_t consumed = SIZE_MAX, count = SIZE_MAX;
    const CudafftStatus status =
        cudafft_spectrum_push(ss->o->sp, in, size, max_results, &consumed, &count);
    if (status != CUDAFFT_STATUS_OK) {
      session_fail(ss, "push of %zu frames at %zu: %s: %s", size, ss->done,
                   cudafft_status_name(status), cudafft_last_error_message());
      return;
    }
    if (count > limit || consumed > size || consumed == 0 || (consumed < size && count != limit)) {
      session_fail(ss, "push of %zu frames (max_results %zu): consumed %zu, %zu results", size,
                   max_results, consumed, count);
      return;
    }
    ss->ours_count = count;
    ss->ours_next = 0;
    spectrum_ref_push(ss->o->ref, ss->signal.values + ss->done * c->channels, consumed,
                      session_compare, ss);
    session_settle(ss, "push");
    ss->done += consumed;
    size -= consumed;
  }
  if (ss->o->spec.wide || ss->failed)
    return;
  switch (test_rng_range(&ss->rng, 0, 19)) {
  case 0: {
    const CudafftSpectrumOptions options = random_options(&ss->rng, 2 * c->bands - 2, c->rate);
    session_set_options(ss, &options);
    break;
  }
  case 1:
    session_finish(ss);
    break;
  default:
    break;
  }
}

/* One piece; returns whether the session has ended (with a finish, half the time). */
static int
session_step(Session *ss)
{
  if (!ss->failed && ss->done < ss->frames)
    session_push_piece(ss);
  if (!ss->failed && ss->done < ss->frames)
    return 0;
  if (!ss->failed && test_rng_range(&ss->rng, 0, 1))
    session_finish(ss);
  atomic_fetch_add(&results_compared, ss->results);
  test_signal_clear(&ss->signal);
  streams_session_done();
  return 1;
}

/* The engine as the streams run it (streams_util.h) ----------------------------------------- */

static unsigned
make_object(void *object, unsigned t, unsigned i)
{
  TestRng rng = test_rng("streamer %u analyser %u", t, i);
  const Spec spec = t == 0 && i == 0 ? wide_spec() : random_spec(&rng, 0);
  return object_create(object, &spec) ? (spec.wide ? 1 : SESSIONS) : 0;
}

static int
make_small_object(void *object, unsigned cycle)
{
  TestRng rng = test_rng("cycle %u", cycle);
  const Spec spec = random_spec(&rng, 1);
  return object_create(object, &spec);
}

static const char *
object_label(const void *object)
{
  return ((const Object *)object)->label;
}

/* A brief session (the cycles'): at most 5000 frames. */
static void
start_session(void *session, void *object, const char *label, int brief)
{
  Session *ss = session;
  session_start(ss, object, label);
  if (brief)
    ss->frames = min_size(ss->frames, 5000);
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

/* The state too large for the device's memory: 2^24 + 1 bands of one signal (about 1 GB: its
 * window, signal buffers, sums and cuFFT batch). */
static CudafftStatus
create_too_large(void **object)
{
  const CudafftSpectrumConfig big = {((size_t)1 << 24) + 1, 1, 48000, CUDAFFT_SAMPLE_F32, 0,
                                     {10 * MS, -90, 1},     0};
  /* device 0, the one streams_util.c fills (with -1 a host with two GPUs would take it on the
   * other) */
  return cudafft_spectrum_create((CudafftSpectrum **)object, CUDAFFT_BACKEND_CUDA, 0, &big);
}

static void
destroy_too_large(void *object)
{
  cudafft_spectrum_destroy(object);
}

#if CUDAFFT_HAVE_CUDA
/* Every kernel the streams may launch, launched once before the device's memory is taken, so that
 * none needs more of the device's memory for its first launch then (its local memory): each fused
 * size with and without phases, and cuFFT's path. */
static void
warm_up(void)
{
  const size_t bands[] = {129, 257, 513, 1025, 2049, 4097, 8193, 300};
  for (size_t b = 0; b < sizeof bands / sizeof bands[0]; b++)
    for (int phase = 0; phase <= 1; phase++) {
      const CudafftSpectrumConfig c = {
          bands[b], 1, 48000, CUDAFFT_SAMPLE_F32, 0, {10 * MS, -90, phase}, 0};
      CudafftSpectrum *sp = NULL;
      const size_t frames = 2 * bands[b];
      float *in = calloc(frames, sizeof(float));
      size_t consumed, results;
      if (in && cudafft_spectrum_create(&sp, backend, -1, &c) == CUDAFFT_STATUS_OK)
        cudafft_spectrum_push(sp, in, frames, ALL_RESULTS, &consumed, &results);
      cudafft_spectrum_destroy(sp);
      free(in);
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
  const StreamsTooLarge too_large = {"an analyser of 2^24 + 1 bands", create_too_large,
                                     destroy_too_large, "bands"};
  streams_run(backend, &engine, THREADS, OBJECTS_PER_THREAD, CYCLES, &too_large);
  test_check(atomic_load(&results_compared) > 1000, "%zu results compared with the models",
             (size_t)atomic_load(&results_compared));
  report_worker_failures("64 analysers on 8 threads and 100 cycles beside them: every push, "
                         "finish, option change and result against its model");
  test_section_done("streams");
  return test_finish();
}
