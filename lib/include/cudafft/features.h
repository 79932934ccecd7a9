/* cudafft/features.h: the features speech and audio models take as input (mel spectrograms,
 * log-mel, Kaldi's filter-bank energies, MFCC, with deltas) from streaming multichannel audio, on
 * the GPU or on the CPU behind one API, computed with the conventions of the library a model was
 * trained with (Whisper, Kaldi, librosa, torchaudio, NeMo, python_speech_features), each a field of
 * the configuration. Plain C; no CUDA, GLib or GStreamer types.
 *
 * Each channel of the interleaved input is a stream of its own; its features are computed as
 * follows (every step a field of CudafftFeaturesConfig, named in brackets).
 *
 * 1. Samples. S16 and S32 are divided by 2^15 and 2^31 (F32 and F64 taken as they are, F64
 *    rounded to float), then multiplied by [sample_scale] (Kaldi recipes that read 16-bit audio
 *    as integers: 32768). With [preemphasis] SIGNAL the stream is then y[t] = x[t] - c x[t - 1]
 *    and y[0] = x[0] at the start of each utterance (NeMo, python_speech_features; c:
 *    [preemph_coeff]); every later step reads y where it says x.
 *
 * 2. Frames. n = [fft_size], L = [win_length] (<= n), hop = [hop]. A frame spans S samples:
 *    S = n with [span] FFT (torch.stft, librosa: the window sits in the middle of the n samples,
 *    o = (n - L) / 2 samples in) or S = L with [span] WINDOW (Kaldi, python_speech_features: o =
 *    0, the L samples zero-padded to n). Frame f of an utterance spans the samples from
 *    a(f) = f hop - P; its window reads u[i] = x[a(f) + o + i], i = 0 .. L - 1. P and the number
 *    of frames F of an utterance of N samples ([edges]; integer division throughout):
 *      CENTER (torch.stft, librosa center=True): P = S / 2; F = 1 + (N + 2 P - S) / hop.
 *      SNIP   (Kaldi snip_edges=true, librosa center=False): P = 0;
 *             F = N < S ? 0 : 1 + (N - S) / hop.
 *      KALDI  (Kaldi snip_edges=false): P = S / 2 - hop / 2; F = (N + hop / 2) / hop.
 *      END    (python_speech_features): P = 0; F = N <= S ? 1 : 1 + ceil((N - S) / hop).
 *    An utterance of no samples has no frames. Samples outside 0 .. N - 1 come from [pad]:
 *    REFLECT x[-t] = x[t], x[N - 1 + t] = x[N - 1 - t] (numpy's and torch's "reflect");
 *    SYMMETRIC x[-t] = x[t - 1], x[N - 1 + t] = x[N - t] (Kaldi's reflection, numpy's
 *    "symmetric"); both repeated where the signal is shorter than the padding; CONSTANT zeros.
 *    With [drop_last] the utterance's last frame is dropped (F - 1 frames: Whisper's
 *    stft[..., :-1], NeMo's sequence length).
 *
 * 3. Per frame, on u[0 .. L - 1], in Kaldi's order: dither (u[i] += [dither] g, g standard normal:
 *    see Dither below), DC removal ([remove_dc]: u[i] -= mean(u)), the raw energy E = sum u[i]^2
 *    ([energy] RAW), pre-emphasis ([preemphasis] FRAME, Kaldi's: u[i] -= c u[i - 1] for i = L - 1
 *    down to 1, then u[0] -= c u[0]), the window (u[i] *= w[i]), the windowed energy E = sum u[i]^2
 *    ([energy] WINDOWED).
 *
 * 4. Spectrum. X = the DFT of u zero-padded to n (where the zeros go does not change |X|), bins
 *    k = 0 .. n / 2. v[k] = (s |X[k]|^2)^(p / 2) with p = [power] (1: magnitude, 2: power) and
 *    s by [normalized]: 0: 1; 1: 1 / n (torch.stft's normalized=True, python_speech_features'
 *    1/NFFT); 2: 1 / sum w[i]^2 (torchaudio's normalized=True, "window").
 *    [energy] SPECTRUM: E = sum_k v[k] (python_speech_features).
 *
 * 5. Mel bank. m[j] = sum_k W[j][k] v[k], j = 0 .. M - 1, M = [n_mels]. mel(f) by [mel_scale]:
 *    HTK 2595 log10(1 + f / 700) (Kaldi's 1127 ln(1 + f / 700) is the same function), SLANEY
 *    f / (200 / 3) below 1000 Hz and 15 + 27 ln(f / 1000) / ln(6.4) above (librosa's default).
 *    f_lo = [f_min], f_hi = [f_max] (<= 0: Nyquist + f_max, as Kaldi's high_freq), mel points
 *    p[i] = mel(f_lo) + i (mel(f_hi) - mel(f_lo)) / (M + 1), i = 0 .. M + 1, h[i] = mel^-1(p[i]),
 *    bin k at f_k = k rate / n. [filters]:
 *      HZ   (librosa, torchaudio): W[j][k] = max(0, min((f_k - h[j]) / (h[j+1] - h[j]),
 *           (h[j+2] - f_k) / (h[j+2] - h[j+1]))).
 *      MEL  (Kaldi): with q = mel(f_k): (q - p[j]) / (p[j+1] - p[j]) for p[j] < q <= p[j+1],
 *           (p[j+2] - q) / (p[j+2] - p[j+1]) for p[j+1] < q < p[j+2], else 0 (Kaldi leaves out
 *           bin n/2, which these rules give 0 wherever f_hi <= Nyquist).
 *      BINS (python_speech_features): b[i] = floor((n + 1) h[i] / rate); W[j][k] = (k - b[j]) /
 *           (b[j+1] - b[j]) for b[j] <= k < b[j+1], (b[j+2] - k) / (b[j+2] - b[j+1]) for
 *           b[j+1] <= k < b[j+2], else 0.
 *    [mel_norm] SLANEY multiplies filter j by 2 / (h[j+2] - h[j]) (librosa's and torchaudio's
 *    norm="slaney"). A filter whose weights are all 0 (more bands than the bins can separate) is
 *    allowed, as librosa allows it with a warning: cudafft_features_empty_filters() names them.
 *
 * 6. Log ([kind] LOG_MEL and MFCC; [log], e = [log_floor]):
 *      LOG10    log10(max(m, e))              (Whisper: e = 1e-10)
 *      LN_ADD   ln(m + e)                     (NeMo: e = 2^-24; torchaudio MFCC log_mels: 1e-6)
 *      LN_GUARD ln(max(m, e))                 (Kaldi: e = FLT_EPSILON; python_speech_features:
 *                                              DBL_EPSILON, where it replaces exact zeros)
 *      DB       10 log10(max(m, e)) - 10 log10(max(e, [db_ref]))  (librosa power_to_db,
 *                                              torchaudio AmplitudeToDB: e = amin = 1e-10)
 *    Then, over each output unit (a frame with [output] FRAMES, a window or a chunk otherwise) and
 *    channel: l = max(l, the unit's largest finite log-mel value - [range]) where range > 0
 *    (librosa's and torchaudio's top_db: 80 dB; Whisper's max - 8.0), then l = (l + [shift]) *
 *    [scale] (Whisper: (l + 4) / 4). These apply to the log-mel values only, not the energy.
 *    The unit is what the libraries normalise over: Whisper and transformers'
 *    WhisperFeatureExtractor one 30 s item (a chunk here), librosa and torchaudio the whole array
 *    they are given (a window of every frame of the clip here).
 *
 * 7. Energy ([energy] not NONE; [kind] LOG_MEL or MFCC with [log] LN_ADD or LN_GUARD): e_log =
 *    ln(max(E, e)) (LN_GUARD) or ln(E + e) (LN_ADD), then max(e_log, ln([energy_floor])) where
 *    energy_floor > 0 (Kaldi's).
 *
 * 8. MFCC ([kind] MFCC): c[q] = sum_j D[q][j] l[j], q = 0 .. Q - 1, Q = [n_mfcc] <= M, D the
 *    orthonormal DCT-II: D[q][j] = sqrt((q == 0 ? 1 : 2) / M) cos(pi q (j + 0.5) / M) (scipy's
 *    dct(norm="ortho"), Kaldi's ComputeDctMatrix, torchaudio's create_dct(norm="ortho")). Lifter
 *    with K = [lifter] > 0 ([lifter_kind]): KALDI c[q] *= 1 + K / 2 sin(pi q / K) (Kaldi's
 *    cepstral_lifter, HTK, python_speech_features); LIBROSA c[q] *= 1 + K / 2 sin(pi (q + 1) / K)
 *    (librosa.feature.mfcc's lifter). With an energy, c[0] = e_log after the lifter (Kaldi's
 *    use_energy, python_speech_features' appendEnergy).
 *
 * 9. The frame's base vector b: LOG_MEL: [e_log,] l[0 .. M - 1] (the energy first, as Kaldi's
 *    fbank with use_energy); MEL: m[0 .. M - 1]; MFCC: c[0 .. Q - 1]. B = its length.
 *
 * 10. Deltas ([delta_order] 1 or 2, N = ([delta_width] - 1) / 2, width odd >= 3), per feature over
 *    the frames of an output unit's utterance part: the stream's frames with [output] FRAMES
 *    (edges at the utterance's first and last frame), a window's own frames otherwise (each
 *    window a clip of its own, as librosa and torchaudio see one):
 *      REGRESSION (torchaudio.functional.compute_deltas, python_speech_features delta, Kaldi's
 *        first order): d[t] = sum_n=1..N n (b[t + n] - b[t - n]) / (2 sum_n=1..N n^2), frames
 *        beyond either edge repeating the edge frame; order 2 applies the same to d (torchaudio's
 *        compute_deltas(compute_deltas(x))).
 *      SAVGOL (librosa.feature.delta, mode="interp"): the Savitzky-Golay filter of polynomial
 *        order [delta_order] and derivative [delta_order] over `width` frames (scipy's
 *        savgol_filter): at the edges the polynomial fitted to the first (last) width frames,
 *        evaluated at each of them. A unit of fewer than width frames gets zero deltas (librosa
 *        refuses it).
 *    The frame's features are b, then its deltas, then (order 2) the second deltas: B (1 + order)
 *    values.
 *
 * Output ([output]; C = channels, T = frames per output unit, D = features per frame; values F32
 * or IEEE half ([precision] F16: rounded to nearest even, beyond its range Inf, NaN stays NaN)):
 *   FRAMES   Each frame once it is complete: [channel][feature] (C D values); a push writes its
 *            frames one after another. Streaming recognition, keyword spotting.
 *   WINDOWS  Windows of T = [window_frames] frames, window w holding the utterance's frames
 *            w S .. w S + T - 1 (S = [window_stride] frames: overlapping, adjacent or gapped).
 *            Classification clips.
 *   CHUNKS   The stream cut into chunks of [chunk_samples] samples, each an utterance of its own
 *            (its own edges, padding, pre-emphasis start and frame count, T = its frames after
 *            drop_last): one window per chunk. The last chunk, where the stream ends inside it,
 *            is zero-padded to full length (Whisper's pad_or_trim, transformers'
 *            padding="max_length"). Whisper: 480000 samples at 16 kHz, 3000 frames per chunk.
 *   A window is [channel][frame][feature] ([layout] FRAME_MAJOR) or [channel][feature][frame]
 *   ([layout] FEATURE_MAJOR: Whisper's [n_mels][3000]); C T D values, windows one after
 *   another. cudafft_features_shape() gives the sizes.
 *
 * Finishing: cudafft_features_finish() ends the utterance: the frames that need samples past the
 * end (CENTER's right half, KALDI's and END's last frames, the padding) are made, deltas reach the
 * last frame, the last chunk is padded, and with [pad_partial] the window after the last complete
 * one, if it starts before the last frame, is written with its missing frames set to [pad_value]
 * (those frames take no part in its range clamp or deltas); then the object is as after reset.
 *
 * Timing: an output's stamp (cudafft_features_stamp()) gives its first frame and the stream sample
 * it stands for, samples counted from the first one pushed since create, reset or finish: frame f
 * of the chunk starting at sample c0 (0 unless CHUNKS) stands for sample c0 + f hop: the centre
 * of its window under CENTER (with span FFT and L = n), the first sample of its span under SNIP
 * and END, hop / 2 before its centre under KALDI. cudafft_features_latency() is the most samples
 * after that position an output waits for (its last frame's span, its deltas' look-ahead, a
 * window's T - 1 later frames, a chunk's end).
 *
 * Bad values: a NaN or Inf sample makes NaN or Inf only the features of the frames whose window
 * reads it (with SIGNAL pre-emphasis, also the frame whose window reads the next sample), and, with
 * deltas, the frames within their delta reach; the range clamp's maximum is over finite values, so
 * other frames of the unit keep their values. Silence gives the log flavour's floor, not -Inf.
 *
 * Dither ([dither] > 0; off by default, and off wherever tests compare bit for bit): g for sample
 * i of frame f of channel c is a standard normal from Box-Muller, g = sqrt(-2 ln u1) cos(2 pi u2),
 * u1 = ((h >> 40) + 1) / 2^24 and u2 = ((h >> 16) & 0xffffff) / 2^24 of h = splitmix64 of
 * [dither_seed] ^ (c << 48) ^ (f << 16) ^ i (splitmix64: the finaliser of Steele, Lea and Flood's
 * SplitMix64): the same noise on both backends up to float rounding, a different draw per frame
 * as Kaldi's.
 *
 * Threads: an object must not be used by two threads at once; different objects may be.
 * Errors: as in cudafft/common.h (status codes, cudafft_last_error_message()). Every push or finish
 * that fails resets the object (its utterance is lost).
 */
