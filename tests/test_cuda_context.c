/* test_cuda_context.c: the library's objects in a CUDA driver context of the application's own
 * (cudafft/common.h, Contexts), as GStreamer's GstCudaContext makes one with cuCtxCreate.
 *
 * cpu (every build, no device needed): the calls' statuses without a context to attach: NULL, a
 * build or host without CUDA, ids that name nothing, the scope's device render on the CPU backend.
 *
 * cuda (skips without a device): a context made with cuCtxCreate on device 0 is attached (again:
 * the same id; device 0's primary context: id 0); one object of every engine (FFT plan, STFT,
 * ISTFT, spectrum, convolution, scope) is made with the context's id and one with device 0; both
 * get the same fresh random input, their outputs must agree bit for bit (the same kernels on the
 * same device) and with the double-precision references of the engines' own tests. Then the proof
 * that the objects run in the context: cudafft_execute_device() over memory cuMemAlloc'd in it, and
 * cudafft_scope_render_device() into cuMemAllocPitch'd memory of it, every byte against the host
 * render of the device-0 scope. A plan made on one thread in the context runs on another thread
 * whose current context is device 0's primary. After everything is destroyed and detached, and the
 * context destroyed, device 0 holds nothing.
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup. */
#include "convolve_reference.h"
#include "cudafft_config.h"
#include "fft_reference.h"
#include "scope_reference.h"
#include "spectrum_reference.h"
#include "stft_reference.h"
#include "test_signal.h"
#include "test_util.h"

#include <cudafft/convolve.h>
#include <cudafft/fft.h>
#include <cudafft/scope.h>
#include <cudafft/spectrum.h>
#include <cudafft/stft.h>

#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver helpers (context_driver.cu) exist where CUDA is built. */
#define TEST_HAVE_CONTEXT_DRIVER CUDAFFT_HAVE_CUDA
#if TEST_HAVE_CONTEXT_DRIVER
#include "context_driver.h"
#endif

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define WHY 256

/* The CPU part ----------------------------------------------------------------------------------
 */

static void
check_cpu(void)
{
  int id = 12345;
  CudafftStatus status = cudafft_cuda_context_attach(NULL, &id);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER && id == 12345,
             "attach(NULL) -> %s (NULL_POINTER), id untouched", cudafft_status_name(status));
  /* A context handle that names nothing reaches the driver only where there is one: here only
   * where no device is (on a GPU host the driver would be handed a bogus context). */
  if (cudafft_cuda_device_count() == 0) {
    int dummy = 0;
    status = cudafft_cuda_context_attach(&dummy, &id);
    test_check(
        status != CUDAFFT_STATUS_OK &&
            (status == CUDAFFT_STATUS_NO_DEVICE || status == CUDAFFT_STATUS_BACKEND_UNAVAILABLE ||
             status == CUDAFFT_STATUS_CUDA_ERROR) &&
            id == -1,
        "attach without a device or CUDA backend (has CUDA backend: %d) -> %s (%s), id -1",
        cudafft_has_cuda_backend(), cudafft_status_name(status), cudafft_last_error_message());
  }
  static const int nothing[] = {-5,
                                -2,
                                CUDAFFT_CONTEXT_ID_BASE,
                                CUDAFFT_CONTEXT_ID_BASE + 63,
                                CUDAFFT_CONTEXT_ID_BASE + 64,
                                1 << 30};
  for (size_t i = 0; i < COUNT(nothing); i++)
    test_check(cudafft_cuda_context_device(nothing[i]) == -1, "context_device(%d) == -1 (got %d)",
               nothing[i], cudafft_cuda_context_device(nothing[i]));
  const int count = cudafft_cuda_device_count();
  test_check(cudafft_cuda_context_device(count) == -1, "context_device(device count %d) == -1",
             count);
  for (int d = 0; d < count; d++)
    test_check(cudafft_cuda_context_device(d) == d, "context_device(%d) == %d", d, d);
  void *handle = &id;
  status = cudafft_cuda_primary_context(0, &handle);
  test_check(count == 0 ? status != CUDAFFT_STATUS_OK && !handle
                        : status == CUDAFFT_STATUS_OK && handle,
             "primary_context(0) with %d devices -> %s", count, cudafft_status_name(status));
  status = cudafft_cuda_primary_context(0, NULL);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER, "primary_context(0, NULL) -> %s",
             cudafft_status_name(status));
  status = cudafft_cuda_primary_context(-1, &handle);
  test_check(status != CUDAFFT_STATUS_OK && !handle, "primary_context(-1) -> %s",
             cudafft_status_name(status));
  cudafft_cuda_context_detach(CUDAFFT_CONTEXT_ID_BASE); /* nothing attached: nothing happens */
  cudafft_cuda_context_detach(0);

  /* an id from CUDAFFT_CONTEXT_ID_BASE up that is not attached: NO_DEVICE on CUDA and on AUTO
   * (no fallback to the CPU); the CPU backend ignores device ids */
  static const CudafftBackend backends[] = {CUDAFFT_BACKEND_AUTO, CUDAFFT_BACKEND_CUDA};
  for (size_t b = 0; b < COUNT(backends); b++) {
    CudafftPlan *plan = (CudafftPlan *)&id;
    status =
        cudafft_plan_create(&plan, backends[b], CUDAFFT_CONTEXT_ID_BASE + 3, CUDAFFT_C2C, 1024);
    test_check_create(status, plan, CUDAFFT_STATUS_NO_DEVICE, CUDAFFT_STATUS_NO_DEVICE,
                      "plan_create",
                      backends[b] == CUDAFFT_BACKEND_AUTO ? "auto, an unattached context id"
                                                          : "cuda, an unattached context id");
  }
  CudafftPlan *cpu_plan = NULL;
  status = cudafft_plan_create(&cpu_plan, CUDAFFT_BACKEND_CPU, CUDAFFT_CONTEXT_ID_BASE + 3,
                               CUDAFFT_C2C, 1024);
  test_check(status == CUDAFFT_STATUS_OK &&
                 cudafft_plan_get_backend(cpu_plan) == CUDAFFT_BACKEND_CPU,
             "plan_create(cpu, an unattached context id) -> %s: the CPU backend ignores ids",
             cudafft_status_name(status));
  cudafft_plan_destroy(cpu_plan);
  CudafftStftConfig stft_config = {.fft_size = 1024,
                                   .hop = 256,
                                   .channels = 1,
                                   .window = CUDAFFT_WINDOW_HANN,
                                   .representation = CUDAFFT_REPRESENTATION_COMPLEX,
                                   .format = CUDAFFT_SAMPLE_F32};
  CudafftStft *stft = (CudafftStft *)&id;
  status = cudafft_stft_create(&stft, CUDAFFT_BACKEND_AUTO, CUDAFFT_CONTEXT_ID_BASE, &stft_config);
  test_check_create(status, stft, CUDAFFT_STATUS_NO_DEVICE, CUDAFFT_STATUS_NO_DEVICE, "stft_create",
                    "auto, an unattached context id");

  /* the scope's device render on the CPU backend */
  const CudafftScopeConfig scope_config = {
      .channels = 1,
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
  CudafftScope *scope = NULL;
  status = cudafft_scope_create(&scope, CUDAFFT_BACKEND_CPU, -1, &scope_config);
  if (test_check(status == CUDAFFT_STATUS_OK, "CPU scope: create (%s)",
                 cudafft_status_name(status))) {
    uint8_t pixels[32 * 4 * 16];
    memset(pixels, 0xa5, sizeof pixels);
    status = cudafft_scope_render_device(scope, NULL, 0, pixels, 32 * 4);
    int untouched = 1;
    for (size_t i = 0; i < sizeof pixels; i++)
      untouched = untouched && pixels[i] == 0xa5;
    test_check(status == CUDAFFT_STATUS_UNSUPPORTED && untouched,
               "render_device on the CPU backend -> %s (UNSUPPORTED), pixels untouched",
               cudafft_status_name(status));
    status = cudafft_scope_render(scope, NULL, 0, pixels);
    test_check(status == CUDAFFT_STATUS_OK, "the CPU scope renders to the host after it (%s)",
               cudafft_status_name(status));
    cudafft_scope_destroy(scope);
  }
  status = cudafft_scope_render_device(NULL, NULL, 0, &id, 64);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER, "render_device(NULL scope) -> %s",
             cudafft_status_name(status));
}

