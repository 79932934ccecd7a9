/* test_device_errors.c: device errors on a host with two GPUs, while objects on both devices
 * stream (the Streams of multigpu_streams.h, every output sample against its double-precision
 * convolution). CUDA only: exits 77 with the reason without a device, and with one device too
 * (saying why): both parts are about one device's error seen from another, so they need two.
 * Where objects made with device id -1 go is test_multigpu.c's.
 *
 * First, errors that are not sticky: device 1's executor fails launches on purpose
 * (executor_test_kind.h's bad launch kind, cudaErrorInvalidConfiguration, which leaves the context
 * usable) while objects on both devices stream. Device 0's objects do not notice: every call OK,
 * every sample against its reference. Device 1's failing launches report their failure, a good job
 * after each runs exactly, and device 1's objects either stream correctly or fail a call with the
 * failure of a batch that held a failing launch (a failed batch fails every job in it; the failure
 * resets the object: cudafft/convolve.h); once the failing launches stop they stream correctly
 * again.
 *
 * The last part is a sticky error: a kernel that traps on device 1 (device_fault.h). CUDA's rule
 * (the runtime API's error types, cudaErrorLaunchFailure): "This leaves the process in an
 * inconsistent state and any further CUDA work will return the same error. To continue using CUDA,
 * the process must be terminated and relaunched." So no library can keep device 0 working in that
 * process, and the part checks what the library can promise: every call on the objects of either
 * device fails with an error status naming the object's device, or returns OK with correct samples
 * (a push staged on the host); every call returns within a time bound; objects made with -1 fail
 * naming every device tried; every object is destroyed without a crash or a hang and the devices'
 * loads go back to 0. The runtime's own answers around the trap are printed. A watchdog thread
 * fails the program where a stage of it hangs. */
#include "device_fault.h"
#include "executor_test_kind.h"
#include "multigpu_streams.h"
#include "test_util.h"
#include "worker_util.h"

#include <cudafft/convolve.h>

#include <cuda_runtime_api.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors that are not sticky stay on their device ---- */

#define LAUNCH_ZERO 3   /* objects on device 0 */
#define LAUNCH_ONE 3    /* objects on device 1 */
#define LAUNCH_CYCLES 4 /* streams each device-0 object runs beside the failures */
#define LAUNCH_FRAMES 40000
#define LAUNCH_MIN 20      /* failing launches at least before they stop */
#define LAUNCH_FLOATS 1000 /* of each job of the test kinds */
#define LAUNCH_GUARD 16    /* floats after a good job's output that must stay poisoned */
#define MAX_BATCHES_KEPT 8192

/* The thread that fails launches on device 1's executor: a job of the bad launch kind (its launch
 * is refused: cudaErrorInvalidConfiguration, not sticky), waited for, then a job of the affine
 * kind (stateless: out = a * in + offset, exact in float), waited for and checked, then a pause of
 * 1 to 4 ms; until stop. */
typedef struct {
  CudafftExecutor *ex;
  atomic_int stop;
  atomic_uint injected; /* failing launches waited for */
  Rng rng;
  unsigned named; /* failing launches that reported CUDA_ERROR, the kind, device and error */
  unsigned good, good_exact;
  uint64_t batches[MAX_BATCHES_KEPT]; /* the failing launches' batches */
  size_t batch_count;
} Injector;

