/* spectrum_backend.h: what the spectrum front end (spectrum.c) asks of a backend. Internal to the
 * library.
 *
 * The backend table has the shape every engine's has (lib/common/backend_table.h). The front end
 * does the bookkeeping: interval lengths, which FFTs run where, the options of each interval, the
 * results. A backend keeps the signal history and the sums of the open interval, and runs the FFTs
 * the front end lists. */
#ifndef CUDAFFT_SPECTRUM_BACKEND_H
#define CUDAFFT_SPECTRUM_BACKEND_H

#include "backend_table.h"

#include <cudafft/spectrum.h>

/* The most a single run may carry (each at least 1): frames, FFTs and closed intervals. The
 * front end splits pushes into runs within them. */
typedef struct {
  size_t frames, ffts, closed;
} CudafftSpectrumBounds;

/* What a backend spectrum is made for; the front end has validated it (and checked that its host
 * memory fits). */
typedef struct {
  CudafftSampleFormat format;
  unsigned channels;
  int multi_channel;
  size_t bands;
  size_t nfft;         /* 2 bands - 2 */
  size_t spectra;      /* analysed signals: channels with multi_channel, else 1 */
  const float *window; /* nfft Hamming values (computed in double, rounded once); copied */
  float norm_db;       /* 20 log10(nfft): the level's 1/nfft^2 in dB */
  int device_id;       /* CUDA backend: the device (as chosen: backend_choice.h) */
  CudafftSpectrumBounds *bounds; /* out: create sets the backend's bounds here */
} CudafftSpectrumSpec;

/* One FFT of a run: its window is the nfft frames of the analysed signal that end just before
 * frame `end` of the run (0 <= end <= frames; frames before the run come from the history). */
typedef struct {
  size_t end;
  size_t slot; /* the interval it adds to: 0 is the one open when the run starts */
} CudafftSpectrumFft;

/* A run (a job) appends `frames` interleaved frames to the signal and adds every listed FFT's
 * levels (and phases) into its slot. Slots 0..closed-1 end within the run: their sums (spectra x
 * bands floats per slot, slot-major) go to magnitude_sums (and phase_sums when phase), and slot
 * `closed` is the open interval afterwards (its sums stay in the backend; when closed == 0 that is
 * slot 0 again). ffts are in order of end and slot; every closed slot has at least one FFT, in this
 * run or (slot 0 only) in earlier ones. cudafft_spectrum_finish() makes a run of 0 frames with in
 * NULL. All FFTs of a run share threshold and phase. in is host memory, or with in_on_device
 * device memory of the object's device (CUDA backend only: cudafft_spectrum_push_device). */
typedef struct {
  const void *in;
  int in_on_device;
  size_t frames;
  const CudafftSpectrumFft *ffts;
  size_t fft_count;
  size_t closed;
  int threshold;
  int phase;
  float *magnitude_sums;
  float *phase_sums; /* NULL unless phase */
  /* Device input that queued device work still writes: the run's jobs go after it (zeroed: the
   * input is complete). CUDA backend only, with in_on_device. */
  CudafftFence after;
} CudafftSpectrumJob;

/* create makes the object with zero history and sums, and sets spec->bounds. run takes a job within
 * the bounds and returns when the sums are written; a failure leaves a state that reset (history
 * to zeros, open sums to zero) recovers from. */
typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftSpectrumSpec, CudafftSpectrumJob) CudafftSpectrumBackend;

/* The CPU table; the CUDA table in CUDA builds only. */
CUDAFFT_BACKEND_TABLE_DECL const CudafftSpectrumBackend cudafft_spectrum_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftSpectrumBackend cudafft_spectrum_cuda_backend;

#endif
