/* convolve_reference.h: the streaming convolution of cudafft/convolve.h in double precision, for
 * the library's convolution tests and the cudaconvolve element's alike: the convolution sum
 * (through FFTW double where the direct sum would be slow, spot-checked against the direct sum),
 * and a stream's output with its kernel changes (the header's crossover) and mix. Plain C. */
#ifndef CUDAFFT_CONVOLVE_REFERENCE_H
#define CUDAFFT_CONVOLVE_REFERENCE_H

#include <stddef.h>

/* y[n] = sum_k h[k] x_c[n - k] for start <= n < frames (y indexed by n; nothing else written), x_c
 * channel c of x (x_frames frames, `channels` interleaved), taken as 0 before `start` and from
 * x_frames on. */
void convolve_reference_channel(const double *h, size_t taps, const double *x, unsigned channels,
                                unsigned c, size_t x_frames, size_t start, size_t frames,
                                double *y);

/* A kernel of a stream: rows of taps (1 row: every channel), the frame its crossover starts at
 * (its change point; 0 for the first kernel, which has none) and the crossover's length (0: the
 * `block` of convolve_reference_stream()). */
typedef struct {
  const double *h; /* rows x taps */
  size_t taps;
  unsigned rows;
  size_t change;
  size_t span;
} ConvolveRefKernel;

/* The header's output for x (x_frames frames of `channels`, zeros after), frames x channels values
 * into y: each kernel filters the input from its change point on; the output crosses over
 * linearly from the kernel before during the X frames from a change point (X: the kernel's span,
 * or `block`): (1 - r) old + r new, r = (n - change + 1) / (X + 1); mix[n] (NULL: 1) is the wet
 * fraction of output frame n, the rest the input itself (0 from x_frames on). */
void convolve_reference_stream(const ConvolveRefKernel *kernels, size_t count, size_t block,
                               const double *x, unsigned channels, size_t x_frames, size_t frames,
                               const double *mix, double *y);

/* One kernel, no mix: h * x for frames x channels values, in a new array (free() it). */
double *convolve_reference(const double *h, size_t taps, unsigned rows, const double *x,
                           unsigned channels, size_t x_frames, size_t frames);

/* How the FFT path agreed with the direct sum at the random points it was checked at: their count
 * and the worst difference relative to |h| |x| (L2 norms: the bound of |y[n]| by
 * Cauchy-Schwarz, to which double rounding is relative), NaN if one was NaN. */
void convolve_reference_audit(size_t *points, double *worst);

#endif