static void *
injector_main(void *arg)
{
  Injector *in = arg;
  CudafftJobOwner bad_owner, good_owner;
  memset(&bad_owner, 0, sizeof bad_owner);
  memset(&good_owner, 0, sizeof good_owner);
  float *x = test_malloc(LAUNCH_FLOATS * sizeof *x);
  float *y = test_malloc((LAUNCH_FLOATS + LAUNCH_GUARD) * sizeof *y);
  while (!atomic_load(&in->stop)) {
    AffineJob bad;
    memset(&bad, 0, sizeof bad);
    bad.job.kind = &executor_test_bad_launch_kind;
    bad.job.owner = &bad_owner;
    bad.job.in_bytes = bad.job.out_bytes = LAUNCH_FLOATS * sizeof(float);
    bad.a = 1.0f;
    CudafftStatus status = cudafft_executor_submit(in->ex, &bad.job, NULL, NULL);
    if (status != CUDAFFT_STATUS_OK) {
      worker_fail("device 1's executor refused a job of the bad launch kind: %s: %s",
                  cudafft_status_name(status), cudafft_last_error_message());
      break;
    }
    status = cudafft_executor_wait(in->ex, &bad.job);
    const char *message = cudafft_last_error_message();
    const int named = status == CUDAFFT_STATUS_CUDA_ERROR &&
                      strstr(message, "bad launch test kind") && strstr(message, "on device 1") &&
                      strstr(message, "(cudaErrorInvalid");
    if (!named)
      worker_fail("a failing launch on device 1 (batch %llu) says %s: %s",
                  (unsigned long long)bad.job.batch, cudafft_status_name(status), message);
    in->named += named;
    if (in->batch_count < MAX_BATCHES_KEPT)
      in->batches[in->batch_count++] = bad.job.batch;
    atomic_fetch_add(&in->injected, 1);

    AffineJob good;
    memset(&good, 0, sizeof good);
    good.job.kind = &executor_test_affine_kind;
    good.job.owner = &good_owner;
    good.job.in_bytes = good.job.out_bytes = LAUNCH_FLOATS * sizeof(float);
    good.a = (float)((int)rng_range(&in->rng, 0, 16) - 8);
    good.offset = (float)((int)rng_range(&in->rng, 0, 20000) - 10000);
    for (size_t i = 0; i < LAUNCH_FLOATS; i++)
      x[i] = (float)((int)rng_range(&in->rng, 0, 2000) - 1000);
    test_poison(y, LAUNCH_FLOATS + LAUNCH_GUARD);
    in->good++;
    status = cudafft_executor_submit(in->ex, &good.job, x, y);
    if (status == CUDAFFT_STATUS_OK)
      status = cudafft_executor_wait(in->ex, &good.job);
    int exact = status == CUDAFFT_STATUS_OK;
    if (!exact)
      worker_fail("a good job on device 1 after a failing launch: %s: %s",
                  cudafft_status_name(status), cudafft_last_error_message());
    for (size_t i = 0; i < LAUNCH_FLOATS && exact; i++) {
      const double expected = (double)good.a * (double)x[i] + (double)good.offset;
      if ((double)y[i] != expected) {
        worker_fail("a good job on device 1 after a failing launch (batch %llu): out[%zu] = %.9g, "
                    "expected %.9g",
                    (unsigned long long)good.job.batch, i, (double)y[i], expected);
        exact = 0;
      }
    }
    if (exact && test_count_unpoisoned(y + LAUNCH_FLOATS, LAUNCH_GUARD) != 0) {
      worker_fail("a good job on device 1 wrote past its output");
      exact = 0;
    }
    in->good_exact += exact;
    sleep_ms((unsigned)rng_range(&in->rng, 1, 4));
  }
  free(x);
  free(y);
  return NULL;
}

/* Device 1's objects streaming beside the failing launches, until stop: a stream either runs whole
 * (every sample then against its reference) or ends at a call that fails, which must fail with the
 * failure of its batch (CUDA_ERROR, naming device 1 and the bad launch kind, or saying that the
 * details gave way to later failures), a batch of a failing launch; the failure resets the object
 * (cudafft/convolve.h), so its next stream starts from zero history. */
typedef struct {
  Stream *objects;
  size_t count;
  atomic_int *stop;
  unsigned whole, ended;              /* streams run whole; streams ended by a failing call */
  unsigned other;                     /* failing calls with another status or message */
  uint64_t batches[MAX_BATCHES_KEPT]; /* the failing calls' batches (0: not in the message) */
  size_t batch_count;
} Weather;

