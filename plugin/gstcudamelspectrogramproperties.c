/* gstcudamelspectrogramproperties.c: see gstcudamelspectrogramproperties.h. */
#include "gstcudamelspectrogramproperties.h"

#include "gstcudafftproperties.h"

#include <stddef.h>
#include <string.h>

/* Property ids: preset first, then one per configuration field (FIELDS below, in this order). */
enum {
  PROP_0,
  PROP_PRESET,
  PROP_KIND,
  PROP_SAMPLE_SCALE,
  PROP_FFT_SIZE,
  PROP_WIN_LENGTH,
  PROP_HOP_LENGTH,
  PROP_WINDOW_TYPE,
  PROP_WINDOW_SYMMETRIC,
  PROP_SPAN,
  PROP_EDGES,
  PROP_PAD_MODE,
  PROP_DROP_LAST,
  PROP_PREEMPHASIS,
  PROP_PREEMPHASIS_COEFF,
  PROP_REMOVE_DC,
  PROP_DITHER,
  PROP_DITHER_SEED,
  PROP_POWER,
  PROP_NORMALIZED,
  PROP_N_MELS,
  PROP_MEL_SCALE,
  PROP_FILTERS,
  PROP_MEL_NORM,
  PROP_F_MIN,
  PROP_F_MAX,
  PROP_LOG,
  PROP_LOG_FLOOR,
  PROP_DB_REF,
  PROP_RANGE,
  PROP_SHIFT,
  PROP_SCALE,
  PROP_ENERGY,
  PROP_ENERGY_FLOOR,
  PROP_N_MFCC,
  PROP_LIFTER_STYLE,
  PROP_LIFTER,
  PROP_DELTA_ORDER,
  PROP_DELTA_WIDTH,
  PROP_DELTA_STYLE,
  PROP_OUTPUT,
  PROP_WINDOW_FRAMES,
  PROP_WINDOW_STRIDE,
  PROP_CHUNK_SAMPLES,
  PROP_LAYOUT,
  PROP_PAD_PARTIAL,
  PROP_PAD_VALUE,
  PROP_COUNT_
};

G_STATIC_ASSERT(PROP_COUNT_ <= 64); /* the settings' mask */

/* Enumerations ------------------------------------------------------------------------------- */

/* Each value equals the library's; the nicks are what gst-launch-1.0 lines name. */
#define DEFINE_ENUM(getter, name, ...)                                                             \
  static GType getter(void)                                                                        \
  {                                                                                                \
    static GType type = 0;                                                                         \
    static const GEnumValue values[] = {__VA_ARGS__, {0, NULL, NULL}};                             \
    if (g_once_init_enter(&type))                                                                  \
      g_once_init_leave(&type, g_enum_register_static(name, values));                              \
    return type;                                                                                   \
  }

static const GEnumValue preset_values[] = {
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_NONE, "None: the engine's defaults and the properties",
     "none"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_WHISPER,
     "openai-whisper's log-mel (16 kHz, 400/160, 80 or 128 mels, 30 s chunks)", "whisper"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_KALDI_FBANK,
     "Kaldi's filter-bank energies (kaldi-native-fbank FbankOptions)", "kaldi-fbank"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_KALDI_MFCC, "Kaldi's MFCC (kaldi-native-fbank MfccOptions)",
     "kaldi-mfcc"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_LIBROSA, "librosa.feature.melspectrogram's defaults",
     "librosa"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_LIBROSA_MFCC, "librosa.feature.mfcc's defaults",
     "librosa-mfcc"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_TORCHAUDIO, "torchaudio.transforms.MelSpectrogram's defaults",
     "torchaudio"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_TORCHAUDIO_MFCC, "torchaudio.transforms.MFCC's defaults",
     "torchaudio-mfcc"},
    {GST_CUDA_MEL_SPECTROGRAM_PRESET_NEMO, "NeMo's AudioToMelSpectrogramPreprocessor defaults",
     "nemo"},
    {0, NULL, NULL},
};
G_STATIC_ASSERT(G_N_ELEMENTS(preset_values) == GST_CUDA_MEL_SPECTROGRAM_PRESET_COUNT_ + 1);

GType
gst_cuda_mel_spectrogram_preset_get_type(void)
{
  static GType type = 0;
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstCudaMelSpectrogramPreset", preset_values));
  return type;
}