#ifndef CUDAFFT_FEATURES_H
#define CUDAFFT_FEATURES_H

#include <cudafft/common.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CUDAFFT_FEATURES_MEL = 0, /* the mel bank's values m (power or magnitude mel spectrogram) */
  CUDAFFT_FEATURES_LOG_MEL, /* their log (log-mel, Whisper; Kaldi's fbank with its settings) */
  CUDAFFT_FEATURES_MFCC,    /* the DCT of the log-mel values */
  CUDAFFT_FEATURES_KIND_COUNT_
} CudafftFeaturesKind;

/* w[i], i = 0 .. L - 1, with D = L (periodic, as torch's and scipy's fftbins=True) or L - 1
 * (symmetric, [window_symmetric]; Kaldi's). */
typedef enum {
  CUDAFFT_FEATURES_WINDOW_HANN = 0,    /* 0.5 - 0.5 cos(2 pi i / D) */
  CUDAFFT_FEATURES_WINDOW_HAMMING,     /* 0.54 - 0.46 cos(2 pi i / D) */
  CUDAFFT_FEATURES_WINDOW_POVEY,       /* (0.5 - 0.5 cos(2 pi i / D))^0.85 (Kaldi) */
  CUDAFFT_FEATURES_WINDOW_BLACKMAN,    /* 0.42 - 0.5 cos(2 pi i / D) + 0.08 cos(4 pi i / D) */
  CUDAFFT_FEATURES_WINDOW_RECTANGULAR, /* 1 */
  CUDAFFT_FEATURES_WINDOW_COUNT_
} CudafftFeaturesWindow;