static void
weather_failure(Weather *w, Stream *s, const char *what, CudafftStatus status)
{
  const char *message = cudafft_last_error_message();
  const int named =
      status == CUDAFFT_STATUS_CUDA_ERROR && strstr(message, "on device 1") &&
      (strstr(message, "bad launch test kind") || strstr(message, "gave way to later failures"));
  if (!named) {
    w->other++;
    worker_fail("%s (device %d): a %s beside the failing launches failed with something else "
                "than its batch's failure: %s: %s",
                s->label, s->device, what, cudafft_status_name(status), message);
  }
  unsigned long long batch = 0;
  const char *at = strstr(message, "batch ");
  if (!at || sscanf(at, "batch %llu", &batch) != 1)
    batch = 0;
  if (w->batch_count < MAX_BATCHES_KEPT)
    w->batches[w->batch_count++] = batch;
  if (!strstr(s->label, "after a failure"))
    snprintf(s->label + strlen(s->label), sizeof s->label - strlen(s->label),
             " (after a failure, which reset it)");
}

static void *
weather_main(void *arg)
{
  Weather *w = arg;
  while (!atomic_load(w->stop))
    for (size_t i = 0; i < w->count; i++) {
      Stream *s = &w->objects[i];
      stream_start(s);
      const char *what = "";
      int ended = 0;
      CudafftStatus status = CUDAFFT_STATUS_OK;
      while (!ended)
        status = stream_call(s, &what, &ended);
      if (status == CUDAFFT_STATUS_OK) {
        w->whole++;
        stream_check(s);
      } else {
        w->ended++;
        weather_failure(w, s, what, status);
        stream_discard(s);
      }
    }
  return NULL;
}

static void *
zero_streamer(void *arg)
{
  for (unsigned cycle = 0; cycle < LAUNCH_CYCLES; cycle++)
    stream_all(arg, LAUNCH_ZERO);
  return NULL;
}

static unsigned
failures_of(const Stream *objects, size_t count)
{
  unsigned failed = 0;
  for (size_t i = 0; i < count; i++)
    failed += objects[i].failures > 0;
  return failed;
}

/* Makes `count` objects pinned to `device` (labelled by it), of `channels` channels and taps from
 * `taps` on in steps of 100; whether all were made; *placed is cleared where one is elsewhere. */
static int
make_pinned(Stream *objects, int count, int device, unsigned channels, size_t taps, size_t frames,
            int *placed)
{
  int made = 1;
  for (int i = 0; i < count; i++) {
    char label[64];
    snprintf(label, sizeof label, "device-%d object %d", device, i);
    made =
        stream_make(&objects[i], device, channels, taps + 100 * (size_t)i, frames, label) && made;
    *placed = *placed && objects[i].device == device;
  }
  return made;
}

