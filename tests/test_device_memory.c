/* test_device_memory.c: what the library's _device calls do with memory their kernels cannot
 * reach, and what every call leaves current on the caller's thread (cudafft/common.h, "The
 * caller's context" and "Device memory").
 *
 * cpu (every build, no device needed): the judgement (lib/common/device_pointer.h) for every kind
 * of place: device memory of the object's device and context passes, of another device or another
 * context fails naming both devices, pool memory passes on its device, managed memory passes,
 * mapped page-locked memory passes and unmapped fails, plain host memory passes only where the
 * device reaches pageable memory, ranges that end before the bytes do fail; the remembered ranges
 * (inside, past the end, the oldest replaced, forgotten at reset).
 *
 * cuda (skips without a device): one object of every engine on device 0 (FFT plan, STFT, ISTFT,
 * spectrum, convolution, matrix convolution, scope) is handed memory of a context of the test's
 * own on device 0 (cuCtxCreate), memory of device 1 where there is a second device, and plain host
 * memory (where device 0 does not reach pageable memory): every entry point that takes device
 * memory (execute_device's input and output, the STFT's and ISTFT's push_device both ways,
 * drain_device, the spectrum's push_device, the convolution's and the matrix's push_device both
 * ways, the matrix's drain_device, render_device) must fail with
 * WRONG_DEVICE_MEMORY, before anything is queued, the message naming where the memory is. After
 * all of them, plans on every device still transform device memory correctly (against FFTW in
 * double precision), so nothing faulted. Last, the caller's context: with device 0 current, with a
 * context of the test's own current, and with none, objects made with -1 (on a host of two
 * devices, one lands on device 1), used and destroyed leave the thread's current context as it
 * was. */
#include "cudafft_config.h"
#include "fft_reference.h"
#include "test_util.h"

#include "device_pointer.h"

#include <cudafft/convolve.h>
#include <cudafft/fft.h>
#include <cudafft/matrix.h>
#include <cudafft/scope.h>
#include <cudafft/spectrum.h>
#include <cudafft/stft.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if CUDAFFT_HAVE_CUDA
#include "context_driver.h"
#include "cuda_test_util.h"
#endif

#define WHY 256

/* The CPU part --------------------------------------------------------------------------------- */

static const int object_device = 0;
static int object_context_dummy, other_context_dummy;

/* A place as the driver would describe it, for an object on device 0 in object_context_dummy. */
static CudafftPointerPlace
place(CudafftPlaceKind kind, int device, const void *context)
{
  CudafftPointerPlace p = {0};
  p.kind = kind;
  p.device = device;
  p.context = context;
  p.object_device = object_device;
  p.object_context = &object_context_dummy;
  p.start = 0x10000;
  p.size = 4096;
  return p;
}

static void
judge_case(const char *what, CudafftPointerPlace p, size_t offset, size_t bytes, CudafftStatus want,
           const char *say)
{
  const void *ptr = (const void *)(uintptr_t)(p.start + offset);
  const CudafftStatus got = cudafft_device_pointer_judge(&p, ptr, bytes, "a_call", "input");
  const char *message = got ? cudafft_last_error_message() : "";
  test_check(got == want && (!say || strstr(message, say)), "judge: %s: %s (want %s) \"%s\"", what,
             cudafft_status_name(got), cudafft_status_name(want), message);
}

