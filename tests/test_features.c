/* test_features.c: the features engine (cudafft/features.h) against the libraries whose
 * conventions it restates: every output value of each case against what openai-whisper,
 * transformers' WhisperFeatureExtractor, kaldi-native-fbank, librosa, torchaudio, NeMo's
 * preprocessing and python_speech_features computed for the same signal (tests/features_data/,
 * made by tests/make_feature_refs.py), with the library's own frame count; every case pushed in
 * pieces of random sizes; one push against random pieces value for value; two channels; F16; the
 * presets' settings, the empty filters and the statuses of bad configurations and calls.
 * Argument: cpu or cuda. The engine's own conventions on fresh random input, against a
 * double-precision model: test_features_model.c. */
#include "features_util.h"

#include <cudafft/features.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUDAFFT_FEATURES_DATA
#error "CUDAFFT_FEATURES_DATA (the folder of the reference files) is set by tests/meson.build"
#endif

static CudafftBackend backend;

/* How a reference holds its values. */
typedef enum {
  REF_FRAMES,          /* [frame][feature] */
  REF_FEATURES_FRAMES, /* [feature][frame], its constant tail stored once (Whisper) */
  REF_CHUNKS,          /* [chunk][feature][frame] (transformers) */
} RefLayout;

/* How far a value may be from the reference. */
typedef enum {
  TOL_ABS,       /* |ours - ref| <= tolerance */
  TOL_FRAME_REL, /* <= tolerance x the frame's largest |ref| (a power spectrum's float error is
                    relative to the frame's energy, not to each band's) */
} TolKind;

typedef struct {
  const char *name;   /* the reference */
  const char *signal; /* the input */
  RefLayout layout;
  TolKind tol_kind;
  double tolerance;
  const char *why; /* where the tolerance comes from */
  /* The engine's settings for the case, for a signal of `frames` reference frames. */
  void (*configure)(CudafftFeaturesConfig *c, double rate, size_t frames);
} RefCase;

static void
preset(CudafftFeaturesConfig *c, const char *name, double rate, unsigned n_mels)
{
  const CudafftStatus status = cudafft_features_preset(c, name, rate, n_mels);
  if (status != CUDAFFT_STATUS_OK)
    test_abort("preset %s at %g Hz: %s", name, rate, cudafft_last_error_message());
}

/* One window of every frame: what librosa and torchaudio normalise (top_db) over. */
static void
whole_clip(CudafftFeaturesConfig *c, size_t frames)
{
  c->output = CUDAFFT_FEATURES_OUTPUT_WINDOWS;
  c->window_frames = c->window_stride = frames;
}

/* The cases' settings ------------------------------------------------------------------------- */

static void
whisper80(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "whisper", rate, 80);
}

static void
whisper128(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "whisper", rate, 128);
}

static void
whisper_2s(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "whisper", rate, 80);
  c->chunk_samples = 32000; /* WhisperFeatureExtractor(chunk_length=2) */
}

static void
kaldi_fbank(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "kaldi-fbank", rate, 0);
}

static void
kaldi_mfcc(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "kaldi-mfcc", rate, 0);
}

static void
kaldi_8k_nosnip(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "kaldi-fbank", rate, 15);
  c->edges = CUDAFFT_FEATURES_EDGES_KALDI;
  c->energy = CUDAFFT_FEATURES_ENERGY_RAW;
}

static void
kaldi_44k(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "kaldi-fbank", rate, 40);
  c->window = CUDAFFT_FEATURES_WINDOW_HAMMING;
  c->energy = CUDAFFT_FEATURES_ENERGY_WINDOWED;
  c->energy_floor = 1.0f;
  c->f_min = 60.0;
  c->f_max = -400.0;
}

static void
kaldi_s16(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "kaldi-mfcc", rate, 0);
  c->format = CUDAFFT_SAMPLE_S16;
  c->sample_scale = 32768.0f;
  c->lifter = 0.0f;
  c->energy = CUDAFFT_FEATURES_ENERGY_NONE;
}

static void
librosa_mel(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "librosa", rate, 0);
}

static void
librosa_db(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  preset(c, "librosa", rate, 0);
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  whole_clip(c, frames);
}

static void
librosa_mfcc(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  preset(c, "librosa-mfcc", rate, 0);
  whole_clip(c, frames);
}

static void
librosa_mfcc_deltas(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  librosa_mfcc(c, rate, frames);
  c->delta_order = 2;
  c->delta_width = 9;
  c->delta_style = CUDAFFT_FEATURES_DELTAS_SAVGOL;
}