/* Failing launches on device 1 while objects on both devices stream (see the top). */
static void
test_launch_failures(void)
{
  Stream zero[LAUNCH_ZERO], one[LAUNCH_ONE];
  int placed = 1;
  int made = make_pinned(zero, LAUNCH_ZERO, 0, 2, 4800, LAUNCH_FRAMES, &placed);
  made = make_pinned(one, LAUNCH_ONE, 1, 2, 3000, 20000, &placed) && made;
  test_check(made && placed, "%d objects pinned to device 0 and %d to device 1 stay there",
             LAUNCH_ZERO, LAUNCH_ONE);
  CudafftExecutor *ex = NULL;
  const CudafftStatus acquired = cudafft_executor_acquire(1, &ex);
  if (acquired != CUDAFFT_STATUS_OK || !made) {
    test_check(0, "device 1's executor for the failing launches: %s: %s",
               cudafft_status_name(acquired),
               acquired != CUDAFFT_STATUS_OK ? cudafft_last_error_message() : "objects not made");
    report_worker_failures("the objects for the failing launches");
    cudafft_executor_release(ex);
    for (int i = 0; i < LAUNCH_ZERO; i++)
      stream_destroy(&zero[i]);
    for (int i = 0; i < LAUNCH_ONE; i++)
      stream_destroy(&one[i]);
    return;
  }

  static Injector injector;
  static Weather weather;
  memset(&injector, 0, sizeof injector);
  memset(&weather, 0, sizeof weather);
  injector.ex = ex;
  TestRng seed = test_rng("failing launches on device 1");
  injector.rng.state = test_rng_u64(&seed);
  atomic_int stop = 0;
  weather.objects = one;
  weather.count = LAUNCH_ONE;
  weather.stop = &stop;
  pthread_t injecting, weathering, streaming;
  if (pthread_create(&injecting, NULL, injector_main, &injector) != 0 ||
      pthread_create(&weathering, NULL, weather_main, &weather) != 0 ||
      pthread_create(&streaming, NULL, zero_streamer, zero) != 0)
    test_abort("cannot start a thread");
  pthread_join(streaming, NULL);
  const unsigned beside = atomic_load(&injector.injected); /* while device 0's objects streamed */
  const double start = test_seconds();
  while (atomic_load(&injector.injected) < LAUNCH_MIN && test_seconds() - start < 10.0)
    sleep_ms(5);
  atomic_store(&injector.stop, 1);
  pthread_join(injecting, NULL);
  atomic_store(&stop, 1);
  pthread_join(weathering, NULL);

  const unsigned injected = atomic_load(&injector.injected);
  test_check(beside > 0 && failures_of(zero, LAUNCH_ZERO) == 0,
             "while device 1's executor failed %u launches (not sticky), %d objects on device 0 "
             "streamed %d x %d frames each, every call OK and every sample against its reference "
             "(%u of them failed)",
             beside, LAUNCH_ZERO, LAUNCH_CYCLES, LAUNCH_FRAMES, failures_of(zero, LAUNCH_ZERO));
  test_check(injected >= LAUNCH_MIN && injector.named == injected,
             "every failing launch on device 1 failed its wait with CUDA_ERROR naming the kind, "
             "the device and CUDA's error (%u of %u)",
             injector.named, injected);
  test_check(injector.good > 0 && injector.good_exact == injector.good,
             "device 1's executor ran a good job after each failing launch, every value exact (%u "
             "of %u)",
             injector.good_exact, injector.good);
  unsigned outside = 0;
  for (size_t i = 0; i < weather.batch_count; i++) {
    int found = 0;
    for (size_t j = 0; j < injector.batch_count && !found; j++)
      found = weather.batches[i] == injector.batches[j];
    outside += !found;
  }
  test_check(weather.other == 0 && outside == 0 && failures_of(one, LAUNCH_ONE) == 0 &&
                 weather.whole > 0,
             "beside the failing launches, device 1's objects ran %u streams whole, every sample "
             "against its reference, and %u ended at a call that failed with its batch's failure "
             "(%u with another status or message; %u in a batch without a failing launch)",
             weather.whole, weather.ended, weather.other, outside);
  report_worker_failures("the failing launches on device 1 beside the streams");

  /* not sticky: with the failures over, device 1 works as before */
  for (unsigned cycle = 0; cycle < 2; cycle++)
    stream_all(one, LAUNCH_ONE);
  test_check(failures_of(one, LAUNCH_ONE) == 0,
             "once the failing launches stopped, device 1's objects streamed twice more, every "
             "call OK and every sample against its reference: the failure was not sticky (%u of "
             "them failed)",
             failures_of(one, LAUNCH_ONE));
  report_worker_failures("device 1's objects after the failing launches");

  cudafft_executor_release(ex);
  for (int i = 0; i < LAUNCH_ZERO; i++)
    stream_destroy(&zero[i]);
  for (int i = 0; i < LAUNCH_ONE; i++)
    stream_destroy(&one[i]);
  test_check(device_load_is(0, 0, NULL) && device_load_is(1, 0, NULL),
             "both devices' loads are 0 objects once the objects are destroyed");
}

