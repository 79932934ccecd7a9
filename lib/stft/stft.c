/* stft.c: the STFT API's front end: validation, the window tables both backends use, the frame
 * bookkeeping, and the choice of backend. */
#include "api_getter.h"
#include "backend_choice.h"
#include "device_pointer.h"
#include "device_samples.h"
#include "executor.h"
#include "sizes.h"
#include "stft_backend.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

struct CudafftStft {
  CudafftStftConfig config;
  CudafftBackend backend;
  int device; /* the CUDA device it runs on, -1 for the CPU backend */
  const CudafftStftBackend *ops;
  void *impl;
  size_t held;                  /* samples per channel kept for frames not yet complete */
  CudafftCheckedMemory checked; /* device memory that passed (push_device) */
};

struct CudafftIstft {
  CudafftStftConfig config;
  CudafftBackend backend;
  int device; /* the CUDA device it runs on, -1 for the CPU backend */
  const CudafftIstftBackend *ops;
  void *impl;
  CudafftCheckedMemory checked; /* device memory that passed (push_device, drain_device) */
};

static const char *const window_names[CUDAFFT_WINDOW_COUNT_] = {"rectangular", "hann", "hamming",
                                                                "blackman", "blackman-harris"};

double
cudafft_window_value(CudafftWindow window, size_t n, size_t i)
{
  static const double coefficients[CUDAFFT_WINDOW_COUNT_][4] = {
      [CUDAFFT_WINDOW_RECTANGULAR] = {1.0, 0.0, 0.0, 0.0},
      [CUDAFFT_WINDOW_HANN] = {0.5, 0.5, 0.0, 0.0},
      [CUDAFFT_WINDOW_HAMMING] = {0.54, 0.46, 0.0, 0.0},
      [CUDAFFT_WINDOW_BLACKMAN] = {0.42, 0.5, 0.08, 0.0},
      [CUDAFFT_WINDOW_BLACKMAN_HARRIS] = {0.35875, 0.48829, 0.14128, 0.01168},
  };
  if ((unsigned)window >= CUDAFFT_WINDOW_COUNT_ || n == 0)
    return 0.0;
  const double *a = coefficients[window];
  const double two_pi = 6.283185307179586476925286766559;
  const double phase = two_pi * (double)(i % n) / (double)n;
  return a[0] - a[1] * cos(phase) + a[2] * cos(2.0 * phase) - a[3] * cos(3.0 * phase);
}

/* S[r] = sum_j w[r + j hop]^2 for r < hop, into s (hop doubles). */
static void
overlap_sums(CudafftWindow window, size_t n, size_t hop, double *s)
{
  for (size_t r = 0; r < hop; r++)
    s[r] = 0.0;
  for (size_t i = 0; i < n; i++) {
    const double w = cudafft_window_value(window, n, i);
    s[i % hop] += w * w;
  }
}

CudafftStatus
cudafft_stft_check_synthesis(CudafftWindow window, size_t fft_size, size_t hop, double *ratio)
{
  const CudafftStatus size_status = cudafft_check_size(fft_size, "fft size");
  if (size_status != CUDAFFT_STATUS_OK)
    return size_status;
  if ((unsigned)window >= CUDAFFT_WINDOW_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown window %d", (int)window);
  if (hop == 0 || hop > fft_size)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "hop %zu is not in 1..%zu", hop, fft_size);
  double *s = malloc(hop * sizeof *s);
  if (!s)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate %zu overlap sums", hop);
  overlap_sums(window, fft_size, hop, s);
  double lo = s[0], hi = s[0];
  for (size_t r = 1; r < hop; r++) {
    lo = s[r] < lo ? s[r] : lo;
    hi = s[r] > hi ? s[r] : hi;
  }
  free(s);
  if (ratio)
    *ratio = hi > 0.0 ? lo / hi : 0.0;
  /* Where the frames' squared windows add up to almost nothing, dividing by that sum magnifies
   * float rounding by the same factor: 1% keeps reconstruction errors near 1e-6. */
  if (!(lo >= 0.01 * hi))
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "the %s window at fft size %zu and hop %zu cannot be inverted: the "
                        "overlapping windows add up to %.3g%% of their peak at places (at least "
                        "1%% is needed); use a smaller hop or another window",
                        window_names[window], fft_size, hop, hi > 0.0 ? 100.0 * lo / hi : 0.0);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
