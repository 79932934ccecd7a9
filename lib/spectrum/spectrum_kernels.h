/* spectrum_kernels.h: the spectrum's kind of work on the shared executor (executor.h), its job, and
 * its kernels: conversion of interleaved input into signal rows, the fused analysis (window, FFT,
 * level and phase, interval sums in one kernel) for the sizes the block FFT covers, the gather and
 * accumulate kernels around cuFFT for every other size, and the sums' way out. Internal to the
 * library; for .cu files only (CUDA types).
 *
 * Layouts the kernels share:
 * - signal: `spectra` rows of `pitch` floats, spectrum s's row at signal + s pitch.
 * - an FFT's window: row + [end, end + nfft) of every spectrum's row.
 * - pairs: FFT f of a list with spectrum s is pair f spectra + s.
 * - accumulators: slot-major rows of `bands` floats, (slot, s) at (slot spectra + s) bands. */
#ifndef CUDAFFT_SPECTRUM_KERNELS_H
#define CUDAFFT_SPECTRUM_KERNELS_H

#include "batch_units.cuh"
#include "block_kernels.h"

#include <cudafft/spectrum.h>

#include <cuda_runtime.h>

/* One FFT as the kernels read it (device memory). */
typedef struct {
  size_t end;    /* its window: [end, end + nfft) of each spectrum's row */
  unsigned slot; /* the accumulator slot its levels (and phases) go to */
  int store;     /* nonzero: the slot's only FFT in the launch and nothing carried in, so its
                    values are stored; zero: added atomically to what the slot holds */
} CudafftSpectrumLaunchFft;

/* The fused kernels of real size nfft (without, with phases); NULL where there are none (the
 * power-of-two sizes CUDAFFT_FUSED_MIN_SIZE..CUDAFFT_MAX_SIZE have them). */
const CudafftBlockKernels *cudafft_spectrum_fused_kernels(size_t nfft);

/* A job of the fused kernel: its fft_count x spectra windowed real FFTs of nfft points, each
 * band's level (cudafft_spectrum_level) stored or added into magnitude, and its phase into phase
 * unless that is NULL, by the FFT's store flag. The kernel reads magnitude, phase and threshold;
 * the kind makes each transform's unit (CudafftSpectrumFusedUnit) from the rest. */
typedef struct {
  const float *signal;
  size_t pitch;
  const CudafftSpectrumLaunchFft *ffts;
  float *magnitude, *phase;
  int threshold;
  int spectra;
} CudafftSpectrumFusedDesc;

/* One transform of a fused launch, what its block needs before its first sample: where the
 * samples start (the job's signal + s pitch + the FFT's end, for pair (FFT f, spectrum s)), its
 * row of levels (f's slot x spectra + s) with f's store flag, and its job. Its load is all that
 * precedes the samples' loads, as the per-object kernel's FFT list entry was; reached through a
 * unit map, the job's descriptor and its FFT list, the samples waited on two more dependent loads
 * (the measurements: bench/HISTORY.md). */
struct __align__(16) CudafftSpectrumFusedUnit
{
  const float *samples;
  uint32_t job;
  uint32_t row; /* 2 x row + store (1: stored, 0: added); rows stay far below 2^31: an object's
                   sums are at most 16 MB, or two slots (set_bounds, spectrum_cuda.cu) */
};

/* A transform's unit (row: its slot x spectra + s, within the bound above). */
inline CudafftSpectrumFusedUnit
cudafft_spectrum_fused_unit(const float *samples, size_t job, size_t row, int store)
{
  return CudafftSpectrumFusedUnit{samples, (uint32_t)job, (uint32_t)(2 * row + (store ? 1 : 0))};
}

/* The fused kernel of size nfft, with phases or not, over `transforms` transforms: transform t is
 * units[t], of job descs[units[t].job]. descs and units: device memory. The window, norm_db
 * (20 log10 nfft) and twiddles are the launch's: the same for every analyser of the size (kernel
 * parameters stay out of the registers the FFT needs). */
cudaError_t cudafft_spectrum_fused_batch(size_t nfft, int phase,
                                         const CudafftSpectrumFusedDesc *descs,
                                         const CudafftSpectrumFusedUnit *units, size_t transforms,
                                         const float *window, float norm_db, const float2 *twiddles,
                                         cudaStream_t stream);