/* ---- a sticky error: CUDA ends the process's CUDA work (last: it lasts as long as the process) */

#define FAULT_ZERO 3       /* objects on device 0 */
#define FAULT_ONE 3        /* objects on device 1 */
#define FAULT_FRAMES 40000 /* of the stream each object tries after the trap */
#define FAULT_CALL_S 10.0  /* the most one call may take after the trap */
#define WATCHDOG_S 60.0    /* the most one stage of the part may take */

/* The watchdog: a library that waited forever after the fault would leave the program hanging
 * until meson's timeout with no word of where. Each stage names itself (watch()) and has
 * WATCHDOG_S seconds; past that, the watchdog thread prints the failure and ends the program with
 * status 1. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *watch_stage; /* under watch_lock, and the two below */
static double watch_deadline;
static int watch_stop;

static void
watch(const char *stage)
{
  pthread_mutex_lock(&watch_lock);
  watch_stage = stage;
  watch_deadline = test_seconds() + WATCHDOG_S;
  pthread_mutex_unlock(&watch_lock);
  printf("# sticky error: %s\n", stage);
  fflush(stdout);
}

static void *
watchdog(void *arg)
{
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&watch_lock);
    const int stop = watch_stop, late = test_seconds() > watch_deadline;
    const char *stage = watch_stage;
    pthread_mutex_unlock(&watch_lock);
    if (stop)
      return NULL;
    if (late) {
      printf("FAIL: after a sticky error on device 1, '%s' did not finish within %.0f s: a call "
             "into the library hangs\n",
             stage, WATCHDOG_S);
      fflush(stdout);
      _Exit(1);
    }
    sleep_ms(100);
  }
}

/* The calls on one device's objects after the trap, and how they went. */
typedef struct {
  Stream *objects;
  size_t count;
  unsigned calls, failed; /* every call; those that returned an error status */
  unsigned ok, ok_wrong;  /* those that returned OK; of them, with wrong samples */
  unsigned unnamed;       /* failures whose message does not name the object's device */
  unsigned reaching;      /* calls that reach the device: a push of two blocks, a drain */
  unsigned reaching_failed;
  double slowest;      /* seconds: the slowest call */
  CudafftStatus first; /* the first failure's status and message */
  char message[512];
} Calls;

static void
calls_note(Calls *c, const Stream *s, CudafftStatus status, double took, int reaching)
{
  c->calls++;
  c->reaching += reaching;
  c->slowest = took > c->slowest ? took : c->slowest;
  if (status == CUDAFFT_STATUS_OK) {
    c->ok++;
    return;
  }
  c->failed++;
  c->reaching_failed += reaching;
  const char *message = cudafft_last_error_message();
  char device[32];
  snprintf(device, sizeof device, "device %d", s->device);
  c->unnamed += !strstr(message, device);
  if (c->first == CUDAFFT_STATUS_OK) {
    c->first = status;
    snprintf(c->message, sizeof c->message, "%s", message);
  }
}

/* A call that reaches the device on an object whose history is zero (after a failure, which
 * resets it, or a drain): a push of two whole blocks of zeros (the device runs at least one), or
 * (drain) a push of part of a block, which only stages it, and the drain, which runs it padded with
 * zeros. Where it returns OK, every sample it gives must be 0. */
