/* test_features_model.c: the features engine (cudafft/features.h) against a double-precision
 * model of its own header (features_model.c) on fresh random input, for combinations the
 * libraries' references do not cover: every edge rule and padding, span and window, odd and
 * non-power-of-two sizes, shorter windows, every filter shape and norm, log flavour, energy,
 * lifter and delta style, frames, overlapping and gapped windows and chunks, both layouts, F16,
 * several channels and every sample format, dither; every output value, pushed in random pieces.
 * Then NaN and Inf confined to the frames that read them, utterances shorter than a frame, and the
 * latency each output waits for, pushed a sample at a time. Argument: cpu or cuda. */
#include "features_model.h"
#include "features_util.h"
#include "test_signal.h"

#include <cudafft/features.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CudafftBackend backend;

/* A case: the settings, the signal's length and format, and how close the engine must come. */
typedef struct {
  const char *what;
  void (*configure)(CudafftFeaturesConfig *c);
  size_t samples;
  double abs_tol; /* on log-domain values (and deltas of them) */
  double rel_tol; /* on linear values: x the output's largest |model| value of the frame */
} ModelCase;

/* Float arithmetic against double: the FFT's rounding (about 1e-7 of a frame's energy), carried
 * through the log where a band is small against its frame; measured worst x 10. */
#define LOG_TOL 2e-3
#define LINEAR_TOL 1e-5

static void
kaldi_like(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->sample_rate = 16000.0;
  c->channels = 3;
  c->format = CUDAFFT_SAMPLE_S16;
  c->fft_size = 256;
  c->win_length = 200;
  c->hop = 80;
  c->window = CUDAFFT_FEATURES_WINDOW_POVEY;
  c->window_symmetric = 1;
  c->span = CUDAFFT_FEATURES_SPAN_WINDOW;
  c->edges = CUDAFFT_FEATURES_EDGES_KALDI;
  c->pad = CUDAFFT_FEATURES_PAD_SYMMETRIC;
  c->remove_dc = 1;
  c->preemphasis = CUDAFFT_FEATURES_PREEMPHASIS_FRAME;
  c->n_mels = 20;
  c->mel_scale = CUDAFFT_MEL_SCALE_HTK;
  c->filters = CUDAFFT_MEL_FILTERS_MEL;
  c->mel_norm = CUDAFFT_MEL_NORM_NONE;
  c->f_min = 40.0;
  c->f_max = -300.0;
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->log = CUDAFFT_FEATURES_LN_GUARD;
  c->log_floor = FLT_EPSILON;
  c->energy = CUDAFFT_FEATURES_ENERGY_RAW;
  c->energy_floor = 0.5f;
  c->delta_order = 2;
  c->delta_width = 5;
}

static void
windows_mfcc(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->sample_rate = 22050.0;
  c->format = CUDAFFT_SAMPLE_F64;
  c->channels = 2;
  c->fft_size = 512;
  c->hop = 128;
  c->pad = CUDAFFT_FEATURES_PAD_CONSTANT;
  c->n_mels = 40;
  c->kind = CUDAFFT_FEATURES_MFCC;
  c->n_mfcc = 16;
  c->log = CUDAFFT_FEATURES_DB;
  c->db_ref = 0.01;
  c->range = 60.0f;
  c->lifter_kind = CUDAFFT_FEATURES_LIFTER_LIBROSA;
  c->lifter = 22.0f;
  c->delta_order = 2;
  c->delta_width = 7;
  c->delta_style = CUDAFFT_FEATURES_DELTAS_SAVGOL;
  c->output = CUDAFFT_FEATURES_OUTPUT_WINDOWS;
  c->window_frames = 12;
  c->window_stride = 5;
  c->layout = CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
}

static void
windows_mfcc_f16(CudafftFeaturesConfig *c)
{
  windows_mfcc(c);
  c->precision = CUDAFFT_FEATURES_F16;
}

static void
chunks_bins(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->sample_rate = 8000.0;
  c->format = CUDAFFT_SAMPLE_S32;
  c->channels = 2;
  c->fft_size = 240;
  c->win_length = 180;
  c->hop = 60;
  c->window = CUDAFFT_FEATURES_WINDOW_HAMMING;
  c->edges = CUDAFFT_FEATURES_EDGES_SNIP;
  c->drop_last = 1;
  c->preemphasis = CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL;
  c->preemph_coeff = 0.9f;
  c->power = 1;
  c->normalized = 2;
  c->n_mels = 24;
  c->filters = CUDAFFT_MEL_FILTERS_BINS;
  c->mel_scale = CUDAFFT_MEL_SCALE_HTK;
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->log = CUDAFFT_FEATURES_LOG10;
  c->log_floor = 1e-8;
  c->range = 6.0f;
  c->shift = 3.0f;
  c->scale = 0.5f;
  c->output = CUDAFFT_FEATURES_OUTPUT_CHUNKS;
  c->chunk_samples = 3000;
}