gint
gst_cuda_mel_spectrogram_preset_rate(GstCudaMelSpectrogramPreset preset)
{
  return preset == GST_CUDA_MEL_SPECTROGRAM_PRESET_WHISPER ? 16000 : 0;
}

DEFINE_ENUM(kind_get_type, "GstCudaMelSpectrogramKind",
            {CUDAFFT_FEATURES_MEL, "Mel spectrogram (power or magnitude)", "mel"},
            {CUDAFFT_FEATURES_LOG_MEL, "Log-mel (Whisper; Kaldi's fbank with its settings)",
             "log-mel"},
            {CUDAFFT_FEATURES_MFCC, "MFCC (DCT-II of the log-mel values)", "mfcc"})
DEFINE_ENUM(window_get_type, "GstCudaMelSpectrogramWindow",
            {CUDAFFT_FEATURES_WINDOW_HANN, "Hann", "hann"},
            {CUDAFFT_FEATURES_WINDOW_HAMMING, "Hamming", "hamming"},
            {CUDAFFT_FEATURES_WINDOW_POVEY, "Povey (Kaldi: Hann to the power 0.85)", "povey"},
            {CUDAFFT_FEATURES_WINDOW_BLACKMAN, "Blackman", "blackman"},
            {CUDAFFT_FEATURES_WINDOW_RECTANGULAR, "Rectangular", "rectangular"})
DEFINE_ENUM(span_get_type, "GstCudaMelSpectrogramSpan",
            {CUDAFFT_FEATURES_SPAN_FFT,
             "fft-size samples, the window in the middle (torch, librosa)", "fft"},
            {CUDAFFT_FEATURES_SPAN_WINDOW, "win-length samples (Kaldi, python_speech_features)",
             "window"})
DEFINE_ENUM(edges_get_type, "GstCudaMelSpectrogramEdges",
            {CUDAFFT_FEATURES_EDGES_CENTER, "Centred frames, padded both ends (librosa, torch)",
             "center"},
            {CUDAFFT_FEATURES_EDGES_SNIP, "Only frames that fit (Kaldi snip_edges=true)", "snip"},
            {CUDAFFT_FEATURES_EDGES_KALDI, "Kaldi's snip_edges=false", "kaldi"},
            {CUDAFFT_FEATURES_EDGES_END, "From the first sample, the end zero-padded", "end"})
DEFINE_ENUM(pad_get_type, "GstCudaMelSpectrogramPadMode",
            {CUDAFFT_FEATURES_PAD_REFLECT, "Reflect (numpy's and torch's reflect)", "reflect"},
            {CUDAFFT_FEATURES_PAD_CONSTANT, "Zeros", "constant"},
            {CUDAFFT_FEATURES_PAD_SYMMETRIC, "Symmetric (Kaldi's reflection)", "symmetric"})
DEFINE_ENUM(preemphasis_get_type, "GstCudaMelSpectrogramPreemphasis",
            {CUDAFFT_FEATURES_PREEMPHASIS_NONE, "None", "none"},
            {CUDAFFT_FEATURES_PREEMPHASIS_FRAME, "Per frame, after DC removal (Kaldi)", "frame"},
            {CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL, "On the signal, before framing (NeMo)", "signal"})
DEFINE_ENUM(mel_scale_get_type, "GstCudaMelSpectrogramMelScale",
            {CUDAFFT_MEL_SCALE_SLANEY, "Slaney (librosa's default)", "slaney"},
            {CUDAFFT_MEL_SCALE_HTK, "HTK (Kaldi, torchaudio)", "htk"})
DEFINE_ENUM(filters_get_type, "GstCudaMelSpectrogramFilters",
            {CUDAFFT_MEL_FILTERS_HZ, "Triangles in Hz (librosa, torchaudio)", "hz"},
            {CUDAFFT_MEL_FILTERS_MEL, "Triangles in mel (Kaldi)", "mel"},
            {CUDAFFT_MEL_FILTERS_BINS, "Triangles on whole bins (python_speech_features)", "bins"})
DEFINE_ENUM(mel_norm_get_type, "GstCudaMelSpectrogramMelNorm",
            {CUDAFFT_MEL_NORM_NONE, "None", "none"},
            {CUDAFFT_MEL_NORM_SLANEY, "Slaney: each filter's area 1 in Hz", "slaney"})