static void
zeros_call(Calls *c, Stream *s, int drain)
{
  const size_t frames = 2 * CUDAFFT_CONVOLVE_BLOCK, part = 100;
  const size_t out_frames = cudafft_convolve_max_output(s->cv, frames) + CUDAFFT_CONVOLVE_BLOCK;
  float *in = calloc(frames * s->channels, sizeof *in);
  float *out = malloc(out_frames * s->channels * sizeof *out);
  if (!in || !out)
    test_abort("no memory for a push of %zu frames", frames);
  size_t produced = 0;
  double start = test_seconds();
  CudafftStatus status;
  if (drain) {
    status = cudafft_convolve_push(s->cv, in, part, out, &produced);
    calls_note(c, s, status, test_seconds() - start, 0);
    for (size_t i = 0; status == CUDAFFT_STATUS_OK && i < produced * s->channels; i++)
      if (out[i] != 0.0f) {
        c->ok_wrong++;
        worker_fail("%s (device %d): after the trap, a push of %zu zeros returned OK with %g",
                    s->label, s->device, part, (double)out[i]);
        break;
      }
    start = test_seconds();
    status = cudafft_convolve_drain(s->cv, 0, out, &produced);
  } else {
    status = cudafft_convolve_push(s->cv, in, frames, out, &produced);
  }
  calls_note(c, s, status, test_seconds() - start, 1);
  for (size_t i = 0; status == CUDAFFT_STATUS_OK && i < produced * s->channels; i++)
    if (out[i] != 0.0f) {
      c->ok_wrong++;
      worker_fail("%s (device %d): after the trap, a %s of zeros returned OK with %g", s->label,
                  s->device, drain ? "drain" : "push", (double)out[i]);
      break;
    }
  free(in);
  free(out);
}

/* Every object of c: a stream of random pushes up to its first failure (what the OK calls gave
 * against the reference: a push staged on the host may succeed), then a push of two blocks of
 * zeros and a partial block with its drain. */
static void *
calls_main(void *arg)
{
  Calls *c = arg;
  for (size_t i = 0; i < c->count; i++) {
    Stream *s = &c->objects[i];
    stream_start(s);
    const char *what = "";
    int ended = 0;
    CudafftStatus status = CUDAFFT_STATUS_OK;
    while (!ended) {
      const double start = test_seconds();
      status = stream_call(s, &what, &ended);
      /* a drain always reaches the device; a push of less than a block may not */
      calls_note(c, s, status, test_seconds() - start, !strcmp(what, "drain"));
    }
    int ok;
    if (status == CUDAFFT_STATUS_OK) {
      ok = stream_check(s);
    } else {
      ok = stream_compare(s, s->produced);
      stream_discard(s);
    }
    c->ok_wrong += !ok;
    zeros_call(c, s, 0);
    zeros_call(c, s, 1);
  }
  return NULL;
}

/* Creates a convolution on `device_id` after the trap: returns its status, *took the seconds, the
 * message in message[512]; an object made anyway is destroyed. */
static CudafftStatus
create_after_fault(int device_id, double *took, char *message)
{
  double h[64];
  for (int i = 0; i < 64; i++)
    h[i] = 1.0 / (1 + i);
  const CudafftConvolveConfig config = {2, CUDAFFT_SAMPLE_F32, {h, 64, 1}, 1.0};
  CudafftConvolve *cv = NULL;
  const double start = test_seconds();
  const CudafftStatus status =
      cudafft_convolve_create(&cv, CUDAFFT_BACKEND_CUDA, device_id, &config);
  *took = test_seconds() - start;
  snprintf(message, 512, "%s", status != CUDAFFT_STATUS_OK ? cudafft_last_error_message() : "");
  cudafft_convolve_destroy(cv);
  return status;
}

static void
print_fault(const DeviceFault *f)
{
  printf("# device 1 after the trap: launch %s, wait %s, second wait %s\n",
         cudaGetErrorName(f->launch), cudaGetErrorName(f->fault), cudaGetErrorName(f->again));
  printf("# with device 1 current: cudaGetLastError %s then %s, cudaGetDevice %s, "
         "cudaGetDeviceCount %s (%d devices)\n",
         cudaGetErrorName(f->last_first), cudaGetErrorName(f->last_second),
         cudaGetErrorName(f->get_device), cudaGetErrorName(f->count_error), f->count);
  printf("# with device 0 current again: cudaSetDevice %s, cudaGetLastError %s then %s, "
         "cudaMemGetInfo %s\n",
         cudaGetErrorName(f->set_elsewhere), cudaGetErrorName(f->elsewhere_last_first),
         cudaGetErrorName(f->elsewhere_last_second), cudaGetErrorName(f->elsewhere_call));
}

