/* cudafft/convolve.h: streaming multichannel FIR filtering (long kernels, convolution reverb) on
 * the GPU or on the CPU behind one API. Plain C; no CUDA, GLib or GStreamer types.
 *
 * The filter: output sample n of channel c is
 *     y_c[n] = mix * sum_k h_c[k] x_c[n - k] + (1 - mix) * x_c[n],
 * x_c[n] = 0 before the first sample since create, reset or drain. h_c is kernel row c when the
 * kernel has one row per channel, else its only row (the same filter for every channel).
 *
 * Paths, chosen per kernel and block size (cudafft_convolve_set_block_size(), default
 * CUDAFFT_CONVOLVE_BLOCK):
 * - direct (taps < CUDAFFT_CONVOLVE_DIRECT_TAPS): the sum above in the time domain, term by term;
 *   output follows input at once (lag 0) and a delta kernel gives the input back exactly.
 * - split (every longer kernel at block sizes below CUDAFFT_CONVOLVE_BLOCK): a head of the kernel
 *   in the time domain (taps 0 .. CUDAFFT_CONVOLVE_BLOCK - L - 1 for block size L >= 32; taps
 *   0 .. CUDAFFT_CONVOLVE_BLOCK - 1 for block size 0) and the rest partitioned as below: the next
 *   B taps as each input block of B frames ends, the taps after them on a thread of the library's
 *   (at the idle scheduling policy where there is one) while the next block comes in. Input is
 *   taken in blocks of L frames (L 0: frame by frame), so output lags input by up to L frames.
 * - partitioned (every longer kernel at the default block size): uniformly partitioned
 *   overlap-save. The kernel is cut into
 *   P = ceil(taps / B) partitions of B = CUDAFFT_CONVOLVE_BLOCK taps, each zero-padded to an
 *   N = 2B point real FFT; input is taken in blocks of B frames; block j's spectrum (of input
 *   blocks j-1 and j) joins a frequency-domain delay line; output block j is the inverse FFT of
 *   sum_p X[j-p] H[p], second half. Output lags input by up to B frames: block j comes out once its
 *   last input frame is in.
 *
 * Lag: cudafft_convolve_push() writes y[produced..] for as many n as are ready, in order, and no
 * sample is ever skipped or repeated; produced + lag = frames pushed, 0 <= lag < latency() (or
 * lag 0 when latency() is 0).
 *
 * Kernel and block size changes (cudafft_convolve_set_kernel(), cudafft_convolve_set_block_size())
 * take effect at a block boundary: at the first input frame whose index since create/reset/drain
 * is a multiple of X, at or after the frames pushed so far (the change point s), where X is the
 * larger of the old and the new block size (a block size of 0 counting as
 * CUDAFFT_CONVOLVE_MIN_BLOCK). From s the new filter filters the input from s on (the input before
 * s is not in its history), and the output crosses over linearly during X frames:
 *     y[n] = (1 - r) y_old[n] + r y_new[n],  r = (n - s + 1) / (X + 1)  for s <= n < s + X,
 * y_new alone from s + X on. The path (and so the lag) may change with the kernel. At the default
 * block size, X = B for every kernel.
 *
 * Samples: interleaved, the format given at create, in and out alike. F32 streams are filtered
 * in single precision, F64 streams in double precision end to end (samples, kernel, transforms
 * and sums), on both backends.
 *
 * Threads: an object must not be used by two threads at once; different objects may be.
 * Errors: as in cudafft.h (status codes, cudafft_last_error_message()); a failed push, drain or
 * set_kernel resets the filter (as cudafft_convolve_reset()) and keeps its kernel.
 */
#ifndef CUDAFFT_CONVOLVE_H
#define CUDAFFT_CONVOLVE_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAFFT_CONVOLVE_BLOCK 2048     /* B: partition length, input block, the partitioned lag */
#define CUDAFFT_CONVOLVE_FFT_SIZE 4096  /* N = 2 B */
#define CUDAFFT_CONVOLVE_DIRECT_TAPS 64 /* kernels shorter than this take the direct path */
#define CUDAFFT_CONVOLVE_MIN_BLOCK 32   /* the smallest block size but 0 (zero latency) */