DEFINE_ENUM(log_get_type, "GstCudaMelSpectrogramLog",
            {CUDAFFT_FEATURES_LOG10, "log10(max(m, floor)) (Whisper)", "log10"},
            {CUDAFFT_FEATURES_LN_ADD, "ln(m + floor) (NeMo, torchaudio MFCC)", "ln-add"},
            {CUDAFFT_FEATURES_LN_GUARD, "ln(max(m, floor)) (Kaldi)", "ln-guard"},
            {CUDAFFT_FEATURES_DB, "dB: 10 log10(max(m, floor) / db-ref) (librosa, torchaudio)",
             "db"})
DEFINE_ENUM(
    energy_get_type, "GstCudaMelSpectrogramEnergy", {CUDAFFT_FEATURES_ENERGY_NONE, "None", "none"},
    {CUDAFFT_FEATURES_ENERGY_RAW, "Before the window (Kaldi raw_energy=true)", "raw"},
    {CUDAFFT_FEATURES_ENERGY_WINDOWED, "After the window (Kaldi raw_energy=false)", "windowed"},
    {CUDAFFT_FEATURES_ENERGY_SPECTRUM, "Of the spectrum (python_speech_features)", "spectrum"})
DEFINE_ENUM(lifter_get_type, "GstCudaMelSpectrogramLifter",
            {CUDAFFT_FEATURES_LIFTER_KALDI, "1 + K/2 sin(pi q / K) (Kaldi, HTK)", "kaldi"},
            {CUDAFFT_FEATURES_LIFTER_LIBROSA, "1 + K/2 sin(pi (q + 1) / K) (librosa)", "librosa"})
DEFINE_ENUM(deltas_get_type, "GstCudaMelSpectrogramDeltas",
            {CUDAFFT_FEATURES_DELTAS_REGRESSION, "Regression (torchaudio, Kaldi)", "regression"},
            {CUDAFFT_FEATURES_DELTAS_SAVGOL, "Savitzky-Golay (librosa.feature.delta)", "savgol"})
DEFINE_ENUM(output_get_type, "GstCudaMelSpectrogramOutput",
            {CUDAFFT_FEATURES_OUTPUT_FRAMES, "Each frame as it comes", "frames"},
            {CUDAFFT_FEATURES_OUTPUT_WINDOWS, "Windows of window-frames frames", "windows"},
            {CUDAFFT_FEATURES_OUTPUT_CHUNKS, "Chunks of chunk-samples samples (Whisper's 30 s)",
             "chunks"})
DEFINE_ENUM(layout_get_type, "GstCudaMelSpectrogramLayout",
            {CUDAFFT_FEATURES_LAYOUT_FRAME_MAJOR, "[channel][frame][feature]", "frame-major"},
            {CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR, "[channel][feature][frame] (Whisper)",
             "feature-major"})

const gchar *
gst_cuda_mel_spectrogram_kind_nick(CudafftFeaturesKind kind)
{
  return gst_cudafft_enum_nick(kind_get_type(), (gint)kind);
}

/* The fields ---------------------------------------------------------------------------------- */

/* F_INT: an int field given as a guint property */
typedef enum { F_ENUM, F_UINT, F_SIZE, F_BOOL, F_INT, F_FLOAT, F_DOUBLE, F_UINT64 } FieldType;

typedef struct {
  guint prop;
  FieldType type;
  gsize offset;
} Field;

#define FIELD(prop, type, member)                                                                  \
  {                                                                                                \
    prop, type, offsetof(CudafftFeaturesConfig, member)                                            \
  }