static void
check_judge(void)
{
  const CudafftStatus ok = CUDAFFT_STATUS_OK, wrong = CUDAFFT_STATUS_WRONG_DEVICE_MEMORY;
  judge_case("device memory of the object's context",
             place(CUDAFFT_PLACE_DEVICE, 0, &object_context_dummy), 0, 4096, ok, NULL);
  judge_case("device memory of device 1", place(CUDAFFT_PLACE_DEVICE, 1, &other_context_dummy), 0,
             16, wrong, "CUDA device 1, but the object runs on CUDA device 0");
  judge_case("device memory of another context on device 0",
             place(CUDAFFT_PLACE_DEVICE, 0, &other_context_dummy), 0, 16, wrong,
             "another CUDA context");
  CudafftPointerPlace pooled = place(CUDAFFT_PLACE_DEVICE, 0, &other_context_dummy);
  pooled.pooled = 1;
  judge_case("pool memory of device 0", pooled, 0, 16, ok, NULL);
  pooled.device = 1;
  judge_case("pool memory of device 1", pooled, 0, 16, wrong, "CUDA device 1");
  judge_case("managed memory", place(CUDAFFT_PLACE_MANAGED, 1, &other_context_dummy), 0, 16, ok,
             NULL);
  CudafftPointerPlace mapped = place(CUDAFFT_PLACE_HOST, -1, &other_context_dummy);
  judge_case("page-locked host memory not mapped for the object", mapped, 0, 16, wrong,
             "page-locked host memory");
  mapped.mapped = 1;
  judge_case("page-locked host memory mapped for the object", mapped, 0, 16, ok, NULL);
  CudafftPointerPlace plain = place(CUDAFFT_PLACE_UNKNOWN, -1, NULL);
  plain.size = 0;
  judge_case("plain host memory", plain, 0, 16, wrong, "not memory that CUDA knows");
  plain.pageable = 1;
  judge_case("plain host memory, pageable access", plain, 0, 16, ok, NULL);
  judge_case("bytes past the allocation's end",
             place(CUDAFFT_PLACE_DEVICE, 0, &object_context_dummy), 4000, 97, wrong,
             "needs 97 bytes");
  judge_case("the allocation's last byte", place(CUDAFFT_PLACE_DEVICE, 0, &object_context_dummy),
             4095, 1, ok, NULL);
}

static void
check_ranges(void)
{
  CudafftCheckedMemory checked = {{0}, {0}, 0};
  test_check(!cudafft_checked_memory_has(&checked, (void *)0x1000, 1), "ranges: none at first");
  cudafft_checked_memory_keep(&checked, 0x1000, 0x100);
  test_check(cudafft_checked_memory_has(&checked, (void *)0x1000, 0x100) &&
                 cudafft_checked_memory_has(&checked, (void *)0x10ff, 1) &&
                 !cudafft_checked_memory_has(&checked, (void *)0x10ff, 2) &&
                 !cudafft_checked_memory_has(&checked, (void *)0xfff, 1) &&
                 !cudafft_checked_memory_has(&checked, (void *)0x1100, 1),
             "ranges: inside passes, past either end does not");
  cudafft_checked_memory_keep(&checked, 0x9000, 0);
  test_check(!cudafft_checked_memory_has(&checked, (void *)0x9000, 0),
             "ranges: a range of unknown size is not kept");
  for (uintptr_t i = 1; i <= CUDAFFT_CHECKED_RANGES; i++)
    cudafft_checked_memory_keep(&checked, 0x100000 * i, 0x100);
  int newest = 1;
  for (uintptr_t i = 1; i <= CUDAFFT_CHECKED_RANGES; i++)
    newest &= cudafft_checked_memory_has(&checked, (void *)(0x100000 * i), 1);
  test_check(newest && !cudafft_checked_memory_has(&checked, (void *)0x1000, 1),
             "ranges: the newest %d kept, the oldest replaced", CUDAFFT_CHECKED_RANGES);
  cudafft_checked_memory_forget(&checked);
  test_check(!cudafft_checked_memory_has(&checked, (void *)0x100000, 1), "ranges: forgotten");
}

/* The statuses without a device: a status name of its own, and the CPU backend's refusal. */
static void
check_cpu(void)
{
  check_judge();
  check_ranges();
  test_check(strcmp(cudafft_status_name(CUDAFFT_STATUS_WRONG_DEVICE_MEMORY),
                    "memory of another device or context") == 0,
             "status name: \"%s\"", cudafft_status_name(CUDAFFT_STATUS_WRONG_DEVICE_MEMORY));
}

