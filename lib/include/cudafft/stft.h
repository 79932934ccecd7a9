/* cudafft/stft.h: streaming short-time Fourier analysis and weighted overlap-add synthesis of
 * multichannel audio, on the GPU or on the CPU, behind one API. Plain C; no CUDA, GLib or
 * GStreamer types.
 *
 * Analysis (CudafftStft) takes interleaved samples in S16, S32, F32 or F64 (cudafft/common.h),
 * keeps whatever a later frame still needs (on the device for the CUDA backend, so that each sample
 * crosses the bus once), and turns every complete frame into the spectrum of the windowed frame:
 *
 *   X_f,c[k] = sum_i w[i] x_c[f hop + i] e^(-2 pi i k i / n),  k = 0 .. n/2
 *
 * where x_c is channel c of the samples pushed since create/reset and w the analysis window. The
 * DFT is unnormalised. Frame f is written as `channels` rows of n/2 + 1 bins (n/2 rounded down),
 * channel 0 first; frames follow each other with no gaps. A bin is (re, im) for
 * CUDAFFT_REPRESENTATION_COMPLEX and one float otherwise.
 *
 * Sizes: n is any size from CUDAFFT_MIN_SIZE (16) to CUDAFFT_MAX_SIZE (16384) whose only prime
 * factors are 2, 3, 5 and 7 (400 and 160 for Whisper at 16 kHz, 480 for 10 ms at 48 kHz, 1000,
 * 3000, ...); any other is refused with INVALID_SIZE naming the nearest sizes. On the CUDA backend
 * the powers of two from CUDAFFT_FUSED_MIN_SIZE run fused kernels of their own, every other size
 * the mixed-radix ones (odd sizes as complex transforms); a size whose transform does not fit the
 * GPU's shared memory per block is refused at create with UNSUPPORTED, saying so (16384 points on
 * sm_75; of the mixed-radix sizes, whose transform of N = n/2 points, N = n for odd n, takes about
 * 17 N bytes: the largest odd ones on every GPU, and more on the smaller ones: docs/library.md
 * lists them).
 *
 * Synthesis (CudafftIstft) is the inverse: it takes frames of complex bins in that layout,
 * inverse-transforms each (scaled by 1/n), multiplies it by the synthesis window g and adds it
 * into the output at f hop. g is the analysis window divided by the overlap sum of its squares,
 *
 *   g[i] = w[i] / S[i mod hop],  S[r] = sum_j w[r + j hop]^2  (over r + j hop < n),
 *
 * so that analysis followed by synthesis gives back the input, from sample n - hop on (the first
 * n - hop samples lie in fewer frames: callers that need them too push n - hop zeros first and
 * drop them again, as the GStreamer elements do). cudafft_stft_check_synthesis() says which window
 * and hop pairs reconstruct well enough.
 *
 * Threads: an object must not be used by two threads at once; different objects may be.
 * Errors: as in cudafft.h (status codes, cudafft_last_error_message()).
 */
#ifndef CUDAFFT_STFT_H
#define CUDAFFT_STFT_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Periodic (DFT-even) windows of length n: w[i] = sum_m a_m cos(2 pi m i / n) with alternating
 * signs, so that overlapping frames at hops dividing n add up evenly. */
typedef enum {
  CUDAFFT_WINDOW_RECTANGULAR = 0, /* 1 */
  CUDAFFT_WINDOW_HANN,            /* 0.5 - 0.5 cos */
  CUDAFFT_WINDOW_HAMMING,         /* 0.54 - 0.46 cos */
  CUDAFFT_WINDOW_BLACKMAN,        /* 0.42 - 0.5 cos + 0.08 cos 2 */
  CUDAFFT_WINDOW_BLACKMAN_HARRIS, /* 0.35875 - 0.48829 cos + 0.14128 cos 2 - 0.01168 cos 3 */
  CUDAFFT_WINDOW_COUNT_           /* not a window */
} CudafftWindow;

typedef enum {
  CUDAFFT_REPRESENTATION_COMPLEX = 0, /* re, im */
  CUDAFFT_REPRESENTATION_MAGNITUDE,   /* |X| */
  CUDAFFT_REPRESENTATION_POWER,       /* |X|^2 */
  CUDAFFT_REPRESENTATION_DB,          /* 10 log10(max(|X|^2, 1e-20)): silence is -200 dB, not -inf;
                                         a NaN stays NaN */
  CUDAFFT_REPRESENTATION_COUNT_       /* not a representation */
} CudafftRepresentation;