static void
odd_size_dither(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->sample_rate = 44100.0;
  c->fft_size = 375; /* 3 x 5^3: an odd transform */
  c->hop = 147;
  c->window = CUDAFFT_FEATURES_WINDOW_BLACKMAN;
  c->edges = CUDAFFT_FEATURES_EDGES_END;
  c->span = CUDAFFT_FEATURES_SPAN_WINDOW;
  c->pad = CUDAFFT_FEATURES_PAD_CONSTANT;
  c->dither = 0.01f;
  c->dither_seed = 1234;
  c->n_mels = 32;
  c->mel_norm = CUDAFFT_MEL_NORM_NONE;
  c->f_min = 100.0;
  c->f_max = 18000.0;
}

static void
gapped_windows_energy(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->sample_rate = 48000.0;
  c->channels = 4;
  c->fft_size = 480;
  c->hop = 240;
  c->window_symmetric = 1;
  c->n_mels = 48;
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->log = CUDAFFT_FEATURES_LN_ADD;
  c->log_floor = 1e-6;
  c->range = 9.0f;
  c->energy = CUDAFFT_FEATURES_ENERGY_SPECTRUM;
  c->normalized = 1;
  c->output = CUDAFFT_FEATURES_OUTPUT_WINDOWS;
  c->window_frames = 6;
  c->window_stride = 9;
  c->pad_partial = 0;
}

static void
frames_range_savgol(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->fft_size = 1000;
  c->win_length = 640;
  c->hop = 320;
  c->n_mels = 64;
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->log = CUDAFFT_FEATURES_DB;
  c->range = 50.0f;
  c->delta_order = 1;
  c->delta_width = 3;
  c->delta_style = CUDAFFT_FEATURES_DELTAS_SAVGOL;
  c->energy = CUDAFFT_FEATURES_ENERGY_NONE;
}

static void
mfcc_windowed_energy(CudafftFeaturesConfig *c)
{
  kaldi_like(c);
  c->format = CUDAFFT_SAMPLE_F32;
  c->channels = 1;
  c->fft_size = 400;
  c->win_length = 400;
  c->edges = CUDAFFT_FEATURES_EDGES_SNIP;
  c->kind = CUDAFFT_FEATURES_MFCC;
  c->n_mfcc = 13;
  c->lifter = 22.0f;
  c->energy = CUDAFFT_FEATURES_ENERGY_WINDOWED;
  c->delta_order = 0;
  c->precision = CUDAFFT_FEATURES_F16;
}

static void
tiny_fft(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->fft_size = 16;
  c->hop = 5;
  c->n_mels = 4;
  c->f_min = 500.0;
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->delta_order = 1;
  c->delta_width = 3;
}

static void
large_fft(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->sample_rate = 96000.0;
  c->fft_size = 12000; /* 2^5 3 5^3 */
  c->hop = 4000;
  c->n_mels = 128;
  c->kind = CUDAFFT_FEATURES_MFCC;
  c->log = CUDAFFT_FEATURES_LN_GUARD;
  c->log_floor = 1e-12;
  c->n_mfcc = 30;
}

