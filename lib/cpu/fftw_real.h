/* fftw_real.h: one real FFT of n points on aligned arrays of its own (so that FFTW may use SIMD),
 * planned at once with FFTW_ESTIMATE (engines are made on every caps change) under the planner
 * lock: what the STFT's and the spectrum's CPU backends transform their frames with. Internal to
 * the library. */
#ifndef CUDAFFT_FFTW_REAL_H
#define CUDAFFT_FFTW_REAL_H

#include "cpu_backend.h"

typedef struct {
  fftwf_plan plan;
  float *real;         /* n samples: the forward transform's input, the inverse's output */
  fftwf_complex *bins; /* n / 2 + 1 bins: the forward transform's output, the inverse's input */
} CudafftFftwReal;

/* Allocates the arrays and plans the forward (real to complex) or the inverse (complex to real)
 * transform, all owned by owner (released with it); HOST_OUT_OF_MEMORY with a message where it
 * cannot. */
CudafftStatus cudafft_fftw_real_init(CudafftCpuObject *owner, CudafftFftwReal *fft, size_t n,
                                     int forward);

#endif