/* Pairs first .. first + count - 1 of the list ffts, windowed, to count rows of nfft floats at
 * frames (row r: pair first + r). */
cudaError_t cudafft_spectrum_gather_launch(size_t nfft, const float *signal, size_t pitch,
                                           size_t spectra, const CudafftSpectrumLaunchFft *ffts,
                                           size_t first, size_t count, const float *window,
                                           float *frames, cudaStream_t stream);

/* The bins of those pairs (count rows of bands complex values, as cuFFT's R2C writes them for
 * nfft = 2 bands - 2) -> levels and phases into the accumulators, as the fused kernel does. */
cudaError_t cudafft_spectrum_accumulate_launch(size_t bands, size_t spectra,
                                               const CudafftSpectrumLaunchFft *ffts, size_t first,
                                               size_t count, const float2 *bins, float norm_db,
                                               int threshold, float *magnitude, float *phase,
                                               cudaStream_t stream);

/* The FFTs of a job on the cuFFT path, queued on stream by the object that owns the plans: ffts is
 * the job's list on the device. */
typedef CudafftStatus (*CudafftSpectrumCufftRun)(void *object, const float *signal,
                                                 const CudafftSpectrumLaunchFft *ffts,
                                                 size_t fft_count, int threshold, int phase,
                                                 cudaStream_t stream);

#define CUDAFFT_SPECTRUM_SEGMENTS 3

/* One run of an object, in three stages, each a launch for every job of the batch:
 * 1. `frames` interleaved input frames (the job's input, frame_bytes each) converted into the
 *    signal rows at append (spectrum s's at append + s pitch), beside the segments (the history
 *    moved or zeroed, slots zeroed), which write other memory;
 * 2. the FFTs (`ffts`, a host list copied into the batch) over the rows from fused.signal: the
 *    fused kernel (fused.*; its ffts member is set by the kind), or `cufft` on the cuFFT path;
 * 3. the sums out: elements [out_first, out_first + out_count) of the closed slots' sums (the
 *    magnitudes of slots 0 .. closed - 1, then their phases where phase_sums is set) to the job's
 *    output; with `move`, which needs the whole of them in this job, the open slot `closed` then
 *    moves to slot 0 (magnitudes, and phases where set). */
typedef struct {
  CudafftJob job; /* first: the kind casts the CudafftJob pointers back */
  /* 1 */
  CudafftSampleFormat format;
  unsigned channels;
  int multi_channel;
  size_t frame_bytes, frames, spectra;
  float *append;
  size_t pitch;
  CudafftSegment segments[CUDAFFT_SPECTRUM_SEGMENTS];
  unsigned segment_count;
  /* 2 */
  size_t nfft;
  int phase; /* the FFTs' phases are summed too */
  const CudafftSpectrumLaunchFft *ffts;
  size_t fft_count;
  CudafftSpectrumFusedDesc fused; /* where `fused_path`; else cufft */
  const float *window;            /* the object's tables, for the fused launch of its size */
  const float2 *twiddles;
  float norm_db;
  int fused_path;
  CudafftSpectrumCufftRun cufft;
  void *cufft_object;
  /* 3 */
  float *magnitude_sums, *phase_sums; /* the object's slots; phase_sums NULL: none out */
  size_t slot_floats, closed, out_first, out_count;
  int move;
} CudafftSpectrumRunJob;

extern const CudafftWorkKind cudafft_spectrum_run_kind;
/* CudafftSegmentJob: an object's window, twiddles and cuFFT staging set at creation. */
extern const CudafftWorkKind cudafft_spectrum_tables_kind;

/* The auxiliary bytes of one job alone, and of a job of at most this much work (for the bounds of
 * a run: transforms are fft_count x spectra pairs of the fused kernel, history_units the units of
 * the history's move or zeros). */
size_t cudafft_spectrum_run_aux_bytes(const CudafftSpectrumRunJob *job);
size_t cudafft_spectrum_run_aux_bound(size_t frames, size_t spectra, size_t ffts, size_t transforms,
                                      size_t history_units, size_t out_floats);

#endif
