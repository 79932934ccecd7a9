/* spectrum_cpu.c: the spectrum's CPU backend, on FFTW single precision: the reference the
 * cudaspectrum element falls back to where there is no GPU, and what CI runs. */
#include "errors.h"
#include "fftw_planner.h"
#include "spectrum_backend.h"
#include "spectrum_values.h"

#include <fftw3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Floats converted per run at most (16 MiB), and never more than 65536 frames. */
#define RUN_FLOATS ((size_t)1 << 22)
#define RUN_FRAMES_MAX ((size_t)65536)
/* The front end also stops runs at its FFT list and at the push's results; these only bound the
 * work of one call. */
#define RUN_FFTS ((size_t)1 << 16)
#define RUN_CLOSED ((size_t)1 << 16)

typedef struct {
  fftwf_plan plan;
  float *real;         /* nfft windowed samples */
  fftwf_complex *bins; /* bands */
  /* Per analysed signal a row of `stride` floats: the nfft most recent samples, then the run's. */
  float *rows;
  size_t stride;
  float *open_magnitude, *open_phase; /* spectra x bands sums of the open interval */
} CpuSpectrum;

static void
cpu_free(CpuSpectrum *impl)
{
  if (!impl)
    return;
  if (impl->plan) {
    cudafft_fftw_planner_lock();
    fftwf_destroy_plan(impl->plan);
    cudafft_fftw_planner_unlock();
  }
  fftwf_free(impl->real);
  fftwf_free(impl->bins);
  free(impl->rows);
  free(impl->open_magnitude);
  free(impl->open_phase);
  free(impl);
}

static CudafftStatus
cpu_init(CudafftSpectrum *spectrum, int device_id)
{
  (void)device_id;
  /* The front end has checked that these sizes fit in memory (and so in size_t). */
  const size_t nfft = spectrum->nfft, bands = spectrum->config.bands, spectra = spectrum->spectra;
  size_t run_frames = RUN_FLOATS / spectra;
  run_frames = run_frames < RUN_FRAMES_MAX ? run_frames : RUN_FRAMES_MAX;
  run_frames = run_frames ? run_frames : 1;
  CpuSpectrum *impl = calloc(1, sizeof *impl);
  if (!impl)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate a spectrum");
  impl->stride = nfft + run_frames;
  impl->rows = calloc(spectra * impl->stride, sizeof *impl->rows);
  impl->open_magnitude = calloc(spectra * bands, sizeof *impl->open_magnitude);
  impl->open_phase = calloc(spectra * bands, sizeof *impl->open_phase);
  impl->real = fftwf_malloc(nfft * sizeof *impl->real);
  impl->bins = fftwf_malloc(bands * sizeof *impl->bins);
  if (!impl->rows || !impl->open_magnitude || !impl->open_phase || !impl->real || !impl->bins) {
    cpu_free(impl);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate the history and sums of %zu signals of %zu "
                        "bands",
                        spectra, bands);
  }
  /* Our own aligned arrays, so FFTW may use SIMD; FFTW_ESTIMATE plans at once and any size. */
  cudafft_fftw_planner_lock();
  impl->plan = fftwf_plan_dft_r2c_1d((int)nfft, impl->real, impl->bins, FFTW_ESTIMATE);
  cudafft_fftw_planner_unlock();
  if (!impl->plan) {
    cpu_free(impl);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: FFTW could not plan a %zu-point real transform", nfft);
  }
  spectrum->impl = impl;
  spectrum->run_frames = run_frames;
  spectrum->run_ffts = RUN_FFTS;
  spectrum->run_closed = RUN_CLOSED;
  return CUDAFFT_STATUS_OK;
}

static void
cpu_fini(CudafftSpectrum *spectrum)
{
  cpu_free(spectrum->impl);
  spectrum->impl = NULL;
}

/* Converts the run's frames into each row after its history. */
static void
append_frames(const CudafftSpectrum *spectrum, CpuSpectrum *impl, const CudafftSpectrumRun *run)
{
  const CudafftSpectrumConfig *config = &spectrum->config;
  const size_t frame_bytes = config->channels * cudafft_sample_size(config->format);
  const uint8_t *in = run->in;
  for (size_t s = 0; s < spectrum->spectra; s++) {
    float *row = impl->rows + s * impl->stride + spectrum->nfft;
    for (size_t j = 0; j < run->frames; j++)
      row[j] = cudafft_spectrum_frame_value(config->format, in + j * frame_bytes, config->channels,
                                            config->multi_channel, (unsigned)s);
  }
}