#if TEST_HAVE_CONTEXT_DRIVER

/* The CUDA part -------------------------------------------------------------------------------- */

static char why[WHY];

/* A driver helper's result as a check only where it failed. */
static int
drv(int ok, const char *what)
{
  return ok || test_check(0, "%s: %s", what, why);
}

static int
same_bytes(const void *a, const void *b, size_t bytes, size_t *first)
{
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < bytes; i++)
    if (x[i] != y[i]) {
      *first = i;
      return 0;
    }
  return 1;
}

/* ids[0]: the attached context's, ids[1]: device 0. */
static const char *const where[2] = {"context", "device 0"};

/* The relative L2 error of count floats against double values. */
static double
rel_l2(const float *out, const double *ref, size_t count)
{
  double e2 = 0.0, r2 = 0.0;
  for (size_t i = 0; i < count; i++) {
    const double d = (double)out[i] - ref[i];
    e2 += d * d;
    r2 += ref[i] * ref[i];
  }
  return sqrt(e2 / r2);
}

/* FFT plan: host execute on both, and execute_device over the context's own memory. */
#define FFT_N 4096
#define FFT_BATCH 8

static void
check_fft(const int ids[2], void *context)
{
  const size_t floats = FFT_BATCH * 2 * FFT_N;
  TestRng rng = test_rng("fft");
  float *in = test_malloc(floats * sizeof(float));
  float *out[2] = {test_malloc((floats + FFT_GUARD_FLOATS) * sizeof(float)),
                   test_malloc((floats + FFT_GUARD_FLOATS) * sizeof(float))};
  double *ref = test_malloc(floats * sizeof(double));
  test_rng_fill(&rng, in, floats);
  if (fft_reference(CUDAFFT_C2C, CUDAFFT_FORWARD, FFT_N, in, FFT_BATCH, ref) != 0)
    test_abort("FFTW double could not plan n=%d", FFT_N);
  CudafftPlan *plan[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    plan[k] = fft_create_plan_on(CUDAFFT_BACKEND_CUDA, ids[k], CUDAFFT_C2C, FFT_N);
    if (!plan[k])
      goto done;
    test_check(cudafft_plan_get_device(plan[k]) == ids[k], "fft (%s): get_device %d == %d",
               where[k], cudafft_plan_get_device(plan[k]), ids[k]);
    char label[64];
    snprintf(label, sizeof label, "fft C2C n=%d batch %d (%s)", FFT_N, FFT_BATCH, where[k]);
    fft_check_execute(plan[k], CUDAFFT_FORWARD, in, out[k], FFT_BATCH, 1.0f, ref,
                      fft_tolerance(FFT_N), label);
  }
  size_t at = 0;
  test_check(same_bytes(out[0], out[1], floats * sizeof(float), &at),
             "fft: the context's plan and device 0's agree bit for bit (first difference at float "
             "%zu)",
             at / sizeof(float));

  /* execute_device over memory cuMemAlloc'd in the context: a kernel of another context could
   * not address it */
  void *d_in = NULL, *d_out = NULL, *owner = NULL;
  if (drv(ctxdrv_alloc(context, floats * sizeof(float), &d_in, why, WHY), "cuMemAlloc in") &&
      drv(ctxdrv_alloc(context, floats * sizeof(float), &d_out, why, WHY), "cuMemAlloc out") &&
      drv(ctxdrv_pointer_context(d_out, &owner, why, WHY), "the output's context") &&
      test_check(owner == context, "the device buffers belong to the attached context") &&
      drv(ctxdrv_upload(context, d_in, in, floats * sizeof(float), why, WHY), "upload")) {
    test_rng_fill(&rng, in, floats); /* fresh input for the device run */
    if (fft_reference(CUDAFFT_C2C, CUDAFFT_FORWARD, FFT_N, in, FFT_BATCH, ref) != 0)
      test_abort("FFTW double could not plan n=%d", FFT_N);
    test_poison(out[0], floats);
    if (drv(ctxdrv_upload(context, d_in, in, floats * sizeof(float), why, WHY), "upload") &&
        drv(ctxdrv_upload(context, d_out, out[0], floats * sizeof(float), why, WHY), "poison")) {
      CudafftStatus status =
          cudafft_execute_device(plan[0], CUDAFFT_FORWARD, d_in, d_out, FFT_BATCH, 1.0f);
      if (status == CUDAFFT_STATUS_OK)
        status = cudafft_plan_synchronize(plan[0]);
      if (test_check(status == CUDAFFT_STATUS_OK, "execute_device in the context's memory: %s (%s)",
                     cudafft_status_name(status), status ? cudafft_last_error_message() : "") &&
          drv(ctxdrv_download(context, out[0], d_out, floats * sizeof(float), why, WHY),
              "download")) {
        size_t first = 0;
        const size_t bad = test_count_nonfinite(out[0], floats, &first);
        const double err = fft_rel_l2_error(out[0], ref, floats, 1.0);
        test_check(bad == 0 && err <= fft_tolerance(FFT_N),
                   "execute_device in the context's memory: rel L2 %.3g (tol %.3g), %zu "
                   "unwritten or non-finite",
                   err, fft_tolerance(FFT_N), bad);
      }
    }
  }
  if (d_in)
    drv(ctxdrv_free(context, d_in, why, WHY), "cuMemFree");
  if (d_out)
    drv(ctxdrv_free(context, d_out, why, WHY), "cuMemFree");
done:
  for (int k = 0; k < 2; k++)
    cudafft_plan_destroy(plan[k]);
  free(in);
  free(out[0]);
  free(out[1]);
  free(ref);
}