/* Integer input samples are scaled to [-1, 1) by dividing by 2^15 and 2^31 (S24 is not taken). */
#define CUDAFFT_DB_FLOOR_POWER 1e-20f

typedef struct {
  size_t fft_size;                      /* n: a supported size (Sizes above) */
  size_t hop;                           /* 1..fft_size samples between frame starts */
  unsigned channels;                    /* 1..CUDAFFT_MAX_CHANNELS */
  CudafftWindow window;                 /* analysis window (synthesis: the one used in analysis) */
  CudafftRepresentation representation; /* analysis output; synthesis requires COMPLEX */
  CudafftSampleFormat format;           /* analysis input (S16, S32, F32, F64); synthesis
                                           ignores it (outputs F32) */
} CudafftStftConfig;

typedef struct CudafftStft CudafftStft;
typedef struct CudafftIstft CudafftIstft;

/* w[i] of the window of length n, in double precision: what both backends use. */
CUDAFFT_API double cudafft_window_value(CudafftWindow window, size_t n, size_t i);

/* Whether weighted overlap-add reconstructs the signal for this window, size and hop: OK, or
 * UNSUPPORTED (with a message naming the pair) where the overlap sum S falls below 1% of its peak
 * somewhere, which would amplify rounding errors more than a hundredfold (for example hann or
 * blackman at hop = n, blackman-harris at hop = 3n/4), or INVALID_VALUE / INVALID_SIZE for values
 * out of range. ratio (may be NULL) receives min S / max S. */
CUDAFFT_API CudafftStatus cudafft_stft_check_synthesis(CudafftWindow window, size_t fft_size,
                                                       size_t hop, double *ratio);

/* Analysis ------------------------------------------------------------------------------------ */

/* Validates config (INVALID_SIZE, INVALID_VALUE) and makes the analyser; *stft is NULL on
 * failure. Backends as in cudafft_plan_create(). */
CUDAFFT_API CudafftStatus cudafft_stft_create(CudafftStft **stft, CudafftBackend backend,
                                              int device_id, const CudafftStftConfig *config);
CUDAFFT_API void cudafft_stft_destroy(CudafftStft *stft); /* NULL allowed */
CUDAFFT_API CudafftBackend cudafft_stft_get_backend(const CudafftStft *stft);
/* The CUDA device it runs on (cudafft/common.h, Devices); -1 for the CPU backend and NULL. */
CUDAFFT_API int cudafft_stft_get_device(const CudafftStft *stft);

/* Floats one frame takes in the output: channels x (n/2 + 1) x (2 for COMPLEX, else 1). */
CUDAFFT_API size_t cudafft_stft_frame_floats(const CudafftStft *stft);

/* Samples per channel held for frames not yet complete (always < fft_size after a push). */
CUDAFFT_API size_t cudafft_stft_held(const CudafftStft *stft);

/* How many frames a push of `samples` more samples per channel would complete. */
CUDAFFT_API size_t cudafft_stft_frames_for(const CudafftStft *stft, size_t samples);

/* Appends `samples` samples per channel (interleaved, config->format; in == NULL appends zeros)
 * and writes every frame that is now complete to out, which must hold
 * cudafft_stft_frames_for(samples) frames; *frames (may be NULL) receives their number. Returns
 * when out is written. A failure resets the analyser (the held samples are lost). */
CUDAFFT_API CudafftStatus cudafft_stft_push(CudafftStft *stft, const void *in, size_t samples,
                                            float *out, size_t *frames);

/* CUDA backend only: as cudafft_stft_push(), with in, out or both in device memory of the
 * analyser's context (the device id it was made with, or the attached context's:
 * cudafft/common.h, Contexts), as `on_device` (CudafftMemory flags) says. The samples are read
 * and the frames written there on the device: they never cross the bus. The input must be
 * complete before the call, or at the fence `after` (NULL: complete; cudafft/common.h, Fences),
 * which the analyser's device work is ordered after. With `done` NULL the frames are complete when
 * the call returns; otherwise (frames in device memory) it returns once the work is queued, *done
 * receives the fence where they are complete (zeroed: they are already), and out must stay until
 * then; the analyser waits for that work at its next call at the latest. UNSUPPORTED on the CPU
 * backend; WRONG_DEVICE_MEMORY for memory its kernels cannot reach (cudafft/common.h, Device
 * memory), before anything is queued; on_device 0 is cudafft_stft_push(). */