typedef enum {
  CUDAFFT_FEATURES_SPAN_FFT = 0, /* a frame spans fft_size samples, the window in the middle */
  CUDAFFT_FEATURES_SPAN_WINDOW,  /* a frame spans win_length samples */
  CUDAFFT_FEATURES_SPAN_COUNT_
} CudafftFeaturesSpan;

typedef enum {
  CUDAFFT_FEATURES_EDGES_CENTER = 0, /* centred frames, padded both ends */
  CUDAFFT_FEATURES_EDGES_SNIP,       /* only frames that fit the signal */
  CUDAFFT_FEATURES_EDGES_KALDI,      /* Kaldi's snip_edges=false */
  CUDAFFT_FEATURES_EDGES_END,        /* frames from the first sample, the end zero-padded */
  CUDAFFT_FEATURES_EDGES_COUNT_
} CudafftFeaturesEdges;

typedef enum {
  CUDAFFT_FEATURES_PAD_REFLECT = 0,
  CUDAFFT_FEATURES_PAD_CONSTANT, /* zeros */
  CUDAFFT_FEATURES_PAD_SYMMETRIC,
  CUDAFFT_FEATURES_PAD_COUNT_
} CudafftFeaturesPad;

typedef enum {
  CUDAFFT_FEATURES_PREEMPHASIS_NONE = 0,
  CUDAFFT_FEATURES_PREEMPHASIS_FRAME,  /* Kaldi's, per frame after DC removal */
  CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL, /* on the stream, before framing (NeMo) */
  CUDAFFT_FEATURES_PREEMPHASIS_COUNT_
} CudafftFeaturesPreemphasis;

