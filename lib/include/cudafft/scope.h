/* cudafft/scope.h: a spectrum display engine: interleaved audio in, video frames out. It keeps the
 * recent audio, and for each video frame analyses it (window, FFT, weighting, bands, smoothing,
 * peak hold and decay) and draws the frame (a scrolling spectrogram, or bars with peak markers)
 * in a colormap, on the GPU (where only the finished frame is copied back) or on the CPU, which
 * draws the same pixels. Plain C; no CUDA, GLib or GStreamer types.
 *
 * The analysis of one frame, given the `frames` samples per channel it brings (0 allowed):
 *
 * - Samples: integers are divided by 2^(bits - 1) (S16 by 32768), floats are used as they are (F64
 *   rounded to float). Each channel's history holds the fft_size most recent samples (zeros
 *   before the first sample since create or reset).
 * - FFTs: K = 1 where frames <= fft_size / 2, else K = min(ceil(frames / (fft_size / 2)), 64)
 *   transforms per channel, FFT j (j = 0 .. K - 1) over the fft_size samples that end
 *   floor(j frames / K) samples before the newest, so that the frame's samples are all seen.
 *   Window: periodic Hann, w[i] = 1/2 - 1/2 cos(2 pi i / fft_size) (computed in double, rounded to
 *   float once).
 * - Bin power: P_k = |X_k|^2 4 / (fft_size S2), S2 = sum w[i]^2: a sine of amplitude A reads A^2
 *   summed over the bins of its main lobe, so a band that holds it reads 20 log10(A) dB (0 dB for
 *   a full-scale sine); NaN or infinite powers (NaN or Inf samples in the window) count as 0. The K
 *   transforms' powers are averaged.
 * - Bands: a lane per channel (multi_channel) or one lane for all (the channels' powers averaged,
 *   so that channels in opposite phase do not cancel). Each lane's bands follow the layout of
 *   cudafft/bands.h (scale, bands_per_octave, frequencies resolved by cudafft_band_layout_resolve)
 *   with the weighting's gains, by its bins-to-band rules. How many bands: OCTAVE, the IEC 61260-1
 *   bands in range; LINEAR, LOG and MEL, one per pixel row of a lane (spectrogram) or per pixel
 *   column (bars).
 * - Smoothing: each band's power is averaged exponentially over frames, S <- S + alpha (P - S),
 *   alpha = 1 - exp(-frame_seconds / tau), tau = smoothing_ms / 1000 (alpha = 1 for 0): the time
 *   weighting of a sound level meter. Level L = 10 log10(S) dB, at least -300 dB.
 * - Peaks (bars): every level is held for H = clamp(round(peak_hold_ms / 1000 / frame_seconds),
 *   1, 1024) frames (the current one included), then falls by peak_decay_db_per_s frame_seconds
 *   dB per frame; the peak marker shows the highest of those: peak = max(the last H levels, D),
 *   D <- max(D, the level that just left the window) - decay per frame. (Written this way the
 *   peak is a continuous function of the levels, so that the two backends, whose levels differ in
 *   the last bits, cannot take different branches.)
 *
 * The drawing, on width x height pixels; a lane per channel stacks lanes from the top, each
 * height / lanes rows high (channel 0 first; rows left over at the bottom are black):
 *
 * - A level's place in the colormap is t = clamp((L - db_min) / (db_max - db_min), 0, 1), and a
 *   colormap gives a colour for each t: VIRIDIS and MAGMA interpolate linearly between the 256
 *   entries of matplotlib's tables (Smith and van der Walt, CC0), GREY is (t, t, t). Colour
 *   components c in [0, 1] become bytes as (uint8)(c 255 + 0.5).
 * - SPECTROGRAM: a column per frame, the newest at the right, scrolling left; a row shows its
 *   band's level in the colormap, low frequencies at the bottom. LINEAR/LOG/MEL: row r from the
 *   bottom of a lane shows band r; OCTAVE (N bands): row r shows band floor((2r + 1) N / (2 h)).
 *   The columns before the first frame show level -300 dB.
 * - BARS: LINEAR/LOG/MEL: band x in pixel column x; OCTAVE: band b in columns floor(b W / N) ..
 *   floor((b + 1) W / N) - 1, the last (that width) / 8 of them left black as a gap. A bar rises
 *   t h pixels from the bottom of its lane and is anti-aliased: a row r (from the bottom) is
 *   covered min(max(t h - r, 0), 1) and drawn as that fraction of colormap((r + 1/2) / h) over
 *   black. The peak marker is a white band m = max(1, h / 64) pixels high whose top is at t_peak
 *   h, blended over the bar by the fraction of each row it covers.
 *
 * Both backends apply these formulas in float from one source (lib/scope/scope_values.h); they
 * differ only in the last bits of the FFTs and logarithms, so their frames agree within 1 in each
 * byte (the tests check every pixel).
 *
 * Threads: an object must not be used by two threads at once; different objects may be.
 * Errors: as in cudafft/common.h (status codes, cudafft_last_error_message()).
 */