/* STFT and ISTFT: analysis of one signal by both, then synthesis of the analysis by both. */
#define STFT_N 1024
#define STFT_HOP 256
#define STFT_CHANNELS 2
#define STFT_SAMPLES 16384

/* The header's synthesis in double (test_stft.c's): each frame's real inverse DFT (imaginary parts
 * of bins 0 and n/2 as zero) / n, times g = w / S (S the overlap sum of w^2), overlap-added. */
static void
synthesis_reference(const float *spectra, size_t frames, double *y)
{
  const size_t n = STFT_N, hop = STFT_HOP, bins = n / 2 + 1, channels = STFT_CHANNELS;
  double *g = test_malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) {
    double s = 0.0;
    for (size_t j = i % hop; j < n; j += hop) {
      const double w = cudafft_window_value(CUDAFFT_WINDOW_HANN, n, j);
      s += w * w;
    }
    g[i] = cudafft_window_value(CUDAFFT_WINDOW_HANN, n, i) / s;
  }
  fftw_complex *in = fftw_malloc(bins * sizeof(fftw_complex));
  double *frame = fftw_malloc(n * sizeof(double));
  fftw_plan plan = in && frame ? fftw_plan_dft_c2r_1d((int)n, in, frame, FFTW_ESTIMATE) : NULL;
  if (!plan)
    test_abort("FFTW double could not plan a C2R of n=%zu", n);
  memset(y, 0, ((frames - 1) * hop + n) * channels * sizeof(double));
  for (size_t f = 0; f < frames; f++)
    for (size_t c = 0; c < channels; c++) {
      const float *src = spectra + (f * channels + c) * bins * 2;
      for (size_t k = 0; k < bins; k++) {
        in[k][0] = src[2 * k];
        in[k][1] = k == 0 || k == bins - 1 ? 0.0 : src[2 * k + 1];
      }
      fftw_execute(plan);
      for (size_t i = 0; i < n; i++)
        y[(f * hop + i) * channels + c] += frame[i] / (double)n * g[i];
    }
  fftw_destroy_plan(plan);
  fftw_free(in);
  fftw_free(frame);
  free(g);
}