static void
librosa_lifter(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  preset(c, "librosa-mfcc", rate, 64);
  c->n_mfcc = 13;
  c->lifter = 22.0f;
  c->fft_size = 1024;
  c->hop = 441;
  c->mel_scale = CUDAFFT_MEL_SCALE_HTK;
  c->f_min = 30.0;
  c->f_max = 16000.0;
  whole_clip(c, frames);
}

static void
librosa_stream_deltas(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "librosa-mfcc", rate, 40);
  c->n_mfcc = 13;
  c->fft_size = 512;
  c->hop = 160;
  c->range = 0.0f; /* top_db=None */
  c->delta_order = 2;
  c->delta_width = 5;
  c->delta_style = CUDAFFT_FEATURES_DELTAS_SAVGOL;
}

static void
torchaudio_mel(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "torchaudio", rate, 0);
}

static void
torchaudio_mfcc(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  preset(c, "torchaudio-mfcc", rate, 0);
  whole_clip(c, frames);
}

static void
torchaudio_deltas(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "torchaudio", rate, 40);
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->fft_size = 512;
  c->win_length = 400;
  c->hop = 160;
  c->log = CUDAFFT_FEATURES_LN_ADD;
  c->log_floor = 1e-6;
  c->range = 0.0f;
  c->delta_order = 2;
  c->delta_width = 5;
}

static void
torchaudio_48k(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "torchaudio", rate, 40);
  c->fft_size = 480;
  c->win_length = 400;
  c->hop = 240;
  c->power = 1;
  c->normalized = 2; /* torchaudio's normalized=True: by the window's energy */
  c->window = CUDAFFT_FEATURES_WINDOW_HAMMING;
}

static void
nemo(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  preset(c, "nemo", rate, 0);
}

/* python_speech_features 0.6's mfcc and logfbank defaults (no preset: a library of the past, but
 * its conventions are fields). */
static void
psf_common(CudafftFeaturesConfig *c, double rate, unsigned n_mels)
{
  cudafft_features_config_init(c);
  c->sample_rate = rate;
  c->fft_size = 512;
  c->win_length = 400;
  c->hop = 160;
  c->window = CUDAFFT_FEATURES_WINDOW_RECTANGULAR;
  c->span = CUDAFFT_FEATURES_SPAN_WINDOW;
  c->edges = CUDAFFT_FEATURES_EDGES_END;
  c->pad = CUDAFFT_FEATURES_PAD_CONSTANT;
  c->preemphasis = CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL;
  c->preemph_coeff = 0.97f;
  c->normalized = 1;
  c->n_mels = n_mels;
  c->mel_scale = CUDAFFT_MEL_SCALE_HTK;
  c->filters = CUDAFFT_MEL_FILTERS_BINS;
  c->mel_norm = CUDAFFT_MEL_NORM_NONE;
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->log = CUDAFFT_FEATURES_LN_GUARD;
  c->log_floor = DBL_EPSILON;
}

static void
psf_logfbank(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  psf_common(c, rate, 26);
}

static void
psf_mfcc(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  (void)frames;
  psf_common(c, rate, 26);
  c->kind = CUDAFFT_FEATURES_MFCC;
  c->n_mfcc = 13;
  c->lifter = 22.0f;
  c->energy = CUDAFFT_FEATURES_ENERGY_SPECTRUM;
}

static void
psf_mfcc_delta(CudafftFeaturesConfig *c, double rate, size_t frames)
{
  psf_mfcc(c, rate, frames);
  c->delta_order = 1;
  c->delta_width = 5;
}

#define WHY_FLOAT "float FFT and sums on both sides, measured worst x 5 or more"
/* torchaudio's melscale_fbanks works in float32: a weight near a triangle's edge, the difference
 * of two frequencies near each other, carries up to 1e-5 of its band's value */
#define WHY_TORCH_BANK "torchaudio's float32 filter bank, measured worst x 5"

