/* test_multigpu.c: objects made with device id -1 on a host with two GPUs (cudafft/common.h,
 * Devices; lib/common/device_load.h): the split, explicit ids, a device filled on purpose, objects
 * made and destroyed from many threads while others stream, and every output sample against its
 * double-precision convolution (convolve_reference.h, test_convolve_streams.c's measure and
 * tolerance). Convolutions, because their state (kernel spectra, delay line) is what the rule
 * weighs. CUDA only: exits 77 with the reason without a device; with one device it runs what one
 * device can show (-1 is device 0, explicit ids, streams against the reference) and then skips
 * (77, saying why) the parts that need two.
 *
 * What the rule says for these objects (stated here because the checks depend on it): equal
 * objects made one after another go 32/32 (state bytes alternate, ties broken by object count);
 * a burst made at once from 8 threads goes within 32 +- 8 (an object counts on its device from
 * its choice on, its state bytes only once allocated: at most the 8 in flight can be unbalanced);
 * with device 1 filled, every new object goes to device 0, the fit check on device 1 failing and
 * the choice going on to device 0.
 *
 * Then errors that are not sticky: device 1's executor fails launches on purpose
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
#include "convolve_reference.h"
#include "device_fault.h"
#include "executor_test_kind.h"
#include "test_util.h"
#include "worker_util.h"

#include <cudafft/convolve.h>
#include <cudafft/fft.h>

#include <cuda_runtime_api.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-5 /* F32, as test_convolve_streams.c: float rounding over the FFT's stages */
#define WINDOW 1024
#define OBJECTS 64
#define THREADS 8

/* One convolution and its stream: stereo F32, one kernel row, input pushed in random pieces. */
typedef struct {
  CudafftConvolve *cv;
  int device;
  unsigned channels;
  size_t taps, frames, pushed, produced;
  double *h, *x;
  float *in, *out;
  TestRng rng;
  char label[96];
  unsigned failures; /* failed calls and wrong streams, noted with worker_fail */
} Stream;

static int
stream_make(Stream *s, int device_id, unsigned channels, size_t taps, size_t frames,
            const char *label)
{
  memset(s, 0, sizeof *s);
  s->channels = channels;
  s->taps = taps;
  s->frames = frames;
  s->device = -2;
  snprintf(s->label, sizeof s->label, "%s", label);
  s->rng = test_rng("%s", label);
  s->h = test_malloc(taps * sizeof *s->h);
  const double scale = 1.0 / sqrt((double)taps);
  for (size_t i = 0; i < taps; i++)
    s->h[i] = test_rng_uniform(&s->rng) * scale;
  const CudafftConvolveConfig config = {channels, CUDAFFT_SAMPLE_F32, {s->h, taps, 1}, 1.0};
  const CudafftStatus status =
      cudafft_convolve_create(&s->cv, CUDAFFT_BACKEND_CUDA, device_id, &config);
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s: create on device %d: %s: %s", label, device_id, cudafft_status_name(status),
                cudafft_last_error_message());
    free(s->h);
    s->h = NULL;
    return 0;
  }
  s->device = cudafft_convolve_get_device(s->cv);
  return 1;
}

/* The input and the poisoned output, made when the stream starts (the 64 objects' buffers are
 * not held all at once before). */
static void
stream_start(Stream *s)
{
  const size_t values = s->frames * s->channels;
  s->x = test_malloc(values * sizeof *s->x);
  s->in = test_malloc(values * sizeof *s->in);
  s->out = test_malloc((s->frames + 4096) * s->channels * sizeof *s->out);
  for (size_t i = 0; i < values; i++) {
    s->in[i] = (float)test_rng_uniform(&s->rng);
    s->x[i] = s->in[i];
  }
  for (size_t i = 0; i < (s->frames + 4096) * s->channels; i++)
    s->out[i] = NAN;
  s->pushed = s->produced = 0;
}

/* One push of 1 to 4096 frames, or the drain at the end, without noting a failure: its status;
 * *what says which call it was, *ended whether the stream has ended (the drain ran, or the call
 * failed). Only a call that succeeded adds its frames. */