#if CUDAFFT_HAVE_CUDA

/* The GPU part --------------------------------------------------------------------------------- */

#define N 1024
#define CHANNELS 2
#define FRAMES 4096
#define BYTES ((size_t)1 << 20) /* every foreign buffer: enough for any call below */

static char why[WHY];

static int
drv(int ok, const char *what)
{
  return ok || test_check(0, "%s: %s", what, why);
}

/* One kind of memory the objects on device 0 cannot reach. */
typedef struct {
  const char *name;
  void *ptr;
  const char *say; /* what the message must name */
} Foreign;

/* A failed call's status must be WRONG_DEVICE_MEMORY naming the place. */
static void
expect_wrong(CudafftStatus status, const char *call, const Foreign *f)
{
  const char *message = status ? cudafft_last_error_message() : "";
  test_check(status == CUDAFFT_STATUS_WRONG_DEVICE_MEMORY && strstr(message, f->say),
             "%s with %s: %s \"%s\"", call, f->name, cudafft_status_name(status), message);
}

static CudafftScopeConfig
scope_config(void)
{
  const CudafftScopeConfig config = {
      .channels = CHANNELS,
      .rate = 48000,
      .format = CUDAFFT_SAMPLE_F32,
      .fft_size = 1024,
      .max_frames = 800,
      .width = 32,
      .height = 16,
      .pixels = CUDAFFT_PIXELS_RGBX,
      .stride = 32 * 4,
      .frame_seconds = 1.0 / 60.0,
      .options = {.style = CUDAFFT_SCOPE_BARS,
                  .multi_channel = 1,
                  .scale = CUDAFFT_SCALE_LOG,
                  .bands_per_octave = 3,
                  .weighting = CUDAFFT_WEIGHTING_Z,
                  .db_min = -90.0f,
                  .db_max = 0.0f,
                  .colormap = CUDAFFT_COLORMAP_GREY,
                  .peak_hold_ms = 100.0f,
                  .peak_decay_db_per_s = 20.0f},
  };
  return config;
}

