/* matrix_element_util.h: what the cudamatrixconvolve element tests share (the matrix test and the
 * SOFA test): random responses, the double-precision direct matrix convolution they are checked
 * against, the crossover of a change while playing (as cudafft/matrix.h states it), the check of
 * every output value, and the output buffers read back as one run with their stamps checked. */
#ifndef MATRIX_ELEMENT_UTIL_H
#define MATRIX_ELEMENT_UTIL_H

#include "element_util.h"

#include <cudafft/matrix.h>

/* The relative L2 bound of an output in `format` against the reference. */
double mx_tolerance(CudafftSampleFormat format);

/* Random responses: rows x taps, uniform under a decaying envelope, exact in float; the rows in
 * `empty` (a bit mask: rows 0 to 63) all zeros. */
double *mx_random_responses(TestRng *rng, guint rows, gsize taps, guint64 empty);

/* y_j[n] = sum_i sum_k h_ij[k] x_i[n - k] for n < frames, directly in double, entry (i, j) row
 * i * outputs + j of h (rows of `taps`): frames x outputs, interleaved. */
double *mx_reference(const double *h, gsize taps, const TestSignal *x, guint outputs, gsize frames);

/* Checks `got` (frames x outputs, as mx_read_run reads it) for x filtered with h to the end of its
 * tail: x->frames + taps - 1 frames, every value against mx_reference. */
void mx_check_with_tail(const double *got, gsize frames, const double *h, gsize taps,
                        const TestSignal *x, guint outputs, const char *row);

/* Checks `got` (frames x outputs) for a change while playing from h_old to h_new made before input
 * sample `change` of x: the old matrix's output up to the next boundary of `block`, then a linear
 * crossover over one block, then the new matrix's (as cudafft/matrix.h states it); the crossover
 * region checked alone too. */
void mx_check_change(const double *got, const double *h_old, const double *h_new, gsize taps,
                     const TestSignal *x, guint outputs, gsize frames, gsize change, guint block,
                     const char *row);

/* Every value of got against want: none non-finite, relative L2 within tolerance, and each sample
 * within 20 x tolerance of the largest reference magnitude. */
void mx_check_values(const double *got, const double *want, gsize count, double tolerance,
                     const char *row);

/* The output buffers as one run stamped from `start` at `rate`: values (frames x channels) with
 * PTS, duration, OFFSET, OFFSET_END and DISCONT (first buffer only) checked; *frames their count.
 */
double *mx_read_run(GPtrArray *out, CudafftSampleFormat format, guint channels, guint rate,
                    GstClockTime start, gsize *frames, const char *row);

/* Sets the matrix property: rows of taps (row r's first lengths[r] taps; lengths NULL: all). */
void mx_set_matrix(GstElement *e, const double *h, guint rows, gsize taps, const gsize *lengths);

/* Fails unless the matrix property of `e` reads back as rows x taps responses `h`. */
void mx_check_matrix_reads(GstElement *e, const double *h, guint rows, gsize taps,
                           const char *what);

#endif /* MATRIX_ELEMENT_UTIL_H */