static CudafftStatus
stream_call(Stream *s, const char **what, int *ended)
{
  size_t produced = 0;
  if (s->pushed < s->frames) {
    size_t n = test_rng_range(&s->rng, 1, 4096);
    n = n < s->frames - s->pushed ? n : s->frames - s->pushed;
    *what = "push";
    const CudafftStatus status = cudafft_convolve_push(
        s->cv, s->in + s->pushed * s->channels, n, s->out + s->produced * s->channels, &produced);
    *ended = status != CUDAFFT_STATUS_OK;
    if (status == CUDAFFT_STATUS_OK) {
      s->pushed += n;
      s->produced += produced;
    }
    return status;
  }
  *what = "drain";
  *ended = 1;
  const CudafftStatus status =
      cudafft_convolve_drain(s->cv, 0, s->out + s->produced * s->channels, &produced);
  if (status == CUDAFFT_STATUS_OK)
    s->produced += produced;
  return status;
}

/* One call of the stream (stream_call), a failure noted; returns whether the stream has ended. */
static int
stream_step(Stream *s)
{
  const char *what = "";
  int ended = 0;
  const CudafftStatus status = stream_call(s, &what, &ended);
  if (status != CUDAFFT_STATUS_OK) {
    worker_fail("%s (device %d): %s: %s: %s", s->label, s->device, what,
                cudafft_status_name(status), cudafft_last_error_message());
    s->failures++;
  }
  return ended;
}

/* The first `frames` output samples (frames <= s->frames; the convolution is causal) against the
 * double-precision convolution: finite (the output was poisoned with NaN), and each window of
 * WINDOW frames within TOLERANCE relative L2 error of its level or the channel's mean level,
 * whichever is higher (test_convolve_streams.c's measure). Failures noted. */
static pthread_mutex_t reference_lock = PTHREAD_MUTEX_INITIALIZER; /* FFTW's planner */

static int
stream_compare(Stream *s, size_t frames)
{
  if (frames == 0)
    return 1;
  int ok = 1;
  pthread_mutex_lock(&reference_lock);
  double *ref = convolve_reference(s->h, s->taps, 1, s->x, s->channels, s->frames, s->frames);
  pthread_mutex_unlock(&reference_lock);
  for (unsigned c = 0; c < s->channels && ok; c++) {
    double mean_power = 0.0;
    for (size_t n = 0; n < frames; n++)
      mean_power += ref[n * s->channels + c] * ref[n * s->channels + c];
    mean_power /= (double)frames;
    for (size_t w = 0; w < frames && ok; w += WINDOW) {
      const size_t end = w + WINDOW < frames ? w + WINDOW : frames;
      double err = 0.0, norm = 0.0;
      for (size_t n = w; n < end; n++) {
        const double y = s->out[n * s->channels + c], r = ref[n * s->channels + c];
        if (!isfinite(y)) {
          worker_fail("%s (device %d): channel %u frame %zu is %g", s->label, s->device, c, n, y);
          ok = 0;
          break;
        }
        err += (y - r) * (y - r);
        norm += r * r;
      }
      const double level = fmax(norm, mean_power * (double)(end - w));
      const double rel = level > 0.0 ? sqrt(err / level) : err == 0.0 ? 0.0 : INFINITY;
      if (ok && !(rel <= TOLERANCE)) {
        worker_fail("%s (device %d): channel %u frames %zu..%zu: relative L2 error %.3g "
                    "(tolerance %.0e)",
                    s->label, s->device, c, w, end - 1, rel, TOLERANCE);
        ok = 0;
      }
    }
  }
  free(ref);
  return ok;
}

/* Frees the stream's input and output (stream_start made them). */
static void
stream_discard(Stream *s)
{
  free(s->x);
  free(s->in);
  free(s->out);
  s->x = NULL;
  s->in = s->out = NULL;
}