/* Every entry point of objects on device 0 with memory f: each refused. */
static void
refuse_everywhere(const Foreign *f, void *good)
{
  CudafftPlan *plan = NULL;
  if (test_check(cudafft_plan_create(&plan, CUDAFFT_BACKEND_CUDA, 0, CUDAFFT_C2C, N) == 0,
                 "plan on device 0")) {
    expect_wrong(cudafft_execute_device(plan, CUDAFFT_FORWARD, f->ptr, good, 1, 1.0f),
                 "execute_device's input", f);
    expect_wrong(cudafft_execute_device(plan, CUDAFFT_FORWARD, good, f->ptr, 1, 1.0f),
                 "execute_device's output", f);
  }
  cudafft_plan_destroy(plan);

  const CudafftStftConfig stft_config = {
      N, N / 4, CHANNELS, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX, CUDAFFT_SAMPLE_F32};
  CudafftStft *stft = NULL;
  if (test_check(cudafft_stft_create(&stft, CUDAFFT_BACKEND_CUDA, 0, &stft_config) == 0,
                 "stft on device 0")) {
    size_t frames = 0;
    expect_wrong(cudafft_stft_push_device(stft, f->ptr, FRAMES, good, &frames, CUDAFFT_IN_DEVICE,
                                          NULL, NULL),
                 "stft_push_device's input", f);
    expect_wrong(cudafft_stft_push_device(stft, good, FRAMES, f->ptr, &frames,
                                          CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE, NULL, NULL),
                 "stft_push_device's output", f);
  }
  cudafft_stft_destroy(stft);

  CudafftIstft *istft = NULL;
  if (test_check(cudafft_istft_create(&istft, CUDAFFT_BACKEND_CUDA, 0, &stft_config) == 0,
                 "istft on device 0")) {
    expect_wrong(cudafft_istft_push_device(istft, f->ptr, 4, good, CUDAFFT_IN_DEVICE, NULL, NULL),
                 "istft_push_device's input", f);
    expect_wrong(cudafft_istft_push_device(istft, good, 4, f->ptr,
                                           CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE, NULL, NULL),
                 "istft_push_device's output", f);
    expect_wrong(cudafft_istft_drain_device(istft, f->ptr), "istft_drain_device", f);
  }
  cudafft_istft_destroy(istft);

  const CudafftSpectrumConfig spectrum_config = {.bands = 513,
                                                 .channels = CHANNELS,
                                                 .rate = 48000,
                                                 .format = CUDAFFT_SAMPLE_F32,
                                                 .multi_channel = 1,
                                                 .options = {10000000, -80, 0}};
  CudafftSpectrum *spectrum = NULL;
  if (test_check(cudafft_spectrum_create(&spectrum, CUDAFFT_BACKEND_CUDA, 0, &spectrum_config) == 0,
                 "spectrum on device 0")) {
    size_t consumed = 0, results = 0;
    expect_wrong(
        cudafft_spectrum_push_device(spectrum, f->ptr, FRAMES, 4, &consumed, &results, NULL),
        "spectrum_push_device", f);
  }
  cudafft_spectrum_destroy(spectrum);

  double taps[300];
  for (size_t i = 0; i < 300; i++)
    taps[i] = 1.0 / (double)(i + 1);
  const CudafftConvolveConfig convolve_config = {CHANNELS, CUDAFFT_SAMPLE_F32, {taps, 300, 1}, 1.0};
  CudafftConvolve *convolve = NULL;
  if (test_check(cudafft_convolve_create(&convolve, CUDAFFT_BACKEND_CUDA, 0, &convolve_config) == 0,
                 "convolve on device 0")) {
    size_t produced = 0;
    expect_wrong(cudafft_convolve_push_device(convolve, f->ptr, FRAMES, good, &produced,
                                              CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE, NULL, NULL),
                 "convolve_push_device's input", f);
    expect_wrong(cudafft_convolve_push_device(convolve, good, FRAMES, f->ptr, &produced,
                                              CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE, NULL, NULL),
                 "convolve_push_device's output", f);
  }
  cudafft_convolve_destroy(convolve);

  const CudafftMatrixConfig matrix_config = {.inputs = CHANNELS,
                                             .outputs = CHANNELS,
                                             .format = CUDAFFT_SAMPLE_F32,
                                             .block_size = 256,
                                             .responses = {.taps_data = taps, .taps = 75}};
  CudafftMatrix *matrix = NULL;
  if (test_check(cudafft_matrix_create(&matrix, CUDAFFT_BACKEND_CUDA, 0, &matrix_config) == 0,
                 "matrix on device 0")) {
    size_t produced = 0;
    expect_wrong(cudafft_matrix_push_device(matrix, f->ptr, FRAMES, good, &produced,
                                            CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE, NULL, NULL),
                 "matrix_push_device's input", f);
    expect_wrong(cudafft_matrix_push_device(matrix, good, FRAMES, f->ptr, &produced,
                                            CUDAFFT_IN_DEVICE | CUDAFFT_OUT_DEVICE, NULL, NULL),
                 "matrix_push_device's output", f);
    /* a partial block staged, so that the drain has frames to write */
    cudafft_matrix_push_device(matrix, good, 100, NULL, &produced, CUDAFFT_IN_DEVICE, NULL, NULL);
    expect_wrong(cudafft_matrix_drain_device(matrix, 1, f->ptr, &produced), "matrix_drain_device",
                 f);
  }
  cudafft_matrix_destroy(matrix);

  const CudafftScopeConfig config = scope_config();
  CudafftScope *scope = NULL;
  if (test_check(cudafft_scope_create(&scope, CUDAFFT_BACKEND_CUDA, 0, &config) == 0,
                 "scope on device 0")) {
    float audio[CHANNELS * 800] = {0};
    expect_wrong(cudafft_scope_render_device(scope, audio, 800, f->ptr, 32 * 4),
                 "scope_render_device", f);
  }
  cudafft_scope_destroy(scope);
}