/* A kernel that traps on device 1: what the library promises after it (see the top). */
static void
test_sticky_error(void)
{
  watch("objects pinned to devices 0 and 1, streamed before the trap"); /* the first deadline */
  pthread_t dog;
  if (pthread_create(&dog, NULL, watchdog, NULL) != 0)
    test_abort("cannot start the watchdog thread");
  Stream zero[FAULT_ZERO], one[FAULT_ONE];
  int placed = 1;
  int made = make_pinned(zero, FAULT_ZERO, 0, 2, 4800, FAULT_FRAMES, &placed);
  made = make_pinned(one, FAULT_ONE, 1, 1, 2100, FAULT_FRAMES, &placed) && made;
  test_check(made && placed, "%d objects pinned to device 0 and %d to device 1 stay there",
             FAULT_ZERO, FAULT_ONE);
  stream_all(zero, FAULT_ZERO);
  stream_all(one, FAULT_ONE);
  report_worker_failures("before the trap: the objects on devices 0 and 1 streamed, every sample "
                         "against its reference");

  watch("a kernel that traps on device 1");
  DeviceFault fault;
  const int broken = made && device_fault_break(1, 0, &fault);
  if (made)
    print_fault(&fault);
  test_check(broken,
             "a kernel that traps on device 1 leaves a sticky error (its wait: %s, a second "
             "wait: %s)",
             made ? cudaGetErrorName(fault.fault) : "not run",
             made ? cudaGetErrorName(fault.again) : "not run");

  if (broken) {
    watch("every object of both devices: a stream, a push of two blocks, a partial block and a "
          "drain; device 0's on a thread that never touches device 1");
    static Calls on0, on1;
    memset(&on0, 0, sizeof on0);
    memset(&on1, 0, sizeof on1);
    on0.objects = zero;
    on0.count = FAULT_ZERO;
    on1.objects = one;
    on1.count = FAULT_ONE;
    pthread_t own;
    if (pthread_create(&own, NULL, calls_main, &on0) != 0)
      test_abort("cannot start a thread");
    calls_main(&on1);
    pthread_join(own, NULL);
    for (int d = 0; d < 2; d++) {
      const Calls *c = d ? &on1 : &on0;
      printf("# device %d's objects after the trap: %u calls, %u failed (%u of the %u that reach "
             "the device), %u OK; the first failure: %s: %s\n",
             d, c->calls, c->failed, c->reaching_failed, c->reaching, c->ok,
             cudafft_status_name(c->first), c->message);
    }
    test_check(on0.ok_wrong == 0 && on1.ok_wrong == 0 && on0.unnamed == 0 && on1.unnamed == 0,
               "CUDA ends the process's CUDA work after a sticky error: every call on the objects "
               "of either device failed with an error status naming its object's device (%u and "
               "%u; %u and %u do not name it) or returned OK with correct samples (%u and %u; %u "
               "and %u with wrong samples)",
               on0.failed, on1.failed, on0.unnamed, on1.unnamed, on0.ok, on1.ok, on0.ok_wrong,
               on1.ok_wrong);
    test_check(on0.reaching_failed == on0.reaching && on1.reaching_failed == on1.reaching,
               "CUDA ends the process's CUDA work after a sticky error: the calls that reach the "
               "device fail on both devices, not only on the one that trapped (device 0: %u of "
               "%u, device 1: %u of %u)",
               on0.reaching_failed, on0.reaching, on1.reaching_failed, on1.reaching);
    test_check(on0.slowest <= FAULT_CALL_S && on1.slowest <= FAULT_CALL_S,
               "after the trap every call returned within %.0f s (the slowest on device 0 in "
               "%.3f s, on device 1 in %.3f s)",
               FAULT_CALL_S, on0.slowest, on1.slowest);
    report_worker_failures("the calls after the trap that returned OK, against their references");

    watch("objects made after the trap, with -1, 0 and 1");
    char message[512];
    double took = 0.0;
    CudafftStatus status = create_after_fault(-1, &took, message);
    test_check(status != CUDAFFT_STATUS_OK && strstr(message, "device 0") &&
                   strstr(message, "device 1") && took <= FAULT_CALL_S,
               "after the trap, an object made with -1 fails in %.3f s, naming both devices tried: "
               "%s: %s",
               took, cudafft_status_name(status), message);
    for (int d = 0; d < 2; d++) {
      status = create_after_fault(d, &took, message);
      test_check(status != CUDAFFT_STATUS_OK && message[0] && took <= FAULT_CALL_S,
                 "after the trap, an object made with id %d fails in %.3f s: %s: %s", d, took,
                 cudafft_status_name(status), message);
    }
  }

  watch("destroying every object");
  double slowest = 0.0;
  for (int i = 0; i < FAULT_ZERO + FAULT_ONE; i++) {
    const double start = test_seconds();
    stream_destroy(i < FAULT_ZERO ? &zero[i] : &one[i - FAULT_ZERO]);
    const double took = test_seconds() - start;
    slowest = took > slowest ? took : slowest;
  }
  unsigned objects0 = 1, objects1 = 1;
  size_t bytes0 = 1, bytes1 = 1;
  cudafft_cuda_device_load(0, &objects0, &bytes0);
  cudafft_cuda_device_load(1, &objects1, &bytes1);
  test_check(
      objects0 == 0 && bytes0 == 0 && objects1 == 0 && bytes1 == 0 && slowest <= FAULT_CALL_S,
      "every object is destroyed without a crash or a hang (the slowest in %.3f s), and both "
      "devices' loads are back to 0 objects and 0 bytes (device 0: %u, %zu; device 1: %u, "
      "%zu)",
      slowest, objects0, bytes0, objects1, bytes1);

  if (broken) {
    watch("an object made with -1 once every object is gone (the executors made anew)");
    char message[512];
    double took = 0.0;
    const CudafftStatus status = create_after_fault(-1, &took, message);
    unsigned after0 = 1, after1 = 1;
    cudafft_cuda_device_load(0, &after0, NULL);
    cudafft_cuda_device_load(1, &after1, NULL);
    test_check(status != CUDAFFT_STATUS_OK && strstr(message, "device 0") &&
                   strstr(message, "device 1") && took <= FAULT_CALL_S && after0 == 0 &&
                   after1 == 0,
               "with every object gone, an object made with -1 fails in %.3f s, its executors made "
               "anew failing too, naming both devices, and the loads stay 0 (%u, %u): %s: %s",
               took, after0, after1, cudafft_status_name(status), message);
  }

  pthread_mutex_lock(&watch_lock);
  watch_stop = 1;
  pthread_mutex_unlock(&watch_lock);
  pthread_join(dog, NULL);
}

int
main(int argc, char **argv)
{
  test_begin(argc, argv); /* "cuda": skips without a device */
  const int devices = cudafft_cuda_device_count();
  printf("# %d CUDA devices\n", devices);
  if (devices < 2)
    test_skip_program("this host has one CUDA device: failing launches on one device while "
                      "another's objects stream, and a sticky error on one device seen from "
                      "another, need two");
  test_launch_failures();
  test_section_done("failing launches on device 1");
  /* Last: after a sticky error CUDA works no more in this process. */
  test_sticky_error();
  test_section_done("a sticky error on device 1");
  return test_finish();
}