#ifndef CUDAFFT_SCOPE_H
#define CUDAFFT_SCOPE_H

#include <cudafft/bands.h>
#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest frame either side, and how many samples per channel one frame may bring. */
#define CUDAFFT_SCOPE_MAX_SIDE 16384
#define CUDAFFT_SCOPE_MAX_FRAMES ((size_t)1 << 22)
/* The longest peak hold, in frames. */
#define CUDAFFT_SCOPE_MAX_HOLD_FRAMES 1024
/* The lowest level, in dB. */
#define CUDAFFT_SCOPE_FLOOR_DB -300.0f

typedef enum {
  CUDAFFT_SCOPE_SPECTROGRAM = 0,
  CUDAFFT_SCOPE_BARS,
  CUDAFFT_SCOPE_STYLE_COUNT_ /* not a style */
} CudafftScopeStyle;

typedef enum {
  CUDAFFT_COLORMAP_VIRIDIS = 0,
  CUDAFFT_COLORMAP_MAGMA,
  CUDAFFT_COLORMAP_GREY,
  CUDAFFT_COLORMAP_COUNT_ /* not a colormap */
} CudafftColormap;

/* Pixel layouts, named by their bytes in memory (GStreamer's names): X is a byte set to 255. */
typedef enum {
  CUDAFFT_PIXELS_RGBX = 0,
  CUDAFFT_PIXELS_BGRX,
  CUDAFFT_PIXELS_XRGB,
  CUDAFFT_PIXELS_XBGR,
  CUDAFFT_PIXELS_RGB,
  CUDAFFT_PIXELS_BGR,
  CUDAFFT_PIXELS_COUNT_ /* not a layout */
} CudafftPixelFormat;

/* The settings that may change from one frame to the next (cudafft_scope_set_options()). */
typedef struct {
  CudafftScopeStyle style;
  int multi_channel; /* nonzero: a lane per channel; zero: one lane, the channels' mean power */
  CudafftFrequencyScale scale;
  unsigned bands_per_octave;           /* OCTAVE: 1, 3, 6, 12 or 24 */
  double min_frequency, max_frequency; /* Hz; 0: automatic (cudafft_band_layout_resolve) */
  CudafftWeighting weighting;
  float db_min, db_max; /* the colormap's range, db_min < db_max */
  CudafftColormap colormap;
  float smoothing_ms;        /* >= 0; 0: none */
  float peak_hold_ms;        /* >= 0 */
  float peak_decay_db_per_s; /* >= 0 */
} CudafftScopeOptions;

typedef struct {
  unsigned channels;          /* 1..CUDAFFT_MAX_CHANNELS, at most one per pixel row */
  unsigned rate;              /* frames per second, >= 1 */
  CudafftSampleFormat format; /* input samples: every format of cudafft/common.h */
  size_t fft_size;            /* a power of two, CUDAFFT_FUSED_MIN_SIZE..CUDAFFT_MAX_SIZE */
  size_t max_frames;          /* most samples per channel one render brings, 1..MAX_FRAMES */
  unsigned width, height;     /* pixels, 1..CUDAFFT_SCOPE_MAX_SIDE */
  CudafftPixelFormat pixels;
  size_t stride; /* bytes from one row to the next, >= width x bytes per pixel (a multiple of 4
                    for 4-byte pixels) */
  double frame_seconds; /* the time one frame stands for (1 / frame rate), > 0 */
  CudafftScopeOptions options;
} CudafftScopeConfig;

