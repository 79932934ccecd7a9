/* cudafft/matrix.h: streaming matrix convolution (N inputs x M outputs: true-stereo reverbs,
 * surround or Ambisonics to binaural, loudspeaker arrays) on the GPU or on the CPU behind one API.
 * Plain C; no CUDA, GLib or GStreamer types.
 *
 * The filter: output sample n of output channel j is
 *     y_j[n] = sum_i sum_k h_ij[k] x_i[n - k],
 * over every input channel i, x_i[n] = 0 before the first sample since create, reset or drain.
 * h_ij is the response of entry (i, j): row i * outputs + j of the responses (input-major: a
 * true-stereo response's four channels L->L, L->R, R->L, R->R are rows 0..3 of a 2 x 2 matrix).
 *
 * How: uniformly partitioned overlap-save at the block size L (a power of two from
 * CUDAFFT_MATRIX_MIN_BLOCK to CUDAFFT_MATRIX_MAX_BLOCK). Input is taken in blocks of L frames; each
 * input's block b (with block b - 1 before it) is transformed once, by a 2L-point real FFT, into a
 * frequency-domain delay line shared by every output and every response; each entry is cut into
 * partitions of L taps, each zero-padded to 2L points and transformed once when the responses are
 * set; output j's block b is the inverse FFT of sum_i sum_p X_i[b - p] H_ij[p], second half: one
 * inverse FFT per output, however many inputs feed it. An entry whose taps are all zero is empty
 * and costs nothing (no spectra kept, no products); an entry's partitions after its last nonzero
 * tap are not kept either, so responses of different lengths cost their own lengths.
 *
 * Block size 0 (zero latency): each entry's first H = CUDAFFT_MATRIX_MIN_BLOCK taps (its head)
 * are filtered in the time domain on the host as each frame comes, in double precision, summed
 * per output, and the rest (its tail, taps H on) as above at block size H from whole blocks of
 * past input, on the GPU for the CUDA backend: every output frame is written by the push that
 * brings its input frame. The host's work is inputs x outputs x H multiply-adds a frame (of the
 * non-empty heads), which bounds the matrices that run in real time at block size 0 (a 64 x 64
 * matrix is 131072 a frame).
 *
 * Lag: cudafft_matrix_push() writes y[produced..] for as many n as are ready, in order, and no
 * sample is ever skipped or repeated: output block b comes out once input block b is complete,
 * so produced + lag = frames pushed, 0 <= lag < L (the staged frames of a partial block). At block
 * size 0 the lag is always 0.
 *
 * Response changes (cudafft_matrix_set_responses()) take effect at a block boundary: at the first
 * input frame whose index since create/reset/drain is a multiple of L, at or after the frames
 * pushed so far (the change point s). Both matrices filter the input through one delay line of
 * input spectra, which holds as many blocks as the longest responses set since create have
 * partitions: so responses no longer than any set before have the input before s in full (their
 * reverberation of it is there from s on: a change cuts no tail), while longer ones reach back
 * only as far as the delay line did when they were set: their partition p (taps p L to p L + L - 1)
 * adds to output block b only where b - p >= b0 - P, for b0 the whole blocks pushed since
 * create/reset/drain and P the delay line's blocks when they were set (the input spectra before
 * were gone). The output crosses over linearly during the L frames from s:
 *     y[n] = (1 - r) y_old[n] + r y_new[n],  r = (n - s + 1) / (L + 1)  for s <= n < s + L,
 * y_new alone from s + L on. A second change before a first one's change point replaces the first;
 * one after it (while the first's crossover block is still staged) follows at its own change
 * point.
 * At block size 0 all of this holds with L = H (32): change points are multiples of H, the
 * crossover lasts H frames with r = (n - s + 1) / (H + 1), a change asked during one follows at
 * its own change point; for the delay line, the head (partition 0) always has its input, P is the
 * most partitions after the head of any responses set before (at least 1), and b0 the
 * whole blocks of H frames pushed before the last frame pushed ((frames pushed - 1) / H, 0 for
 * none): the tail filters a block when the frame after it comes.
 *
 * Samples: interleaved, the format given at create (F32 or F64), `inputs` channels in and
 * `outputs` channels out. F32 streams are filtered in single precision, F64 streams in double
 * precision end to end (samples, responses, transforms and sums), on both backends (at block size
 * 0 the heads' sums in double for both).
 *
 * Threads: an object must not be used by two threads at once; different objects may be.
 * Errors: as in cudafft.h (status codes, cudafft_last_error_message()); a failed push or drain
 * resets the filter as cudafft_matrix_reset() does (a pending change taking effect). */
