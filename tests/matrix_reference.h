/* matrix_reference.h: the matrix convolution of cudafft/matrix.h in double precision, for the
 * library's matrix tests (host and device memory alike): the direct matrix sum
 * y_j = sum_i h_ij * x_i (each term by convolve_reference_channel()), the same with the input
 * spectra older than a block missing (the delay line's reach), a stream's output with its changes
 * of responses (the header's crossover), and the comparison of an output with it. Plain C. */
#ifndef CUDAFFT_MATRIX_REFERENCE_H
#define CUDAFFT_MATRIX_REFERENCE_H

#include <cudafft/common.h>

#include <stddef.h>

/* A set of responses, the frame its crossover starts at (0 for the first) and the first block of
 * input spectra its delay line still held when it was set (reach: 0 where every block since the
 * reset was there). The delay line keeps as many blocks as the longest responses set since create
 * have partitions, so responses longer than any before do not see the input older than that. */
typedef struct {
  double *h; /* inputs x outputs x taps */
  size_t taps;
  size_t change;
  size_t reach;
} MatrixRefSet;

/* y (frames x outputs) = sum_i h_ij * x_i, x (x_frames x inputs, zeros after). */
void matrix_reference(const double *h, size_t taps, unsigned inputs, unsigned outputs,
                      const double *x, size_t x_frames, size_t frames, double *y);

/* The partitions of block_size taps the longest of rows x taps responses takes (up to its last
 * nonzero tap), as the library counts them for its delay line. */
size_t matrix_reference_parts(const double *h, size_t rows, size_t taps, size_t block_size);

/* The header's output for responses sets[0..count) (each from its change point on, crossing over
 * during the block_size frames from it; block_size: the change unit, CUDAFFT_MATRIX_MIN_BLOCK at
 * block size 0), frames x outputs values in a new array (free() it). */
double *matrix_reference_stream(const MatrixRefSet *sets, size_t count, unsigned inputs,
                                unsigned outputs, size_t block_size, const double *x,
                                size_t x_frames, size_t frames);

/* The worst error of any sample of out (frames x outputs values of `format`) against y, relative
 * to the RMS of that output's y over the frames (INFINITY for a NaN, or for a sample that is not
 * exactly 0 where its output's y is 0 throughout), and where it is (*frame, *output; may be
 * NULL). */
double matrix_reference_error(CudafftSampleFormat format, const void *out, const double *y,
                              size_t frames, unsigned outputs, size_t *frame, unsigned *output);

#endif