typedef struct CudafftScope CudafftScope;

/* Validates config (INVALID_SIZE for fft_size and the frame's sides, INVALID_VALUE for the rest,
 * with the value in the message) and makes the scope, allocating its history and drawing state
 * (DEVICE_OUT_OF_MEMORY or HOST_OUT_OF_MEMORY where they do not fit; UNSUPPORTED where the GPU's
 * shared memory cannot hold an FFT of fft_size). Backends as in cudafft_plan_create(). */
CUDAFFT_API CudafftStatus cudafft_scope_create(CudafftScope **scope, CudafftBackend backend,
                                               int device_id, const CudafftScopeConfig *config);
CUDAFFT_API void cudafft_scope_destroy(CudafftScope *scope); /* NULL allowed */
CUDAFFT_API CudafftBackend cudafft_scope_get_backend(const CudafftScope *scope);
/* The CUDA device it runs on (cudafft/common.h, Devices); -1 for the CPU backend and NULL. */
CUDAFFT_API int cudafft_scope_get_device(const CudafftScope *scope);

/* Bytes of one pixel of a layout (3 or 4; 0 for an unknown one). */
CUDAFFT_API size_t cudafft_scope_pixel_bytes(CudafftPixelFormat pixels);

/* Checks options (INVALID_VALUE with a message naming the value) and applies them from the next
 * render on. A change of style, multi_channel, scale, bands_per_octave, the frequencies, the
 * weighting or the peak hold starts the display afresh (bands, smoothing, peaks and the
 * spectrogram's columns); db_min, db_max and the colormap recolour what is shown, the spectrogram's
 * history included; smoothing and decay apply to the next frames. The frequencies are checked
 * against the rate here (cudafft_band_layout_resolve), so a failure leaves the old options. */
CUDAFFT_API CudafftStatus cudafft_scope_set_options(CudafftScope *scope,
                                                    const CudafftScopeOptions *options);

/* Appends `frames` interleaved frames of `in` (frames <= max_frames; in may be NULL when frames is
 * 0) to the history, analyses, advances the display by one frame and draws it into pixels: height
 * rows of `stride` bytes, host memory (page-locked memory, cudafft_pinned_alloc(), copies fastest
 * from the GPU). Bytes between a row's last pixel and the stride are left as they are. On failure
 * the scope is reset. */
CUDAFFT_API CudafftStatus cudafft_scope_render(CudafftScope *scope, const void *in, size_t frames,
                                               void *pixels);

/* CUDA backend only: as cudafft_scope_render(), but the frame goes to device memory: `pixels` is a
 * device pointer of the scope's context (the device id, or attached context, the scope was made
 * with; cudafft/common.h, Contexts), height rows `pitch` bytes apart (pitch >= width x pixel bytes,
 * any alignment: from cuMemAllocPitch, say). Bytes between a row's last pixel and the pitch are
 * left as they are. Returns once the frame is complete in device memory (the host has waited for
 * it): a consumer on any stream may read it. NULL_POINTER for a NULL scope, pixels or (frames > 0)
 * in; INVALID_VALUE, with the sizes, for a pitch too small; UNSUPPORTED on the CPU backend;
 * WRONG_DEVICE_MEMORY for pixels its kernels cannot reach (cudafft/common.h, Device memory), before
 * anything is drawn. On another failure the scope is reset. */
CUDAFFT_API CudafftStatus cudafft_scope_render_device(CudafftScope *scope, const void *in,
                                                      size_t frames, void *pixels, size_t pitch);

/* The bands of each lane with the current options, and their centre frequencies in Hz (count
 * values; NULL to only count), for labels. */
CUDAFFT_API size_t cudafft_scope_bands(const CudafftScope *scope, double *centres);

/* Forgets the audio (history back to zeros) and the display (levels, peaks, columns). For a
 * discontinuity or a flush. */
CUDAFFT_API CudafftStatus cudafft_scope_reset(CudafftScope *scope);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_SCOPE_H */