static void
check_stft(const int ids[2])
{
  const CudafftStftConfig config = {.fft_size = STFT_N,
                                    .hop = STFT_HOP,
                                    .channels = STFT_CHANNELS,
                                    .window = CUDAFFT_WINDOW_HANN,
                                    .representation = CUDAFFT_REPRESENTATION_COMPLEX,
                                    .format = CUDAFFT_SAMPLE_F32};
  TestRng rng = test_rng("stft");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, STFT_CHANNELS, 48000, STFT_SAMPLES,
                     TEST_READ_POW2);
  const size_t frames = (STFT_SAMPLES - STFT_N) / STFT_HOP + 1;
  const size_t frame_floats = STFT_CHANNELS * (STFT_N / 2 + 1) * 2;
  const size_t spectra_floats = frames * frame_floats;
  const size_t samples_out = frames * STFT_HOP * STFT_CHANNELS;
  float *spectra[2] = {test_malloc(spectra_floats * sizeof(float)),
                       test_malloc(spectra_floats * sizeof(float))};
  float *synth[2] = {test_malloc(samples_out * sizeof(float)),
                     test_malloc(samples_out * sizeof(float))};
  double *ref = test_malloc(spectra_floats * sizeof(double));
  double *y = test_malloc(((frames - 1) * STFT_HOP + STFT_N) * STFT_CHANNELS * sizeof(double));
  CudafftStft *stft[2] = {NULL, NULL};
  CudafftIstft *istft[2] = {NULL, NULL};
  int made = 1;
  for (int k = 0; k < 2; k++) {
    CudafftStatus status = cudafft_stft_create(&stft[k], CUDAFFT_BACKEND_CUDA, ids[k], &config);
    if (status == CUDAFFT_STATUS_OK)
      status = cudafft_istft_create(&istft[k], CUDAFFT_BACKEND_CUDA, ids[k], &config);
    made = test_check(status == CUDAFFT_STATUS_OK && cudafft_stft_get_device(stft[k]) == ids[k] &&
                          cudafft_istft_get_device(istft[k]) == ids[k],
                      "stft and istft (%s): create on id %d: %s (%s)", where[k], ids[k],
                      cudafft_status_name(status), status ? cudafft_last_error_message() : "") &&
           made;
  }
  if (!made)
    goto done;
  stft_reference_frames(STFT_N, STFT_HOP, CUDAFFT_WINDOW_HANN, signal.values, STFT_CHANNELS,
                        STFT_SAMPLES, 0, frames, ref);
  for (int k = 0; k < 2; k++) {
    test_poison(spectra[k], spectra_floats);
    size_t got = 0;
    const CudafftStatus status =
        cudafft_stft_push(stft[k], signal.raw, STFT_SAMPLES, spectra[k], &got);
    size_t first = 0;
    const size_t bad = test_count_nonfinite(spectra[k], spectra_floats, &first);
    const double err = rel_l2(spectra[k], ref, spectra_floats);
    test_check(status == CUDAFFT_STATUS_OK && got == frames && bad == 0 &&
                   err <= fft_tolerance(STFT_N),
               "stft (%s): %zu frames of %zu (%s), rel L2 %.3g against FFTW double (tol %.3g), "
               "%zu unwritten",
               where[k], got, frames, cudafft_status_name(status), err, fft_tolerance(STFT_N), bad);
  }
  size_t at = 0;
  test_check(same_bytes(spectra[0], spectra[1], spectra_floats * sizeof(float), &at),
             "stft: the context's and device 0's agree bit for bit (first difference at float %zu)",
             at / sizeof(float));

  /* synthesis of the same spectra by both */
  synthesis_reference(spectra[1], frames, y);
  for (int k = 0; k < 2; k++) {
    test_poison(synth[k], samples_out);
    const CudafftStatus status = cudafft_istft_push(istft[k], spectra[1], frames, synth[k]);
    size_t first = 0;
    const size_t bad = test_count_nonfinite(synth[k], samples_out, &first);
    const double err = rel_l2(synth[k], y, samples_out);
    test_check(status == CUDAFFT_STATUS_OK && bad == 0 && err <= 2.0 * fft_tolerance(STFT_N),
               "istft (%s): %zu samples (%s), rel L2 %.3g against the synthesis formula in double "
               "(tol %.3g), %zu unwritten",
               where[k], samples_out, cudafft_status_name(status), err, 2.0 * fft_tolerance(STFT_N),
               bad);
  }
  test_check(same_bytes(synth[0], synth[1], samples_out * sizeof(float), &at),
             "istft: the context's and device 0's agree bit for bit (first difference at float "
             "%zu)",
             at / sizeof(float));
done:
  for (int k = 0; k < 2; k++) {
    cudafft_stft_destroy(stft[k]);
    cudafft_istft_destroy(istft[k]);
    free(spectra[k]);
    free(synth[k]);
  }
  free(ref);
  free(y);
  test_signal_clear(&signal);
}

/* Spectrum: test_spectrum.c's model and level rule (see its comments for the tolerances). */
#define SPECTRUM_BANDS 513
#define SPECTRUM_CHANNELS 2
#define SPECTRUM_RATE 48000
#define SPECTRUM_INTERVAL 2400 /* frames: 50 ms */
#define SPECTRUM_FRAMES (5 * SPECTRUM_INTERVAL)
#define LEVEL_TOLERANCE 0.01
#define INPUT_ROUNDING (4.0 * 0x1p-24)
#define CLAMP_MARGIN 1.0

static double
float_error(size_t nfft)
{
  return fft_tolerance(nfft) + INPUT_ROUNDING;
}

typedef struct {
  float *levels[2]; /* results x rows x bands, each object's */
  size_t results, rows, compared, failures;
  int threshold;
  char first[200];
} SpectrumCheck;

static void
spectrum_compare(void *context, const SpectrumRefInterval *r)
{
  SpectrumCheck *sc = context;
  const size_t index = sc->compared++;
  if (index >= sc->results) {
    if (sc->failures++ == 0)
      snprintf(sc->first, sizeof sc->first, "the model closed interval %zu; ours gave %zu", index,
               sc->results);
    return;
  }
  for (int k = 0; k < 2; k++)
    for (size_t at = 0; at < sc->rows * SPECTRUM_BANDS; at++) {
      const float ours = sc->levels[k][index * sc->rows * SPECTRUM_BANDS + at];
      int ok;
      if (isnan(r->level[at]))
        ok = isnan(ours);
      else if (!isfinite(ours) || ours < (float)sc->threshold)
        ok = 0;
      else if (r->max_level[at] < sc->threshold - CLAMP_MARGIN && r->hi[at] <= sc->threshold)
        ok = ours == (float)sc->threshold;
      else
        ok = ours >= r->lo[at] - LEVEL_TOLERANCE && ours <= r->hi[at] + LEVEL_TOLERANCE;
      if (!ok && sc->failures++ == 0)
        snprintf(sc->first, sizeof sc->first,
                 "%s: result %zu value %zu: %.4f dB, model %.4f (%.4f .. %.4f)", where[k], index,
                 at, ours, r->level[at], r->lo[at], r->hi[at]);
    }
}

