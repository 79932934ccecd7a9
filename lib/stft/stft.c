/* stft.c: the STFT API's front end: validation, the window tables both backends use, the frame
 * bookkeeping, and the choice of backend. */
#include "backend_choice.h"
#include "sizes.h"
#include "stft_backend.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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
check_config(const CudafftStftConfig *config)
{
  if (!config)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "STFT config is NULL");
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

/* What the backend tries of a creation need. */
typedef struct {
  void *object; /* the CudafftStft or CudafftIstft being made */
  int device_id;
} Creation;

static CudafftStatus
analysis_init(void *context, CudafftBackend backend)
{
  const Creation *c = context;
  CudafftStft *stft = c->object;
  const CudafftStftOps *ops =
      CUDAFFT_BACKEND_TABLE(backend, cudafft_stft_cpu_ops, cudafft_stft_cuda_ops);
  if (!ops)
    return cudafft_no_cuda_backend();
  stft->backend = backend;
  stft->ops = ops;
  return ops->analysis_init(stft, c->device_id);
}

CudafftStatus
cudafft_stft_create(CudafftStft **stft_out, CudafftBackend backend, int device_id,
                    const CudafftStftConfig *config)
{
  if (!stft_out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_stft_create: stft is NULL");
  *stft_out = NULL;
  CudafftStatus status = check_config(config);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_check_backend(backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CudafftStft *stft = calloc(1, sizeof *stft);
  float *window = malloc(config->fft_size * sizeof *window);
  if (!stft || !window) {
    free(stft);
    free(window);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate an STFT analyser");
  }
  stft->config = *config;
  stft->window = window;
  for (size_t i = 0; i < config->fft_size; i++)
    window[i] = (float)cudafft_window_value(config->window, config->fft_size, i);

  Creation creation = {stft, device_id};
  status = cudafft_create_on_backend(backend, analysis_init, &creation, NULL);
  if (status != CUDAFFT_STATUS_OK) {
    free(window);
    free(stft);
    return status;
  }
  *stft_out = stft;
  return CUDAFFT_STATUS_OK;
}

void
cudafft_stft_destroy(CudafftStft *stft)
{
  if (!stft)
    return;
  stft->ops->analysis_fini(stft);
  free(stft->window);
  free(stft);
}

CudafftBackend
cudafft_stft_get_backend(const CudafftStft *stft)
{
  return stft ? stft->backend : CUDAFFT_BACKEND_AUTO;
}

size_t
cudafft_stft_frame_floats(const CudafftStft *stft)
{
  if (!stft)
    return 0;
  return stft->config.channels * cudafft_stft_bins(&stft->config) *
         cudafft_stft_bin_floats(stft->config.representation);
}

size_t
cudafft_stft_held(const CudafftStft *stft)
{
  return stft ? stft->held : 0;
}

size_t
cudafft_stft_frames_for(const CudafftStft *stft, size_t samples)
{
  if (!stft)
    return 0;
  const size_t total = stft->held + samples;
  const size_t n = stft->config.fft_size;
  return total < n ? 0 : (total - n) / stft->config.hop + 1;
}

CudafftStatus
cudafft_stft_push(CudafftStft *stft, const void *in, size_t samples, float *out, size_t *frames)
{
  if (frames)
    *frames = 0;
  if (!stft)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_stft_push: stft is NULL");
  if (samples > SIZE_MAX / 8 / CUDAFFT_MAX_CHANNELS) {
    stft->held = 0; /* as documented: every failure resets */
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "cudafft_stft_push: %zu samples is too many",
                        samples);
  }
  if (samples == 0)
    return CUDAFFT_STATUS_OK;
  const size_t count = cudafft_stft_frames_for(stft, samples);
  if (count > 0 && !out) {
    stft->held = 0;
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_stft_push: out is NULL but %zu frames are complete", count);
  }
  const CudafftStatus status = stft->ops->analysis_push(stft, in, samples, out, count);
  if (status != CUDAFFT_STATUS_OK) {
    stft->held = 0; /* a failed push may have consumed part of its samples */
    return status;
  }
  stft->held = stft->held + samples - count * stft->config.hop;
  if (frames)
    *frames = count;
  return CUDAFFT_STATUS_OK;
}

void
cudafft_stft_reset(CudafftStft *stft)
{
  if (stft)
    stft->held = 0;
}

static CudafftStatus
synthesis_init(void *context, CudafftBackend backend)
{
  const Creation *c = context;
  CudafftIstft *istft = c->object;
  const CudafftStftOps *ops =
      CUDAFFT_BACKEND_TABLE(backend, cudafft_stft_cpu_ops, cudafft_stft_cuda_ops);
  if (!ops)
    return cudafft_no_cuda_backend();
  istft->backend = backend;
  istft->ops = ops;
  return ops->synthesis_init(istft, c->device_id);
}

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

CudafftStatus
cudafft_istft_create(CudafftIstft **istft_out, CudafftBackend backend, int device_id,
                     const CudafftStftConfig *config)
{
  if (!istft_out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_create: istft is NULL");
  *istft_out = NULL;
  CudafftStatus status = check_config(config);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_check_backend(backend, device_id);
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
  float *g = malloc(config->fft_size * sizeof *g);
  if (!istft || !g) {
    free(istft);
    free(g);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate an STFT synthesiser");
  }
  istft->config = *config;
  istft->synthesis = g;
  status = make_synthesis_window(config, g);
  if (status == CUDAFFT_STATUS_OK) {
    Creation creation = {istft, device_id};
    status = cudafft_create_on_backend(backend, synthesis_init, &creation, NULL);
  }
  if (status != CUDAFFT_STATUS_OK) {
    free(g);
    free(istft);
    return status;
  }
  *istft_out = istft;
  return CUDAFFT_STATUS_OK;
}

void
cudafft_istft_destroy(CudafftIstft *istft)
{
  if (!istft)
    return;
  istft->ops->synthesis_fini(istft);
  free(istft->synthesis);
  free(istft);
}

CudafftBackend
cudafft_istft_get_backend(const CudafftIstft *istft)
{
  return istft ? istft->backend : CUDAFFT_BACKEND_AUTO;
}

CudafftStatus
cudafft_istft_push(CudafftIstft *istft, const float *in, size_t frames, float *out)
{
  if (!istft)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_push: istft is NULL");
  if (frames == 0)
    return CUDAFFT_STATUS_OK;
  if (!in || !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_push: %s is NULL",
                        !in ? "in" : "out");
  if (frames > SIZE_MAX / 8 / CUDAFFT_MAX_CHANNELS / CUDAFFT_MAX_SIZE)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "cudafft_istft_push: %zu frames is too many",
                        frames);
  return istft->ops->synthesis_push(istft, in, frames, out);
}

CudafftStatus
cudafft_istft_drain(CudafftIstft *istft, float *out)
{
  if (!istft || !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_istft_drain: %s is NULL",
                        !istft ? "istft" : "out");
  return istft->ops->synthesis_drain(istft, out);
}

void
cudafft_istft_reset(CudafftIstft *istft)
{
  if (istft)
    istft->ops->synthesis_reset(istft);
}