/* Every property but preset, and the configuration field it sets. */
static const Field fields[] = {
    FIELD(PROP_KIND, F_ENUM, kind),
    FIELD(PROP_SAMPLE_SCALE, F_FLOAT, sample_scale),
    FIELD(PROP_FFT_SIZE, F_SIZE, fft_size),
    FIELD(PROP_WIN_LENGTH, F_SIZE, win_length),
    FIELD(PROP_HOP_LENGTH, F_SIZE, hop),
    FIELD(PROP_WINDOW_TYPE, F_ENUM, window),
    FIELD(PROP_WINDOW_SYMMETRIC, F_BOOL, window_symmetric),
    FIELD(PROP_SPAN, F_ENUM, span),
    FIELD(PROP_EDGES, F_ENUM, edges),
    FIELD(PROP_PAD_MODE, F_ENUM, pad),
    FIELD(PROP_DROP_LAST, F_BOOL, drop_last),
    FIELD(PROP_PREEMPHASIS, F_ENUM, preemphasis),
    FIELD(PROP_PREEMPHASIS_COEFF, F_FLOAT, preemph_coeff),
    FIELD(PROP_REMOVE_DC, F_BOOL, remove_dc),
    FIELD(PROP_DITHER, F_FLOAT, dither),
    FIELD(PROP_DITHER_SEED, F_UINT64, dither_seed),
    FIELD(PROP_POWER, F_UINT, power),
    FIELD(PROP_NORMALIZED, F_INT, normalized),
    FIELD(PROP_N_MELS, F_UINT, n_mels),
    FIELD(PROP_MEL_SCALE, F_ENUM, mel_scale),
    FIELD(PROP_FILTERS, F_ENUM, filters),
    FIELD(PROP_MEL_NORM, F_ENUM, mel_norm),
    FIELD(PROP_F_MIN, F_DOUBLE, f_min),
    FIELD(PROP_F_MAX, F_DOUBLE, f_max),
    FIELD(PROP_LOG, F_ENUM, log),
    FIELD(PROP_LOG_FLOOR, F_DOUBLE, log_floor),
    FIELD(PROP_DB_REF, F_DOUBLE, db_ref),
    FIELD(PROP_RANGE, F_FLOAT, range),
    FIELD(PROP_SHIFT, F_FLOAT, shift),
    FIELD(PROP_SCALE, F_FLOAT, scale),
    FIELD(PROP_ENERGY, F_ENUM, energy),
    FIELD(PROP_ENERGY_FLOOR, F_FLOAT, energy_floor),
    FIELD(PROP_N_MFCC, F_UINT, n_mfcc),
    FIELD(PROP_LIFTER_STYLE, F_ENUM, lifter_kind),
    FIELD(PROP_LIFTER, F_FLOAT, lifter),
    FIELD(PROP_DELTA_ORDER, F_UINT, delta_order),
    FIELD(PROP_DELTA_WIDTH, F_UINT, delta_width),
    FIELD(PROP_DELTA_STYLE, F_ENUM, delta_style),
    FIELD(PROP_OUTPUT, F_ENUM, output),
    FIELD(PROP_WINDOW_FRAMES, F_SIZE, window_frames),
    FIELD(PROP_WINDOW_STRIDE, F_SIZE, window_stride),
    FIELD(PROP_CHUNK_SAMPLES, F_SIZE, chunk_samples),
    FIELD(PROP_LAYOUT, F_ENUM, layout),
    FIELD(PROP_PAD_PARTIAL, F_BOOL, pad_partial),
    FIELD(PROP_PAD_VALUE, F_FLOAT, pad_value),
};
G_STATIC_ASSERT(G_N_ELEMENTS(fields) == PROP_COUNT_ - 2);

static const Field *
field_of(guint prop)
{
  return prop > PROP_PRESET && prop < PROP_COUNT_ ? &fields[prop - PROP_KIND] : NULL;
}

static gpointer
at(CudafftFeaturesConfig *config, const Field *f)
{
  return (guint8 *)config + f->offset;
}

static gconstpointer
at_const(const CudafftFeaturesConfig *config, const Field *f)
{
  return (const guint8 *)config + f->offset;
}

static gsize
field_size(const Field *f)
{
  switch (f->type) {
  case F_ENUM:
    return sizeof(CudafftFeaturesKind); /* every enumeration is an int-sized C enum */
  case F_UINT:
    return sizeof(unsigned);
  case F_SIZE:
    return sizeof(size_t);
  case F_BOOL:
  case F_INT:
    return sizeof(int);
  case F_FLOAT:
    return sizeof(float);
  case F_DOUBLE:
    return sizeof(double);
  case F_UINT64:
    return sizeof(uint64_t);
  }
  return 0;
}