/* A C2C transform on device `device` over device memory, against FFTW: the device still works. */
static void
still_works(int device)
{
  TestRng rng = test_rng(device == 0 ? "device 0 after" : "device 1 after");
  const size_t floats = 2 * N;
  float *in = test_malloc(floats * sizeof(float)), *out = test_malloc(floats * sizeof(float));
  double *ref = test_malloc(floats * sizeof(double));
  test_rng_fill(&rng, in, floats);
  test_poison(out, floats);
  CudafftPlan *plan = NULL;
  void *d_in = NULL, *d_out = NULL;
  int ok =
      cuda_ok(cudaSetDevice(device), "cudaSetDevice") &&
      cuda_ok(cudaMalloc(&d_in, floats * sizeof(float)), "cudaMalloc") &&
      cuda_ok(cudaMalloc(&d_out, floats * sizeof(float)), "cudaMalloc") &&
      cuda_ok(cudaMemcpy(d_in, in, floats * sizeof(float), cudaMemcpyHostToDevice), "up") &&
      cudafft_plan_create(&plan, CUDAFFT_BACKEND_CUDA, device, CUDAFFT_C2C, N) == 0 &&
      cudafft_execute_device(plan, CUDAFFT_FORWARD, d_in, d_out, 1, 1.0f) == 0 &&
      cudafft_plan_synchronize(plan) == 0 &&
      cuda_ok(cudaMemcpy(out, d_out, floats * sizeof(float), cudaMemcpyDeviceToHost), "down") &&
      fft_reference(CUDAFFT_C2C, CUDAFFT_FORWARD, N, in, 1, ref) == 0;
  double worst = 0.0, norm = 0.0;
  for (size_t i = 0; ok && i < floats; i++) {
    worst = fmax(worst, fabs((double)out[i] - ref[i]));
    norm = fmax(norm, fabs(ref[i]));
  }
  /* a float FFT of 1024 points: well within 1e-5 of the largest bin */
  test_check(ok && worst <= 1e-5 * norm,
             "device %d still transforms device memory after the refusals: max error %.3g of "
             "%.3g (%s)",
             device, worst, norm, ok ? "ran" : cudafft_last_error_message());
  cudafft_plan_destroy(plan);
  cudaFree(d_in);
  cudaFree(d_out);
  free(in);
  free(out);
  free(ref);
}

/* Objects made with -1, used and destroyed, must leave `current` current. */
static void
keeps_caller(const char *who, void *current)
{
  void *now = NULL;
  int moved = 0;
  CudafftPlan *plans[4] = {NULL, NULL, NULL, NULL};
  int devices[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; i++) {
    if (cudafft_plan_create(&plans[i], CUDAFFT_BACKEND_CUDA, -1, CUDAFFT_C2C, N) != 0)
      continue;
    devices[i] = cudafft_plan_get_device(plans[i]);
    drv(ctxdrv_get_current(&now, why, WHY), "cuCtxGetCurrent");
    moved += now != current;
  }
  float host[2 * N] = {0}, host_out[2 * N];
  for (int i = 0; i < 4; i++)
    if (plans[i]) {
      cudafft_execute(plans[i], CUDAFFT_FORWARD, host, host_out, 1, 1.0f);
      drv(ctxdrv_get_current(&now, why, WHY), "cuCtxGetCurrent");
      moved += now != current;
    }
  for (int i = 0; i < 4; i++) {
    cudafft_plan_destroy(plans[i]);
    drv(ctxdrv_get_current(&now, why, WHY), "cuCtxGetCurrent");
    moved += now != current;
  }
  test_check(moved == 0,
             "%s: 4 plans made with -1 (on devices %d %d %d %d), run and destroyed leave the "
             "thread's context as it was (%d calls moved it)",
             who, devices[0], devices[1], devices[2], devices[3], moved);
}