/* A whole stream: every frame out, every sample against its reference (stream_compare). */
static int
stream_check(Stream *s)
{
  int ok = 1;
  if (s->produced != s->frames) {
    worker_fail("%s (device %d): %zu frames out of %zu in", s->label, s->device, s->produced,
                s->frames);
    ok = 0;
  }
  if (ok)
    ok = stream_compare(s, s->frames);
  stream_discard(s);
  s->failures += !ok;
  return ok;
}

static void
stream_destroy(Stream *s)
{
  cudafft_convolve_destroy(s->cv);
  free(s->h);
  free(s->x);
  free(s->in);
  free(s->out);
  memset(s, 0, sizeof *s);
}

/* Streams objects[0 .. count) round and round, one push of each in turn, and checks each. */
static void
stream_all(Stream *objects, size_t count)
{
  int *done = calloc(count, sizeof *done);
  if (!done)
    test_abort("no memory for %zu flags", count);
  size_t left = 0;
  for (size_t i = 0; i < count; i++) {
    done[i] = !objects[i].cv; /* not made: noted when it failed */
    left += !done[i];
    if (!done[i])
      stream_start(&objects[i]);
  }
  while (left > 0)
    for (size_t i = 0; i < count; i++)
      if (!done[i] && stream_step(&objects[i])) {
        done[i] = 1;
        left--;
        stream_check(&objects[i]);
      }
  free(done);
}

static int
device_load_is(int device, unsigned objects, size_t *bytes)
{
  unsigned have = 0;
  size_t state = 0;
  if (cudafft_cuda_device_load(device, &have, &state) != CUDAFFT_STATUS_OK)
    return 0;
  if (bytes)
    *bytes = state;
  return have == objects;
}

/* ---- one device or more ---- */

static void
test_one_device(int devices)
{
  Stream s[4];
  const int ids[4] = {-1, 0, devices - 1, -1};
  int made = 1, where = 1;
  for (int i = 0; i < 4; i++) {
    char label[64];
    snprintf(label, sizeof label, "one-device object %d (id %d)", i, ids[i]);
    made = stream_make(&s[i], ids[i], 2, 3000 + 1000 * (size_t)i, 20000, label) && made;
    if (ids[i] >= 0)
      where = where && s[i].device == ids[i];
  }
  test_check(made && where, "explicit ids are honoured (0 and %d)", devices - 1);
  if (devices == 1)
    test_check(s[0].device == 0 && s[3].device == 0, "-1 on one device is device 0");
  stream_all(s, 4);
  report_worker_failures("4 objects streamed, every sample against its reference");
  for (int i = 0; i < 4; i++)
    stream_destroy(&s[i]);
  int empty = 1;
  for (int d = 0; d < devices; d++)
    empty = empty && device_load_is(d, 0, NULL);
  test_check(empty, "every device's load is 0 objects once they are destroyed");
}

/* ---- two devices ---- */

static Stream objects[OBJECTS];

static void
test_split(void)
{
  int made = 1;
  unsigned on[2] = {0, 0};
  for (int i = 0; i < OBJECTS; i++) {
    char label[64];
    snprintf(label, sizeof label, "split object %d", i);
    made = stream_make(&objects[i], -1, 2, 4800, 24000, label) && made;
    if (objects[i].device == 0 || objects[i].device == 1)
      on[objects[i].device]++;
  }
  size_t bytes0 = 0, bytes1 = 0;
  const int counted = device_load_is(0, on[0], &bytes0) && device_load_is(1, on[1], &bytes1);
  test_check(made && on[0] == 32 && on[1] == 32 && counted && bytes0 == bytes1 && bytes0 > 0,
             "64 equal objects made one after another with -1 go 32/32 (%u/%u), as the load says "
             "(state %zu and %zu bytes)",
             on[0], on[1], bytes0, bytes1);
  report_worker_failures("64 objects made with -1");
}

/* Streams a share of the 64 objects (one thread's), each against its reference. */
typedef struct {
  unsigned first, count;
} Share;

static void *
streamer(void *arg)
{
  const Share *share = arg;
  stream_all(&objects[share->first], share->count);
  return NULL;
}