/* A kernel: `rows` rows of `taps` doubles, row-major (row 0 first). rows is 1 (every channel) or
 * the stream's channels (row c filters channel c). Every tap must be finite, and on an F32 stream
 * also within the float range (|tap| <= FLT_MAX: that filter runs in single precision);
 * INVALID_VALUE otherwise. The values are copied; the caller keeps its array. */
typedef struct {
  const double *taps_data;
  size_t taps; /* >= 1 */
  unsigned rows;
} CudafftConvolveKernel;

typedef struct {
  unsigned channels;          /* 1..CUDAFFT_MAX_CHANNELS */
  CudafftSampleFormat format; /* of input and output: F32 or F64 */
  CudafftConvolveKernel kernel;
  double mix; /* wet fraction, 0..1 */
} CudafftConvolveConfig;

typedef struct CudafftConvolve CudafftConvolve;

/* Validates config (INVALID_VALUE, or INVALID_SIZE for taps 0 or too many) and makes the filter,
 * allocating the kernel's spectra and the delay line up front: DEVICE_OUT_OF_MEMORY (or
 * HOST_OUT_OF_MEMORY), with the sizes in the message, where they do not fit. *convolve is NULL on
 * failure. Backends as in cudafft_plan_create(). */
CUDAFFT_API CudafftStatus cudafft_convolve_create(CudafftConvolve **convolve,
                                                  CudafftBackend backend, int device_id,
                                                  const CudafftConvolveConfig *config);
CUDAFFT_API void cudafft_convolve_destroy(CudafftConvolve *convolve); /* NULL allowed */
CUDAFFT_API CudafftBackend cudafft_convolve_get_backend(const CudafftConvolve *convolve);
/* The CUDA device it runs on (cudafft/common.h, Devices); -1 for the CPU backend and NULL. */
CUDAFFT_API int cudafft_convolve_get_device(const CudafftConvolve *convolve);

/* Bytes of one interleaved frame (channels x sample size). */
CUDAFFT_API size_t cudafft_convolve_frame_bytes(const CudafftConvolve *convolve);

/* The most the output can lag the input with the current kernel: the block size on the
 * partitioned and split paths, 0 on the direct path. During a crossover, the larger of the two
 * filters'. */
CUDAFFT_API size_t cudafft_convolve_latency(const CudafftConvolve *convolve);

/* Frames pushed since create/reset/drain minus frames produced: the lag now. */
CUDAFFT_API size_t cudafft_convolve_lag(const CudafftConvolve *convolve);

/* Most frames one push of `frames` input frames can produce (frames + the lag now): size `out`
 * for it. */
CUDAFFT_API size_t cudafft_convolve_max_output(const CudafftConvolve *convolve, size_t frames);

/* Exactly the frames a push of `frames` input frames will produce now (at most
 * cudafft_convolve_max_output(frames)): for a caller that sizes its output to the frame. */
CUDAFFT_API size_t cudafft_convolve_output_frames(const CudafftConvolve *convolve, size_t frames);

/* Filters `frames` interleaved input frames; writes the output frames that became ready to out
 * (room for cudafft_convolve_max_output(frames) frames, or cudafft_convolve_output_frames(); NULL
 * where that is 0) and their count to *produced. in and out must not overlap. frames may be 0. */
CUDAFFT_API CudafftStatus cudafft_convolve_push(CudafftConvolve *convolve, const void *in,
                                                size_t frames, void *out, size_t *produced);