static void
check_spectrum(const int ids[2])
{
  const CudafftSpectrumConfig config = {
      .bands = SPECTRUM_BANDS,
      .channels = SPECTRUM_CHANNELS,
      .rate = SPECTRUM_RATE,
      .format = CUDAFFT_SAMPLE_F32,
      .multi_channel = 1,
      .options = {.interval_ns = UINT64_C(50000000), .threshold = -90, .phase = 0},
  };
  TestRng rng = test_rng("spectrum");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, SPECTRUM_CHANNELS, SPECTRUM_RATE,
                     SPECTRUM_FRAMES, TEST_READ_SPECTRUM);
  const size_t rows = SPECTRUM_CHANNELS, per = rows * SPECTRUM_BANDS;
  const size_t most = SPECTRUM_FRAMES / SPECTRUM_INTERVAL + 1;
  SpectrumCheck sc = {.rows = rows, .threshold = config.options.threshold};
  CudafftSpectrum *sp[2] = {NULL, NULL};
  size_t results[2] = {0, 0};
  int ran[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    sc.levels[k] = test_malloc(most * per * sizeof(float));
    test_poison(sc.levels[k], most * per);
    CudafftStatus status = cudafft_spectrum_create(&sp[k], CUDAFFT_BACKEND_CUDA, ids[k], &config);
    if (!test_check(status == CUDAFFT_STATUS_OK && cudafft_spectrum_get_device(sp[k]) == ids[k],
                    "spectrum (%s): create on id %d: %s (%s)", where[k], ids[k],
                    cudafft_status_name(status), status ? cudafft_last_error_message() : ""))
      continue;
    /* pushes until every frame is taken (a push stops after max_results results) */
    size_t taken = 0;
    while (status == CUDAFFT_STATUS_OK && taken < SPECTRUM_FRAMES) {
      size_t consumed = 0, count = 0;
      status = cudafft_spectrum_push(sp[k], signal.raw + taken * SPECTRUM_CHANNELS * sizeof(float),
                                     SPECTRUM_FRAMES - taken, cudafft_spectrum_max_results(sp[k]),
                                     &consumed, &count);
      for (size_t i = 0; status == CUDAFFT_STATUS_OK && i < count; i++) {
        CudafftSpectrumResult res;
        status = cudafft_spectrum_result(sp[k], i, &res);
        if (status == CUDAFFT_STATUS_OK && results[k] < most)
          memcpy(sc.levels[k] + results[k] * per, res.magnitude, per * sizeof(float));
        results[k]++;
      }
      taken += consumed;
      if (consumed == 0 && count == 0)
        break;
    }
    ran[k] = test_check(status == CUDAFFT_STATUS_OK && taken == SPECTRUM_FRAMES &&
                            results[k] >= 1 && results[k] <= most,
                        "spectrum (%s): %zu frames taken of %zu (%s), %zu results", where[k], taken,
                        (size_t)SPECTRUM_FRAMES, cudafft_status_name(status), results[k]);
  }
  if (ran[0] && ran[1] &&
      test_check(results[0] == results[1], "spectrum: both gave %zu and %zu results", results[0],
                 results[1])) {
    sc.results = results[0];
    const SpectrumRefSettings settings = {SPECTRUM_BANDS, 1, config.options.interval_ns,
                                          config.options.threshold, 0};
    SpectrumRef *ref = spectrum_ref_new(SPECTRUM_CHANNELS, SPECTRUM_RATE, &settings, float_error);
    if (!ref)
      test_abort("the spectrum model cannot be made");
    spectrum_ref_push(ref, signal.values, SPECTRUM_FRAMES, spectrum_compare, &sc);
    spectrum_ref_free(ref);
    test_check(sc.failures == 0 && sc.compared == sc.results,
               "spectrum: %zu of %zu results x %zu values of both against the double-precision "
               "model (within %.2g dB of its float-resolution interval)%s%s",
               sc.compared, sc.results, per, LEVEL_TOLERANCE,
               sc.failures ? "; first failure: " : "", sc.first);
    size_t at = 0;
    test_check(same_bytes(sc.levels[0], sc.levels[1], sc.results * per * sizeof(float), &at),
               "spectrum: the context's and device 0's agree bit for bit (first difference at "
               "value %zu)",
               at / sizeof(float));
  }
  for (int k = 0; k < 2; k++) {
    cudafft_spectrum_destroy(sp[k]);
    free(sc.levels[k]);
  }
  test_signal_clear(&signal);
}

/* Convolution: the partitioned path (a kernel longer than a block), the whole response. */
#define CONV_TAPS 3000
#define CONV_CHANNELS 2
#define CONV_FRAMES 12000
#define CONV_TOLERANCE 1e-5 /* test_convolve.c's TOLERANCE for F32 */

