/* cudafft/spectrum.h: interval spectrum analysis of multichannel audio, as GStreamer's `spectrum`
 * element computes it, on the GPU or on the CPU behind one API. Plain C; no CUDA, GLib or
 * GStreamer types.
 *
 * The analysis (that of spectrum 1.22, restated so that both backends and the tests share it):
 *
 * - nfft = 2 bands - 2 (any even size >= 2). The analysed signal is either every channel
 *   (multi_channel) or one signal, the average of the channels. Integer samples are divided by
 *   2^(bits - 1) - 1 (32767, 8388607, 2147483647) as spectrum does; float samples are used as they
 *   are (F64 rounded to float).
 * - The stream is cut into intervals of frames (a frame: one sample of every channel). Interval
 *   lengths come from interval_ns and rate with spectrum's carry: every interval has
 *   floor(interval_ns rate / 1e9) frames (at least 1), and one frame more whenever the fractional
 *   parts dropped so far add up to a whole frame (the carry is checked before this interval's own
 *   fraction is added, as spectrum does).
 * - Within an interval an FFT runs after every nfft frames counted from the interval's start, and
 *   once at the interval's end if none ran in it. Each FFT transforms the nfft most recent samples
 *   (zeros before the first sample since create/reset), windowed by the periodic Hamming window
 *   w[i] = 0.53836 - 0.46164 cos(2 pi i / nfft).
 * - Band k of an FFT: L = 10 log10(|X[k]|^2 / nfft^2) dB (unnormalised DFT X), raised to
 *   `threshold` where below it; phase = atan2(Im X[k], Re X[k]). A non-finite |X[k]|^2 (NaN or
 *   Inf samples in the window) gives NaN for both, which stays NaN through the average, so NaN and
 *   Inf samples show only in the intervals whose FFT windows hold them.
 * - An interval's result is the mean of its FFTs' levels (and phases), band by band.
 *
 * Results are posted per interval. An interval ends after its last frame is pushed;
 * cudafft_spectrum_finish() also ends a partial one (spectrum drops it at EOS).
 *
 * Threads: an object must not be used by two threads at once; different objects may be.
 * Errors: as in cudafft.h (status codes, cudafft_last_error_message()).
 */
#ifndef CUDAFFT_SPECTRUM_H
#define CUDAFFT_SPECTRUM_H

#include <cudafft/common.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAFFT_SPECTRUM_MIN_BANDS 2
/* nfft = 2 bands - 2 stays within INT_MAX, as in spectrum. */
#define CUDAFFT_SPECTRUM_MAX_BANDS (((size_t)2147483647 + 2) / 2)

/* The settings that may change while the stream runs (cudafft_spectrum_set_options()). */
typedef struct {
  uint64_t interval_ns; /* >= 1 */
  int threshold;        /* dB, <= 0 */
  int phase;            /* nonzero: also average the phases */
} CudafftSpectrumOptions;

typedef struct {
  size_t bands;               /* CUDAFFT_SPECTRUM_MIN_BANDS..MAX_BANDS; nfft = 2 bands - 2 */
  unsigned channels;          /* input channels, 1..CUDAFFT_MAX_CHANNELS */
  unsigned rate;              /* frames per second, >= 1 */
  CudafftSampleFormat format; /* input samples: every format of cudafft/common.h */
  int multi_channel;          /* nonzero: a spectrum per channel; zero: of the channels' mean */
  CudafftSpectrumOptions options;
  /* Host bytes the caller keeps per value of the results it reads, for magnitude and for phase
   * each (its own copies: a GStreamer message holds a GValue and a float per value), counted in
   * create's memory check for as many results as one push returns, so that a configuration whose
   * results the caller could not hold is refused there. 0: none. */
  size_t result_value_bytes;
} CudafftSpectrumConfig;

/* One finished interval. magnitude and phase hold `spectra` rows of `bands` floats, channel 0
 * first (spectra = channels with multi_channel, else 1). They stay valid until the next push,
 * finish, reset or destroy. */
typedef struct {
  size_t frames;          /* frames in the interval */
  size_t ffts;            /* FFTs averaged (>= 1) */
  int threshold;          /* the threshold the interval was analysed with */
  const float *magnitude; /* mean level in dB, each >= threshold or NaN */
  const float *phase;     /* mean phase in radians; NULL when the interval ran without phase */
} CudafftSpectrumResult;

typedef struct CudafftSpectrum CudafftSpectrum;