static const ModelCase cases[] = {
    {"Kaldi-like: KALDI edges, symmetric padding, span L, povey, frame pre-emphasis, DC, raw "
     "energy with a floor, mel triangles, regression deltas of order 2, S16, 3 channels",
     kaldi_like, 5000, LOG_TOL, LINEAR_TOL},
    {"overlapping windows of MFCC: dB with a reference and a range, librosa's lifter, "
     "Savitzky-Golay deltas of order 2, feature-major, F64, 2 channels",
     windows_mfcc, 9000, LOG_TOL, LINEAR_TOL},
    {"the same in F16", windows_mfcc_f16, 9000, LOG_TOL, LINEAR_TOL},
    {"chunks: snipped edges, drop_last, signal pre-emphasis, magnitude by the window's energy, "
     "whole-bin filters, log10 with a range and an affine, S32, 2 channels",
     chunks_bins, 7777, LOG_TOL, LINEAR_TOL},
    {"an odd fft size (375), END edges, Blackman, dither, power mel", odd_size_dither, 6000,
     LOG_TOL, LINEAR_TOL},
    {"gapped windows, no partial window, LN_ADD with a range, spectrum energy, symmetric Hann, "
     "4 channels",
     gapped_windows_energy, 12000, LOG_TOL, LINEAR_TOL},
    {"frames with a per-frame range (dB), fft 1000 with a 640 window, Savgol deltas",
     frames_range_savgol, 8000, LOG_TOL, LINEAR_TOL},
    {"MFCC with the windowed energy, F16", mfcc_windowed_energy, 4000, LOG_TOL, LINEAR_TOL},
    {"fft size 16, deltas", tiny_fft, 400, LOG_TOL, LINEAR_TOL},
    {"fft size 12000 MFCC", large_fft, 40000, LOG_TOL, LINEAR_TOL},
    {"KALDI edges with a hop 32 times the span (frames from sample 775 on), 2 channels",
     features_config_kaldi_long_hop, 12000, LOG_TOL, LINEAR_TOL},
};

/* Raw samples of `format`: noise with loud and quiet stretches. */
static void
make_signal(TestSignal *s, const CudafftFeaturesConfig *c, size_t samples, const char *label)
{
  TestRng rng = test_rng("%s signal", label);
  test_signal_noise(s, &rng, c->format, c->channels, (unsigned)c->sample_rate, samples,
                    TEST_READ_POW2 | TEST_READ_F64_AS_FLOAT, 0.5);
  for (size_t i = samples / 3; i < samples / 2; i++)
    for (unsigned ch = 0; ch < c->channels; ch++)
      test_signal_set(s, i, ch, 0.001 * test_rng_uniform(&rng));
}

static int
is_linear(const CudafftFeaturesConfig *c)
{
  return c->kind == CUDAFFT_FEATURES_MEL;
}

/* Every value of a run against the model. */
static void
compare_model(const ModelCase *mc, const CudafftFeaturesConfig *c, const FeaturesRun *run,
              const FeaturesModel *model, const char *label)
{
  const size_t value_bytes = c->precision == CUDAFFT_FEATURES_F16 ? 2 : 4;
  if (!test_check(run->outputs == model->outputs &&
                      run->output_bytes == model->values * value_bytes,
                  "%s: %zu outputs of %zu values, as the model's %zu of %zu", label, run->outputs,
                  run->output_bytes / value_bytes, model->outputs, model->values))
    return;
  int stamps = 1;
  for (size_t k = 0; k < run->outputs; k++)
    stamps = stamps && run->stamps[k].frames == model->frames[k];
  test_check(stamps, "%s: every stamp's frames as the model's", label);
  const double half = c->precision == CUDAFFT_FEATURES_F16 ? 1.0 / 2048.0 : 0.0;
  double worst = 0.0;
  size_t bad = 0, worst_o = 0, worst_v = 0;
  for (size_t o = 0; o < run->outputs; o++) {
    double scale = 1.0;
    if (is_linear(c)) {
      scale = 0.0;
      for (size_t v = 0; v < model->values; v++)
        scale = fmax(scale, fabs(model->data[o * model->values + v]));
    }
    for (size_t v = 0; v < model->values; v++) {
      const double want = model->data[o * model->values + v];
      const double got = features_run_value(run, c->precision, o, v);
      const double allowed = (is_linear(c) ? mc->rel_tol * scale : mc->abs_tol) + half * fabs(want);
      const double diff = fabs(got - want);
      if (!(diff <= allowed))
        bad++;
      if (!(diff / allowed <= worst)) {
        worst = diff / allowed;
        worst_o = o;
        worst_v = v;
      }
    }
  }
  test_check(bad == 0,
             "%s: %zu values within their bound of the double model: worst %.2f of its bound at "
             "output %zu value %zu (%.7g, model %.7g)",
             label, run->outputs * model->values, worst, worst_o, worst_v,
             (double)features_run_value(run, c->precision, worst_o, worst_v),
             model->data[worst_o * model->values + worst_v]);
}

static void
check_model_cases(void)
{
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const ModelCase *mc = &cases[i];
    CudafftFeaturesConfig c;
    mc->configure(&c);
    TestSignal s;
    make_signal(&s, &c, mc->samples, mc->what);
    FeaturesModel model;
    features_model(&model, &c, s.raw, s.frames);
    TestRng rng = test_rng("%s pieces", mc->what);
    FeaturesRun run;
    features_run(&run, backend, &c, s.raw, s.frames, &rng, 1 + mc->samples / 5, mc->what);
    if (run.ok)
      compare_model(mc, &c, &run, &model, mc->what);
    features_run_clear(&run);
    features_model_clear(&model);
    test_signal_clear(&s);
  }
}