#ifndef CUDAFFT_MATRIX_H
#define CUDAFFT_MATRIX_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAFFT_MATRIX_MIN_BLOCK 32
#define CUDAFFT_MATRIX_MAX_BLOCK 2048
#define CUDAFFT_MATRIX_BLOCK 2048          /* cudamatrixconvolve's default block size */
#define CUDAFFT_MATRIX_MAX_CHANNELS 1024   /* of inputs and of outputs each */
#define CUDAFFT_MATRIX_MAX_TAPS (1u << 24) /* of one response: 5.8 minutes at 48 kHz */

/* The responses: inputs x outputs rows of `taps` doubles, row-major, row i * outputs + j the
 * response from input i to output j (entry (i, j)); a row of zeros is an empty entry. Every tap
 * must be finite, and on an F32 stream also within the float range (|tap| <= FLT_MAX);
 * INVALID_VALUE otherwise. The values are copied; the caller keeps its array. */
typedef struct {
  const double *taps_data;
  size_t taps; /* 1..CUDAFFT_MATRIX_MAX_TAPS */
} CudafftMatrixResponses;

typedef struct {
  unsigned inputs;            /* 1..CUDAFFT_MATRIX_MAX_CHANNELS */
  unsigned outputs;           /* 1..CUDAFFT_MATRIX_MAX_CHANNELS */
  CudafftSampleFormat format; /* of input and output: F32 or F64 */
  size_t block_size;          /* L: a power of two, 32..2048; 0 for zero latency */
  CudafftMatrixResponses responses;
} CudafftMatrixConfig;

typedef struct CudafftMatrix CudafftMatrix;

/* Validates config (INVALID_VALUE, or INVALID_SIZE for taps 0 or too many) and makes the filter,
 * allocating the responses' spectra and the delay line up front: DEVICE_OUT_OF_MEMORY (or
 * HOST_OUT_OF_MEMORY), with the sizes in the message, where they do not fit. *matrix is NULL on
 * failure. Backends and device ids as in cudafft_plan_create(). */
CUDAFFT_API CudafftStatus cudafft_matrix_create(CudafftMatrix **matrix, CudafftBackend backend,
                                                int device_id, const CudafftMatrixConfig *config);
CUDAFFT_API void cudafft_matrix_destroy(CudafftMatrix *matrix); /* NULL allowed */
CUDAFFT_API CudafftBackend cudafft_matrix_get_backend(const CudafftMatrix *matrix);
/* The CUDA device it runs on (cudafft/common.h, Devices); -1 for the CPU backend and NULL. */
CUDAFFT_API int cudafft_matrix_get_device(const CudafftMatrix *matrix);

/* Bytes of one interleaved input frame (inputs x sample size) and output frame (outputs x sample
 * size). */
CUDAFFT_API size_t cudafft_matrix_input_frame_bytes(const CudafftMatrix *matrix);
CUDAFFT_API size_t cudafft_matrix_output_frame_bytes(const CudafftMatrix *matrix);

/* The block size L: the most the output can lag the input, plus one; 0 at zero latency. */
CUDAFFT_API size_t cudafft_matrix_get_block_size(const CudafftMatrix *matrix);

/* Frames pushed since create/reset/drain minus frames produced: the lag now. */
CUDAFFT_API size_t cudafft_matrix_lag(const CudafftMatrix *matrix);

/* Exactly the frames a push of `frames` input frames will produce now: size `out` for it. */
CUDAFFT_API size_t cudafft_matrix_output_frames(const CudafftMatrix *matrix, size_t frames);

/* Filters `frames` interleaved input frames (inputs channels); writes the output frames that
 * became ready to out (outputs channels; room for cudafft_matrix_output_frames(frames) frames;
 * NULL where that is 0) and their count to *produced. in and out must not overlap. frames may be
 * 0. */