check_config(const void *args)
{
  const CudafftStftConfig *config = args;
  const CudafftStatus size_status = cudafft_check_size(config->fft_size, "fft size");
  if (size_status != CUDAFFT_STATUS_OK)
    return size_status;
  if (config->hop == 0 || config->hop > config->fft_size)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "hop %zu is not in 1..%zu (the fft size)",
                        config->hop, config->fft_size);
  if (config->channels == 0 || config->channels > CUDAFFT_MAX_CHANNELS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%u channels is not in 1..%d",
                        config->channels, CUDAFFT_MAX_CHANNELS);
  if ((unsigned)config->window >= CUDAFFT_WINDOW_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown window %d", (int)config->window);
  if ((unsigned)config->representation >= CUDAFFT_REPRESENTATION_COUNT_)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown representation %d",
                        (int)config->representation);
  if ((unsigned)config->format >= CUDAFFT_SAMPLE_COUNT_ || config->format == CUDAFFT_SAMPLE_S24)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "the STFT takes S16, S32, F32 or F64 samples, not format %d",
                        (int)config->format);
  return CUDAFFT_STATUS_OK;
}

CUDAFFT_DEFINE_TRY_BACKEND(try_analysis, CudafftStft, CudafftStftSpec, cudafft_stft_cpu_backend,
                           cudafft_stft_cuda_backend)
CUDAFFT_DEFINE_TRY_BACKEND(try_synthesis, CudafftIstft, CudafftStftSpec, cudafft_istft_cpu_backend,
                           cudafft_istft_cuda_backend)

/* g[i] = w[i] / (n S[i mod hop]): the synthesis window with the inverse DFT's 1/n folded in. */
static CudafftStatus
make_synthesis_window(const CudafftStftConfig *config, float *g)
{
  const size_t n = config->fft_size, hop = config->hop;
  double *s = malloc(hop * sizeof *s);
  if (!s)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate %zu overlap sums", hop);
  overlap_sums(config->window, n, hop, s);
  for (size_t i = 0; i < n; i++)
    g[i] = (float)(cudafft_window_value(config->window, n, i) / ((double)n * s[i % hop]));
  free(s);
  return CUDAFFT_STATUS_OK;
}

/* Makes the backend object of an analyser or a synthesiser (object, made by try_backend) for
 * config, with its window: the analysis window, or the synthesis window g. */
static CudafftStatus
create_backend_object(CudafftTryBackend try_backend, void *object, int synthesis,
                      CudafftBackend backend, int device_id, const CudafftStftConfig *config,
                      CudafftBackend *actual, int *device)
{
  const size_t n = config->fft_size;
  float *window = malloc(n * sizeof *window);
  if (!window)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a %zu-point window", n);
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if (synthesis)
    status = make_synthesis_window(config, window);
  else
    for (size_t i = 0; i < n; i++)
      window[i] = (float)cudafft_window_value(config->window, n, i);
  const CudafftStftSpec spec = {*config, window, device_id};
  if (status == CUDAFFT_STATUS_OK)
    status =
        cudafft_create_on_backend(backend, device_id, try_backend, object, &spec, actual, device);
  free(window); /* the backend keeps its own copy */
  return status;
}

CudafftStatus
cudafft_stft_create(CudafftStft **stft_out, CudafftBackend backend, int device_id,
                    const CudafftStftConfig *config)
{
  CudafftStatus status =
      cudafft_check_create((void **)stft_out, "cudafft_stft_create: stft", config, "STFT config",
                           check_config, backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  CudafftStft *stft = calloc(1, sizeof *stft);
  if (!stft)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate an STFT analyser");
  stft->config = *config;
  status = create_backend_object(try_analysis, stft, 0, backend, device_id, config, &stft->backend,
                                 &stft->device);
  return cudafft_publish((void **)stft_out, stft, status, free);
}

/* Releases an analyser or a synthesiser: its backend object (destroy, its table's), then it. */
static void
release(void *object, void (*destroy)(void *impl), void *impl)
{
  destroy(impl);
  free(object);
}

void
cudafft_stft_destroy(CudafftStft *stft)
{
  if (stft)
    release(stft, stft->ops->destroy, stft->impl);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_stft_get_backend, CudafftStft, object->backend,
                      CUDAFFT_BACKEND_AUTO)
CUDAFFT_DEFINE_GETTER(int, cudafft_stft_get_device, CudafftStft, object->device, -1)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_stft_frame_floats, CudafftStft,
                      cudafft_stft_frame_floats_of(&object->config), 0)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_stft_held, CudafftStft, object->held, 0)