static const RefCase cases[] = {
    {"whisper80_speech", "speech16k", REF_FEATURES_FRAMES, TOL_ABS, 1e-4, "the issue's bound",
     whisper80},
    {"whisper128_noise", "noise16k", REF_FEATURES_FRAMES, TOL_ABS, 1e-4, "the issue's bound",
     whisper128},
    {"whisper_hf_chunks2s", "speech16k", REF_CHUNKS, TOL_ABS, 1e-4, "the issue's bound",
     whisper_2s},
    {"kaldi_fbank_speech", "speech16k", REF_FRAMES, TOL_ABS, 1e-3, "the issue's bound",
     kaldi_fbank},
    {"kaldi_fbank_8k_nosnip_energy", "noise8k", REF_FRAMES, TOL_ABS, 1e-3, "the issue's bound",
     kaldi_8k_nosnip},
    {"kaldi_fbank_44k_hamming_windowed_energy", "chirp44k", REF_FRAMES, TOL_ABS, 1e-3,
     "the issue's bound", kaldi_44k},
    {"kaldi_mfcc_speech", "speech16k", REF_FRAMES, TOL_ABS, 2e-3, WHY_FLOAT, kaldi_mfcc},
    {"kaldi_mfcc_s16", "speech16k_s16", REF_FRAMES, TOL_ABS, 2e-3, WHY_FLOAT, kaldi_s16},
    {"librosa_mel_music", "music22k", REF_FRAMES, TOL_FRAME_REL, 1e-5, WHY_FLOAT, librosa_mel},
    {"librosa_db_music", "music22k", REF_FRAMES, TOL_ABS, 0.01, "the issue's bound (dB)",
     librosa_db},
    {"librosa_mfcc_music", "music22k", REF_FRAMES, TOL_ABS, 1e-3, WHY_FLOAT, librosa_mfcc},
    {"librosa_mfcc_delta_music", "music22k", REF_FRAMES, TOL_ABS, 1e-3, WHY_FLOAT,
     librosa_mfcc_deltas},
    {"librosa_mfcc_lifter_44k", "chirp44k", REF_FRAMES, TOL_ABS, 2e-3, WHY_FLOAT, librosa_lifter},
    {"librosa_stream_deltas_speech", "speech16k", REF_FRAMES, TOL_ABS, 2e-3, WHY_FLOAT,
     librosa_stream_deltas},
    {"torchaudio_mel_speech", "speech16k", REF_FRAMES, TOL_FRAME_REL, 1e-4, WHY_TORCH_BANK,
     torchaudio_mel},
    {"torchaudio_mfcc_speech", "speech16k", REF_FRAMES, TOL_ABS, 3e-3, WHY_FLOAT, torchaudio_mfcc},
    {"torchaudio_logmel_deltas_speech", "speech16k", REF_FRAMES, TOL_ABS, 1e-3, WHY_FLOAT,
     torchaudio_deltas},
    {"torchaudio_mag_48k_n480", "speech48k", REF_FRAMES, TOL_FRAME_REL, 1e-4, WHY_TORCH_BANK,
     torchaudio_48k},
    {"nemo_speech", "speech16k", REF_FRAMES, TOL_ABS, 1e-3, WHY_FLOAT, nemo},
    {"psf_logfbank_speech", "speech16k", REF_FRAMES, TOL_ABS, 1e-3, WHY_FLOAT, psf_logfbank},
    {"psf_mfcc_speech", "speech16k", REF_FRAMES, TOL_ABS, 2e-3, WHY_FLOAT, psf_mfcc},
    {"psf_mfcc_delta_speech", "speech16k", REF_FRAMES, TOL_ABS, 2e-3, WHY_FLOAT, psf_mfcc_delta},
};

/* Comparing ---------------------------------------------------------------------------------- */

/* The reference's frames (per channel, per output unit for chunks) and features. */
static void
ref_shape(const RefCase *rc, const FeaturesRef *ref, size_t *units, size_t *frames,
          size_t *features)
{
  switch (rc->layout) {
  case REF_FRAMES:
    *units = 1;
    *frames = ref->dims[0];
    *features = ref->dims[1];
    break;
  case REF_FEATURES_FRAMES:
    *units = 1;
    *frames = ref->full;
    *features = ref->dims[0];
    break;
  default:
    *units = ref->dims[0];
    *frames = ref->dims[2];
    *features = ref->dims[1];
  }
}

static float
ref_value(const RefCase *rc, const FeaturesRef *ref, size_t unit, size_t frame, size_t feature)
{
  switch (rc->layout) {
  case REF_FRAMES:
    return ref->values[frame * ref->dims[1] + feature];
  case REF_FEATURES_FRAMES:
    return features_ref_at2(ref, feature, frame);
  default:
    return ref->values[(unit * ref->dims[1] + feature) * ref->dims[2] + frame];
  }
}