/* NaN and Inf ----------------------------------------------------------------------------------
 */

/* A NaN (then an Inf) in a quiet stretch: the frames whose windows read it are not finite (every
 * band), every other frame is the clean run's, bit for bit (frames out, each frame its own clamp;
 * windows, whose clamp is over finite values and taken from the loud frames). */
static void
check_bad_samples(void)
{
  CudafftFeaturesConfig c;
  cudafft_features_config_init(&c);
  c.kind = CUDAFFT_FEATURES_LOG_MEL;
  c.n_mels = 40;
  c.fft_size = 512;
  c.win_length = 400;
  c.hop = 160;
  const size_t samples = 8000, at = 3210; /* in the quiet third */
  const char *label[2] = {"NaN", "Inf"};
  for (int output = 0; output < 2; output++) {
    c.output = output ? CUDAFFT_FEATURES_OUTPUT_WINDOWS : CUDAFFT_FEATURES_OUTPUT_FRAMES;
    c.window_frames = c.window_stride = 60;
    c.range = output ? 8.0f : 0.0f;
    for (int kind = 0; kind < 2; kind++) {
      TestSignal s;
      make_signal(&s, &c, samples, "bad samples");
      FeaturesRun clean, dirty;
      TestRng rng = test_rng("bad samples %d %d", output, kind);
      features_run(&clean, backend, &c, s.raw, samples, &rng, 900, "clean");
      float *x = (float *)s.raw;
      x[at] = kind ? INFINITY : NAN;
      features_run(&dirty, backend, &c, s.raw, samples, &rng, 900, label[kind]);
      /* frame f reads samples f hop - 256 + 56 .. + 399 */
      size_t touched = 0, spread = 0, frames = 0;
      const size_t per_frame = c.n_mels;
      for (size_t o = 0; clean.ok && dirty.ok && o < clean.outputs; o++) {
        const size_t frames_here = output ? c.window_frames : 1;
        for (size_t t = 0; t < frames_here; t++, frames++) {
          const long f = (long)(output ? o * c.window_frames + t : o);
          const long start = f * 160 - 256 + 56;
          const int reads = (long)at >= start && (long)at < start + 400;
          for (size_t j = 0; j < per_frame; j++) {
            const size_t v = output ? t * per_frame + j : j;
            const float a = features_run_value(&clean, c.precision, o, v);
            const float b = features_run_value(&dirty, c.precision, o, v);
            if (reads && isfinite(b))
              touched++;
            if (!reads && memcmp(&a, &b, sizeof a) != 0)
              spread++;
          }
        }
      }
      test_check(
          clean.ok && dirty.ok && dirty.outputs == clean.outputs && touched == 0 && spread == 0,
          "%s at sample %zu, %s: the frames that read it not finite (%zu finite values), "
          "the other %zu frames unchanged (%zu values differ)",
          label[kind], at, output ? "windows with a range" : "frames", touched, frames, spread);
      features_run_clear(&clean);
      features_run_clear(&dirty);
      test_signal_clear(&s);
    }
  }
}

/* Short utterances -------------------------------------------------------------------------- */

/* Utterances of 0, 1, 2, ... samples, shorter than a frame: the edge rule's count (centred
 * reflection repeated over a signal shorter than the padding), every value against the model. */