static void
check_convolve(const int ids[2])
{
  TestRng rng = test_rng("convolve");
  double *h = test_malloc(CONV_TAPS * sizeof(double));
  for (size_t i = 0; i < CONV_TAPS; i++)
    h[i] = test_rng_uniform53(&rng) * exp(-(double)i / 600.0);
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, CONV_CHANNELS, 48000, CONV_FRAMES,
                     TEST_READ_POW2);
  const CudafftConvolveConfig config = {.channels = CONV_CHANNELS,
                                        .format = CUDAFFT_SAMPLE_F32,
                                        .kernel = {h, CONV_TAPS, 1},
                                        .mix = 1.0};
  const size_t total = CONV_FRAMES + CONV_TAPS - 1, values = total * CONV_CHANNELS;
  double *ref =
      convolve_reference(h, CONV_TAPS, 1, signal.values, CONV_CHANNELS, CONV_FRAMES, total);
  float *out[2] = {NULL, NULL};
  CudafftConvolve *cv[2] = {NULL, NULL};
  int ran[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    CudafftStatus status = cudafft_convolve_create(&cv[k], CUDAFFT_BACKEND_CUDA, ids[k], &config);
    if (!test_check(status == CUDAFFT_STATUS_OK && cudafft_convolve_get_device(cv[k]) == ids[k],
                    "convolve (%s): create on id %d: %s (%s)", where[k], ids[k],
                    cudafft_status_name(status), status ? cudafft_last_error_message() : ""))
      continue;
    const size_t room = cudafft_convolve_max_output(cv[k], CONV_FRAMES) + CONV_TAPS + 4096;
    out[k] = test_malloc(room * CONV_CHANNELS * sizeof(float));
    test_poison(out[k], room * CONV_CHANNELS);
    size_t produced = 0, tail = 0;
    status = cudafft_convolve_push(cv[k], signal.raw, CONV_FRAMES, out[k], &produced);
    if (status == CUDAFFT_STATUS_OK)
      status = cudafft_convolve_drain(cv[k], 1, out[k] + produced * CONV_CHANNELS, &tail);
    size_t first = 0;
    const size_t bad = test_count_nonfinite(out[k], values, &first);
    const double err = status == CUDAFFT_STATUS_OK ? rel_l2(out[k], ref, values) : INFINITY;
    ran[k] = test_check(status == CUDAFFT_STATUS_OK && produced + tail == total && bad == 0 &&
                            err <= CONV_TOLERANCE,
                        "convolve (%s): %zu taps on %u channels, %zu + %zu frames of %zu (%s), "
                        "rel L2 %.3g against the double sum (tol %.0e), %zu unwritten",
                        where[k], (size_t)CONV_TAPS, CONV_CHANNELS, produced, tail, total,
                        cudafft_status_name(status), err, CONV_TOLERANCE, bad);
  }
  if (ran[0] && ran[1]) {
    size_t at = 0;
    test_check(same_bytes(out[0], out[1], values * sizeof(float), &at),
               "convolve: the context's and device 0's agree bit for bit (first difference at "
               "value %zu)",
               at / sizeof(float));
  }
  for (int k = 0; k < 2; k++) {
    cudafft_convolve_destroy(cv[k]);
    free(out[k]);
  }
  free(ref);
  free(h);
  test_signal_clear(&signal);
}

/* Scope: host renders of both against the model; then the context's scope renders into device
 * memory of the context while device 0's renders to the host: every byte the same. */
#define SCOPE_W 96
#define SCOPE_H 64
#define SCOPE_BPP 4
#define PAD_BYTE 0xa5
#define PIXEL_TOLERANCE 1 /* test_scope.c's: the model is double, the scope float */
#define SCOPE_FRAMES 6

static void
check_scope(const int ids[2], void *context)
{
  const CudafftScopeConfig config = {
      .channels = 2,
      .rate = 48000,
      .format = CUDAFFT_SAMPLE_F32,
      .fft_size = 4096,
      .max_frames = 4096,
      .width = SCOPE_W,
      .height = SCOPE_H,
      .pixels = CUDAFFT_PIXELS_BGRX,
      .stride = SCOPE_W * SCOPE_BPP + 8,
      .frame_seconds = 1.0 / 60.0,
      .options = {.style = CUDAFFT_SCOPE_SPECTROGRAM,
                  .multi_channel = 1,
                  .scale = CUDAFFT_SCALE_LOG,
                  .bands_per_octave = 3,
                  .weighting = CUDAFFT_WEIGHTING_Z,
                  .db_min = -90.0f,
                  .db_max = 0.0f,
                  .colormap = CUDAFFT_COLORMAP_VIRIDIS,
                  .peak_hold_ms = 500.0f,
                  .peak_decay_db_per_s = 20.0f},
  };
  const size_t row = SCOPE_W * SCOPE_BPP, bytes = config.stride * SCOPE_H;
  TestRng rng = test_rng("scope");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 2, 48000, SCOPE_FRAMES * 800,
                     TEST_READ_POW2);
  CudafftScope *scope[2] = {NULL, NULL};
  uint8_t *got[2] = {test_malloc(bytes), test_malloc(bytes)};
  uint8_t *want = test_malloc(bytes);
  uint8_t *pitched = NULL;
  void *d_pixels = NULL;
  size_t pitch = 0;
  ScopeRef *model = scope_ref_new(&config);
  if (!model)
    test_abort("the scope model rejects the options");
  for (int k = 0; k < 2; k++) {
    const CudafftStatus status =
        cudafft_scope_create(&scope[k], CUDAFFT_BACKEND_CUDA, ids[k], &config);
    if (!test_check(status == CUDAFFT_STATUS_OK && cudafft_scope_get_device(scope[k]) == ids[k],
                    "scope (%s): create on id %d: %s (%s)", where[k], ids[k],
                    cudafft_status_name(status), status ? cudafft_last_error_message() : ""))
      goto done;
  }
  if (!drv(ctxdrv_alloc_pitch(context, row, SCOPE_H, &d_pixels, &pitch, why, WHY),
           "cuMemAllocPitch"))
    goto done;
  pitched = test_malloc(pitch * SCOPE_H);

  /* the argument checks, before any frame (a failed render resets the scope) */
  CudafftStatus status = cudafft_scope_render_device(scope[0], NULL, 0, NULL, pitch);
  test_check(status == CUDAFFT_STATUS_NULL_POINTER, "render_device(NULL pixels) -> %s",
             cudafft_status_name(status));
  status = cudafft_scope_render_device(scope[0], NULL, 0, d_pixels, row - 1);
  test_check(status == CUDAFFT_STATUS_INVALID_VALUE,
             "render_device(pitch %zu < row %zu) -> %s (%s)", row - 1, row,
             cudafft_status_name(status), cudafft_last_error_message());

  int worst = 0, differ = 0, pad_touched = 0;
  char first[200] = "";
  for (unsigned f = 0; f < SCOPE_FRAMES; f++) {
    const uint8_t *in = signal.raw + (size_t)f * 800 * test_signal_frame_bytes(&signal);
    const int on_device = f >= 2; /* the first frames on the host from both */
    memset(got[0], PAD_BYTE, bytes);
    memset(got[1], PAD_BYTE, bytes);
    if (on_device) {
      if (!drv(ctxdrv_fill(context, d_pixels, PAD_BYTE, pitch * SCOPE_H, why, WHY), "poison"))
        goto done;
      status = cudafft_scope_render_device(scope[0], in, 800, d_pixels, pitch);
      if (status == CUDAFFT_STATUS_OK &&
          !drv(ctxdrv_download(context, pitched, d_pixels, pitch * SCOPE_H, why, WHY), "download"))
        goto done;
      for (unsigned y = 0; status == CUDAFFT_STATUS_OK && y < SCOPE_H; y++) {
        memcpy(got[0] + (size_t)y * config.stride, pitched + (size_t)y * pitch, row);
        for (size_t i = row; i < pitch; i++)
          pad_touched += pitched[(size_t)y * pitch + i] != PAD_BYTE;
      }
    } else {
      status = cudafft_scope_render(scope[0], in, 800, got[0]);
    }
    const CudafftStatus status1 = cudafft_scope_render(scope[1], in, 800, got[1]);
    if (!test_check(status == CUDAFFT_STATUS_OK && status1 == CUDAFFT_STATUS_OK,
                    "scope frame %u: render%s (context) %s, render (device 0) %s (%s)", f,
                    on_device ? "_device" : "", cudafft_status_name(status),
                    cudafft_status_name(status1), cudafft_last_error_message()))
      goto done;
    scope_ref_render(model, signal.values + (size_t)f * 800 * 2, 800, want);
    for (unsigned y = 0; y < SCOPE_H; y++)
      for (size_t i = 0; i < config.stride; i++) {
        const size_t at = (size_t)y * config.stride + i;
        if (i >= row) {
          pad_touched += got[0][at] != PAD_BYTE || got[1][at] != PAD_BYTE;
          continue;
        }
        differ += got[0][at] != got[1][at];
        for (int k = 0; k < 2; k++) {
          const int d = abs((int)got[k][at] - (int)want[at]);
          if (d > worst) {
            worst = d;
            snprintf(first, sizeof first, "frame %u (%s) pixel (%zu, %u) byte %zu: %d, model %d", f,
                     where[k], i / SCOPE_BPP, y, i % SCOPE_BPP, got[k][at], want[at]);
          }
        }
      }
  }
  test_check(worst <= PIXEL_TOLERANCE,
             "scope: %d frames of both (frames 2.. of the context's drawn into its device memory) "
             "within %d of the model%s%s",
             SCOPE_FRAMES, PIXEL_TOLERANCE, worst ? "; largest: " : "", first);
  test_check(differ == 0,
             "scope: the context's frames (host and device memory) and device 0's agree byte for "
             "byte (%d differ)",
             differ);
  test_check(pad_touched == 0, "scope: no row padding written (host stride, device pitch %zu): %d",
             pitch, pad_touched);