/* Our value of frame t (of unit u: a window or chunk; FRAMES: output t), feature j, channel ch. */
static float
our_value(const FeaturesRun *run, const CudafftFeaturesConfig *c, const CudafftFeaturesShape *s,
          size_t u, size_t t, size_t j, unsigned ch)
{
  if (c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES)
    return features_run_value(run, c->precision, t, ch * s->features + j);
  const size_t at = c->layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR
                        ? (ch * s->features + j) * s->frames + t
                        : (ch * s->frames + t) * s->features + j;
  return features_run_value(run, c->precision, u, at);
}

/* Every value of channel ch of a run against the reference; the frame count and stamps. */
static void
compare(const RefCase *rc, const FeaturesRef *ref, const FeaturesRun *run,
        const CudafftFeaturesConfig *c, unsigned ch, double extra, const char *label)
{
  CudafftFeaturesShape s;
  (void)cudafft_features_shape(c, &s);
  size_t units, frames, features;
  ref_shape(rc, ref, &units, &frames, &features);
  const int per_frame = c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES;
  const size_t outputs = per_frame ? frames : units;
  int counts_ok =
      run->outputs == outputs && s.features == features && (per_frame || s.frames == frames);
  for (size_t k = 0; k < run->outputs && counts_ok; k++) {
    const CudafftFeaturesStamp *st = &run->stamps[k];
    const uint64_t position = per_frame                                     ? k * c->hop
                              : c->output == CUDAFFT_FEATURES_OUTPUT_CHUNKS ? k * c->chunk_samples
                                                                            : 0;
    counts_ok = st->position == position && st->frames == (per_frame ? 1 : frames);
  }
  if (!test_check(counts_ok,
                  "%s: %zu outputs of %zu frames x %zu features with their stamps, as the "
                  "library's %zu x %zu x %zu",
                  label, run->outputs, per_frame ? 1 : s.frames, s.features, outputs,
                  per_frame ? 1 : frames, features))
    return;
  double worst = 0.0;
  size_t worst_u = 0, worst_t = 0, worst_j = 0, bad = 0;
  float worst_ours = 0.0f, worst_ref = 0.0f;
  for (size_t u = 0; u < units; u++)
    for (size_t t = 0; t < frames; t++) {
      double scale = 1.0;
      if (rc->tol_kind == TOL_FRAME_REL) {
        scale = 0.0;
        for (size_t j = 0; j < features; j++)
          scale = fmax(scale, fabs(ref_value(rc, ref, u, t, j)));
      }
      for (size_t j = 0; j < features; j++) {
        const float want = ref_value(rc, ref, u, t, j);
        const float got = our_value(run, c, &s, u, t, j, ch);
        const double allowed = rc->tolerance * scale + extra * fabs(want);
        const double diff = fabs((double)got - want);
        if (!(diff <= allowed))
          bad++;
        const double measure = scale > 0.0 ? diff / scale : diff;
        if (!(measure <= worst)) {
          worst = measure;
          worst_u = u;
          worst_t = t;
          worst_j = j;
          worst_ours = got;
          worst_ref = want;
        }
      }
    }
  test_check(bad == 0,
             "%s: %zu values within %g%s of the library's (%s): worst %.3g at unit %zu frame %zu "
             "feature %zu (%.7g, library %.7g)%s",
             label, units * frames * features, rc->tolerance,
             rc->tol_kind == TOL_FRAME_REL ? " x the frame's largest" : "", rc->why, worst, worst_u,
             worst_t, worst_j, (double)worst_ours, (double)worst_ref, bad ? ", some outside" : "");
}

/* The rate of a signal (tests/make_feature_refs.py's make_signals). */
static double
signal_rate(const char *signal)
{
  static const struct {
    const char *name;
    double rate;
  } rates[] = {{"speech16k", 16000.0},    {"noise16k", 16000.0}, {"music22k", 22050.0},
               {"chirp44k", 44100.0},     {"noise8k", 8000.0},   {"speech48k", 48000.0},
               {"speech16k_s16", 16000.0}};
  for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
    if (strcmp(signal, rates[i].name) == 0)
      return rates[i].rate;
  test_abort("no rate known for the signal %s", signal);
}