/* Create / stream / check / destroy cycles with -1 beside the streams; counts where they went. */
static atomic_uint cycles_on[2];

static void *
cycler(void *arg)
{
  const unsigned id = (unsigned)(size_t)arg;
  for (unsigned cycle = 0; cycle < 12; cycle++) {
    char label[64];
    snprintf(label, sizeof label, "cycler %u cycle %u", id, cycle);
    Stream s;
    if (!stream_make(&s, -1, 1 + cycle % 3, 100 + 700 * (size_t)cycle, 6000, label))
      continue;
    if (s.device == 0 || s.device == 1)
      atomic_fetch_add(&cycles_on[s.device], 1);
    stream_all(&s, 1);
    stream_destroy(&s);
  }
  return NULL;
}

static void
test_streams_and_cycles(void)
{
  pthread_t threads[THREADS + 2];
  Share shares[THREADS];
  for (unsigned t = 0; t < THREADS; t++) {
    shares[t] = (Share){t * (OBJECTS / THREADS), OBJECTS / THREADS};
    pthread_create(&threads[t], NULL, streamer, &shares[t]);
  }
  for (size_t t = 0; t < 2; t++)
    pthread_create(&threads[THREADS + t], NULL, cycler, (void *)t);
  for (unsigned t = 0; t < THREADS + 2; t++)
    pthread_join(threads[t], NULL);
  report_worker_failures("64 objects on two devices streamed from 8 threads while 2 threads made, "
                         "streamed and destroyed 24 more with -1, every sample against its "
                         "reference");
  test_check(atomic_load(&cycles_on[0]) > 0 && atomic_load(&cycles_on[1]) > 0,
             "the cycles' objects went to both devices (%u and %u)", atomic_load(&cycles_on[0]),
             atomic_load(&cycles_on[1]));
  for (int i = 0; i < OBJECTS; i++)
    stream_destroy(&objects[i]);
  test_check(device_load_is(0, 0, NULL) && device_load_is(1, 0, NULL),
             "both devices' loads are 0 objects once every object is destroyed");
}

/* A burst: 8 threads make 8 objects each at once. */
static void *
burst_maker(void *arg)
{
  const unsigned t = (unsigned)(size_t)arg;
  for (unsigned i = 0; i < OBJECTS / THREADS; i++) {
    char label[64];
    snprintf(label, sizeof label, "burst thread %u object %u", t, i);
    stream_make(&objects[t * (OBJECTS / THREADS) + i], -1, 2, 4800, 24000, label);
  }
  return NULL;
}

static void
test_burst(void)
{
  pthread_t threads[THREADS];
  for (size_t t = 0; t < THREADS; t++)
    pthread_create(&threads[t], NULL, burst_maker, (void *)t);
  for (unsigned t = 0; t < THREADS; t++)
    pthread_join(threads[t], NULL);
  report_worker_failures("64 objects made at once from 8 threads with -1");
  unsigned on[2] = {0, 0};
  for (int i = 0; i < OBJECTS; i++)
    if (objects[i].device == 0 || objects[i].device == 1)
      on[objects[i].device]++;
  test_check(on[0] + on[1] == OBJECTS && on[0] >= 24 && on[1] >= 24,
             "a burst of 64 from 8 threads goes within 32 +- 8 (%u/%u)", on[0], on[1]);
  for (int i = 0; i < OBJECTS; i++)
    stream_destroy(&objects[i]);
}