CUDAFFT_API CudafftStatus cudafft_stft_push_device(CudafftStft *stft, const void *in,
                                                   size_t samples, float *out, size_t *frames,
                                                   unsigned on_device, const CudafftFence *after,
                                                   CudafftFence *done);

/* Forgets the held samples: the next push starts a new signal (frame 0 at its first sample). */
CUDAFFT_API void cudafft_stft_reset(CudafftStft *stft);

/* Synthesis ----------------------------------------------------------------------------------- */

/* Validates config (the representation must be COMPLEX; cudafft_stft_check_synthesis() must
 * accept window and hop) and makes the synthesiser. */
CUDAFFT_API CudafftStatus cudafft_istft_create(CudafftIstft **istft, CudafftBackend backend,
                                               int device_id, const CudafftStftConfig *config);
CUDAFFT_API void cudafft_istft_destroy(CudafftIstft *istft); /* NULL allowed */
CUDAFFT_API CudafftBackend cudafft_istft_get_backend(const CudafftIstft *istft);
/* The CUDA device it runs on (cudafft/common.h, Devices); -1 for the CPU backend and NULL. */
CUDAFFT_API int cudafft_istft_get_device(const CudafftIstft *istft);

/* Adds `frames` frames (frames x channels x (n/2 + 1) complex bins, as analysis writes them) into
 * the overlap-add and writes the frames x hop samples per channel that are now complete to out,
 * interleaved F32. Frame f of the stream (counting from create/reset) starts at output sample
 * f hop; out receives samples (f0 .. f0 + frames) hop, f0 the frames added before. The imaginary
 * parts of bin 0 and, for even n, bin n/2 are ignored. */
CUDAFFT_API CudafftStatus cudafft_istft_push(CudafftIstft *istft, const float *in, size_t frames,
                                             float *out);

/* CUDA backend only: as cudafft_istft_push(), with in, out or both in device memory of the
 * synthesiser's context, as `on_device` (CudafftMemory flags) says: the frames are read in place
 * (complete before the call or at the fence `after`, NULL: complete) and the samples written in
 * place. With `done` NULL the samples are complete, and frames in device memory no longer read,
 * when the call returns; otherwise (samples in device memory) it returns once the work is queued,
 * *done receives the fence where the samples are complete (zeroed: they are already), and in and
 * out must stay until then; the synthesiser waits for that work at its next call at the latest.
 * A synthesiser whose frame is too large for one device job (1024 channels at fft size 4096, for
 * one) writes its samples one channel group at a time and always waits. UNSUPPORTED on the CPU
 * backend; WRONG_DEVICE_MEMORY for memory its kernels cannot reach (cudafft/common.h, Device
 * memory), before anything is queued; on_device 0 is cudafft_istft_push(). */
CUDAFFT_API CudafftStatus cudafft_istft_push_device(CudafftIstft *istft, const float *in,
                                                    size_t frames, float *out, unsigned on_device,
                                                    const CudafftFence *after, CudafftFence *done);

/* Writes the fft_size - hop samples per channel after the last complete one (the tail of the
 * last frames, as if silent frames followed) to out, interleaved F32, and resets. */
CUDAFFT_API CudafftStatus cudafft_istft_drain(CudafftIstft *istft, float *out);

/* CUDA backend only: as cudafft_istft_drain(), out in device memory of the synthesiser's context
 * (complete when it returns). UNSUPPORTED on the CPU backend; WRONG_DEVICE_MEMORY for memory its
 * kernels cannot reach (cudafft/common.h, Device memory). */
CUDAFFT_API CudafftStatus cudafft_istft_drain_device(CudafftIstft *istft, float *out);

/* Forgets the overlap-add state: the next push starts a new stream. */
CUDAFFT_API void cudafft_istft_reset(CudafftIstft *istft);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_STFT_H */