/* One case: its signal in pushes of random sizes against the reference, and in one push. */
static void
run_case(const RefCase *rc)
{
  FeaturesRef signal, ref;
  char name[128];
  snprintf(name, sizeof name, "signal_%s", rc->signal);
  features_ref_load(&signal, CUDAFFT_FEATURES_DATA, name);
  features_ref_load(&ref, CUDAFFT_FEATURES_DATA, rc->name);
  size_t units, frames, features;
  ref_shape(rc, &ref, &units, &frames, &features);
  const double rate = signal_rate(rc->signal);
  CudafftFeaturesConfig c;
  rc->configure(&c, rate, frames);
  const void *in = signal.values;
  if (c.format == CUDAFFT_SAMPLE_S16)
    in = signal.samples;
  TestRng rng = test_rng("%s pieces", rc->name);
  FeaturesRun pieces, whole;
  features_run(&pieces, backend, &c, in, signal.count, &rng, 4000, rc->name);
  if (pieces.ok)
    compare(rc, &ref, &pieces, &c, 0, 0.0, rc->name);
  /* the same signal in one push: the same values, bit for bit (each frame's arithmetic does not
   * depend on how the samples came) */
  features_run(&whole, backend, &c, in, signal.count, NULL, 0, rc->name);
  if (whole.ok && pieces.ok)
    test_check(whole.outputs == pieces.outputs &&
                   memcmp(whole.data, pieces.data, whole.outputs * whole.output_bytes) == 0,
               "%s: one push gives the values of pushes of random sizes, bit for bit", rc->name);
  features_run_clear(&pieces);
  features_run_clear(&whole);
  features_ref_clear(&signal);
  features_ref_clear(&ref);
}

/* Two channels (Whisper's speech and noise cases, one stream each) and F16. */
static void
check_channels_and_f16(void)
{
  const RefCase *speech_case = &cases[0];
  const RefCase noise_case = {"whisper80_noise",   "noise16k", REF_FEATURES_FRAMES, TOL_ABS, 1e-4,
                              "the issue's bound", whisper80};
  FeaturesRef speech, noise, speech_ref, noise_ref;
  features_ref_load(&speech, CUDAFFT_FEATURES_DATA, "signal_speech16k");
  features_ref_load(&noise, CUDAFFT_FEATURES_DATA, "signal_noise16k");
  features_ref_load(&speech_ref, CUDAFFT_FEATURES_DATA, speech_case->name);
  features_ref_load(&noise_ref, CUDAFFT_FEATURES_DATA, noise_case.name);
  /* the noise ends earlier: zeros after it are what Whisper pads it with anyway */
  const size_t length = speech.count;
  float *in = calloc(2 * length, sizeof *in);
  if (!in)
    test_abort("out of memory");
  for (size_t i = 0; i < length; i++) {
    in[2 * i] = speech.values[i];
    in[2 * i + 1] = i < noise.count ? noise.values[i] : 0.0f;
  }
  CudafftFeaturesConfig c;
  whisper80(&c, 16000.0, 0);
  c.channels = 2;
  TestRng rng = test_rng("two channels");
  FeaturesRun run;
  features_run(&run, backend, &c, in, length, &rng, 7000, "whisper, 2 channels");
  if (run.ok) {
    compare(speech_case, &speech_ref, &run, &c, 0, 0.0, "whisper, 2 channels: channel 0");
    compare(&noise_case, &noise_ref, &run, &c, 1, 0.0, "whisper, 2 channels: channel 1");
  }
  features_run_clear(&run);
  /* F16: the reference's value rounded to half, within the float bound and half a unit in the
   * last place of half (2^-11 relative) */
  c.precision = CUDAFFT_FEATURES_F16;
  features_run(&run, backend, &c, in, length, &rng, 7000, "whisper, 2 channels, F16");
  if (run.ok) {
    compare(speech_case, &speech_ref, &run, &c, 0, 1.0 / 2048.0, "whisper F16: channel 0");
    compare(&noise_case, &noise_ref, &run, &c, 1, 1.0 / 2048.0, "whisper F16: channel 1");
  }
  features_run_clear(&run);
  free(in);
  features_ref_clear(&speech);
  features_ref_clear(&noise);
  features_ref_clear(&speech_ref);
  features_ref_clear(&noise_ref);
}

/* Presets and empty filters ---------------------------------------------------------------------
 */