CUDAFFT_API CudafftStatus cudafft_matrix_push(CudafftMatrix *matrix, const void *in, size_t frames,
                                              void *out, size_t *produced);

/* CUDA backend only: as cudafft_matrix_push(), with in, out or both in device memory of the
 * filter's context (the device id it was made with, or the attached context's: cudafft/common.h,
 * Contexts), as `on_device` (CudafftMemory flags: cudafft/common.h) says, so that samples in CUDA
 * memory do not cross the bus: at a block size L, whole blocks are read and written there by the
 * kernels that filter host samples, and the frames of a partial block wait in device memory of
 * the filter's own (a copy on the device) until their block is complete. At block size 0 the heads
 * are filtered on the host (see above): there every frame passes through host memory, the input
 * copied down and the output up, CUDAFFT_MATRIX_MAX_BLOCK frames at a time. Either way the samples
 * are those cudafft_matrix_push() writes for the same input. The input must be complete before the
 * call, or at the fence `after` (NULL: complete; cudafft/common.h, Fences). The filter's device
 * work runs on a stream of its own rather than in its context's batches (one block of a large
 * matrix fills the GPU by itself), so the host waits for `after` before any of it is queued, and
 * the call returns with the output complete and the input no longer read: *done (NULL allowed) is
 * always zeroed, which a consumer given it as its `after` takes as complete. Pushes in device and
 * in host memory may follow one another in any order. UNSUPPORTED on the CPU backend, INVALID_VALUE
 * for unknown flags, WRONG_DEVICE_MEMORY for memory its kernels cannot reach (cudafft/common.h,
 * Device memory): before anything is done, the filter then reset as after any failed push;
 * on_device 0 is cudafft_matrix_push(). */
CUDAFFT_API CudafftStatus cudafft_matrix_push_device(CudafftMatrix *matrix, const void *in,
                                                     size_t frames, void *out, size_t *produced,
                                                     unsigned on_device, const CudafftFence *after,
                                                     CudafftFence *done);

/* Frames cudafft_matrix_drain() will write: the lag, plus taps - 1 with tail (taps of the
 * responses in force at the end: the new ones where a change is pending). */
CUDAFFT_API size_t cudafft_matrix_drain_frames(const CudafftMatrix *matrix, int tail);

/* Ends the stream: writes the rest of the output as if zeros followed the input (a pending
 * change taking effect at its change point among them), up to the last input frame (tail 0) or up
 * to the end of the responses to it (tail nonzero), to out (room for
 * cudafft_matrix_drain_frames(tail) frames), *produced frames, then resets. */
CUDAFFT_API CudafftStatus cudafft_matrix_drain(CudafftMatrix *matrix, int tail, void *out,
                                               size_t *produced);

/* CUDA backend only: as cudafft_matrix_drain(), out in device memory of the filter's context
 * (complete when it returns): whole blocks are written there in place, and a last block of which
 * only the start is wanted (and at block size 0 every frame) through host memory, the same samples
 * as cudafft_matrix_drain()'s. Frames staged from device memory are padded with zeros on the host.
 * UNSUPPORTED on the CPU backend, WRONG_DEVICE_MEMORY for memory its kernels cannot reach, before
 * anything is written (the filter reset, as after any drain). */
CUDAFFT_API CudafftStatus cudafft_matrix_drain_device(CudafftMatrix *matrix, int tail, void *out,
                                                      size_t *produced);

/* Forgets the input (history to zeros, lag 0, output not yet produced dropped), for a flush or a
 * discontinuity; a pending change takes effect at once. */
CUDAFFT_API void cudafft_matrix_reset(CudafftMatrix *matrix);

/* Replaces every response, crossing over as the header's comment says (the inputs and outputs
 * stay; taps may change). INVALID_VALUE / INVALID_SIZE as at create (nothing changes);
 * DEVICE_OUT_OF_MEMORY / HOST_OUT_OF_MEMORY where the new spectra do not fit beside the old ones
 * (the responses in force stay, and so does a change whose change point has passed; one that has
 * not is dropped). */
CUDAFFT_API CudafftStatus cudafft_matrix_set_responses(CudafftMatrix *matrix,
                                                       const CudafftMatrixResponses *responses);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_MATRIX_H */