done:
  for (int k = 0; k < 2; k++) {
    cudafft_scope_destroy(scope[k]);
    free(got[k]);
  }
  if (d_pixels)
    drv(ctxdrv_free(context, d_pixels, why, WHY), "cuMemFree");
  free(pitched);
  free(want);
  scope_ref_free(model);
  test_signal_clear(&signal);
}

/* A plan made on one thread with the context current, run on another whose current context is
 * device 0's primary. */
typedef struct {
  int id;
  void *context, *primary;
  CudafftPlan *plan;
  char why[WHY];
  int ok;
} Handoff;

static void *
make_in_context(void *arg)
{
  Handoff *h = arg;
  h->ok = ctxdrv_set_current(h->context, h->why, WHY);
  if (h->ok && cudafft_plan_create(&h->plan, CUDAFFT_BACKEND_CUDA, h->id, CUDAFFT_R2C, FFT_N) !=
                   CUDAFFT_STATUS_OK) {
    snprintf(h->why, WHY, "plan_create: %s", cudafft_last_error_message());
    h->ok = 0;
  }
  return NULL;
}

static void *
run_in_primary(void *arg)
{
  Handoff *h = arg;
  h->ok = ctxdrv_set_current(h->primary, h->why, WHY);
  if (!h->ok)
    return NULL;
  const size_t in_floats = FFT_BATCH * FFT_N, out_floats = FFT_BATCH * (FFT_N + 2);
  float *in = test_malloc(in_floats * sizeof(float));
  float *out = test_malloc((out_floats + FFT_GUARD_FLOATS) * sizeof(float));
  double *ref = test_malloc(out_floats * sizeof(double));
  TestRng rng = test_rng("handoff");
  test_rng_fill(&rng, in, in_floats);
  if (fft_reference(CUDAFFT_R2C, CUDAFFT_FORWARD, FFT_N, in, FFT_BATCH, ref) != 0)
    test_abort("FFTW double could not plan n=%d", FFT_N);
  fft_check_execute(h->plan, CUDAFFT_FORWARD, in, out, FFT_BATCH, 1.0f, ref, fft_tolerance(FFT_N),
                    "a plan made on another thread in the context, run on a thread whose "
                    "current context was device 0's primary");
  void *current = NULL;
  h->ok = ctxdrv_get_current(&current, h->why, WHY);
  if (h->ok)
    test_check(current == h->primary,
               "the call left the caller's context (device 0's primary) current on the calling "
               "thread, not the plan's (cudafft/common.h, The caller's context)");
  free(in);
  free(out);
  free(ref);
  return NULL;
}