typedef enum {
  CUDAFFT_MEL_SCALE_SLANEY = 0,
  CUDAFFT_MEL_SCALE_HTK,
  CUDAFFT_MEL_SCALE_COUNT_
} CudafftMelScale;

typedef enum {
  CUDAFFT_MEL_FILTERS_HZ = 0, /* triangles in Hz */
  CUDAFFT_MEL_FILTERS_MEL,    /* triangles in mel */
  CUDAFFT_MEL_FILTERS_BINS,   /* triangles on whole bins */
  CUDAFFT_MEL_FILTERS_COUNT_
} CudafftMelFilters;

typedef enum {
  CUDAFFT_MEL_NORM_NONE = 0,
  CUDAFFT_MEL_NORM_SLANEY, /* each filter's area 1 in Hz */
  CUDAFFT_MEL_NORM_COUNT_
} CudafftMelNorm;

typedef enum {
  CUDAFFT_FEATURES_LOG10 = 0,
  CUDAFFT_FEATURES_LN_ADD,
  CUDAFFT_FEATURES_LN_GUARD,
  CUDAFFT_FEATURES_DB,
  CUDAFFT_FEATURES_LOG_COUNT_
} CudafftFeaturesLog;

typedef enum {
  CUDAFFT_FEATURES_ENERGY_NONE = 0,
  CUDAFFT_FEATURES_ENERGY_RAW,      /* Kaldi's raw_energy=true */
  CUDAFFT_FEATURES_ENERGY_WINDOWED, /* Kaldi's raw_energy=false */
  CUDAFFT_FEATURES_ENERGY_SPECTRUM, /* python_speech_features */
  CUDAFFT_FEATURES_ENERGY_COUNT_
} CudafftFeaturesEnergy;

