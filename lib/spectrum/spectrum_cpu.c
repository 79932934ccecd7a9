/* spectrum_cpu.c: the spectrum's CPU backend, on FFTW single precision: the reference the
 * cudaspectrum element falls back to where there is no GPU, and what CI runs. */
#include "cpu_backend.h"
#include "errors.h"
#include "fftw_real.h"
#include "spectrum_backend.h"
#include "spectrum_values.h"

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
  CudafftCpuObject base;    /* owns the plan and the arrays */
  CudafftSpectrumSpec spec; /* what it is made for, with its own copy of the window */
  CudafftFftwReal fft;      /* nfft windowed samples to bands bins */
  /* Per analysed signal a row of `stride` floats: the nfft most recent samples, then the run's. */
  float *rows;
  size_t stride;
  float *open_magnitude, *open_phase; /* spectra x bands sums of the open interval */
} CpuSpectrum;

static CudafftStatus
cpu_create(const CudafftSpectrumSpec *spec, void **out)
{
  *out = NULL;
  /* The front end has checked that these sizes fit in memory (and so in size_t). */
  const size_t nfft = spec->nfft, bands = spec->bands, spectra = spec->spectra;
  size_t run_frames = RUN_FLOATS / spectra;
  run_frames = run_frames < RUN_FRAMES_MAX ? run_frames : RUN_FRAMES_MAX;
  run_frames = run_frames ? run_frames : 1;
  CpuSpectrum *impl = cudafft_cpu_object_new(sizeof *impl, "a spectrum");
  if (!impl)
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  impl->spec = *spec;
  impl->spec.bounds = NULL;
  float *window = cudafft_cpu_array(&impl->base, nfft * sizeof *window);
  impl->spec.window = window;
  impl->stride = nfft + run_frames;
  impl->rows = cudafft_cpu_array(&impl->base, spectra * impl->stride * sizeof *impl->rows);
  impl->open_magnitude = cudafft_cpu_array(&impl->base, spectra * bands * sizeof(float));
  impl->open_phase = cudafft_cpu_array(&impl->base, spectra * bands * sizeof(float));
  if (!window || !impl->rows || !impl->open_magnitude || !impl->open_phase) {
    cudafft_cpu_destroy(impl);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate the history and sums of %zu signals of %zu "
                        "bands",
                        spectra, bands);
  }
  memcpy(window, spec->window, nfft * sizeof *window);
  const CudafftStatus status = cudafft_fftw_real_init(&impl->base, &impl->fft, nfft, 1);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_cpu_destroy(impl);
    return status;
  }
  *spec->bounds = (CudafftSpectrumBounds){run_frames, RUN_FFTS, RUN_CLOSED};
  *out = impl;
  return CUDAFFT_STATUS_OK;
}

/* Converts the run's frames into each row after its history. */
static void
append_frames(CpuSpectrum *impl, const CudafftSpectrumJob *run)
{
  const size_t frame_bytes = impl->spec.channels * cudafft_sample_size(impl->spec.format);
  const uint8_t *in = run->in;
  for (size_t s = 0; s < impl->spec.spectra; s++) {
    float *row = impl->rows + s * impl->stride + impl->spec.nfft;
    for (size_t j = 0; j < run->frames; j++)
      row[j] =
          cudafft_spectrum_frame_value(impl->spec.format, in + j * frame_bytes, impl->spec.channels,
                                       impl->spec.multi_channel, (unsigned)s);
  }
}

/* Sets up the sums the run adds to: slot 0 goes on from the open interval's, later closed slots
 * start at zero, and the open sums restart for slot `closed`. */
static void
open_slots(CpuSpectrum *impl, const CudafftSpectrumJob *run)
{
  if (run->closed == 0)
    return;
  const size_t slot_floats = impl->spec.spectra * impl->spec.bands;
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
add_fft(CpuSpectrum *impl, const float *x, int threshold, float *magnitude, float *phase)
{
  const size_t nfft = impl->spec.nfft, bands = impl->spec.bands;
  for (size_t i = 0; i < nfft; i++)
    impl->fft.real[i] = x[i] * impl->spec.window[i];
  fftwf_execute(impl->fft.plan);
  for (size_t k = 0; k < bands; k++) {
    const float re = impl->fft.bins[k][0], im = impl->fft.bins[k][1];
    const float power = re * re + im * im;
    magnitude[k] += cudafft_spectrum_level(power, impl->spec.norm_db, threshold);
    if (phase)
      phase[k] += cudafft_spectrum_phase(re, im);
  }
}

static CudafftStatus
cpu_run(void *p, const CudafftSpectrumJob *run)
{
  CpuSpectrum *impl = p;
  const size_t nfft = impl->spec.nfft, bands = impl->spec.bands, spectra = impl->spec.spectra;
  append_frames(impl, run);
  open_slots(impl, run);

  for (size_t f = 0; f < run->fft_count; f++) {
    const CudafftSpectrumFft *fft = &run->ffts[f];
    const int ends_here = fft->slot < run->closed;
    for (size_t s = 0; s < spectra; s++) {
      const size_t offset = (ends_here ? fft->slot * spectra + s : s) * bands;
      float *magnitude = (ends_here ? run->magnitude_sums : impl->open_magnitude) + offset;
      float *phase = !run->phase ? NULL : (ends_here ? run->phase_sums : impl->open_phase) + offset;
      /* run frame j is row index nfft + j: the window ending before frame `end` starts at end */
      add_fft(impl, impl->rows + s * impl->stride + fft->end, run->threshold, magnitude, phase);
    }
  }

  for (size_t s = 0; s < spectra && run->frames > 0; s++) {
    float *row = impl->rows + s * impl->stride;
    memmove(row, row + run->frames, nfft * sizeof *row);
  }
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_reset(void *p)
{
  CpuSpectrum *impl = p;
  const size_t slot_floats = impl->spec.spectra * impl->spec.bands;
  for (size_t s = 0; s < impl->spec.spectra; s++)
    memset(impl->rows + s * impl->stride, 0, impl->spec.nfft * sizeof *impl->rows);
  memset(impl->open_magnitude, 0, slot_floats * sizeof *impl->open_magnitude);
  memset(impl->open_phase, 0, slot_floats * sizeof *impl->open_phase);
  return CUDAFFT_STATUS_OK;
}

const CudafftSpectrumBackend cudafft_spectrum_cpu_backend = {
    cpu_create, cudafft_cpu_destroy, cpu_run, cpu_reset, cudafft_cpu_stream};
