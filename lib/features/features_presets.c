/* features_presets.c: cudafft_features_preset(): the settings of each library's defaults, each
 * with its source in cudafft/features.h's comment of the function. */
#include "errors.h"

#include <cudafft/features.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const preset_names[] = {
    "whisper",      "kaldi-fbank", "kaldi-mfcc",      "librosa",
    "librosa-mfcc", "torchaudio",  "torchaudio-mfcc", "nemo",
};
#define PRESET_COUNT (sizeof preset_names / sizeof preset_names[0])

const char *
cudafft_features_preset_name(unsigned index)
{
  return index < PRESET_COUNT ? preset_names[index] : NULL;
}

/* The smallest power of two >= n (Kaldi's round_to_power_of_two, NeMo's n_fft). */
static size_t
power_of_two_above(size_t n)
{
  size_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

static CudafftStatus
whisper(CudafftFeaturesConfig *c, double rate, unsigned n_mels)
{
  if (rate != 16000.0)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "the whisper preset is for 16000 Hz audio (Whisper's models take 16 kHz "
                        "only), not %g Hz: resample to 16000 Hz first (audioresample before the "
                        "element)",
                        rate);
  if (n_mels != 0 && n_mels != 80 && n_mels != 128)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "Whisper's models take 80 mel bands (128 for large-v3), not %u", n_mels);
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->fft_size = 400;
  c->hop = 160;
  c->pad = CUDAFFT_FEATURES_PAD_REFLECT;
  c->n_mels = n_mels ? n_mels : 80;
  c->f_max = 8000.0;
  c->log = CUDAFFT_FEATURES_LOG10;
  c->log_floor = 1e-10;
  c->range = 8.0f;
  c->shift = 4.0f;
  c->scale = 0.25f;
  c->drop_last = 1;
  c->output = CUDAFFT_FEATURES_OUTPUT_CHUNKS;
  c->chunk_samples = 480000;
  c->layout = CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
  return CUDAFFT_STATUS_OK;
}

static void
kaldi(CudafftFeaturesConfig *c, double rate, unsigned n_mels, int mfcc)
{
  /* FrameExtractionOptions::WindowSize() and WindowShift(), in float as kaldi-native-fbank
   * computes them */
  const float samp_freq = (float)rate;
  c->win_length = (size_t)(int32_t)(samp_freq * 0.001f * 25.0f);
  c->hop = (size_t)(int32_t)(samp_freq * 0.001f * 10.0f);
  c->fft_size = power_of_two_above(c->win_length);
  c->window = CUDAFFT_FEATURES_WINDOW_POVEY;
  c->window_symmetric = 1;
  c->span = CUDAFFT_FEATURES_SPAN_WINDOW;
  c->edges = CUDAFFT_FEATURES_EDGES_SNIP;
  c->pad = CUDAFFT_FEATURES_PAD_SYMMETRIC; /* Kaldi's reflection, for snip_edges=false */
  c->remove_dc = 1;
  c->preemphasis = CUDAFFT_FEATURES_PREEMPHASIS_FRAME;
  c->preemph_coeff = 0.97f;
  c->n_mels = n_mels ? n_mels : 23;
  c->mel_scale = CUDAFFT_MEL_SCALE_HTK;
  c->filters = CUDAFFT_MEL_FILTERS_MEL;
  c->mel_norm = CUDAFFT_MEL_NORM_NONE;
  c->f_min = 20.0;
  c->f_max = 0.0;
  c->log = CUDAFFT_FEATURES_LN_GUARD;
  c->log_floor = FLT_EPSILON;
  c->n_mfcc = 13;
  c->lifter_kind = CUDAFFT_FEATURES_LIFTER_KALDI;
  c->lifter = 22.0f;
  c->energy_floor = 0.0f;
  c->kind = mfcc ? CUDAFFT_FEATURES_MFCC : CUDAFFT_FEATURES_LOG_MEL;
  c->energy = mfcc ? CUDAFFT_FEATURES_ENERGY_RAW : CUDAFFT_FEATURES_ENERGY_NONE;
}

