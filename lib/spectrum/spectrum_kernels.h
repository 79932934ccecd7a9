/* spectrum_kernels.h: the spectrum's kernels: conversion of interleaved input into signal rows,
 * the fused analysis (window, FFT, level and phase, interval sums in one kernel) for the sizes the
 * block FFT covers, and the gather and accumulate kernels around cuFFT for every other size.
 * Internal to the library (it speaks CUDA types).
 *
 * Layouts the kernels share:
 * - signal: `spectra` rows of `pitch` floats, spectrum s's row at signal + s pitch.
 * - an FFT's window: row + [end, end + nfft) of every spectrum's row.
 * - pairs: FFT f of a list with spectrum s is pair f spectra + s.
 * - accumulators: slot-major rows of `bands` floats, (slot, s) at (slot spectra + s) bands. */
#ifndef CUDAFFT_SPECTRUM_KERNELS_H
#define CUDAFFT_SPECTRUM_KERNELS_H

#include "block_kernels.h"

#include <cudafft/spectrum.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One FFT as the kernels read it (device memory). */
typedef struct {
  size_t end;    /* its window: [end, end + nfft) of each spectrum's row */
  unsigned slot; /* the accumulator slot its levels (and phases) go to */
  int store;     /* nonzero: the slot's only FFT in the launch and nothing carried in, so its
                    values are stored; zero: added atomically to what the slot holds */
} CudafftSpectrumLaunchFft;

/* The fused kernels of real size nfft (without, with phases); NULL where there are none (the
 * power-of-two sizes CUDAFFT_MIN_SIZE..CUDAFFT_MAX_SIZE have them). */
const CudafftBlockKernels *cudafft_spectrum_fused_kernels(size_t nfft);

/* frames interleaved frames of `channels` `format` samples at raw (frame_bytes each, no
 * alignment) -> for each frame j and spectrum s, cudafft_spectrum_frame_value() at
 * signal[s pitch + j]. spectra is channels with multi_channel, else 1. */
cudaError_t cudafft_spectrum_convert_launch(CudafftSampleFormat format, const void *raw,
                                            size_t frames, unsigned channels, int multi_channel,
                                            size_t spectra, float *signal, size_t pitch,
                                            cudaStream_t stream);

/* fft_count x spectra windowed real FFTs of nfft points (cudafft_spectrum_fused_kernels(nfft)),
 * each band's level (cudafft_spectrum_level) stored or added into magnitude, and its phase into
 * phase unless that is NULL, by the FFT's store flag. ffts: device memory. */
cudaError_t cudafft_spectrum_fused_launch(size_t nfft, const float *signal, size_t pitch,
                                          size_t spectra, const CudafftSpectrumLaunchFft *ffts,
                                          size_t fft_count, const float *window, float norm_db,
                                          int threshold, float *magnitude, float *phase,
                                          const float2 *twiddles, cudaStream_t stream);

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

#ifdef __cplusplus
}
#endif

#endif
