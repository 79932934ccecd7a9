/* spectrum_backend.h: what the spectrum front end (spectrum.c) needs from a backend. Internal to
 * kernels/.
 *
 * The front end does the bookkeeping: interval lengths, which FFTs run where, the options of each
 * interval, the results. A backend keeps the signal history and the sums of the open interval,
 * and runs the FFTs the front end lists. */
#ifndef CUDAFFT_SPECTRUM_BACKEND_H
#define CUDAFFT_SPECTRUM_BACKEND_H

#include <cudafft/spectrum.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudafftSpectrumOps CudafftSpectrumOps;

/* One FFT of a run: its window is the nfft frames of the analysed signal that end just before
 * frame `end` of the run (0 <= end <= frames; frames before the run come from the history). */
typedef struct {
  size_t end;
  size_t slot; /* the interval it adds to: 0 is the one open when the run starts */
} CudafftSpectrumFft;

/* A run appends `frames` interleaved frames to the signal and adds every listed FFT's levels (and
 * phases) into its slot. Slots 0..closed-1 end within the run: their sums (spectra x bands floats
 * per slot, slot-major) go to magnitude_sums (and phase_sums when phase), and slot `closed` is the
 * open interval afterwards (its sums stay in the backend; when closed == 0 that is slot 0 again).
 * ffts are in order of end and slot; every closed slot has at least one FFT, in this run or (slot
 * 0 only) in earlier ones. cudafft_spectrum_finish() makes a run of 0 frames with in NULL. All FFTs
 * of a run share threshold and phase. */
typedef struct {
  const void *in;
  size_t frames;
  const CudafftSpectrumFft *ffts;
  size_t fft_count;
  size_t closed;
  int threshold;
  int phase;
  float *magnitude_sums;
  float *phase_sums; /* NULL unless phase */
} CudafftSpectrumRun;

struct CudafftSpectrum {
  CudafftSpectrumConfig config; /* config.options: those of the open interval */
  CudafftSpectrumOptions pending;
  int has_pending;
  CudafftBackend backend;
  const CudafftSpectrumOps *ops;
  void *impl;
  size_t nfft;    /* 2 bands - 2 */
  size_t spectra; /* analysed signals: channels or 1 */
  float *window;  /* nfft Hamming values (computed in double, rounded once) */
  float norm_db;  /* 20 log10(nfft): the level's 1/nfft^2 in dB */

  /* Set by the backend's init: the most a single run may carry. The front end splits pushes. */
  size_t run_frames, run_ffts, run_closed;

  /* Interval framing, as spectrum keeps it. */
  uint64_t frames_per_interval, error_per_interval, accumulated_error;
  size_t frames_todo; /* frames of the open interval */
  size_t num_frames;  /* frames pushed into it */
  size_t num_fft;     /* FFTs listed for it */

  /* Results of the last push or finish. */
  size_t max_results, result_count;
  float *magnitude, *phase; /* max_results x spectra x bands */
  CudafftSpectrumResult *results;
};

/* The front end validates every argument first. An init either succeeds (and sets run_frames,
 * run_ffts, run_closed >= 1) or releases what it made and leaves impl NULL. A failed run leaves
 * the backend in a state that reset recovers from. */
struct CudafftSpectrumOps {
  CudafftStatus (*init)(CudafftSpectrum *spectrum, int device_id);
  void (*fini)(CudafftSpectrum *spectrum);
  CudafftStatus (*run)(CudafftSpectrum *spectrum, const CudafftSpectrumRun *run);
  void (*reset)(CudafftSpectrum *spectrum); /* history to zeros, open sums to zero */
};

extern const CudafftSpectrumOps cudafft_spectrum_cpu_ops;
extern const CudafftSpectrumOps cudafft_spectrum_cuda_ops; /* CUDA builds only */

#ifdef __cplusplus
}
#endif

#endif