static void
field_from_value(CudafftFeaturesConfig *config, const Field *f, const GValue *value)
{
  gpointer p = at(config, f);
  switch (f->type) {
  case F_ENUM:
    *(CudafftFeaturesKind *)p = (CudafftFeaturesKind)g_value_get_enum(value);
    break;
  case F_UINT:
    *(unsigned *)p = g_value_get_uint(value);
    break;
  case F_SIZE:
    *(size_t *)p = g_value_get_uint(value);
    break;
  case F_BOOL:
    *(int *)p = g_value_get_boolean(value) ? 1 : 0;
    break;
  case F_INT:
    *(int *)p = (int)g_value_get_uint(value);
    break;
  case F_FLOAT:
    *(float *)p = g_value_get_float(value);
    break;
  case F_DOUBLE:
    *(double *)p = g_value_get_double(value);
    break;
  case F_UINT64:
    *(uint64_t *)p = g_value_get_uint64(value);
    break;
  }
}

static void
field_to_value(const CudafftFeaturesConfig *config, const Field *f, GValue *value)
{
  gconstpointer p = at_const(config, f);
  switch (f->type) {
  case F_ENUM:
    g_value_set_enum(value, (gint) * (const CudafftFeaturesKind *)p);
    break;
  case F_UINT:
    g_value_set_uint(value, *(const unsigned *)p);
    break;
  case F_SIZE:
    g_value_set_uint(value, (guint)MIN(*(const size_t *)p, (size_t)G_MAXUINT));
    break;
  case F_BOOL:
    g_value_set_boolean(value, *(const int *)p != 0);
    break;
  case F_INT:
    g_value_set_uint(value, (guint)MAX(*(const int *)p, 0));
    break;
  case F_FLOAT:
    g_value_set_float(value, *(const float *)p);
    break;
  case F_DOUBLE:
    g_value_set_double(value, *(const double *)p);
    break;
  case F_UINT64:
    g_value_set_uint64(value, *(const uint64_t *)p);
    break;
  }
}

static gboolean
field_equal(const CudafftFeaturesConfig *a, const CudafftFeaturesConfig *b, const Field *f)
{
  return memcmp(at_const(a, f), at_const(b, f), field_size(f)) == 0;
}

/* Installation -------------------------------------------------------------------------------- */

#define FLAGS (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)

static void
install_enum(GObjectClass *k, guint prop, const gchar *name, const gchar *blurb, GType type,
             gint def)
{
  g_object_class_install_property(k, prop, g_param_spec_enum(name, name, blurb, type, def, FLAGS));
}

static void
install_uint(GObjectClass *k, guint prop, const gchar *name, const gchar *blurb, guint min,
             guint max, guint def)
{
  g_object_class_install_property(k, prop,
                                  g_param_spec_uint(name, name, blurb, min, max, def, FLAGS));
}

static void
install_bool(GObjectClass *k, guint prop, const gchar *name, const gchar *blurb, gboolean def)
{
  g_object_class_install_property(k, prop, g_param_spec_boolean(name, name, blurb, def, FLAGS));
}

static void
install_float(GObjectClass *k, guint prop, const gchar *name, const gchar *blurb, gfloat min,
              gfloat max, gfloat def)
{
  g_object_class_install_property(k, prop,
                                  g_param_spec_float(name, name, blurb, min, max, def, FLAGS));
}

static void
install_double(GObjectClass *k, guint prop, const gchar *name, const gchar *blurb, gdouble min,
               gdouble max, gdouble def)
{
  g_object_class_install_property(k, prop,
                                  g_param_spec_double(name, name, blurb, min, max, def, FLAGS));
}