static void
test_explicit(void)
{
  Stream pinned[8];
  int ok = 1;
  for (int i = 0; i < 8; i++) {
    char label[64];
    snprintf(label, sizeof label, "pinned object %d", i);
    ok = stream_make(&pinned[i], 1, 2, 4800, 24000, label) && pinned[i].device == 1 && ok;
  }
  test_check(ok && device_load_is(1, 8, NULL), "8 objects pinned to device 1 stay there");
  /* -1 now fills device 0 first: 8 of the next 8 go there */
  Stream next[8];
  unsigned on0 = 0;
  for (int i = 0; i < 8; i++) {
    char label[64];
    snprintf(label, sizeof label, "after pinned %d", i);
    if (stream_make(&next[i], -1, 2, 4800, 24000, label))
      on0 += next[i].device == 0;
  }
  test_check(on0 == 8, "with 8 pinned on device 1, the next 8 made with -1 go to device 0 (%u)",
             on0);
  stream_all(next, 8);
  stream_all(pinned, 8);
  report_worker_failures("pinned and balancing objects streamed, against their references");
  for (int i = 0; i < 8; i++) {
    stream_destroy(&pinned[i]);
    stream_destroy(&next[i]);
  }
}

/* Device 1 filled with cudaMalloc to 8 MB or less free: objects of 32 channels with 10 s kernels
 * (about 120 MB of state each) go to device 0, and one too large for either names both. */
static void
test_filled(void)
{
  Stream anchor; /* device 1's executor exists, with one object's state */
  if (!stream_make(&anchor, 1, 32, 480000, 8192, "anchor on device 1")) {
    report_worker_failures("the object on device 1 before the filling");
    return;
  }
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(1);
  void *blocks[4096];
  size_t count = 0, free_bytes = 0, total = 0;
  const size_t sizes[] = {(size_t)1 << 30, (size_t)64 << 20, (size_t)4 << 20};
  for (size_t i = 0; i < 3; i++)
    while (count < 4096 && cudaMalloc(&blocks[count], sizes[i]) == cudaSuccess)
      count++;
  cudaGetLastError();
  cudaMemGetInfo(&free_bytes, &total);
  cudaSetDevice(previous);
  printf("# device 1 filled: %zu blocks, %zu MB free of %zu MB\n", count, free_bytes >> 20,
         total >> 20);

  Stream s[4];
  unsigned on0 = 0;
  for (int i = 0; i < 4; i++) {
    char label[64];
    snprintf(label, sizeof label, "with device 1 full %d", i);
    if (stream_make(&s[i], -1, 32, 480000, 8192, label))
      on0 += s[i].device == 0;
  }
  test_check(on0 == 4,
             "with device 1 filled, 4 objects of 120 MB made with -1 all go to device 0 "
             "(%u), those the rule sends to device 1 going on to device 0",
             on0);
  report_worker_failures("objects made while device 1 is full");

  const size_t huge = (size_t)1 << 26;
  double *zeros = calloc(huge, sizeof *zeros);
  const CudafftConvolveConfig config = {
      CUDAFFT_MAX_CHANNELS, CUDAFFT_SAMPLE_F32, {zeros, huge, 1}, 1.0};
  CudafftConvolve *cv = NULL;
  const CudafftStatus status = zeros
                                   ? cudafft_convolve_create(&cv, CUDAFFT_BACKEND_CUDA, -1, &config)
                                   : CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  const char *message = cudafft_last_error_message();
  test_check(status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY && !cv && strstr(message, "device 0:") &&
                 strstr(message, "device 1:") && strstr(message, " MB"),
             "an object too large for either device: %s, naming both: %s",
             cudafft_status_name(status), message);
  cudafft_convolve_destroy(cv);
  free(zeros);

  cudaSetDevice(1);
  while (count > 0)
    cudaFree(blocks[--count]);
  cudaGetLastError();
  cudaSetDevice(previous);
  Stream back;
  const int made = stream_make(&back, -1, 32, 480000, 8192, "after the filling");
  test_check(made && back.device == 1,
             "with device 1's memory back, the next object goes there "
             "(%d)",
             back.device);
  stream_all(&back, 1);
  stream_all(&s[0], 1);
  report_worker_failures("objects of 32 channels and 10 s kernels on both devices, against their "
                         "references");
  if (made)
    stream_destroy(&back);
  for (int i = 0; i < 4; i++)
    stream_destroy(&s[i]);
  stream_destroy(&anchor);
}