size_t
cudafft_stft_frames_for(const CudafftStft *stft, size_t samples)
{
  if (!stft)
    return 0;
  const size_t total = stft->held + samples;
  const size_t n = stft->config.fft_size;
  return total < n ? 0 : (total - n) / stft->config.hop + 1;
}

/* cudafft_stft_push and _push_device: in and out where on_device (CudafftMemory) says. */
static CudafftStatus
stft_push(CudafftStft *stft, const void *in, size_t samples, float *out, size_t *frames,
          unsigned on_device, const CudafftFence *after, CudafftFence *done)
{
  if (frames)
    *frames = 0;
  if (done)
    *done = (CudafftFence){0, 0};
  if (!stft)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_stft_push: stft is NULL");
  const CudafftStatus checked =
      cudafft_device_samples_check_flags(on_device, stft->backend, "cudafft_stft_push_device");
  if (checked != CUDAFFT_STATUS_OK)
    return checked;
  if (samples > SIZE_MAX / 8 / CUDAFFT_MAX_CHANNELS) {
    stft->held = 0; /* as documented: every failure resets */
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "cudafft_stft_push: %zu samples is too many",
                        samples);
  }
  const int in_on_device = in && (on_device & CUDAFFT_IN_DEVICE);
  CudafftFence order;
  const CudafftStatus ordered = cudafft_fence_order(after, in_on_device, &order);
  if (ordered != CUDAFFT_STATUS_OK)
    return ordered;
  if (samples == 0)
    return CUDAFFT_STATUS_OK;
  const size_t count = cudafft_stft_frames_for(stft, samples);
  if (count > 0 && !out) {
    stft->held = 0;
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_stft_push: out is NULL but %zu frames are complete", count);
  }
  const size_t in_bytes =
      samples * stft->config.channels * cudafft_sample_bytes(stft->config.format);
  const size_t out_bytes = count * cudafft_stft_frame_floats_of(&stft->config) * sizeof(float);
  const CudafftStatus placed =
      cudafft_device_pointers_check(&stft->checked, stft->device, on_device, in, in_bytes, out,
                                    out_bytes, "cudafft_stft_push_device");
  if (placed != CUDAFFT_STATUS_OK) {
    stft->held = 0; /* as documented: every failure resets */
    return placed;
  }
  const CudafftStftJob job = {.in = in,
                              .samples = samples,
                              .held = stft->held,
                              .out = out,
                              .frames = count,
                              .out_on_device = (on_device & CUDAFFT_OUT_DEVICE) != 0,
                              .in_on_device = in_on_device,
                              .after = order,
                              .done = on_device & CUDAFFT_OUT_DEVICE ? done : NULL};
  const CudafftStatus status = stft->ops->run(stft->impl, &job);
  if (status != CUDAFFT_STATUS_OK) {
    stft->held = 0; /* a failed push may have consumed part of its samples */
    return status;
  }
  stft->held = stft->held + samples - count * stft->config.hop;
  if (frames)
    *frames = count;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_stft_push(CudafftStft *stft, const void *in, size_t samples, float *out, size_t *frames)
{
  return stft_push(stft, in, samples, out, frames, 0, NULL, NULL);
}

CudafftStatus
cudafft_stft_push_device(CudafftStft *stft, const void *in, size_t samples, float *out,
                         size_t *frames, unsigned on_device, const CudafftFence *after,
                         CudafftFence *done)
{
  return stft_push(stft, in, samples, out, frames, on_device, after, done);
}

void
cudafft_stft_reset(CudafftStft *stft)
{
  if (!stft)
    return;
  stft->held = 0;
  cudafft_checked_memory_forget(&stft->checked);
  stft->ops->reset(stft->impl); /* nothing to report: held is 0 whatever it says */
}

CudafftStatus
cudafft_istft_create(CudafftIstft **istft_out, CudafftBackend backend, int device_id,
                     const CudafftStftConfig *config)
{
  CudafftStatus status =
      cudafft_check_create((void **)istft_out, "cudafft_istft_create: istft", config, "STFT config",
                           check_config, backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (config->representation != CUDAFFT_REPRESENTATION_COMPLEX)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "synthesis needs complex frames (magnitudes, powers and dB have lost the "
                        "phase)");
  status = cudafft_stft_check_synthesis(config->window, config->fft_size, config->hop, NULL);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CudafftIstft *istft = calloc(1, sizeof *istft);
  if (!istft)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate an STFT synthesiser");
  istft->config = *config;
  status = create_backend_object(try_synthesis, istft, 1, backend, device_id, config,
                                 &istft->backend, &istft->device);
  return cudafft_publish((void **)istft_out, istft, status, free);
}