typedef enum {
  CUDAFFT_FEATURES_LIFTER_KALDI = 0,
  CUDAFFT_FEATURES_LIFTER_LIBROSA,
  CUDAFFT_FEATURES_LIFTER_COUNT_
} CudafftFeaturesLifter;

typedef enum {
  CUDAFFT_FEATURES_DELTAS_REGRESSION = 0,
  CUDAFFT_FEATURES_DELTAS_SAVGOL,
  CUDAFFT_FEATURES_DELTAS_COUNT_
} CudafftFeaturesDeltas;

typedef enum {
  CUDAFFT_FEATURES_OUTPUT_FRAMES = 0,
  CUDAFFT_FEATURES_OUTPUT_WINDOWS,
  CUDAFFT_FEATURES_OUTPUT_CHUNKS,
  CUDAFFT_FEATURES_OUTPUT_COUNT_
} CudafftFeaturesOutput;

typedef enum {
  CUDAFFT_FEATURES_LAYOUT_FRAME_MAJOR = 0, /* [channel][frame][feature] */
  CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR,   /* [channel][feature][frame] */
  CUDAFFT_FEATURES_LAYOUT_COUNT_
} CudafftFeaturesLayout;

typedef enum {
  CUDAFFT_FEATURES_F32 = 0,
  CUDAFFT_FEATURES_F16, /* IEEE 754 binary16, stored as uint16_t */
  CUDAFFT_FEATURES_PRECISION_COUNT_
} CudafftFeaturesPrecision;

/* Limits of the sizes (INVALID_SIZE beyond them). */
#define CUDAFFT_FEATURES_MAX_MELS 1024
#define CUDAFFT_FEATURES_MAX_HOP ((size_t)1 << 24)
#define CUDAFFT_FEATURES_MAX_DELTA_WIDTH 99
#define CUDAFFT_FEATURES_MAX_WINDOW_FRAMES ((size_t)1 << 20)
#define CUDAFFT_FEATURES_MAX_CHUNK_SAMPLES ((size_t)1 << 28)

/* Every field, with the step of the header's comment it belongs to. Start from
 * cudafft_features_config_init() or cudafft_features_preset() and change what differs: fields
 * added later get their defaults there. */
typedef struct {
  CudafftFeaturesKind kind;
  double sample_rate;         /* Hz, > 0 */
  unsigned channels;          /* 1..CUDAFFT_MAX_CHANNELS: a feature stream each */
  CudafftSampleFormat format; /* S16, S32, F32 or F64 */
  float sample_scale;         /* 1: samples multiplied by it (step 1), > 0 */

  /* 2. frames */
  size_t fft_size;              /* n: a transform size (cudafft/common.h: 16..16384, 7-smooth) */
  size_t win_length;            /* L: 1..fft_size; 0 means fft_size */
  size_t hop;                   /* 1..CUDAFFT_FEATURES_MAX_HOP samples */
  CudafftFeaturesWindow window; /* HANN */
  int window_symmetric;         /* 0: periodic (torch, librosa); 1: symmetric (Kaldi, NeMo) */
  CudafftFeaturesSpan span;     /* FFT */
  CudafftFeaturesEdges edges;   /* CENTER */
  CudafftFeaturesPad pad;       /* REFLECT */
  int drop_last;                /* 0; 1: an utterance's last frame is dropped */
  CudafftFeaturesPreemphasis preemphasis; /* NONE */
  float preemph_coeff;                    /* c, 0..1 (0.97 for Kaldi and NeMo) */
  int remove_dc;                          /* 0; 1: DC removal per frame (Kaldi) */
  float dither;                           /* 0: off; >= 0 */
  uint64_t dither_seed;                   /* the generator's seed (Dither above) */

  /* 4. spectrum */
  unsigned power; /* p: 1 (magnitude) or 2 (power; the default) */
  int normalized; /* 0; 1: |X|^2 / n; 2: |X|^2 / sum w^2 (step 4) */

  /* 5. mel bank */
  unsigned n_mels;           /* M: 1..CUDAFFT_FEATURES_MAX_MELS */
  CudafftMelScale mel_scale; /* SLANEY */
  CudafftMelFilters filters; /* HZ */
  CudafftMelNorm mel_norm;   /* SLANEY */
  double f_min;              /* Hz, >= 0, below f_max */
  double f_max;              /* Hz, <= Nyquist; <= 0: Nyquist + f_max (0: Nyquist) */

  /* 6. log */
  CudafftFeaturesLog log; /* LOG10 */
  double log_floor;       /* e: > 0 (1e-10) */
  double db_ref;          /* DB only: ref, > 0 (1.0) */
  float range;            /* per output unit below its maximum; 0 (the default): none */
  float shift, scale;     /* 0 and 1: l = (l + shift) * scale */

  /* 7. energy */
  CudafftFeaturesEnergy energy; /* NONE */
  float energy_floor;           /* 0: none; > 0: Kaldi's energy_floor */

  /* 8. MFCC */
  unsigned n_mfcc;                   /* Q: 1..n_mels (20) */
  CudafftFeaturesLifter lifter_kind; /* KALDI */
  float lifter;                      /* K: 0 (none) or > 0 */

  /* 10. deltas */
  unsigned delta_order;              /* 0 (none), 1 or 2 */
  unsigned delta_width;              /* odd, 3..CUDAFFT_FEATURES_MAX_DELTA_WIDTH (9, librosa's) */
  CudafftFeaturesDeltas delta_style; /* REGRESSION */

  /* output */
  CudafftFeaturesOutput output; /* FRAMES */
  size_t window_frames;         /* T (WINDOWS): 1..CUDAFFT_FEATURES_MAX_WINDOW_FRAMES */
  size_t window_stride;         /* S (WINDOWS): 1..CUDAFFT_FEATURES_MAX_WINDOW_FRAMES */
  size_t chunk_samples;         /* CHUNKS: 1..CUDAFFT_FEATURES_MAX_CHUNK_SAMPLES; >= 1 frame */
  CudafftFeaturesLayout layout; /* FRAME_MAJOR */
  CudafftFeaturesPrecision precision; /* F32 */
  int pad_partial;                    /* WINDOWS: 1 (the default): finish writes a last partial
                                         window; 0: drops it */
  float pad_value;                    /* 0: a partial window's missing frames */
} CudafftFeaturesConfig;