void
gst_cuda_mel_spectrogram_properties_install(GObjectClass *k)
{
  CudafftFeaturesConfig d; /* the engine's defaults: the specs' defaults */
  cudafft_features_config_init(&d);
  install_enum(k, PROP_PRESET, "preset",
               "Sets every other property as a library computes its features; the properties set "
               "explicitly win, in any order",
               GST_TYPE_CUDA_MEL_SPECTROGRAM_PRESET, GST_CUDA_MEL_SPECTROGRAM_PRESET_NONE);
  install_enum(k, PROP_KIND, "kind", "What each frame holds: mel, log-mel or mfcc", kind_get_type(),
               d.kind);
  install_float(k, PROP_SAMPLE_SCALE, "sample-scale",
                "Factor on the samples (1 reads full scale as 1.0; 32768 as Kaldi's integers)",
                G_MINFLOAT, G_MAXFLOAT, d.sample_scale);
  g_object_class_install_property(
      k, PROP_FFT_SIZE,
      gst_cudafft_fft_size_param(
          "Points of the transform: 2^a 3^b 5^c 7^d from 16 to 16384 (400, 480, 512, 1000, ...)",
          (guint)d.fft_size, FLAGS));
  install_uint(k, PROP_WIN_LENGTH, "win-length",
               "Samples of the window, zero-padded to fft-size; 0 means fft-size", 0, 16384,
               (guint)d.win_length);
  install_uint(k, PROP_HOP_LENGTH, "hop-length", "Samples from one frame to the next (1 or more)",
               0, CUDAFFT_FEATURES_MAX_HOP, (guint)d.hop);
  install_enum(k, PROP_WINDOW_TYPE, "window-type", "The analysis window", window_get_type(),
               d.window);
  install_bool(k, PROP_WINDOW_SYMMETRIC, "window-symmetric",
               "Symmetric window (Kaldi, NeMo) instead of periodic (torch, librosa)",
               d.window_symmetric);
  install_enum(k, PROP_SPAN, "span", "The samples a frame spans: fft-size or win-length",
               span_get_type(), d.span);
  install_enum(k, PROP_EDGES, "edges", "How frames meet the ends of the stream", edges_get_type(),
               d.edges);
  install_enum(k, PROP_PAD_MODE, "pad-mode", "The samples beyond the ends, where frames reach them",
               pad_get_type(), d.pad);
  install_bool(k, PROP_DROP_LAST, "drop-last",
               "Drop the last frame of each utterance (Whisper's stft[..., :-1], NeMo)",
               d.drop_last);
  install_enum(k, PROP_PREEMPHASIS, "preemphasis", "Pre-emphasis: none, per frame or on the signal",
               preemphasis_get_type(), d.preemphasis);
  install_float(k, PROP_PREEMPHASIS_COEFF, "preemphasis-coeff", "Pre-emphasis coefficient", 0.0f,
                1.0f, d.preemph_coeff);
  install_bool(k, PROP_REMOVE_DC, "remove-dc", "Subtract each frame's mean (Kaldi)", d.remove_dc);
  install_float(k, PROP_DITHER, "dither",
                "Gaussian noise of this deviation added to each frame (0: off; seeded)", 0.0f,
                G_MAXFLOAT, d.dither);
  g_object_class_install_property(k, PROP_DITHER_SEED,
                                  g_param_spec_uint64("dither-seed", "dither-seed",
                                                      "Seed of the dither's noise", 0, G_MAXUINT64,
                                                      d.dither_seed, FLAGS));
  install_uint(k, PROP_POWER, "power", "1: magnitude, 2: power spectrum", 1, 2, d.power);
  install_uint(k, PROP_NORMALIZED, "normalized",
               "|X|^2 divided by 1 (0), fft-size (1: torch.stft's normalized=True) or the "
               "window's energy (2: torchaudio's)",
               0, 2, (guint)d.normalized);
  install_uint(k, PROP_N_MELS, "n-mels", "Mel bands", 1, CUDAFFT_FEATURES_MAX_MELS, d.n_mels);
  install_enum(k, PROP_MEL_SCALE, "mel-scale", "The mel scale", mel_scale_get_type(), d.mel_scale);
  install_enum(k, PROP_FILTERS, "filters", "How the triangular filters are drawn",
               filters_get_type(), d.filters);
  install_enum(k, PROP_MEL_NORM, "mel-norm", "Normalisation of the filters", mel_norm_get_type(),
               d.mel_norm);
  install_double(k, PROP_F_MIN, "f-min", "Lowest frequency of the mel bank in Hz", 0.0, G_MAXDOUBLE,
                 d.f_min);
  install_double(k, PROP_F_MAX, "f-max",
                 "Highest frequency in Hz, at most the Nyquist frequency; <= 0: Nyquist plus it",
                 -G_MAXDOUBLE, G_MAXDOUBLE, d.f_max);
  install_enum(k, PROP_LOG, "log", "The log of log-mel and mfcc", log_get_type(), d.log);
  install_double(k, PROP_LOG_FLOOR, "log-floor", "The log's floor or epsilon (> 0)", G_MINDOUBLE,
                 G_MAXDOUBLE, d.log_floor);
  install_double(k, PROP_DB_REF, "db-ref", "The reference of log=db (> 0)", G_MINDOUBLE,
                 G_MAXDOUBLE, d.db_ref);
  install_float(k, PROP_RANGE, "range",
                "Log values raised to the output's largest minus this (librosa's top_db, "
                "Whisper's 8); 0: none",
                0.0f, G_MAXFLOAT, d.range);
  install_float(k, PROP_SHIFT, "shift", "Added to the log values before scale (Whisper: 4)",
                -G_MAXFLOAT, G_MAXFLOAT, d.shift);
  install_float(k, PROP_SCALE, "scale", "Log values multiplied by it after shift (Whisper: 0.25)",
                -G_MAXFLOAT, G_MAXFLOAT, d.scale);
  install_enum(k, PROP_ENERGY, "energy", "A log energy in front of the log-mel values, or as c0",
               energy_get_type(), d.energy);
  install_float(k, PROP_ENERGY_FLOOR, "energy-floor", "Floor of the energy (Kaldi's; 0: none)",
                0.0f, G_MAXFLOAT, d.energy_floor);
  install_uint(k, PROP_N_MFCC, "n-mfcc", "MFCC coefficients (at most n-mels)", 1,
               CUDAFFT_FEATURES_MAX_MELS, d.n_mfcc);
  install_enum(k, PROP_LIFTER_STYLE, "lifter-style", "The cepstral lifter's formula",
               lifter_get_type(), d.lifter_kind);
  install_float(k, PROP_LIFTER, "lifter", "Cepstral lifter coefficient (0: none)", 0.0f, G_MAXFLOAT,
                d.lifter);
  install_uint(k, PROP_DELTA_ORDER, "delta-order", "Deltas after the features: 0, 1 or 2", 0, 2,
               d.delta_order);
  install_uint(k, PROP_DELTA_WIDTH, "delta-width", "Frames the deltas read (odd, 3 to 99)", 3,
               CUDAFFT_FEATURES_MAX_DELTA_WIDTH, d.delta_width);
  install_enum(k, PROP_DELTA_STYLE, "delta-style", "How the deltas are computed", deltas_get_type(),
               d.delta_style);
  install_enum(k, PROP_OUTPUT, "output", "One tensor per frame, per window or per chunk",
               output_get_type(), d.output);
  install_uint(k, PROP_WINDOW_FRAMES, "window-frames", "Frames of a window (output=windows)", 1,
               (guint)CUDAFFT_FEATURES_MAX_WINDOW_FRAMES, (guint)d.window_frames);
  install_uint(k, PROP_WINDOW_STRIDE, "window-stride",
               "Frames from one window to the next (output=windows)", 1,
               (guint)CUDAFFT_FEATURES_MAX_WINDOW_FRAMES, (guint)d.window_stride);
  install_uint(k, PROP_CHUNK_SAMPLES, "chunk-samples",
               "Samples of a chunk, each an utterance of its own (output=chunks)", 1,
               (guint)CUDAFFT_FEATURES_MAX_CHUNK_SAMPLES, (guint)d.chunk_samples);
  install_enum(k, PROP_LAYOUT, "layout", "Order of a tensor's frames and features",
               layout_get_type(), d.layout);
  install_bool(k, PROP_PAD_PARTIAL, "pad-partial",
               "At the end, the last partial window padded with pad-value (else dropped)",
               d.pad_partial);
  install_float(k, PROP_PAD_VALUE, "pad-value", "Value of a partial window's missing frames",
                -G_MAXFLOAT, G_MAXFLOAT, d.pad_value);

  gst_type_mark_as_plugin_api(GST_TYPE_CUDA_MEL_SPECTROGRAM_PRESET, 0);
  const GType enums[] = {kind_get_type(),      window_get_type(),  span_get_type(),
                         edges_get_type(),     pad_get_type(),     preemphasis_get_type(),
                         mel_scale_get_type(), filters_get_type(), mel_norm_get_type(),
                         log_get_type(),       energy_get_type(),  lifter_get_type(),
                         deltas_get_type(),    output_get_type(),  layout_get_type()};
  for (guint i = 0; i < G_N_ELEMENTS(enums); i++)
    gst_type_mark_as_plugin_api(enums[i], 0);
}

