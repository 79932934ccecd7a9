/* stft_cpu.c: the STFT's CPU backend, on FFTW single precision: the reference the GStreamer
 * elements fall back to where there is no GPU, and what CI runs. */
#define _POSIX_C_SOURCE 200809L

#include "errors.h"
#include "fftw_planner.h"
#include "stft_backend.h"
#include "stft_values.h"

#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  fftwf_plan plan;
  float *real;         /* n samples: the windowed frame (analysis) or the inverse's output */
  fftwf_complex *bins; /* n/2 + 1 bins */
  float *signal;       /* analysis: channels rows of `capacity` planar samples */
  size_t capacity;     /* analysis: samples per row */
  float *acc;          /* synthesis: channels rows of n overlap-add sums, from the next output */
} CpuStft;

static void
cpu_stft_free(CpuStft *impl)
{
  if (!impl)
    return;
  cudafft_fftw_planner_lock();
  if (impl->plan)
    fftwf_destroy_plan(impl->plan);
  cudafft_fftw_planner_unlock();
  fftwf_free(impl->real);
  fftwf_free(impl->bins);
  free(impl->signal);
  free(impl->acc);
  free(impl);
}

static CudafftStatus
cpu_stft_new(const CudafftStftConfig *config, int forward, CpuStft **out)
{
  const int n = (int)config->fft_size;
  CpuStft *impl = calloc(1, sizeof *impl);
  if (!impl)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "CPU backend: cannot allocate an STFT");
  impl->real = fftwf_malloc((size_t)n * sizeof(float));
  impl->bins = fftwf_malloc(((size_t)n / 2 + 1) * sizeof(fftwf_complex));
  if (impl->real && impl->bins) {
    /* Our own aligned arrays, so FFTW may use SIMD; FFTW_ESTIMATE plans at once (elements create
     * these on every caps change). */
    cudafft_fftw_planner_lock();
    impl->plan = forward ? fftwf_plan_dft_r2c_1d(n, impl->real, impl->bins, FFTW_ESTIMATE)
                         : fftwf_plan_dft_c2r_1d(n, impl->bins, impl->real, FFTW_ESTIMATE);
    cudafft_fftw_planner_unlock();
  }
  if (!impl->plan) {
    cpu_stft_free(impl);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot plan a %d-point real transform", n);
  }
  *out = impl;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_analysis_init(CudafftStft *stft, int device_id)
{
  (void)device_id;
  CpuStft *impl = NULL;
  const CudafftStatus status = cpu_stft_new(&stft->config, 1, &impl);
  stft->impl = impl;
  return status;
}

static void
cpu_analysis_fini(CudafftStft *stft)
{
  cpu_stft_free(stft->impl);
  stft->impl = NULL;
}

/* Makes room for `total` samples per row, keeping the first `held` of each. */
static CudafftStatus
reserve_rows(CpuStft *impl, unsigned channels, size_t held, size_t total)
{
  if (total <= impl->capacity)
    return CUDAFFT_STATUS_OK;
  const size_t capacity = total + total / 2;
  float *signal = malloc(capacity * channels * sizeof *signal);
  if (!signal)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot hold %zu samples of %u channels", capacity, channels);
  for (unsigned c = 0; c < channels && held > 0; c++)
    memcpy(signal + c * capacity, impl->signal + c * impl->capacity, held * sizeof *signal);
  free(impl->signal);
  impl->signal = signal;
  impl->capacity = capacity;
  return CUDAFFT_STATUS_OK;
}

static void
store_bins(const fftwf_complex *bins, size_t count, CudafftRepresentation representation,
           float *out)
{
  for (size_t k = 0; k < count; k++) {
    const float re = bins[k][0], im = bins[k][1];
    if (representation == CUDAFFT_REPRESENTATION_COMPLEX) {
      out[2 * k] = re;
      out[2 * k + 1] = im;
    } else {
      out[k] = cudafft_bin_value(representation, re * re + im * im);
    }
  }
}