/* The sizes of a valid configuration's outputs. */
typedef struct {
  size_t features;      /* D per frame and channel: B (1 + delta_order) */
  size_t base_features; /* B: n_mels, n_mels + 1 with an energy, or n_mfcc */
  size_t frames;        /* T per output: 1 (FRAMES), window_frames, or a chunk's frames */
  size_t values;        /* per output: channels x frames x features */
  size_t bytes;         /* per output: values x 4 (F32) or 2 (F16) */
  size_t span;          /* S: samples a frame spans */
} CudafftFeaturesShape;

/* Where an output stands in the stream. */
typedef struct {
  uint64_t index;    /* the output's number since create/reset/finish: frame, window or chunk */
  uint64_t frame;    /* its first frame's number in its utterance (a chunk counts from 0) */
  size_t frames;     /* frames of features it holds; fewer than T in a padded last window */
  uint64_t position; /* the stream sample its first frame stands for (Timing above) */
  uint64_t duration; /* samples to the next output's position: hop, stride x hop or the chunk */
  uint64_t extent;   /* samples its frames stand for: frames x hop, or the chunk's samples */
} CudafftFeaturesStamp;

typedef struct CudafftFeatures CudafftFeatures;

/* The generic defaults (the ones in the field comments above): a periodic Hann, power mel
 * spectrogram of 128 Slaney filters at 16 kHz, n = 400, hop 160, centred with reflection, one F32
 * channel, frames out. */
CUDAFFT_API void cudafft_features_config_init(CudafftFeaturesConfig *config);

