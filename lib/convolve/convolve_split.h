/* convolve_split.h: the split path of cudafft/convolve.h (block sizes below
 * CUDAFFT_CONVOLVE_BLOCK): a kernel cut into a head, filtered in the time domain, and two tails
 * filtered on the partitioned path in blocks of B = CUDAFFT_CONVOLVE_BLOCK frames, all on one
 * backend: the near tail (one partition of B taps) in the run that completes a block, the far tail
 * (the rest) by a worker thread (convolve_worker.h) while the next block comes in, so that a long
 * kernel's work per block does not land in one short run. Internal to the library; the front end
 * (convolve.c) holds one as it holds a backend filter.
 *
 * Why every output is on time: the near tail starts at tap a = B - L (block size L; a = B for
 * L = 0), so output frame n needs its output z[m] = sum_k near[k] x[m - k] for m = n - a. Its
 * block j (frames [j B, j B + B)) is filtered as soon as its last input frame is in. A run that
 * ends at frame q (input frames before q are in) needs z up to q - 1 - a, which is filtered when
 * q mod B <= a: true when q is a multiple of L (q mod B <= B - L), and for any q when L = 0. The
 * far tail starts at a + B: block j, handed to the worker when its last frame is in (at frame (j +
 * 1) B), is first needed by output frame j B + a + B = (j + 2) B - L, so the worker has B - L
 * frames of input time to filter it (B for L = 0); the run that needs it waits for it. So a split
 * filter takes runs of whole blocks of L frames (of any length for L = 0) and, like a backend
 * filter, never lags.
 *
 * A backend with a split path of its own (CUDAFFT_CONVOLVE_SPLIT, convolve_backend.h) runs the
 * whole of it instead, by the same schedule; the composition is for the others. */
#ifndef CUDAFFT_CONVOLVE_SPLIT_H
#define CUDAFFT_CONVOLVE_SPLIT_H

#include "convolve_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudafftConvolveSplit CudafftConvolveSplit;

/* The first tap of the tail for block size L (0 or a power of two up to B). */
size_t cudafft_convolve_split_head_taps(size_t block_size);

/* Taps [first, first + count) of every row of kernel (first + count <= its taps), rows x count in
 * a new array for free(); NULL without memory. */
double *cudafft_convolve_kernel_columns(const CudafftConvolveKernel *kernel, size_t first,
                                        size_t count);

/* Makes a split filter for spec (its path ignored; its kernel has at least
 * CUDAFFT_CONVOLVE_DIRECT_TAPS taps) at block size L on the backend `ops`: a direct-path filter of
 * the kernel's first min(taps, head) taps and, for longer kernels, partitioned filters of the next
 * B taps and of the rest (with its worker thread). Statuses as the backend's create. */
CudafftStatus cudafft_convolve_split_create(const CudafftConvolveBackend *ops,
                                            const CudafftConvolveSpec *spec, size_t block_size,
                                            CudafftConvolveSplit **split);

void cudafft_convolve_split_destroy(CudafftConvolveSplit *split); /* NULL allowed */

/* A backend filter's run (convolve_backend.h) for `job->frames` frames, a multiple of L from a
 * multiple of L since create or reset (any for L = 0). */
CudafftStatus cudafft_convolve_split_run(CudafftConvolveSplit *split,
                                         const CudafftConvolveJob *job);

/* History to zeros, as a backend filter's reset. */
CudafftStatus cudafft_convolve_split_reset(CudafftConvolveSplit *split);

/* Whether split is the backend's own split filter (the CUDA backend's, for F32), whose runs read
 * and write device memory in place like any of the backend's paths; else it is composed of parts
 * summed on the host. */
int cudafft_convolve_split_is_native(const CudafftConvolveSplit *split);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_CONVOLVE_SPLIT_H */