static void
check_threads(int id, void *context, void *primary)
{
  Handoff h = {.id = id, .context = context, .primary = primary};
  pthread_t thread;
  if (pthread_create(&thread, NULL, make_in_context, &h) != 0)
    test_abort("pthread_create");
  pthread_join(thread, NULL);
  if (!test_check(h.ok, "a plan made on a thread with the context current: %s",
                  h.ok ? "made" : h.why))
    return;
  if (pthread_create(&thread, NULL, run_in_primary, &h) != 0)
    test_abort("pthread_create");
  pthread_join(thread, NULL);
  test_check(h.ok, "the thread with the primary context current: %s", h.ok ? "ran" : h.why);
  cudafft_plan_destroy(h.plan);
}

static int
load_is(unsigned want_objects, int want_zero_bytes, const char *when)
{
  unsigned objects = 0;
  size_t bytes = 0;
  const CudafftStatus status = cudafft_cuda_device_load(0, &objects, &bytes);
  return test_check(status == CUDAFFT_STATUS_OK && objects == want_objects &&
                        (!want_zero_bytes || bytes == 0),
                    "%s: device 0's load %u objects (want %u), %zu state bytes%s", when, objects,
                    want_objects, bytes, want_zero_bytes ? " (want 0)" : "");
}

static void
check_cuda(void)
{
  void *context = NULL, *primary = NULL;
  if (!drv(ctxdrv_create(0, &context, why, WHY), "cuCtxCreate on device 0") ||
      !drv(ctxdrv_primary(0, &primary, why, WHY), "device 0's primary context"))
    return;
  test_check(context != primary, "cuCtxCreate made a context other than the primary one");
  load_is(0, 1, "before any object");

  int id = -1, again = -1, primary_id = -1;
  CudafftStatus status = cudafft_cuda_context_attach(context, &id);
  if (!test_check(status == CUDAFFT_STATUS_OK && id >= CUDAFFT_CONTEXT_ID_BASE,
                  "attach(the new context) -> %s, id %d (>= %d) (%s)", cudafft_status_name(status),
                  id, CUDAFFT_CONTEXT_ID_BASE, status ? cudafft_last_error_message() : ""))
    return;
  status = cudafft_cuda_context_attach(context, &again);
  test_check(status == CUDAFFT_STATUS_OK && again == id, "attach it again -> %s, the same id (%d)",
             cudafft_status_name(status), again);
  status = cudafft_cuda_context_attach(primary, &primary_id);
  test_check(status == CUDAFFT_STATUS_OK && primary_id == 0,
             "attach(device 0's primary context) -> %s, id %d (want 0)",
             cudafft_status_name(status), primary_id);
  cudafft_cuda_context_detach(primary_id); /* nothing to give back */
  void *library_primary = NULL, *before = NULL, *after = NULL;
  drv(ctxdrv_set_current(context, why, WHY), "making the context current");
  drv(ctxdrv_get_current(&before, why, WHY), "cuCtxGetCurrent");
  status = cudafft_cuda_primary_context(0, &library_primary);
  drv(ctxdrv_get_current(&after, why, WHY), "cuCtxGetCurrent");
  test_check(status == CUDAFFT_STATUS_OK && library_primary == primary && after == before,
             "primary_context(0) -> %s: device 0's primary context, the caller's context kept",
             cudafft_status_name(status));
  test_check(cudafft_cuda_context_device(id) == 0 && cudafft_cuda_context_device(0) == 0,
             "context_device(%d) == 0 (got %d), context_device(0) == 0", id,
             cudafft_cuda_context_device(id));
  cudafft_cuda_context_detach(again); /* one of the two references */
  test_check(cudafft_cuda_context_device(id) == 0,
             "one detach of two: the id still names the context (%d)",
             cudafft_cuda_context_device(id));

  const int ids[2] = {id, 0};
  check_fft(ids, context);
  check_stft(ids);
  check_spectrum(ids);
  check_convolve(ids);
  check_scope(ids, context);
  check_threads(id, context, primary);

  /* every engine's objects at once: their load is device 0's */
  const CudafftStftConfig stft_config = {.fft_size = STFT_N,
                                         .hop = STFT_HOP,
                                         .channels = 1,
                                         .window = CUDAFFT_WINDOW_HANN,
                                         .representation = CUDAFFT_REPRESENTATION_COMPLEX,
                                         .format = CUDAFFT_SAMPLE_F32};
  CudafftPlan *plan = NULL;
  CudafftStft *stft = NULL;
  status = cudafft_plan_create(&plan, CUDAFFT_BACKEND_CUDA, id, CUDAFFT_C2C, 1024);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_stft_create(&stft, CUDAFFT_BACKEND_CUDA, id, &stft_config);
  if (test_check(status == CUDAFFT_STATUS_OK, "two objects in the context: %s",
                 cudafft_status_name(status)))
    load_is(2, 0, "with two objects in the context");
  cudafft_plan_destroy(plan);
  cudafft_stft_destroy(stft);

  cudafft_cuda_context_detach(id);
  test_check(cudafft_cuda_context_device(id) == -1,
             "after the last detach the id names nothing (context_device %d)",
             cudafft_cuda_context_device(id));
  CudafftPlan *stale = (CudafftPlan *)&id;
  status = cudafft_plan_create(&stale, CUDAFFT_BACKEND_AUTO, id, CUDAFFT_C2C, 1024);
  test_check_create(status, stale, CUDAFFT_STATUS_NO_DEVICE, CUDAFFT_STATUS_NO_DEVICE,
                    "plan_create", "auto, a detached context id");
  if (drv(ctxdrv_destroy(context, why, WHY), "cuCtxDestroy"))
    load_is(0, 1, "after every object is destroyed, the id detached and the context destroyed");
}

#endif /* TEST_HAVE_CONTEXT_DRIVER */

int
main(int argc, char **argv)
{
  const CudafftBackend backend = test_begin(argc, argv);
  if (backend == CUDAFFT_BACKEND_CPU) {
    check_cpu();
    return test_finish();
  }
#if TEST_HAVE_CONTEXT_DRIVER
  check_cuda();
#else
  test_abort("built without CUDA: only the cpu part exists");
#endif
  return test_finish();
}