/* Settings ----------------------------------------------------------------------------------- */

void
gst_cuda_mel_spectrogram_settings_init(GstCudaMelSpectrogramSettings *s)
{
  s->preset = GST_CUDA_MEL_SPECTROGRAM_PRESET_NONE;
  cudafft_features_config_init(&s->values);
  s->set = 0;
  s->generation = 0;
}

static gboolean
is_set(const GstCudaMelSpectrogramSettings *s, guint prop)
{
  return (s->set & (G_GUINT64_CONSTANT(1) << prop)) != 0;
}

gboolean
gst_cuda_mel_spectrogram_settings_config(const GstCudaMelSpectrogramSettings *s, gint rate,
                                         CudafftFeaturesConfig *config, CudafftStatus *status,
                                         gchar **why)
{
  gboolean ok = TRUE;
  *status = CUDAFFT_STATUS_OK;
  *why = NULL;
  if (s->preset != GST_CUDA_MEL_SPECTROGRAM_PRESET_NONE) {
    const char *name = cudafft_features_preset_name((unsigned)s->preset - 1);
    const unsigned n_mels = is_set(s, PROP_N_MELS) ? s->values.n_mels : 0;
    *status = cudafft_features_preset(config, name, (double)rate, n_mels);
    if (*status != CUDAFFT_STATUS_OK) {
      *why = g_strdup(cudafft_last_error_message());
      ok = FALSE;
    }
  }
  if (s->preset == GST_CUDA_MEL_SPECTROGRAM_PRESET_NONE || !ok) {
    cudafft_features_config_init(config);
    config->sample_rate = rate;
  }
  for (guint i = 0; i < G_N_ELEMENTS(fields); i++)
    if (is_set(s, fields[i].prop))
      memcpy(at(config, &fields[i]), at_const(&s->values, &fields[i]), field_size(&fields[i]));
  config->channels = 1;
  config->format = CUDAFFT_SAMPLE_F32;
  config->precision = CUDAFFT_FEATURES_F32;
  return ok;
}