void
cudafft_istft_destroy(CudafftIstft *istft)
{
  if (istft)
    release(istft, istft->ops->destroy, istft->impl);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_istft_get_backend, CudafftIstft, object->backend,
                      CUDAFFT_BACKEND_AUTO)
CUDAFFT_DEFINE_GETTER(int, cudafft_istft_get_device, CudafftIstft, object->device, -1)

/* cudafft_istft_push and _push_device: in and out where on_device (CudafftMemory) says. */
static CudafftStatus
istft_push(CudafftIstft *istft, const float *in, size_t frames, float *out, unsigned on_device,
           const CudafftFence *after, CudafftFence *done)
{
  if (done)
    *done = (CudafftFence){0, 0};
  if (!istft)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_push: istft is NULL");
  const CudafftStatus checked =
      cudafft_device_samples_check_flags(on_device, istft->backend, "cudafft_istft_push_device");
  if (checked != CUDAFFT_STATUS_OK)
    return checked;
  const int in_on_device = (on_device & CUDAFFT_IN_DEVICE) != 0;
  CudafftFence order;
  const CudafftStatus ordered =
      cudafft_fence_order(after, in_on_device && frames > 0, &order);
  if (ordered != CUDAFFT_STATUS_OK)
    return ordered;
  if (frames == 0)
    return CUDAFFT_STATUS_OK;
  if (!in || !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_push: %s is NULL",
                        !in ? "in" : "out");
  if (frames > SIZE_MAX / 8 / CUDAFFT_MAX_CHANNELS / CUDAFFT_MAX_SIZE)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "cudafft_istft_push: %zu frames is too many",
                        frames);
  const size_t channels = istft->config.channels;
  const CudafftStatus placed = cudafft_device_pointers_check(
      &istft->checked, istft->device, on_device, in,
      frames * cudafft_stft_frame_floats_of(&istft->config) * sizeof(float), out,
      frames * istft->config.hop * channels * sizeof(float), "cudafft_istft_push_device");
  if (placed != CUDAFFT_STATUS_OK)
    return placed;
  const CudafftIstftJob job = {.in = in,
                               .frames = frames,
                               .out = out,
                               .in_on_device = in_on_device,
                               .out_on_device = (on_device & CUDAFFT_OUT_DEVICE) != 0,
                               .after = order,
                               .done = on_device & CUDAFFT_OUT_DEVICE ? done : NULL};
  return istft->ops->run(istft->impl, &job);
}

CudafftStatus
cudafft_istft_push(CudafftIstft *istft, const float *in, size_t frames, float *out)
{
  return istft_push(istft, in, frames, out, 0, NULL, NULL);
}

CudafftStatus
cudafft_istft_push_device(CudafftIstft *istft, const float *in, size_t frames, float *out,
                          unsigned on_device, const CudafftFence *after, CudafftFence *done)
{
  return istft_push(istft, in, frames, out, on_device, after, done);
}

CudafftStatus
cudafft_istft_drain(CudafftIstft *istft, float *out)
{
  if (!istft || !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_drain: %s is NULL",
                        !istft ? "istft" : "out");
  const CudafftIstftJob job = {.out = out, .drain = 1};
  return istft->ops->run(istft->impl, &job);
}

CudafftStatus
cudafft_istft_drain_device(CudafftIstft *istft, float *out)
{
  if (!istft || !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_drain_device: %s is NULL",
                        !istft ? "istft" : "out");
  const CudafftStatus checked = cudafft_device_samples_check_flags(
      CUDAFFT_OUT_DEVICE, istft->backend, "cudafft_istft_drain_device");
  if (checked != CUDAFFT_STATUS_OK)
    return checked;
  const CudafftStatus placed = cudafft_device_pointer_check(
      &istft->checked, istft->device, out,
      (istft->config.fft_size - istft->config.hop) * istft->config.channels * sizeof(float),
      "cudafft_istft_drain_device", "output");
  if (placed != CUDAFFT_STATUS_OK)
    return placed;
  const CudafftIstftJob job = {.out = out, .drain = 1, .out_on_device = 1};
  return istft->ops->run(istft->impl, &job);
}

void
cudafft_istft_reset(CudafftIstft *istft)
{
  if (!istft)
    return;
  cudafft_checked_memory_forget(&istft->checked);
  istft->ops->reset(istft->impl); /* the API's reset reports nothing */
}