static void
check_short_utterances(void)
{
  CudafftFeaturesConfig c;
  cudafft_features_config_init(&c);
  c.kind = CUDAFFT_FEATURES_LOG_MEL;
  c.fft_size = 64;
  c.hop = 16;
  c.n_mels = 8;
  static const size_t lengths[] = {0, 1, 2, 3, 17, 31, 32, 33, 65};
  static const CudafftFeaturesEdges edges[] = {
      CUDAFFT_FEATURES_EDGES_CENTER, CUDAFFT_FEATURES_EDGES_SNIP, CUDAFFT_FEATURES_EDGES_KALDI,
      CUDAFFT_FEATURES_EDGES_END};
  static const CudafftFeaturesPad pads[] = {
      CUDAFFT_FEATURES_PAD_REFLECT, CUDAFFT_FEATURES_PAD_SYMMETRIC, CUDAFFT_FEATURES_PAD_CONSTANT};
  size_t runs = 0, good = 0;
  for (size_t e = 0; e < 4; e++)
    for (size_t p = 0; p < 3; p++)
      for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        c.edges = edges[e];
        c.pad = pads[p];
        TestSignal s;
        make_signal(&s, &c, lengths[l] ? lengths[l] : 1, "short");
        FeaturesModel model;
        features_model(&model, &c, s.raw, lengths[l]);
        TestRng rng = test_rng("short %zu %zu %zu", e, p, l);
        FeaturesRun run;
        features_run(&run, backend, &c, s.raw, lengths[l], &rng, 7, "short utterance");
        int ok = run.ok && run.outputs == model.outputs;
        for (size_t o = 0; ok && o < run.outputs; o++)
          for (size_t v = 0; ok && v < model.values; v++)
            ok = fabs(features_run_value(&run, c.precision, o, v) -
                      model.data[o * model.values + v]) <= LOG_TOL;
        runs++;
        good += ok;
        if (!ok)
          test_check(0, "utterance of %zu samples, edges %d, pad %d: %zu outputs (model %zu)",
                     lengths[l], (int)c.edges, (int)c.pad, run.outputs, model.outputs);
        features_run_clear(&run);
        features_model_clear(&model);
        test_signal_clear(&s);
      }
  test_check(good == runs,
             "%zu short utterances (0 to 65 samples, every edge rule and padding): counts and "
             "values as the model's",
             runs);
}

/* Latency ------------------------------------------------------------------------------------- */

/* Pushed a sample at a time, output k appears once the samples reach its position plus at most
 * the latency, and the latency is reached. */
static void
check_latency(void)
{
  CudafftFeaturesConfig configs[4];
  cudafft_features_config_init(&configs[0]); /* centred frames */
  configs[0].fft_size = 64;
  configs[0].hop = 16;
  configs[0].n_mels = 8;
  configs[1] = configs[0]; /* with regression deltas of order 2 and drop_last */
  configs[1].kind = CUDAFFT_FEATURES_LOG_MEL;
  configs[1].delta_order = 2;
  configs[1].delta_width = 5;
  configs[1].drop_last = 1;
  configs[2] = configs[0]; /* Kaldi's edges, windows */
  configs[2].edges = CUDAFFT_FEATURES_EDGES_KALDI;
  configs[2].output = CUDAFFT_FEATURES_OUTPUT_WINDOWS;
  configs[2].window_frames = 5;
  configs[2].window_stride = 3;
  configs[3] = configs[0]; /* chunks */
  configs[3].output = CUDAFFT_FEATURES_OUTPUT_CHUNKS;
  configs[3].chunk_samples = 100;
  static const char *names[] = {"centred frames", "deltas of order 2 and drop_last",
                                "Kaldi's edges in windows", "chunks"};
  for (int i = 0; i < 4; i++) {
    CudafftFeatures *f = NULL;
    if (cudafft_features_create(&f, backend, -1, &configs[i]) != CUDAFFT_STATUS_OK)
      test_abort("create: %s", cudafft_last_error_message());
    const uint64_t latency = cudafft_features_latency(f);
    const size_t bytes = cudafft_features_output_bytes(f);
    unsigned char *out = test_malloc(bytes);
    static const float zero[1];
    uint64_t worst = 0;
    int ok = latency > 0;
    for (size_t n = 1; n <= 1000 && ok; n++) {
      const uint64_t first = cudafft_features_outputs_done(f);
      size_t got = 0;
      ok = cudafft_features_outputs_for(f, 1) <= 1 &&
           cudafft_features_push(f, zero, 1, out, &got) == CUDAFFT_STATUS_OK;
      for (size_t k = 0; ok && k < got; k++) {
        CudafftFeaturesStamp stamp;
        ok = cudafft_features_stamp(f, first + k, &stamp) == CUDAFFT_STATUS_OK;
        const uint64_t wait = n - stamp.position;
        ok = ok && n >= stamp.position && wait <= latency;
        worst = wait > worst ? wait : worst;
      }
    }
    test_check(ok && worst == latency,
               "latency of %s: %llu samples, the longest wait of an output pushed a sample at a "
               "time %llu",
               names[i], (unsigned long long)latency, (unsigned long long)worst);
    free(out);
    cudafft_features_destroy(f);
  }
}

int
main(int argc, char **argv)
{
  backend = test_begin(argc, argv);
  check_model_cases();
  test_section_done("the double model");
  check_bad_samples();
  check_short_utterances();
  check_latency();
  test_section_done("NaN, short utterances, latency");
  return test_finish();
}