/* Fills config (every field; one F32 channel, frames out unless the preset says otherwise) with
 * the settings of a named library's defaults at `sample_rate`, with n_mels mel bands (0: the
 * preset's own count). The presets and their sources:
 * - "whisper": openai-whisper 20250625 whisper/audio.py (log_mel_spectrogram, pad_or_trim, N_FFT
 *   400, HOP_LENGTH 160, CHUNK_LENGTH 30; its filters are librosa.filters.mel(sr=16000,
 *   n_fft=400, n_mels)) and transformers 5.25's WhisperFeatureExtractor
 *   (models/whisper/feature_extraction_whisper.py): LOG_MEL, periodic Hann 400,
 *   hop 160, CENTER with REFLECT, power 2, Slaney scale and norm, 0 to 8000 Hz, LOG10 floor 1e-10,
 *   range 8, shift 4, scale 0.25, drop_last, CHUNKS of 30 s (480000 samples, 3000 frames),
 *   FEATURE_MAJOR. 16 kHz only (UNSUPPORTED otherwise, the message saying to resample to 16000 Hz
 *   first); n_mels 80 (the default) or 128 (large-v3), INVALID_VALUE otherwise.
 * - "kaldi-fbank": kaldi-native-fbank 1.23.0 FbankOptions (csrc/feature-window.h,
 *   mel-computations.h, feature-fbank.h): LOG_MEL, 25 ms frames and a 10 ms hop (truncated to
 *   samples), fft size the next power of two (round_to_power_of_two), symmetric Povey, span
 *   WINDOW, SNIP edges, remove_dc, FRAME pre-emphasis 0.97, power 2, HTK scale, MEL filters, no
 *   norm, 20 Hz to Nyquist, LN_GUARD FLT_EPSILON, 23 bands, no energy (use_energy=false: RAW with
 *   floor 0 when turned on), dither 0 (kaldi-native-fbank's default is 0.00003: set it for
 *   training-time features).
 * - "kaldi-mfcc": kaldi-native-fbank 1.23.0 MfccOptions (feature-mfcc.h): as kaldi-fbank with
 *   MFCC, 13 coefficients, lifter 22 (KALDI), the RAW energy in c[0].
 * - "librosa": librosa 0.11.0 feature/spectral.py melspectrogram and mfcc: MEL, n = 2048, hop 512,
 *   periodic Hann, CENTER with CONSTANT padding (librosa >= 0.10), power 2, 128 Slaney filters
 *   with Slaney norm, 0 Hz to Nyquist; for LOG_MEL and MFCC: DB with amin 1e-10, ref 1.0, range
 *   80 (power_to_db's top_db), 20 coefficients, no lifter.
 * - "librosa-mfcc": as "librosa" with MFCC.
 * - "torchaudio": torchaudio 2.11 transforms/_transforms.py MelSpectrogram and MFCC (functional/
 *   functional.py melscale_fbanks, create_dct): MEL, n = 400, hop 200,
 *   periodic Hann, CENTER with REFLECT, power 2, 128 HTK filters without norm, 0 Hz to Nyquist;
 *   for LOG_MEL and MFCC: DB (AmplitudeToDB("power", top_db=80)) with range 80, 40 coefficients.
 * - "torchaudio-mfcc": as "torchaudio" with MFCC.
 * - "nemo": NeMo 2.6 AudioToMelSpectrogramPreprocessor (nemo/collections/asr/modules/
 *   audio_preprocessing.py; parts/preprocessing/features.py FilterbankFeatures): LOG_MEL, a 20 ms
 *   window (int(0.02 rate)) and a 10 ms hop, fft size the next power of two, symmetric Hann,
 *   CENTER with CONSTANT padding, SIGNAL pre-emphasis 0.97, power 2, 64 Slaney filters with
 *   Slaney norm, 0 Hz to Nyquist, LN_ADD 2^-24, drop_last (NeMo masks the frame past its sequence
 *   length). Its normalize="per_feature" (mean and deviation over the whole utterance), pad_to=16
 *   and training-time dither are left to the application.
 * INVALID_VALUE for an unknown name (the message lists them) or a rate that is not positive;
 * NULL_POINTER for NULL arguments. */
CUDAFFT_API CudafftStatus cudafft_features_preset(CudafftFeaturesConfig *config, const char *name,
                                                  double sample_rate, unsigned n_mels);

/* The presets' names in order ("whisper", ...), NULL past the last. */
CUDAFFT_API const char *cudafft_features_preset_name(unsigned index);

/* Validates config as create does (INVALID_SIZE for fft_size, win_length above the fft size, hop
 * 0 or beyond its limit, n_mels, n_mfcc above n_mels, window frames, stride and chunk sizes;
 * INVALID_VALUE for the rest: f_max above Nyquist, f_min not below f_max, unknown enums, a log
 * floor or range out of range, an energy without a natural log, normalized 2 with a window whose
 * energy is 0, ...), the message naming the field and its bounds; and fills *shape (may be
 * NULL). */
CUDAFFT_API CudafftStatus cudafft_features_shape(const CudafftFeaturesConfig *config,
                                                 CudafftFeaturesShape *shape);

/* The mel filters of a valid config that have no nonzero weight (too many bands for the bins
 * between f_min and f_max), as librosa warns of: their indices, ascending, the first `capacity`
 * into filters (may be NULL with capacity 0); *count (required) receives how many there are. */
CUDAFFT_API CudafftStatus cudafft_features_empty_filters(const CudafftFeaturesConfig *config,
                                                         unsigned *filters, unsigned capacity,
                                                         unsigned *count);

/* Validates config (cudafft_features_shape()) and makes the object; *features is NULL on failure.
 * Backends as in cudafft_plan_create(). */