static CudafftStatus
cpu_analysis_push(CudafftStft *stft, const void *in, size_t samples, float *out, size_t frames)
{
  CpuStft *impl = stft->impl;
  const CudafftStftConfig *config = &stft->config;
  const unsigned channels = config->channels;
  const size_t n = config->fft_size, hop = config->hop, held = stft->held;
  const CudafftStatus status = reserve_rows(impl, channels, held, held + samples);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  for (unsigned c = 0; c < channels; c++) {
    float *row = impl->signal + c * impl->capacity + held;
    if (!in)
      memset(row, 0, samples * sizeof *row);
    else
      for (size_t i = 0; i < samples; i++)
        row[i] = cudafft_sample_float(config->format, in, i * channels + c, CUDAFFT_INT_SCALE_POW2);
  }

  const size_t bins = cudafft_stft_bins(config);
  const size_t row_floats = bins * cudafft_stft_bin_floats(config->representation);
  for (size_t f = 0; f < frames; f++)
    for (unsigned c = 0; c < channels; c++) {
      const float *x = impl->signal + c * impl->capacity + f * hop;
      for (size_t i = 0; i < n; i++)
        impl->real[i] = x[i] * stft->window[i];
      fftwf_execute(impl->plan);
      store_bins(impl->bins, bins, config->representation, out + (f * channels + c) * row_floats);
    }

  const size_t consumed = frames * hop, left = held + samples - consumed;
  for (unsigned c = 0; c < channels && consumed > 0; c++) {
    float *row = impl->signal + c * impl->capacity;
    memmove(row, row + consumed, left * sizeof *row);
  }
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_synthesis_init(CudafftIstft *istft, int device_id)
{
  (void)device_id;
  CpuStft *impl = NULL;
  CudafftStatus status = cpu_stft_new(&istft->config, 0, &impl);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  impl->acc = calloc(istft->config.fft_size * istft->config.channels, sizeof *impl->acc);
  if (!impl->acc) {
    cpu_stft_free(impl);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate the overlap-add buffer");
  }
  istft->impl = impl;
  return CUDAFFT_STATUS_OK;
}

static void
cpu_synthesis_fini(CudafftIstft *istft)
{
  cpu_stft_free(istft->impl);
  istft->impl = NULL;
}

/* Writes `count` samples of each channel's sums, interleaved, and moves the sums along by count. */
static void
emit_and_shift(CpuStft *impl, const CudafftStftConfig *config, size_t count, float *out)
{
  const unsigned channels = config->channels;
  const size_t n = config->fft_size;
  for (unsigned c = 0; c < channels; c++) {
    float *acc = impl->acc + c * n;
    for (size_t i = 0; i < count; i++)
      out[i * channels + c] = acc[i];
    memmove(acc, acc + count, (n - count) * sizeof *acc);
    memset(acc + n - count, 0, count * sizeof *acc);
  }
}

static CudafftStatus
cpu_synthesis_push(CudafftIstft *istft, const float *in, size_t frames, float *out)
{
  CpuStft *impl = istft->impl;
  const CudafftStftConfig *config = &istft->config;
  const unsigned channels = config->channels;
  const size_t n = config->fft_size, hop = config->hop, bins = cudafft_stft_bins(config);
  for (size_t f = 0; f < frames; f++) {
    for (unsigned c = 0; c < channels; c++) {
      memcpy(impl->bins, in + (f * channels + c) * 2 * bins, bins * sizeof(fftwf_complex));
      impl->bins[0][1] = 0.0f; /* ignored, as documented; FFTW's result would depend on them */
      impl->bins[bins - 1][1] = 0.0f;
      fftwf_execute(impl->plan);
      float *acc = impl->acc + c * n;
      for (size_t i = 0; i < n; i++)
        acc[i] += impl->real[i] * istft->synthesis[i];
    }
    emit_and_shift(impl, config, hop, out + f * hop * channels);
  }
  return CUDAFFT_STATUS_OK;
}

static void
cpu_synthesis_reset(CudafftIstft *istft)
{
  CpuStft *impl = istft->impl;
  memset(impl->acc, 0, istft->config.fft_size * istft->config.channels * sizeof *impl->acc);
}

static CudafftStatus
cpu_synthesis_drain(CudafftIstft *istft, float *out)
{
  emit_and_shift(istft->impl, &istft->config, istft->config.fft_size - istft->config.hop, out);
  cpu_synthesis_reset(istft);
  return CUDAFFT_STATUS_OK;
}

const CudafftStftOps cudafft_stft_cpu_ops = {
    .analysis_init = cpu_analysis_init,
    .analysis_fini = cpu_analysis_fini,
    .analysis_push = cpu_analysis_push,
    .synthesis_init = cpu_synthesis_init,
    .synthesis_fini = cpu_synthesis_fini,
    .synthesis_push = cpu_synthesis_push,
    .synthesis_drain = cpu_synthesis_drain,
    .synthesis_reset = cpu_synthesis_reset,
};