static void
check_presets(void)
{
  CudafftFeaturesConfig c;
  int listed = 0, valid = 1;
  for (unsigned i = 0; cudafft_features_preset_name(i); i++, listed++) {
    const char *name = cudafft_features_preset_name(i);
    const double rate = 16000.0;
    valid = valid && cudafft_features_preset(&c, name, rate, 0) == CUDAFFT_STATUS_OK &&
            cudafft_features_shape(&c, NULL) == CUDAFFT_STATUS_OK;
  }
  test_check(listed == 8 && valid, "8 presets listed, each a valid configuration at 16 kHz (%d)",
             listed);
  /* the presets' derived sizes: Kaldi's 25/10 ms truncated and the next power of two, NeMo's
   * int(0.02 rate) */
  preset(&c, "kaldi-fbank", 44100.0, 0);
  int ok = c.win_length == 1102 && c.hop == 441 && c.fft_size == 2048 && c.n_mels == 23;
  preset(&c, "kaldi-mfcc", 8000.0, 0);
  ok = ok && c.win_length == 200 && c.hop == 80 && c.fft_size == 256 && c.n_mfcc == 13;
  preset(&c, "nemo", 16000.0, 0);
  ok = ok && c.win_length == 320 && c.hop == 160 && c.fft_size == 512 && c.n_mels == 64 &&
       c.drop_last;
  preset(&c, "whisper", 16000.0, 0);
  CudafftFeaturesShape s;
  ok = ok && cudafft_features_shape(&c, &s) == CUDAFFT_STATUS_OK && s.frames == 3000 &&
       s.features == 80 && c.layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
  test_check(ok, "presets: Kaldi's sizes at 44.1 and 8 kHz, NeMo's at 16 kHz, Whisper's 80 x 3000 "
                 "chunks");
  /* Whisper at another rate: refused with the way out */
  const CudafftStatus status = cudafft_features_preset(&c, "whisper", 44100.0, 0);
  test_check(status == CUDAFFT_STATUS_UNSUPPORTED &&
                 strstr(cudafft_last_error_message(), "resample to 16000 Hz"),
             "whisper at 44.1 kHz: UNSUPPORTED, saying to resample (%s: %s)",
             cudafft_status_name(status), cudafft_last_error_message());
  test_check(cudafft_features_preset(&c, "whisper", 16000.0, 64) == CUDAFFT_STATUS_INVALID_VALUE &&
                 cudafft_features_preset(&c, "htk", 16000.0, 0) == CUDAFFT_STATUS_INVALID_VALUE &&
                 strstr(cudafft_last_error_message(), "kaldi-fbank") &&
                 cudafft_features_preset(NULL, "nemo", 16000.0, 0) == CUDAFFT_STATUS_NULL_POINTER &&
                 cudafft_features_preset(&c, "nemo", -1.0, 0) == CUDAFFT_STATUS_INVALID_VALUE,
             "presets: 64 Whisper bands, an unknown name (the message lists the names), NULL and "
             "a negative rate refused");
}

/* torchaudio's default bank (128 bands on 201 bins) has empty filters: the same ones as its own
 * (tests/features_data/empty_filters.txt). */
static void
check_empty_filters(void)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/empty_filters.txt", CUDAFFT_FEATURES_DATA);
  FILE *f = fopen(path, "r");
  if (!f)
    test_abort("cannot open %s", path);
  char line[4096];
  unsigned want[CUDAFFT_FEATURES_MAX_MELS], wanted = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "torchaudio_mel_speech ", 22) == 0)
      for (char *p = strtok(line + 22, " \n"); p && wanted < CUDAFFT_FEATURES_MAX_MELS;
           p = strtok(NULL, " \n"))
        want[wanted++] = (unsigned)atoi(p);
  fclose(f);
  CudafftFeaturesConfig c;
  torchaudio_mel(&c, 16000.0, 0);
  unsigned got[CUDAFFT_FEATURES_MAX_MELS], count = 0;
  const CudafftStatus status =
      cudafft_features_empty_filters(&c, got, CUDAFFT_FEATURES_MAX_MELS, &count);
  int same = status == CUDAFFT_STATUS_OK && count == wanted && wanted > 0;
  for (unsigned i = 0; same && i < count; i++)
    same = got[i] == want[i];
  test_check(same, "empty filters of torchaudio's default bank: %u, as torchaudio's %u", count,
             wanted);
  unsigned none = 1;
  whisper80(&c, 16000.0, 0);
  test_check(cudafft_features_empty_filters(&c, NULL, 0, &none) == CUDAFFT_STATUS_OK && none == 0,
             "Whisper's bank has no empty filter");
}

/* Bad configurations and calls ------------------------------------------------------------------
 */

