/* stft_cpu.c: the STFT's CPU backend, on FFTW single precision: the reference the GStreamer
 * elements fall back to where there is no GPU, and what CI runs. */
#include "cpu_backend.h"
#include "errors.h"
#include "fftw_real.h"
#include "stft_backend.h"
#include "stft_values.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  CudafftCpuObject base; /* owns the plan and the arrays */
  CudafftStftConfig config;
  float *window;       /* fft_size values: the analysis window, or the synthesis window g */
  CudafftFftwReal fft; /* forward (analysis) or inverse (synthesis) */
  float *signal;       /* analysis: channels rows of `capacity` planar samples */
  size_t capacity;     /* analysis: samples per row */
  float *acc;          /* synthesis: channels rows of n overlap-add sums, from the next output */
} CpuStft;

static CudafftStatus
cpu_new(const CudafftStftSpec *spec, int forward, CpuStft **out)
{
  *out = NULL;
  const size_t n = spec->config.fft_size;
  CpuStft *impl = cudafft_cpu_object_new(sizeof *impl, "an STFT");
  if (!impl)
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  impl->config = spec->config;
  impl->window = cudafft_cpu_array(&impl->base, n * sizeof *impl->window);
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if (impl->window)
    memcpy(impl->window, spec->window, n * sizeof *impl->window);
  else
    status = cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                          "CPU backend: cannot allocate a %zu-point window", n);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_fftw_real_init(&impl->base, &impl->fft, n, forward);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_cpu_destroy(impl);
    return status;
  }
  *out = impl;
  return CUDAFFT_STATUS_OK;
}

/* Analysis ------------------------------------------------------------------------------------ */

static CudafftStatus
analysis_create(const CudafftStftSpec *spec, void **impl)
{
  return cpu_new(spec, 1, (CpuStft **)impl);
}

/* Makes room for `total` samples per row, keeping the first `held` of each. */
static CudafftStatus
reserve_rows(CpuStft *impl, unsigned channels, size_t held, size_t total)
{
  if (total <= impl->capacity)
    return CUDAFFT_STATUS_OK;
  const size_t capacity = total + total / 2;
  float *signal = cudafft_cpu_array(&impl->base, capacity * channels * sizeof *signal);
  if (!signal)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot hold %zu samples of %u channels", capacity, channels);
  for (unsigned c = 0; c < channels && held > 0; c++)
    memcpy(signal + c * capacity, impl->signal + c * impl->capacity, held * sizeof *signal);
  cudafft_cpu_array_free(&impl->base, impl->signal);
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
analysis_run(void *p, const CudafftStftJob *job)
{
  CpuStft *impl = p;
  const CudafftStftConfig *config = &impl->config;
  const unsigned channels = config->channels;
  const size_t n = config->fft_size, hop = config->hop, held = job->held;
  const size_t samples = job->samples;
  const CudafftStatus status = reserve_rows(impl, channels, held, held + samples);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  for (unsigned c = 0; c < channels; c++) {
    float *row = impl->signal + c * impl->capacity + held;
    if (!job->in)
      memset(row, 0, samples * sizeof *row);
    else
      for (size_t i = 0; i < samples; i++)
        row[i] =
            cudafft_sample_float(config->format, job->in, i * channels + c, CUDAFFT_INT_SCALE_POW2);
  }

  const size_t bins = cudafft_stft_bins(config);
  const size_t row_floats = bins * cudafft_stft_bin_floats(config->representation);
  for (size_t f = 0; f < job->frames; f++)
    for (unsigned c = 0; c < channels; c++) {
      const float *x = impl->signal + c * impl->capacity + f * hop;
      for (size_t i = 0; i < n; i++)
        impl->fft.real[i] = x[i] * impl->window[i];
      fftwf_execute(impl->fft.plan);
      store_bins(impl->fft.bins, bins, config->representation,
                 job->out + (f * channels + c) * row_floats);
    }

  const size_t consumed = job->frames * hop, left = held + samples - consumed;
  for (unsigned c = 0; c < channels && consumed > 0; c++) {
    float *row = impl->signal + c * impl->capacity;
    memmove(row, row + consumed, left * sizeof *row);
  }
  return CUDAFFT_STATUS_OK;
}

/* reset: nothing to clear, the samples held are the front end's count */
const CudafftStftBackend cudafft_stft_cpu_backend = {analysis_create, cudafft_cpu_destroy,
                                                     analysis_run, cudafft_cpu_reset_nothing,
                                                     cudafft_cpu_stream};

/* Synthesis ----------------------------------------------------------------------------------- */

static CudafftStatus
synthesis_create(const CudafftStftSpec *spec, void **out)
{
  CpuStft *impl = NULL;
  CudafftStatus status = cpu_new(spec, 0, &impl);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  impl->acc =
      cudafft_cpu_array(&impl->base, spec->config.fft_size * spec->config.channels * sizeof(float));
  if (!impl->acc) {
    cudafft_cpu_destroy(impl);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate the overlap-add buffer");
  }
  *out = impl;
  return CUDAFFT_STATUS_OK;
}

/* Writes `count` samples of each channel's sums, interleaved, and moves the sums along by count. */
static void
emit_and_shift(CpuStft *impl, size_t count, float *out)
{
  const unsigned channels = impl->config.channels;
  const size_t n = impl->config.fft_size;
  for (unsigned c = 0; c < channels; c++) {
    float *acc = impl->acc + c * n;
    for (size_t i = 0; i < count; i++)
      out[i * channels + c] = acc[i];
    memmove(acc, acc + count, (n - count) * sizeof *acc);
    memset(acc + n - count, 0, count * sizeof *acc);
  }
}

static CudafftStatus
synthesis_reset(void *p)
{
  CpuStft *impl = p;
  memset(impl->acc, 0, impl->config.fft_size * impl->config.channels * sizeof *impl->acc);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
synthesis_run(void *p, const CudafftIstftJob *job)
{
  CpuStft *impl = p;
  const CudafftStftConfig *config = &impl->config;
  const unsigned channels = config->channels;
  const size_t n = config->fft_size, hop = config->hop, bins = cudafft_stft_bins(config);
  if (job->drain) {
    emit_and_shift(impl, n - hop, job->out);
    return synthesis_reset(impl);
  }
  fftwf_complex *spectrum = impl->fft.bins;
  for (size_t f = 0; f < job->frames; f++) {
    for (unsigned c = 0; c < channels; c++) {
      memcpy(spectrum, job->in + (f * channels + c) * 2 * bins, bins * sizeof(fftwf_complex));
      /* ignored, as documented (bin n/2's only where n is even); FFTW's result would depend on
       * them */
      spectrum[0][1] = 0.0f;
      if (n % 2 == 0)
        spectrum[bins - 1][1] = 0.0f;
      fftwf_execute(impl->fft.plan);
      float *acc = impl->acc + c * n;
      for (size_t i = 0; i < n; i++)
        acc[i] += impl->fft.real[i] * impl->window[i];
    }
    emit_and_shift(impl, hop, job->out + f * hop * channels);
  }
  return CUDAFFT_STATUS_OK;
}

const CudafftIstftBackend cudafft_istft_cpu_backend = {
    synthesis_create, cudafft_cpu_destroy, synthesis_run, synthesis_reset, cudafft_cpu_stream};