/* CUDA backend only: as cudafft_convolve_push(), with in, out or both in device memory of the
 * filter's context (the device id it was made with, or the attached context's: cudafft/common.h,
 * Contexts), as `on_device` (CudafftMemory flags: cudafft/common.h) says. The filter reads and
 * writes them in place, so that samples in CUDA memory do not cross the bus. The input must be
 * complete before the call, or at the fence `after` (NULL: complete; cudafft/common.h, Fences):
 * the filter's device work is ordered after it, and the host waits for it only where a step reads
 * the input itself (a partial block staged, a host copy). With `done` NULL the output is complete
 * when the call returns; otherwise the call returns once the work is queued, *done receives the
 * fence where the output is complete (zeroed: it is already), and out, like in, must stay until
 * then; the filter waits for that work at its next call at the latest. Two things still pass
 * through host memory, in steps of CUDAFFT_CONVOLVE_BLOCK frames: the frames of a kernel crossover
 * (blended on the host) and every frame of an F64 stream at a block size below
 * CUDAFFT_CONVOLVE_BLOCK (whose parts are summed on the host). Pushes in device and in host memory
 * may follow one another in any order. UNSUPPORTED on the CPU backend; WRONG_DEVICE_MEMORY for
 * memory its kernels cannot reach (cudafft/common.h, Device memory), before anything is queued;
 * on_device 0 is cudafft_convolve_push(). */
CUDAFFT_API CudafftStatus cudafft_convolve_push_device(CudafftConvolve *convolve, const void *in,
                                                       size_t frames, void *out, size_t *produced,
                                                       unsigned on_device,
                                                       const CudafftFence *after,
                                                       CudafftFence *done);

/* Frames cudafft_convolve_drain() will write: the lag, plus taps - 1 with tail (taps of the
 * kernel in force at the end: the new one during a crossover). */
CUDAFFT_API size_t cudafft_convolve_drain_frames(const CudafftConvolve *convolve, int tail);

/* Ends the stream: writes the rest of the output as if zeros followed the input, up to the last
 * input frame (tail 0) or up to the end of the kernel's response to it (tail nonzero), to out
 * (room for cudafft_convolve_drain_frames(tail) frames), *produced frames, then resets (history
 * to zeros, a crossover in progress completed at once: the new kernel stays). */
CUDAFFT_API CudafftStatus cudafft_convolve_drain(CudafftConvolve *convolve, int tail, void *out,
                                                 size_t *produced);

/* Forgets the input (history to zeros, lag 0, output not yet produced dropped), for a flush or a
 * discontinuity; a crossover in progress completes at once (the new kernel stays). */
CUDAFFT_API void cudafft_convolve_reset(CudafftConvolve *convolve);

/* Replaces the kernel, crossing over as the header's comment says; rows must be 1 or the
 * channels. INVALID_VALUE / INVALID_SIZE as at create (nothing changes);
 * DEVICE_OUT_OF_MEMORY / HOST_OUT_OF_MEMORY where the new kernel does not fit (the old one stays).
 * A second change before a first one's change point replaces the first. */
CUDAFFT_API CudafftStatus cudafft_convolve_set_kernel(CudafftConvolve *convolve,
                                                      const CudafftConvolveKernel *kernel);

/* Sets the block size L, the latency of every kernel of CUDAFFT_CONVOLVE_DIRECT_TAPS taps or more:
 * 0 (zero latency) or a power of two from CUDAFFT_CONVOLVE_MIN_BLOCK to CUDAFFT_CONVOLVE_BLOCK (the
 * default). The newest kernel is remade for it and crosses over as a kernel change does; before
 * the first frame since create/reset/drain, with no change pending, it takes over at once.
 * INVALID_VALUE for other sizes (nothing changes); out-of-memory statuses as set_kernel's. */
CUDAFFT_API CudafftStatus cudafft_convolve_set_block_size(CudafftConvolve *convolve,
                                                          size_t block_size);

/* The block size last set (CUDAFFT_CONVOLVE_BLOCK until then). */
CUDAFFT_API size_t cudafft_convolve_get_block_size(const CudafftConvolve *convolve);

/* The wet fraction, 0..1, for the output frames produced from the next push or drain on.
 * INVALID_VALUE outside 0..1 or NaN (nothing changes). */
CUDAFFT_API CudafftStatus cudafft_convolve_set_mix(CudafftConvolve *convolve, double mix);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_CONVOLVE_H */