typedef struct {
  const char *what;
  CudafftStatus want;
  void (*spoil)(CudafftFeaturesConfig *c);
} BadCase;

#define BAD(name, body)                                                                            \
  static void bad_##name(CudafftFeaturesConfig *c)                                                 \
  {                                                                                                \
    body;                                                                                          \
  }
BAD(window_above_fft, c->win_length = 512)
BAD(hop_zero, c->hop = 0)
BAD(fmax_above_nyquist, c->f_max = 8001.0)
BAD(fmin_above_fmax, c->f_min = 7000.0; c->f_max = 6000.0)
BAD(fft_size_11, c->fft_size = 11 * 40)
BAD(fft_size_small, c->fft_size = 8; c->win_length = 8)
BAD(no_channels, c->channels = 0)
BAD(s24, c->format = CUDAFFT_SAMPLE_S24)
BAD(rate_zero, c->sample_rate = 0.0)
BAD(mels_zero, c->n_mels = 0)
BAD(mfcc_above_mels, c->kind = CUDAFFT_FEATURES_MFCC; c->n_mfcc = 81)
BAD(power_3, c->power = 3)
BAD(floor_zero, c->log_floor = 0.0)
BAD(energy_log10, c->energy = CUDAFFT_FEATURES_ENERGY_RAW)
BAD(delta_even, c->delta_order = 1; c->delta_width = 4)
BAD(delta_order_3, c->delta_order = 3)
BAD(window_zero, c->output = CUDAFFT_FEATURES_OUTPUT_WINDOWS; c->window_frames = 0)
BAD(chunk_short, c->edges = CUDAFFT_FEATURES_EDGES_SNIP; c->chunk_samples = 100)
BAD(unknown_window, c->window = CUDAFFT_FEATURES_WINDOW_COUNT_)
BAD(range_nan, c->range = NAN)
BAD(preemph_big, c->preemph_coeff = 1.5f)
BAD(zero_window_energy, c->normalized = 2; c->win_length = 2; c->window_symmetric = 1)

static void
check_bad_configs(void)
{
  static const BadCase bad[] = {
      {"window length 512 above the fft size 400", CUDAFFT_STATUS_INVALID_SIZE,
       bad_window_above_fft},
      {"hop 0", CUDAFFT_STATUS_INVALID_SIZE, bad_hop_zero},
      {"f_max above Nyquist", CUDAFFT_STATUS_INVALID_VALUE, bad_fmax_above_nyquist},
      {"f_min above f_max", CUDAFFT_STATUS_INVALID_VALUE, bad_fmin_above_fmax},
      {"fft size 440 (a factor 11)", CUDAFFT_STATUS_INVALID_SIZE, bad_fft_size_11},
      {"fft size 8", CUDAFFT_STATUS_INVALID_SIZE, bad_fft_size_small},
      {"no channels", CUDAFFT_STATUS_INVALID_VALUE, bad_no_channels},
      {"S24 samples", CUDAFFT_STATUS_INVALID_VALUE, bad_s24},
      {"rate 0", CUDAFFT_STATUS_INVALID_VALUE, bad_rate_zero},
      {"no mel bands", CUDAFFT_STATUS_INVALID_SIZE, bad_mels_zero},
      {"81 MFCC of 80 bands", CUDAFFT_STATUS_INVALID_SIZE, bad_mfcc_above_mels},
      {"power 3", CUDAFFT_STATUS_INVALID_VALUE, bad_power_3},
      {"log floor 0", CUDAFFT_STATUS_INVALID_VALUE, bad_floor_zero},
      {"an energy with log10", CUDAFFT_STATUS_INVALID_VALUE, bad_energy_log10},
      {"delta width 4", CUDAFFT_STATUS_INVALID_VALUE, bad_delta_even},
      {"delta order 3", CUDAFFT_STATUS_INVALID_VALUE, bad_delta_order_3},
      {"windows of 0 frames", CUDAFFT_STATUS_INVALID_SIZE, bad_window_zero},
      {"a chunk shorter than a frame", CUDAFFT_STATUS_INVALID_SIZE, bad_chunk_short},
      {"an unknown window", CUDAFFT_STATUS_INVALID_VALUE, bad_unknown_window},
      {"range NaN", CUDAFFT_STATUS_INVALID_VALUE, bad_range_nan},
      {"pre-emphasis 1.5", CUDAFFT_STATUS_INVALID_VALUE, bad_preemph_big},
      {"normalized 2 with a window of no energy", CUDAFFT_STATUS_INVALID_VALUE,
       bad_zero_window_energy},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CudafftFeaturesConfig c;
    whisper80(&c, 16000.0, 0);
    bad[i].spoil(&c);
    CudafftFeatures *f = (CudafftFeatures *)&c; /* non-NULL: create must clear it */
    const CudafftStatus status = cudafft_features_create(&f, backend, -1, &c);
    test_check_create(status, f, bad[i].want, bad[i].want, "cudafft_features_create", bad[i].what);
  }
  test_check(cudafft_features_shape(NULL, NULL) == CUDAFFT_STATUS_NULL_POINTER,
             "shape of a NULL config: NULL_POINTER");
}