static void
check_cuda(void)
{
  int count = 0;
  cuda_ok(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  printf("devices: %d\n", count);
  void *good = NULL, *context = NULL, *in_context = NULL, *other = NULL, *plain = NULL;
  int pageable = 0;
  cuda_ok(cudaSetDevice(0), "cudaSetDevice(0)");
  cuda_ok(cudaMalloc(&good, BYTES), "cudaMalloc on device 0");
  cuda_ok(cudaMemset(good, 0, BYTES), "cudaMemset");
  cuda_ok(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0), "attribute");
  drv(ctxdrv_create(0, &context, why, WHY), "cuCtxCreate");
  if (context)
    drv(ctxdrv_alloc(context, BYTES, &in_context, why, WHY), "cuMemAlloc in the context");
  Foreign foreign[3];
  int kinds = 0;
  if (in_context)
    foreign[kinds++] =
        (Foreign){"memory of another context on device 0", in_context, "another CUDA context"};
  if (count > 1 && cuda_ok(cudaSetDevice(1), "cudaSetDevice(1)") &&
      cuda_ok(cudaMalloc(&other, BYTES), "cudaMalloc on device 1"))
    foreign[kinds++] = (Foreign){"memory of device 1", other, "device memory of CUDA device 1"};
  else if (count < 2)
    printf("one device: no other device's memory to try\n");
  cuda_ok(cudaSetDevice(0), "cudaSetDevice(0)");
  if (!pageable) {
    plain = test_malloc(BYTES);
    foreign[kinds++] = (Foreign){"plain host memory", plain, "not memory that CUDA knows"};
  } else {
    printf("device 0 reaches pageable memory: plain host memory passes there\n");
  }
  for (int k = 0; k < kinds; k++)
    refuse_everywhere(&foreign[k], good);
  for (int d = 0; d < (count > 1 ? 2 : 1); d++)
    still_works(d);

  cuda_ok(cudaSetDevice(0), "cudaSetDevice(0)");
  void *primary = NULL;
  drv(ctxdrv_get_current(&primary, why, WHY), "cuCtxGetCurrent");
  keeps_caller("device 0's primary context current", primary);
  if (context && drv(ctxdrv_set_current(context, why, WHY), "cuCtxSetCurrent")) {
    keeps_caller("a context of the application's own current", context);
    drv(ctxdrv_set_current(primary, why, WHY), "cuCtxSetCurrent");
  }
  if (drv(ctxdrv_set_current(NULL, why, WHY), "cuCtxSetCurrent(NULL)")) {
    /* none current: device 0's primary context exists, so it is what the runtime would bind */
    void *now = NULL;
    CudafftPlan *plan = NULL;
    cudafft_plan_create(&plan, CUDAFFT_BACKEND_CUDA, count > 1 ? 1 : 0, CUDAFFT_C2C, N);
    cudafft_plan_destroy(plan);
    drv(ctxdrv_get_current(&now, why, WHY), "cuCtxGetCurrent");
    test_check(now == NULL || now == primary,
               "none current: a plan on device %d leaves none, or device 0's primary context",
               count > 1 ? 1 : 0);
    drv(ctxdrv_set_current(primary, why, WHY), "cuCtxSetCurrent");
  }

  if (in_context)
    drv(ctxdrv_free(context, in_context, why, WHY), "cuMemFree");
  if (context)
    drv(ctxdrv_destroy(context, why, WHY), "cuCtxDestroy");
  cudaFree(good);
  if (other) {
    cudaSetDevice(1);
    cudaFree(other);
    cudaSetDevice(0);
  }
  free(plain);
}

#endif /* CUDAFFT_HAVE_CUDA */

int
main(int argc, char **argv)
{
  const CudafftBackend backend = test_begin(argc, argv);
  if (backend == CUDAFFT_BACKEND_CPU) {
    check_cpu();
    return test_finish();
  }
#if CUDAFFT_HAVE_CUDA
  check_cuda();
#else
  test_abort("built without CUDA: only the cpu part exists");
#endif
  return test_finish();
}
