/* stft_reference.h: the frames of the streaming STFT (cudafft/stft.h) in double precision, for
 * the library's STFT tests and the cudafft element's alike: each channel's frame windowed in
 * double by the library's window (its values are checked against the header's formulas in
 * test_stft) and transformed by FFTW double. Plain C. */
#ifndef CUDAFFT_STFT_REFERENCE_H
#define CUDAFFT_STFT_REFERENCE_H

#include <cudafft/stft.h>

#include <stddef.h>

/* The complex spectra of frames 0 .. frames - 1 of x (samples frames of `channels`, interleaved):
 * frame f covers the samples f hop - lead .. f hop - lead + n - 1, zeros outside [0, samples) (the
 * element's lead of n - hop zeros; 0 for the library, whose frames start at its first sample).
 * NaN and Inf samples are transformed as they are. out: frames x channels rows of n/2 + 1 bins of
 * (re, im). */
void stft_reference_frames(size_t n, size_t hop, CudafftWindow window, const double *x,
                           unsigned channels, size_t samples, size_t lead, size_t frames,
                           double *out);

#endif