static void
check_bad_calls(void)
{
  CudafftFeaturesConfig c;
  kaldi_fbank(&c, 16000.0, 0);
  CudafftFeatures *f = NULL;
  if (cudafft_features_create(&f, backend, -1, &c) != CUDAFFT_STATUS_OK)
    test_abort("create: %s", cudafft_last_error_message());
  static float zeros[4000];
  float out[23 * 30];
  size_t outputs = 99;
  CudafftStatus status = cudafft_features_push(f, zeros, 4000, NULL, &outputs);
  int ok = status == CUDAFFT_STATUS_NULL_POINTER && outputs == 0 &&
           cudafft_features_samples_pushed(f) == 0;
  status = cudafft_features_push(NULL, zeros, 10, out, &outputs);
  ok = ok && status == CUDAFFT_STATUS_NULL_POINTER;
  status = cudafft_features_push_device(f, zeros, 10, out, &outputs, 0x10, NULL, NULL);
  ok = ok && status == CUDAFFT_STATUS_INVALID_VALUE;
  if (backend == CUDAFFT_BACKEND_CPU) {
    status =
        cudafft_features_push_device(f, zeros, 10, out, &outputs, CUDAFFT_IN_DEVICE, NULL, NULL);
    ok = ok && status == CUDAFFT_STATUS_UNSUPPORTED;
    status = cudafft_features_finish_device(f, out, &outputs, CUDAFFT_OUT_DEVICE, NULL);
    ok = ok && status == CUDAFFT_STATUS_UNSUPPORTED;
  }
  /* tiny and empty pushes, then a normal one: the stream goes on */
  ok =
      ok && cudafft_features_push(f, zeros, 0, NULL, &outputs) == CUDAFFT_STATUS_OK && outputs == 0;
  for (int i = 0; i < 399; i++)
    ok = ok && cudafft_features_push(f, zeros, 1, NULL, &outputs) == CUDAFFT_STATUS_OK &&
         outputs == 0;
  ok = ok && cudafft_features_outputs_for(f, 1) == 1 &&
       cudafft_features_push(f, zeros, 1, out, &outputs) == CUDAFFT_STATUS_OK && outputs == 1;
  cudafft_features_reset(f);
  ok = ok && cudafft_features_samples_pushed(f) == 0 && cudafft_features_outputs_done(f) == 0;
  /* the getters of NULL */
  ok = ok && cudafft_features_output_bytes(NULL) == 0 && cudafft_features_get_device(NULL) == -1 &&
       cudafft_features_get_config(NULL) == NULL && cudafft_features_latency(NULL) == 0 &&
       cudafft_features_outputs_for(NULL, 10) == 0;
  CudafftFeaturesStamp stamp;
  ok = ok && cudafft_features_stamp(NULL, 0, &stamp) == CUDAFFT_STATUS_NULL_POINTER &&
       cudafft_features_stamp(f, 0, NULL) == CUDAFFT_STATUS_NULL_POINTER;
  unsigned count = 0;
  ok = ok && cudafft_features_empty_filters(&c, NULL, 4, &count) == CUDAFFT_STATUS_NULL_POINTER;
  cudafft_features_destroy(f);
  cudafft_features_destroy(NULL);
  test_check(ok, "bad calls: out NULL with outputs due, NULL object, unknown flags, device memory "
                 "on the CPU, pushes of 0 and 1 samples, reset, NULL getters");
}

int
main(int argc, char **argv)
{
  backend = test_begin(argc, argv);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_case(&cases[i]);
  test_section_done("library references");
  check_channels_and_f16();
  check_presets();
  check_empty_filters();
  check_bad_configs();
  check_bad_calls();
  test_section_done("channels, F16, presets, statuses");
  return test_finish();
}