void
gst_cuda_mel_spectrogram_properties_set(GObject *object, GstCudaMelSpectrogramSettings *s,
                                        guint prop_id, const GValue *value, GParamSpec *pspec)
{
  const Field *f = field_of(prop_id);
  if (prop_id != PROP_PRESET && !f) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    return;
  }
  /* the engine's sizes are every element's (cudafft_fft_size_supported()) */
  if (prop_id == PROP_FFT_SIZE &&
      !gst_cudafft_fft_size_check(GST_ELEMENT(object), g_value_get_uint(value), FALSE))
    return;
  if (prop_id == PROP_HOP_LENGTH && g_value_get_uint(value) == 0) {
    guint kept = 0;
    g_object_get(object, pspec->name, &kept, NULL);
    gst_cudafft_refuse_value(GST_ELEMENT(object),
                             "%s=%u refused: frames must advance by at least one sample. Keeping "
                             "%s=%u.",
                             pspec->name, g_value_get_uint(value), pspec->name, kept);
    return;
  }
  GST_OBJECT_LOCK(object);
  if (prop_id == PROP_PRESET)
    s->preset = g_value_get_enum(value);
  else
    field_from_value(&s->values, f, value);
  s->set |= G_GUINT64_CONSTANT(1) << prop_id;
  s->generation++;
  GST_OBJECT_UNLOCK(object);
}

void
gst_cuda_mel_spectrogram_properties_get(GObject *object, const GstCudaMelSpectrogramSettings *s,
                                        const CudafftFeaturesConfig *effective, guint prop_id,
                                        GValue *value, GParamSpec *pspec)
{
  const Field *f = field_of(prop_id);
  if (prop_id == PROP_PRESET)
    g_value_set_enum(value, s->preset);
  else if (f)
    field_to_value(effective, f, value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

gboolean
gst_cuda_mel_spectrogram_config_equal(const CudafftFeaturesConfig *a,
                                      const CudafftFeaturesConfig *b)
{
  if (a->sample_rate != b->sample_rate || a->channels != b->channels || a->format != b->format ||
      a->precision != b->precision)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS(fields); i++)
    if (!field_equal(a, b, &fields[i]))
      return FALSE;
  return TRUE;
}