/* Plans have no executor state: they spread by object count. */
static void
test_plans(void)
{
  CudafftPlan *a = NULL, *b = NULL;
  const int made =
      cudafft_plan_create(&a, CUDAFFT_BACKEND_CUDA, -1, CUDAFFT_C2C, 4096) == CUDAFFT_STATUS_OK &&
      cudafft_plan_create(&b, CUDAFFT_BACKEND_CUDA, -1, CUDAFFT_C2C, 4096) == CUDAFFT_STATUS_OK;
  const int da = cudafft_plan_get_device(a), db = cudafft_plan_get_device(b);
  /* the transform of an impulse: every bin 1 */
  float *in = test_malloc(2 * 4096 * sizeof *in), *out = test_malloc(2 * 4096 * sizeof *out);
  int exact = made;
  for (int p = 0; p < 2 && made; p++) {
    memset(in, 0, 2 * 4096 * sizeof *in);
    in[0] = 1.0f;
    for (int i = 0; i < 2 * 4096; i++)
      out[i] = NAN;
    exact =
        exact && cudafft_execute(p ? b : a, CUDAFFT_FORWARD, in, out, 1, 1.0f) == CUDAFFT_STATUS_OK;
    for (int i = 0; i < 4096 && exact; i++)
      exact = fabsf(out[2 * i] - 1.0f) <= 1e-6f && fabsf(out[2 * i + 1]) <= 1e-6f;
  }
  test_check(made && da >= 0 && db >= 0 && da != db && exact,
             "two plans made with -1 go to different devices (%d, %d), each transforms an impulse "
             "to ones",
             da, db);
  free(in);
  free(out);
  cudafft_plan_destroy(a);
  cudafft_plan_destroy(b);
}

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

/* Failing launches on device 1 while objects on both devices stream (see the top). */
static void
test_launch_failures(void)
{
  Stream zero[LAUNCH_ZERO], one[LAUNCH_ONE];
  int made = 1, placed = 1;
  for (int i = 0; i < LAUNCH_ZERO; i++) {
    char label[64];
    snprintf(label, sizeof label, "device-0 object %d", i);
    made = stream_make(&zero[i], 0, 2, 4800 + 100 * (size_t)i, LAUNCH_FRAMES, label) && made;
    placed = placed && zero[i].device == 0;
  }
  for (int i = 0; i < LAUNCH_ONE; i++) {
    char label[64];
    snprintf(label, sizeof label, "device-1 object %d", i);
    made = stream_make(&one[i], 1, 2, 3000 + 100 * (size_t)i, 20000, label) && made;
    placed = placed && one[i].device == 1;
  }
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
  int made = 1, placed = 1;
  for (int i = 0; i < FAULT_ZERO; i++) {
    char label[64];
    snprintf(label, sizeof label, "device-0 object %d", i);
    made = stream_make(&zero[i], 0, 2, 4800 + 100 * (size_t)i, FAULT_FRAMES, label) && made;
    placed = placed && zero[i].device == 0;
  }
  for (int i = 0; i < FAULT_ONE; i++) {
    char label[64];
    snprintf(label, sizeof label, "device-1 object %d", i);
    made = stream_make(&one[i], 1, 1, 2100 + 100 * (size_t)i, FAULT_FRAMES, label) && made;
    placed = placed && one[i].device == 1;
  }
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
  test_one_device(devices);
  test_section_done("one device");
  if (devices < 2)
    test_skip_program("this host has one CUDA device: the split, explicit ids across devices, "
                      "a filled device, the threads over two devices, failing launches on one "
                      "device and a sticky error need two");
  test_split();
  test_streams_and_cycles();
  test_section_done("split and streams");
  test_burst();
  test_explicit();
  test_section_done("burst and explicit ids");
  test_filled();
  test_section_done("filled device");
  test_plans();
  test_section_done("plans");
  test_launch_failures();
  test_section_done("failing launches on device 1");
  /* Last: after a sticky error CUDA works no more in this process. */
  test_sticky_error();
  test_section_done("a sticky error on device 1");
  return test_finish();
}