/* Sets up the sums the run adds to: slot 0 goes on from the open interval's, later closed slots
 * start at zero, and the open sums restart for slot `closed`. */
static void
open_slots(const CudafftSpectrum *spectrum, CpuSpectrum *impl, const CudafftSpectrumRun *run)
{
  if (run->closed == 0)
    return;
  const size_t slot_floats = spectrum->spectra * spectrum->config.bands;
  const size_t bytes = slot_floats * sizeof(float);
  memcpy(run->magnitude_sums, impl->open_magnitude, bytes);
  memset(run->magnitude_sums + slot_floats, 0, (run->closed - 1) * bytes);
  if (run->phase_sums) {
    memcpy(run->phase_sums, impl->open_phase, bytes);
    memset(run->phase_sums + slot_floats, 0, (run->closed - 1) * bytes);
  }
  memset(impl->open_magnitude, 0, bytes);
  memset(impl->open_phase, 0, bytes);
}

/* One FFT: the nfft samples from x, windowed; its levels (and phases) added to magnitude (and
 * phase). */
static void
add_fft(const CudafftSpectrum *spectrum, CpuSpectrum *impl, const float *x, int threshold,
        float *magnitude, float *phase)
{
  const size_t nfft = spectrum->nfft, bands = spectrum->config.bands;
  for (size_t i = 0; i < nfft; i++)
    impl->real[i] = x[i] * spectrum->window[i];
  fftwf_execute(impl->plan);
  for (size_t k = 0; k < bands; k++) {
    const float re = impl->bins[k][0], im = impl->bins[k][1];
    const float power = re * re + im * im;
    magnitude[k] += cudafft_spectrum_level(power, spectrum->norm_db, threshold);
    if (phase)
      phase[k] += cudafft_spectrum_phase(re, im);
  }
}

static CudafftStatus
cpu_run(CudafftSpectrum *spectrum, const CudafftSpectrumRun *run)
{
  CpuSpectrum *impl = spectrum->impl;
  const size_t nfft = spectrum->nfft, bands = spectrum->config.bands, spectra = spectrum->spectra;
  append_frames(spectrum, impl, run);
  open_slots(spectrum, impl, run);

  for (size_t f = 0; f < run->fft_count; f++) {
    const CudafftSpectrumFft *fft = &run->ffts[f];
    const int ends_here = fft->slot < run->closed;
    for (size_t s = 0; s < spectra; s++) {
      const size_t offset = (ends_here ? fft->slot * spectra + s : s) * bands;
      float *magnitude = (ends_here ? run->magnitude_sums : impl->open_magnitude) + offset;
      float *phase = !run->phase ? NULL : (ends_here ? run->phase_sums : impl->open_phase) + offset;
      /* run frame j is row index nfft + j: the window ending before frame `end` starts at end */
      add_fft(spectrum, impl, impl->rows + s * impl->stride + fft->end, run->threshold, magnitude,
              phase);
    }
  }

  for (size_t s = 0; s < spectra && run->frames > 0; s++) {
    float *row = impl->rows + s * impl->stride;
    memmove(row, row + run->frames, nfft * sizeof *row);
  }
  return CUDAFFT_STATUS_OK;
}

static void
cpu_reset(CudafftSpectrum *spectrum)
{
  CpuSpectrum *impl = spectrum->impl;
  const size_t slot_floats = spectrum->spectra * spectrum->config.bands;
  for (size_t s = 0; s < spectrum->spectra; s++)
    memset(impl->rows + s * impl->stride, 0, spectrum->nfft * sizeof *impl->rows);
  memset(impl->open_magnitude, 0, slot_floats * sizeof *impl->open_magnitude);
  memset(impl->open_phase, 0, slot_floats * sizeof *impl->open_phase);
}

const CudafftSpectrumOps cudafft_spectrum_cpu_ops = {
    .init = cpu_init,
    .fini = cpu_fini,
    .run = cpu_run,
    .reset = cpu_reset,
};