CUDAFFT_API CudafftStatus cudafft_features_create(CudafftFeatures **features,
                                                  CudafftBackend backend, int device_id,
                                                  const CudafftFeaturesConfig *config);
CUDAFFT_API void cudafft_features_destroy(CudafftFeatures *features); /* NULL allowed */
CUDAFFT_API CudafftBackend cudafft_features_get_backend(const CudafftFeatures *features);
/* The CUDA device it runs on (cudafft/common.h, Devices); -1 for the CPU backend and NULL. */
CUDAFFT_API int cudafft_features_get_device(const CudafftFeatures *features);
/* Its configuration, win_length 0 replaced by fft_size; NULL for NULL. */
CUDAFFT_API const CudafftFeaturesConfig *
cudafft_features_get_config(const CudafftFeatures *features);
/* Bytes of one output (cudafft_features_shape()'s bytes); 0 for NULL. */
CUDAFFT_API size_t cudafft_features_output_bytes(const CudafftFeatures *features);

/* How many outputs a push of `samples` more samples per channel completes, and how many
 * cudafft_features_finish() would write now: what the caller sizes out for. */
CUDAFFT_API size_t cudafft_features_outputs_for(const CudafftFeatures *features, size_t samples);
CUDAFFT_API size_t cudafft_features_finish_outputs(const CudafftFeatures *features);
/* The index of the next output (the outputs written since create/reset/finish). */
CUDAFFT_API uint64_t cudafft_features_outputs_done(const CudafftFeatures *features);
/* Samples per channel pushed in the current utterance. */
CUDAFFT_API uint64_t cudafft_features_samples_pushed(const CudafftFeatures *features);

/* Where output `index` stands (Timing above): a function of the configuration, but for a padded
 * last window's frames, which are known once finish has written it: from finish to the next push
 * the stamps are those of the stream finish ended. NULL_POINTER for NULL arguments. */
CUDAFFT_API CudafftStatus cudafft_features_stamp(const CudafftFeatures *features, uint64_t index,
                                                 CudafftFeaturesStamp *stamp);

/* The latency in samples (Timing above); 0 for NULL. */
CUDAFFT_API uint64_t cudafft_features_latency(const CudafftFeatures *features);

/* Appends `samples` samples per channel (interleaved, config->format; in == NULL appends zeros)
 * and writes every output now complete to out, one after another, which must hold
 * cudafft_features_outputs_for(samples) outputs; *outputs (may be NULL) receives their number.
 * Returns when out is written. */
CUDAFFT_API CudafftStatus cudafft_features_push(CudafftFeatures *features, const void *in,
                                                size_t samples, void *out, size_t *outputs);

/* CUDA backend only: as cudafft_features_push(), with in, out or both in device memory of the
 * object's context (cudafft/common.h, Contexts and Device memory), as `on_device` (CudafftMemory
 * flags) says: the samples are read and the features written there on the device. The input
 * must be complete before the call, or at the fence `after` (NULL: complete; cudafft/common.h,
 * Fences). With `done` NULL the outputs are complete when the call returns; otherwise (out in
 * device memory) it returns once the work is queued, *done receives the fence where they are
 * complete (zeroed: they are already), and out must stay until then; the object waits for that
 * work at its next call at the latest. UNSUPPORTED on the CPU backend; WRONG_DEVICE_MEMORY for
 * memory its kernels cannot reach, before anything is queued; on_device 0 is
 * cudafft_features_push(). */
CUDAFFT_API CudafftStatus cudafft_features_push_device(CudafftFeatures *features, const void *in,
                                                       size_t samples, void *out, size_t *outputs,
                                                       unsigned on_device,
                                                       const CudafftFence *after,
                                                       CudafftFence *done);

/* Ends the utterance (Finishing above): writes the cudafft_features_finish_outputs() outputs
 * still to come to out, *outputs (may be NULL) their number, and resets. */
CUDAFFT_API CudafftStatus cudafft_features_finish(CudafftFeatures *features, void *out,
                                                  size_t *outputs);

/* CUDA backend only: as cudafft_features_finish(), out in device memory of the object's context
 * when on_device holds CUDAFFT_OUT_DEVICE, with `done` as in cudafft_features_push_device(). */
CUDAFFT_API CudafftStatus cudafft_features_finish_device(CudafftFeatures *features, void *out,
                                                         size_t *outputs, unsigned on_device,
                                                         CudafftFence *done);

/* Forgets the utterance: the next push starts a new one (frame 0, output 0, at its first
 * sample). */
CUDAFFT_API void cudafft_features_reset(CudafftFeatures *features);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_FEATURES_H */
