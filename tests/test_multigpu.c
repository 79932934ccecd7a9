/* test_multigpu.c: objects made with device id -1 on a host with two GPUs (cudafft/common.h,
 * Devices; lib/common/devices.h): the split, explicit ids, a device filled on purpose, objects
 * made and destroyed from many threads while others stream, and every output sample against its
 * double-precision convolution (multigpu_streams.h: convolve_reference.h, test_convolve_streams.c's
 * measure and tolerance). Convolutions, because their state (kernel spectra, delay line) is what
 * the rule weighs. CUDA only: exits 77 with the reason without a device; with one device it runs
 * what one device can show (-1 is device 0, explicit ids, streams against the reference) and then
 * skips (77, saying why) the parts that need two. Device errors on several GPUs are
 * test_device_errors.c's.
 *
 * What the rule says for these objects (stated here because the checks depend on it): equal
 * objects made one after another go 32/32 (state bytes alternate, ties broken by object count);
 * a burst made at once from 8 threads goes within 32 +- 8 (an object counts on its device from
 * its choice on, its state bytes only once allocated: at most the 8 in flight can be unbalanced);
 * with device 1 filled, every new object goes to device 0, the fit check on device 1 failing and
 * the choice going on to device 0. */
#include "multigpu_streams.h"
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

#define OBJECTS 64
#define THREADS 8

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
                      "a filled device and the threads over two devices need two");
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
  return test_finish();
}