/* Validates config (INVALID_SIZE for bands, INVALID_VALUE for the rest) and makes the analyser,
 * allocating everything it will need (DEVICE_OUT_OF_MEMORY or HOST_OUT_OF_MEMORY, with the sizes
 * in the message, where bands x channels is too large: its own memory and the caller's copies of
 * the results, result_value_bytes, are checked against the machine's before anything is
 * allocated); *spectrum is NULL on failure. Backends as
 * in cudafft_plan_create(). Every size of nfft is supported by both backends. */
CUDAFFT_API CudafftStatus cudafft_spectrum_create(CudafftSpectrum **spectrum,
                                                  CudafftBackend backend, int device_id,
                                                  const CudafftSpectrumConfig *config);
CUDAFFT_API void cudafft_spectrum_destroy(CudafftSpectrum *spectrum); /* NULL allowed */
CUDAFFT_API CudafftBackend cudafft_spectrum_get_backend(const CudafftSpectrum *spectrum);
/* The CUDA device it runs on (cudafft/common.h, Devices); -1 for the CPU backend and NULL. */
CUDAFFT_API int cudafft_spectrum_get_device(const CudafftSpectrum *spectrum);

/* Rows of `bands` floats in a result: channels with multi_channel, else 1. */
CUDAFFT_API size_t cudafft_spectrum_spectra(const CudafftSpectrum *spectrum);

/* Bytes of one input frame (channels x sample size). */
CUDAFFT_API size_t cudafft_spectrum_frame_bytes(const CudafftSpectrum *spectrum);

/* Applies new options from the start of the next interval (at once when the current one has no
 * frames yet). INVALID_VALUE (and nothing changes) for an interval of 0 or a threshold above 0. */
CUDAFFT_API CudafftStatus cudafft_spectrum_set_options(CudafftSpectrum *spectrum,
                                                       const CudafftSpectrumOptions *options);

/* Frames still missing from the current interval (>= 1). */
CUDAFFT_API size_t cudafft_spectrum_frames_left(const CudafftSpectrum *spectrum);

/* Frames pushed into the current interval so far. */
CUDAFFT_API size_t cudafft_spectrum_frames_pending(const CudafftSpectrum *spectrum);

/* Analyses up to `frames` interleaved frames from in. It stops early, after the interval that
 * gives it its max_results-th result (max_results >= 1; at most cudafft_spectrum_max_results()
 * are kept), so that a caller posting results as it goes bounds its memory. *consumed receives the
 * frames taken (all of them unless it stopped early) and *results the intervals finished; read
 * them with cudafft_spectrum_result(). A failure resets the analyser. */
CUDAFFT_API CudafftStatus cudafft_spectrum_push(CudafftSpectrum *spectrum, const void *in,
                                                size_t frames, size_t max_results, size_t *consumed,
                                                size_t *results);

/* CUDA backend only: as cudafft_spectrum_push(), but in is device memory of the analyser's context
 * (the device id it was made with, or the attached context's: cudafft/common.h, Contexts),
 * complete before the call or at the fence `after` (NULL: complete; cudafft/common.h, Fences),
 * which the analysis is ordered after on the device, and read in place until it returns (the
 * samples never cross the bus). Pushes from device and host memory may follow one another in any
 * order. UNSUPPORTED on the CPU backend; WRONG_DEVICE_MEMORY for memory its kernels cannot reach
 * (cudafft/common.h, Device memory), before anything is queued. */
CUDAFFT_API CudafftStatus cudafft_spectrum_push_device(CudafftSpectrum *spectrum, const void *in,
                                                       size_t frames, size_t max_results,
                                                       size_t *consumed, size_t *results,
                                                       const CudafftFence *after);

/* The most results one push can return. */
CUDAFFT_API size_t cudafft_spectrum_max_results(const CudafftSpectrum *spectrum);

/* Ends the current interval early if it holds frames (running its one FFT if none ran yet), as
 * a result: *results is 0 or 1. The next interval starts with the next frame pushed; the samples
 * stay in the history. For EOS, and before a change that needs a new analyser. */
CUDAFFT_API CudafftStatus cudafft_spectrum_finish(CudafftSpectrum *spectrum, size_t *results);

/* Result i (0 <= i < the count the last push or finish returned). */
CUDAFFT_API CudafftStatus cudafft_spectrum_result(const CudafftSpectrum *spectrum, size_t i,
                                                  CudafftSpectrumResult *result);

/* Forgets everything pushed: history (back to zeros), the open interval and the interval carry.
 * For a discontinuity or a flush. Options set with set_options apply from here on. */
CUDAFFT_API void cudafft_spectrum_reset(CudafftSpectrum *spectrum);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_SPECTRUM_H */