static void
librosa(CudafftFeaturesConfig *c, unsigned n_mels, int mfcc)
{
  c->kind = mfcc ? CUDAFFT_FEATURES_MFCC : CUDAFFT_FEATURES_MEL;
  c->fft_size = 2048;
  c->hop = 512;
  c->pad = CUDAFFT_FEATURES_PAD_CONSTANT;
  c->n_mels = n_mels ? n_mels : 128;
  c->log = CUDAFFT_FEATURES_DB;
  c->log_floor = 1e-10;
  c->db_ref = 1.0;
  c->range = 80.0f;
  c->n_mfcc = 20;
  c->lifter_kind = CUDAFFT_FEATURES_LIFTER_LIBROSA;
  c->lifter = 0.0f;
}

static void
torchaudio(CudafftFeaturesConfig *c, unsigned n_mels, int mfcc)
{
  c->kind = mfcc ? CUDAFFT_FEATURES_MFCC : CUDAFFT_FEATURES_MEL;
  c->fft_size = 400;
  c->hop = 200;
  c->pad = CUDAFFT_FEATURES_PAD_REFLECT;
  c->n_mels = n_mels ? n_mels : 128;
  c->mel_scale = CUDAFFT_MEL_SCALE_HTK;
  c->mel_norm = CUDAFFT_MEL_NORM_NONE;
  c->log = CUDAFFT_FEATURES_DB;
  c->log_floor = 1e-10;
  c->db_ref = 1.0;
  c->range = 80.0f;
  c->n_mfcc = 40;
}

static void
nemo(CudafftFeaturesConfig *c, double rate, unsigned n_mels)
{
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  /* AudioToMelSpectrogramPreprocessor: int(window_size * sample_rate) */
  c->win_length = (size_t)(0.02 * rate);
  c->hop = (size_t)(0.01 * rate);
  c->fft_size = power_of_two_above(c->win_length);
  c->window_symmetric = 1;
  c->pad = CUDAFFT_FEATURES_PAD_CONSTANT;
  c->preemphasis = CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL;
  c->preemph_coeff = 0.97f;
  c->n_mels = n_mels ? n_mels : 64;
  c->log = CUDAFFT_FEATURES_LN_ADD;
  c->log_floor = 1.0 / 16777216.0; /* 2^-24 */
  c->drop_last = 1;
  c->n_mfcc = 64;
}

CudafftStatus
cudafft_features_preset(CudafftFeaturesConfig *config, const char *name, double sample_rate,
                        unsigned n_mels)
{
  if (!config || !name)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_features_preset: %s is NULL",
                        !config ? "config" : "name");
  if (!(isfinite(sample_rate) && sample_rate > 0.0))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "cudafft_features_preset: sample rate %g Hz is not positive", sample_rate);
  CudafftFeaturesConfig c;
  cudafft_features_config_init(&c);
  c.sample_rate = sample_rate;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if (strcmp(name, "whisper") == 0)
    status = whisper(&c, sample_rate, n_mels);
  else if (strcmp(name, "kaldi-fbank") == 0 || strcmp(name, "kaldi-mfcc") == 0)
    kaldi(&c, sample_rate, n_mels, strcmp(name, "kaldi-mfcc") == 0);
  else if (strcmp(name, "librosa") == 0 || strcmp(name, "librosa-mfcc") == 0)
    librosa(&c, n_mels, strcmp(name, "librosa-mfcc") == 0);
  else if (strcmp(name, "torchaudio") == 0 || strcmp(name, "torchaudio-mfcc") == 0)
    torchaudio(&c, n_mels, strcmp(name, "torchaudio-mfcc") == 0);
  else if (strcmp(name, "nemo") == 0)
    nemo(&c, sample_rate, n_mels);
  else
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "no features preset '%s' (whisper, kaldi-fbank, kaldi-mfcc, librosa, "
                          "librosa-mfcc, torchaudio, torchaudio-mfcc, nemo)",
                          name);
  if (status == CUDAFFT_STATUS_OK)
    *config = c;
  return status;
}
