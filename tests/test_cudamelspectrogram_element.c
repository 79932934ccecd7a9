/* test_cudamelspectrogram_element.c: the cudamelspectrogram element against its contract, through
 * GstHarness, on the backend named by argv[1] (cpu|cuda):
 * - the presets and properties against the libraries themselves: every value of the element's
 *   tensors against what openai-whisper, transformers, kaldi-native-fbank, librosa, torchaudio,
 *   NeMo's preprocessing and python_speech_features computed for the same signals
 *   (tests/features_data/, made by tests/make_feature_refs.py), at the bounds of test_features.c
 *   (Whisper 1e-4 after its normalisation, Kaldi's fbank 1e-3, librosa's dB 0.01 dB), with the
 *   libraries' own frame counts, Whisper's last chunk padded as Whisper pads it, F16 within half
 *   a unit of half precision more;
 * - random settings of every property (all of them set by name, so that each property's field
 *   and each enumeration's nicks are checked), formats, channels, precisions and buffer sizes:
 *   every byte of every tensor against the engine (cudafft/features.h) run directly over the same
 *   samples, which test_features checks against the libraries;
 * - the tensor caps (other/tensors: types, dimensions innermost first, framerate), one tensor per
 *   buffer, timestamps, durations, offsets and DISCONT from sample counts, the latency;
 * - flushes, discontinuities, caps changes and property changes while playing, each a run of its
 *   own; properties read back as in effect, presets and explicit properties in either order;
 * - bad input: Whisper at 44.1 kHz (an ERROR naming audioresample, and audioresample before it
 *   choosing 16 kHz by itself), a window above the FFT size, f-max above Nyquist, hop-length 0 and
 *   an FFT size the engine does not take (refused), empty mel filters (a WARNING naming them),
 *   NaN and Inf samples (confined to the frames that read them), buffers of a byte and of
 *   seconds, a downstream that takes only CUDA memory on the CPU, too many channels, BYTES
 *   segments, a start that cannot run;
 * - the GstTensorMeta where the plugin is built with GStreamer's analytics library.
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness, the reference files and the engine runs;
 * split, each part would be a program of its own rebuilding the same setup. */
#include "element_util.h"
#include "features_util.h"

#include <cudafft/features.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CUDAFFT_TEST_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

#ifndef CUDAFFT_FEATURES_DATA
#error "CUDAFFT_FEATURES_DATA (the folder of the reference files) is set by tests/meson.build"
#endif

static CudafftBackend
backend(void)
{
  return strcmp(eu_backend, "cuda") == 0 ? CUDAFFT_BACKEND_CUDA : CUDAFFT_BACKEND_CPU;
}

/* The properties as this test states them, independently of the element: name, the field of
 * CudafftFeaturesConfig each sets, and the nicks of the enumerations in the header's order. */
typedef enum { P_ENUM, P_UINT, P_SIZE, P_BOOL, P_INT, P_FLOAT, P_DOUBLE, P_U64 } PType;

typedef struct {
  const char *name;
  PType type;
  size_t offset;
  const char *const *nicks;
} Prop;

static const char *const kinds[] = {"mel", "log-mel", "mfcc", NULL};
static const char *const windows[] = {"hann", "hamming", "povey", "blackman", "rectangular", NULL};
static const char *const spans[] = {"fft", "window", NULL};
static const char *const edges[] = {"center", "snip", "kaldi", "end", NULL};
static const char *const pads[] = {"reflect", "constant", "symmetric", NULL};
static const char *const preemphases[] = {"none", "frame", "signal", NULL};
static const char *const scales[] = {"slaney", "htk", NULL};
static const char *const filters[] = {"hz", "mel", "bins", NULL};
static const char *const norms[] = {"none", "slaney", NULL};
static const char *const logs[] = {"log10", "ln-add", "ln-guard", "db", NULL};
static const char *const energies[] = {"none", "raw", "windowed", "spectrum", NULL};
static const char *const lifters[] = {"kaldi", "librosa", NULL};
static const char *const deltas[] = {"regression", "savgol", NULL};
static const char *const outputs[] = {"frames", "windows", "chunks", NULL};
static const char *const layouts[] = {"frame-major", "feature-major", NULL};

#define P(name, type, member, nicks)                                                               \
  {                                                                                                \
    name, type, offsetof(CudafftFeaturesConfig, member), nicks                                     \
  }

static const Prop props[] = {
    P("kind", P_ENUM, kind, kinds),
    P("sample-scale", P_FLOAT, sample_scale, NULL),
    P("fft-size", P_SIZE, fft_size, NULL),
    P("win-length", P_SIZE, win_length, NULL),
    P("hop-length", P_SIZE, hop, NULL),
    P("window-type", P_ENUM, window, windows),
    P("window-symmetric", P_BOOL, window_symmetric, NULL),
    P("span", P_ENUM, span, spans),
    P("edges", P_ENUM, edges, edges),
    P("pad-mode", P_ENUM, pad, pads),
    P("drop-last", P_BOOL, drop_last, NULL),
    P("preemphasis", P_ENUM, preemphasis, preemphases),
    P("preemphasis-coeff", P_FLOAT, preemph_coeff, NULL),
    P("remove-dc", P_BOOL, remove_dc, NULL),
    P("dither", P_FLOAT, dither, NULL),
    P("dither-seed", P_U64, dither_seed, NULL),
    P("power", P_UINT, power, NULL),
    P("normalized", P_INT, normalized, NULL),
    P("n-mels", P_UINT, n_mels, NULL),
    P("mel-scale", P_ENUM, mel_scale, scales),
    P("filters", P_ENUM, filters, filters),
    P("mel-norm", P_ENUM, mel_norm, norms),
    P("f-min", P_DOUBLE, f_min, NULL),
    P("f-max", P_DOUBLE, f_max, NULL),
    P("log", P_ENUM, log, logs),
    P("log-floor", P_DOUBLE, log_floor, NULL),
    P("db-ref", P_DOUBLE, db_ref, NULL),
    P("range", P_FLOAT, range, NULL),
    P("shift", P_FLOAT, shift, NULL),
    P("scale", P_FLOAT, scale, NULL),
    P("energy", P_ENUM, energy, energies),
    P("energy-floor", P_FLOAT, energy_floor, NULL),
    P("n-mfcc", P_UINT, n_mfcc, NULL),
    P("lifter-style", P_ENUM, lifter_kind, lifters),
    P("lifter", P_FLOAT, lifter, NULL),
    P("delta-order", P_UINT, delta_order, NULL),
    P("delta-width", P_UINT, delta_width, NULL),
    P("delta-style", P_ENUM, delta_style, deltas),
    P("output", P_ENUM, output, outputs),
    P("window-frames", P_SIZE, window_frames, NULL),
    P("window-stride", P_SIZE, window_stride, NULL),
    P("chunk-samples", P_SIZE, chunk_samples, NULL),
    P("layout", P_ENUM, layout, layouts),
    P("pad-partial", P_BOOL, pad_partial, NULL),
    P("pad-value", P_FLOAT, pad_value, NULL),
};

static const void *
field(const CudafftFeaturesConfig *c, const Prop *p)
{
  return (const char *)c + p->offset;
}

/* The property's value in c as a launch line writes it (floats exactly: %.9g and %.17g round
 * trip). */
static gchar *
prop_text(const CudafftFeaturesConfig *c, const Prop *p)
{
  const void *v = field(c, p);
  switch (p->type) {
  case P_ENUM:
    return g_strdup(p->nicks[*(const int *)v]);
  case P_UINT:
    return g_strdup_printf("%u", *(const unsigned *)v);
  case P_SIZE:
    return g_strdup_printf("%zu", *(const size_t *)v);
  case P_BOOL:
    return g_strdup(*(const int *)v ? "true" : "false");
  case P_INT:
    return g_strdup_printf("%d", *(const int *)v);
  case P_FLOAT:
    return g_strdup_printf("%.9g", (double)*(const float *)v);
  case P_DOUBLE:
    return g_strdup_printf("%.17g", *(const double *)v);
  default:
    return g_strdup_printf("%" G_GUINT64_FORMAT, *(const uint64_t *)v);
  }
}

/* Every property set to config's value: "kind=mel sample-scale=1 ...". */
static gchar *
all_props(const CudafftFeaturesConfig *c)
{
  GString *line = g_string_new(NULL);
  for (guint i = 0; i < G_N_ELEMENTS(props); i++) {
    gchar *text = prop_text(c, &props[i]);
    g_string_append_printf(line, "%s=%s ", props[i].name, text);
    g_free(text);
  }
  return g_string_free(line, FALSE);
}

/* Whether the element's property reads back config's value; else why. */
static gboolean
reads_back(GstElement *e, const CudafftFeaturesConfig *c, const Prop *p, GString *why)
{
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), p->name);
  if (!spec) {
    g_string_append_printf(why, "no property %s; ", p->name);
    return FALSE;
  }
  GValue v = G_VALUE_INIT;
  g_value_init(&v, spec->value_type);
  g_object_get_property(G_OBJECT(e), p->name, &v);
  const void *f = field(c, p);
  gboolean same = FALSE;
  switch (p->type) {
  case P_ENUM:
    same = G_VALUE_HOLDS_ENUM(&v) && g_value_get_enum(&v) == *(const int *)f;
    break;
  case P_UINT:
    same = G_VALUE_HOLDS_UINT(&v) && g_value_get_uint(&v) == *(const unsigned *)f;
    break;
  case P_SIZE:
    same = G_VALUE_HOLDS_UINT(&v) && g_value_get_uint(&v) == *(const size_t *)f;
    break;
  case P_BOOL:
    same = G_VALUE_HOLDS_BOOLEAN(&v) && !g_value_get_boolean(&v) == !*(const int *)f;
    break;
  case P_INT:
    same = G_VALUE_HOLDS_UINT(&v) && (int)g_value_get_uint(&v) == *(const int *)f;
    break;
  case P_FLOAT:
    same = G_VALUE_HOLDS_FLOAT(&v) && g_value_get_float(&v) == *(const float *)f;
    break;
  case P_DOUBLE:
    same = G_VALUE_HOLDS_DOUBLE(&v) && g_value_get_double(&v) == *(const double *)f;
    break;
  default:
    same = G_VALUE_HOLDS_UINT64(&v) && g_value_get_uint64(&v) == *(const uint64_t *)f;
    break;
  }
  if (!same) {
    gchar *got = g_strdup_value_contents(&v), *want = prop_text(c, p);
    g_string_append_printf(why, "%s reads %s, expected %s; ", p->name, got, want);
    g_free(got);
    g_free(want);
  }
  g_value_unset(&v);
  return same;
}

/* Harness and runs --------------------------------------------------------------------------- */

static GstHarness *
melspec_harness(const char *properties, const char *sink_caps)
{
  GstHarness *h = eu_harness_new("cudamelspectrogram name=e backend=%s %s", eu_backend, properties);
  if (sink_caps)
    gst_harness_set_sink_caps_str(h, sink_caps);
  return h;
}

/* Pushes samples [first, first + count) of signal in buffers of 1 to max_piece samples (rng; all
 * at once where rng is NULL), stamped from start, pulling the output into out. */
static void
push_pieces(GstHarness *h, const TestSignal *signal, gsize first, gsize count, TestRng *rng,
            gsize max_piece, GstClockTime start, GPtrArray *out)
{
  for (gsize done = 0; done < count;) {
    const gsize want = rng ? test_rng_range(rng, 1, max_piece) : count; /* (not inside MIN) */
    const gsize n = MIN(want, count - done);
    const GstFlowReturn flow =
        gst_harness_push(h, eu_signal_buffer(signal, first + done, n, start));
    fail_unless(flow == GST_FLOW_OK, "push of %zu samples: %s", n, gst_flow_get_name(flow));
    eu_pull_all(h, out);
    done += n;
  }
}

/* The configuration's step from one output's position to the next (the header's Timing). */
static guint64
output_step(const CudafftFeaturesConfig *c)
{
  return c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES    ? c->hop
         : c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS ? (guint64)c->hop * c->window_stride
                                                        : c->chunk_samples;
}

/* The engine run directly over samples [first, first + count) of signal (one push, then finish). */
static void
engine_run(FeaturesRun *run, const CudafftFeaturesConfig *c, const TestSignal *signal, gsize first,
           gsize count, const char *label)
{
  features_run(run, backend(), c, signal->raw + first * test_signal_frame_bytes(signal), count,
               NULL, 0, label);
  fail_unless(run->ok, "%s: the engine's own run failed", label);
}

/* Checks bufs[*index...] against one run of the engine, in order, and advances *index: one
 * output per buffer, every byte the engine's, PTS start + k step / rate, duration to the next
 * output's, OFFSET k, OFFSET_END k + 1, DISCONT on the first only. */
static gboolean
check_run(GPtrArray *bufs, guint *index, const FeaturesRun *run, const CudafftFeaturesConfig *c,
          GstClockTime start, GString *why)
{
  const guint64 step = output_step(c);
  const guint rate = (guint)c->sample_rate;
  if (*index + run->outputs > bufs->len) {
    g_string_append_printf(why, "%u buffers from %u, the engine made %zu outputs", bufs->len,
                           *index, run->outputs);
    return FALSE;
  }
  for (gsize k = 0; k < run->outputs; k++) {
    GstBuffer *buf = g_ptr_array_index(bufs, *index + k);
    const GstClockTime pts = eu_sample_time(start, k * step, rate);
    const GstClockTime end = eu_sample_time(start, (k + 1) * step, rate);
    if (gst_buffer_get_size(buf) != run->output_bytes ||
        gst_buffer_memcmp(buf, 0, run->data + k * run->output_bytes, run->output_bytes) != 0) {
      g_string_append_printf(why, "output %zu: %zu bytes, not the engine's %zu bytes", k,
                             gst_buffer_get_size(buf), run->output_bytes);
      return FALSE;
    }
    if (run->stamps[k].position != k * step || GST_BUFFER_PTS(buf) != pts ||
        GST_BUFFER_DURATION(buf) != end - pts || GST_BUFFER_OFFSET(buf) != k ||
        GST_BUFFER_OFFSET_END(buf) != k + 1 ||
        GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT) != (k == 0)) {
      g_string_append_printf(
          why,
          "output %zu: PTS %" GST_TIME_FORMAT " duration %" GST_TIME_FORMAT
          " offsets %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
          " discont %d; expected %" GST_TIME_FORMAT ", %" GST_TIME_FORMAT
          ", %zu..%zu, %d (engine position %" G_GUINT64_FORMAT ")",
          k, GST_TIME_ARGS(GST_BUFFER_PTS(buf)), GST_TIME_ARGS(GST_BUFFER_DURATION(buf)),
          GST_BUFFER_OFFSET(buf), GST_BUFFER_OFFSET_END(buf),
          GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT) != 0, GST_TIME_ARGS(pts),
          GST_TIME_ARGS(end - pts), k, k + 1, k == 0, run->stamps[k].position);
      return FALSE;
    }
  }
  *index += (guint)run->outputs;
  return TRUE;
}

/* The caps of a tensor of config: other/tensors, static, one tensor of the precision's type,
 * dimensions innermost first, framerate rate / step (reduced). */
static void
check_tensor_caps(GstCaps *caps, const CudafftFeaturesConfig *c, const char *row)
{
  CudafftFeaturesShape shape;
  fail_unless(cudafft_features_shape(c, &shape) == CUDAFFT_STATUS_OK);
  fail_unless(caps != NULL && gst_caps_is_fixed(caps), "%s: no fixed output caps", row);
  gchar *text = gst_caps_to_string(caps);
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const gboolean feature_major = c->layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
  gchar *dims = g_strdup_printf("%zu:%zu:%u", feature_major ? shape.frames : shape.features,
                                feature_major ? shape.features : shape.frames, c->channels);
  guint64 num = (guint64)c->sample_rate, den = output_step(c), a = num, b = den;
  while (b) {
    const guint64 r = a % b;
    a = b;
    b = r;
  }
  gint n = 0, d = 0, tensors = 0;
  fail_unless(gst_structure_has_name(s, "other/tensors") &&
                  g_strcmp0(gst_structure_get_string(s, "format"), "static") == 0 &&
                  gst_structure_get_int(s, "num_tensors", &tensors) && tensors == 1 &&
                  g_strcmp0(gst_structure_get_string(s, "types"),
                            c->precision == CUDAFFT_FEATURES_F16 ? "float16" : "float32") == 0 &&
                  g_strcmp0(gst_structure_get_string(s, "dimensions"), dims) == 0 &&
                  gst_structure_get_fraction(s, "framerate", &n, &d) && (guint64)n == num / a &&
                  (guint64)d == den / a,
              "%s: caps %s; expected dimensions %s, framerate %" G_GUINT64_FORMAT
              "/%" G_GUINT64_FORMAT,
              row, text, dims, num / a, den / a);
  g_free(dims);
  g_free(text);
}

/* The library references ---------------------------------------------------------------------- */

typedef enum { REF_FRAMES, REF_FEATURES_FRAMES, REF_CHUNKS } RefLayout;

typedef struct {
  const char *name, *signal;
  guint rate;
  RefLayout layout;
  gboolean frame_relative; /* the tolerance x the frame's largest |value| */
  double tolerance;
  /* the element's properties, some of them before the preset: set explicitly, they win whatever
   * the order; WHOLE stands for the reference's frame count (librosa and torchaudio normalise
   * over the whole clip: one window of every frame) */
  const char *properties;
} RefCase;

#define WHOLE "output=windows window-frames=%zu window-stride=%zu"

/* The cases of test_features.c (their tolerances and reasons are there) through the element. */
static const RefCase ref_cases[] = {
    {"whisper80_speech", "speech16k", 16000, REF_FEATURES_FRAMES, FALSE, 1e-4, "preset=whisper"},
    {"whisper128_noise", "noise16k", 16000, REF_FEATURES_FRAMES, FALSE, 1e-4,
     "n-mels=128 preset=whisper"},
    {"whisper_hf_chunks2s", "speech16k", 16000, REF_CHUNKS, FALSE, 1e-4,
     "preset=whisper chunk-samples=32000"},
    {"kaldi_fbank_speech", "speech16k", 16000, REF_FRAMES, FALSE, 1e-3, "preset=kaldi-fbank"},
    {"kaldi_fbank_8k_nosnip_energy", "noise8k", 8000, REF_FRAMES, FALSE, 1e-3,
     "edges=kaldi n-mels=15 preset=kaldi-fbank energy=raw"},
    {"kaldi_mfcc_speech", "speech16k", 16000, REF_FRAMES, FALSE, 2e-3, "preset=kaldi-mfcc"},
    {"kaldi_mfcc_s16", "speech16k_s16", 16000, REF_FRAMES, FALSE, 2e-3,
     "sample-scale=32768 lifter=0 energy=none preset=kaldi-mfcc"},
    {"librosa_db_music", "music22k", 22050, REF_FRAMES, FALSE, 0.01,
     "preset=librosa kind=log-mel " WHOLE},
    {"librosa_mfcc_delta_music", "music22k", 22050, REF_FRAMES, FALSE, 1e-3,
     "delta-order=2 delta-width=9 delta-style=savgol preset=librosa-mfcc " WHOLE},
    {"torchaudio_mel_speech", "speech16k", 16000, REF_FRAMES, TRUE, 1e-4, "preset=torchaudio"},
    {"torchaudio_mag_48k_n480", "speech48k", 48000, REF_FRAMES, TRUE, 1e-4,
     "preset=torchaudio n-mels=40 fft-size=480 win-length=400 hop-length=240 power=1 "
     "normalized=2 window-type=hamming"},
    {"nemo_speech", "speech16k", 16000, REF_FRAMES, FALSE, 1e-3, "preset=nemo"},
    /* no preset: python_speech_features' conventions, every one a property */
    {"psf_mfcc_delta_speech", "speech16k", 16000, REF_FRAMES, FALSE, 2e-3,
     "kind=mfcc fft-size=512 win-length=400 hop-length=160 window-type=rectangular span=window "
     "edges=end pad-mode=constant preemphasis=signal preemphasis-coeff=0.97 normalized=1 "
     "n-mels=26 mel-scale=htk filters=bins mel-norm=none log=ln-guard "
     "log-floor=2.2204460492503131e-16 n-mfcc=13 lifter=22 energy=spectrum delta-order=1 "
     "delta-width=5"},
};

/* A reference signal (float32 values, or int16 samples) as a TestSignal of one channel. */
static void
ref_signal(TestSignal *signal, const char *name, guint rate)
{
  FeaturesRef ref;
  gchar *file = g_strdup_printf("signal_%s", name);
  features_ref_load(&ref, CUDAFFT_FEATURES_DATA, file);
  g_free(file);
  if (ref.samples) {
    test_signal_alloc(signal, CUDAFFT_SAMPLE_S16, 1, rate, ref.count, TEST_READ_POW2);
    memcpy(signal->raw, ref.samples, ref.count * sizeof *ref.samples);
    for (gsize i = 0; i < ref.count; i++)
      signal->values[i] = ref.samples[i] / 32768.0;
  } else {
    test_signal_alloc(signal, CUDAFFT_SAMPLE_F32, 1, rate, ref.count, TEST_READ_POW2);
    memcpy(signal->raw, ref.values, ref.count * sizeof *ref.values);
    for (gsize i = 0; i < ref.count; i++)
      signal->values[i] = ref.values[i];
  }
  features_ref_clear(&ref);
}

static void
ref_shape(const RefCase *rc, const FeaturesRef *ref, gsize *units, gsize *frames, gsize *features)
{
  *units = rc->layout == REF_CHUNKS ? ref->dims[0] : 1;
  *frames = rc->layout == REF_FRAMES   ? ref->dims[0]
            : rc->layout == REF_CHUNKS ? ref->dims[2]
                                       : ref->full;
  *features = rc->layout == REF_FRAMES   ? ref->dims[1]
              : rc->layout == REF_CHUNKS ? ref->dims[1]
                                         : ref->dims[0];
}

static float
ref_value(const RefCase *rc, const FeaturesRef *ref, gsize u, gsize t, gsize j)
{
  if (rc->layout == REF_FRAMES)
    return ref->values[t * ref->dims[1] + j];
  if (rc->layout == REF_FEATURES_FRAMES)
    return features_ref_at2(ref, j, t);
  return ref->values[(u * ref->dims[1] + j) * ref->dims[2] + t];
}

/* Value (frame t, feature j, channel ch) of a tensor of `frames` x `features` per channel in
 * buf, laid out [channel][frame][feature] or (feature_major) [channel][feature][frame]. */
static float
tensor_value(GstBuffer *buf, gboolean feature_major, gboolean f16, gsize ch, gsize t, gsize j,
             gsize frames, gsize features)
{
  const gsize at = ch * frames * features + (feature_major ? j * frames + t : t * features + j);
  if (f16) {
    guint16 h = 0;
    gst_buffer_extract(buf, at * 2, &h, 2);
    return features_half_to_float(h);
  }
  float v = NAN;
  gst_buffer_extract(buf, at * 4, &v, 4);
  return v;
}

/* The element's layout property in effect: feature-major or not. */
static gboolean
feature_major_of(GstHarness *h)
{
  GstElement *e = eu_harness_element(h, "e");
  gint layout = 0;
  g_object_get(e, "layout", &layout, NULL);
  gst_object_unref(e);
  return layout == CUDAFFT_FEATURES_LAYOUT_FEATURE_MAJOR;
}

/* One case through the element: the signal in buffers of random sizes, EOS, every value. */
static void
check_ref_case(const RefCase *rc, gboolean f16)
{
  gchar *row = g_strdup_printf("%s%s", rc->name, f16 ? " (float16)" : "");
  FeaturesRef ref;
  features_ref_load(&ref, CUDAFFT_FEATURES_DATA, rc->name);
  gsize units, frames, features;
  ref_shape(rc, &ref, &units, &frames, &features);
  gchar *properties = g_strdup_printf(rc->properties, frames, frames);
  TestSignal signal;
  ref_signal(&signal, rc->signal, rc->rate);
  GstHarness *h =
      melspec_harness(properties, f16 ? "other/tensors,types=float16" : "other/tensors");
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  TestRng rng = test_rng("%s pieces", row);
  push_pieces(h, &signal, 0, signal.frames, &rng, 5000, 0, out);
  eu_push_eos(h, out);
  GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
  fail_unless(caps != NULL, "%s: no caps", row);
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const gchar *dims = gst_structure_get_string(s, "dimensions");
  /* one buffer per frame, or per chunk or window of the reference's frames */
  gsize a = 0, b = 0, c = 0;
  fail_unless(dims && sscanf(dims, "%zu:%zu:%zu", &a, &b, &c) == 3 && c == 1, "%s: dimensions %s",
              row, dims ? dims : "none");
  const gboolean feature_major = feature_major_of(h);
  const gsize buffer_frames = feature_major ? a : b;
  const gboolean per_frame = buffer_frames == 1 && frames > 1;
  fail_unless((feature_major ? b : a) == features && (per_frame || buffer_frames == frames) &&
                  out->len == (per_frame ? frames : units),
              "%s: %u buffers of %s, the library's %zu x %zu x %zu", row, out->len, dims, units,
              frames, features);
  double worst = 0.0;
  gsize bad = 0, wu = 0, wt = 0, wj = 0;
  for (gsize u = 0; u < units; u++)
    for (gsize t = 0; t < frames; t++) {
      double scale = 1.0;
      if (rc->frame_relative) {
        scale = 0.0;
        for (gsize j = 0; j < features; j++)
          scale = fmax(scale, fabs(ref_value(rc, &ref, u, t, j)));
      }
      for (gsize j = 0; j < features; j++) {
        const float want = ref_value(rc, &ref, u, t, j);
        const float got = per_frame ? tensor_value(g_ptr_array_index(out, t), feature_major, f16, 0,
                                                   0, j, 1, features)
                                    : tensor_value(g_ptr_array_index(out, u), feature_major, f16, 0,
                                                   t, j, frames, features);
        /* F16: half a unit in the last place of half more (2^-11 relative) */
        const double allowed = rc->tolerance * scale + (f16 ? fabs(want) / 2048.0 : 0.0);
        const double diff = fabs((double)got - want);
        if (!(diff <= allowed))
          bad++;
        if (!(diff / (scale > 0 ? scale : 1.0) <= worst)) {
          worst = diff / (scale > 0 ? scale : 1.0);
          wu = u;
          wt = t;
          wj = j;
        }
      }
    }
  fail_unless(bad == 0,
              "%s: %zu of %zu values outside %g%s of the library's; worst %.3g at unit %zu "
              "frame %zu feature %zu",
              row, bad, units * frames * features, rc->tolerance,
              rc->frame_relative ? " x the frame's largest" : "", worst, wu, wt, wj);
  gst_caps_unref(caps);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
  features_ref_clear(&ref);
  g_free(properties);
  g_free(row);
}

GST_START_TEST(test_library_references)
{
  check_ref_case(&ref_cases[__i__], FALSE);
}
GST_END_TEST;

/* Whisper in float16 and two channels: each channel its own stream, each within the bound and
 * half's rounding of Whisper's own. */
GST_START_TEST(test_whisper_float16)
{
  check_ref_case(&ref_cases[0], TRUE);
}
GST_END_TEST;

/* Random settings against the engine ----------------------------------------------------------- */

static int
pick(TestRng *rng, int n)
{
  return (int)test_rng_range(rng, 0, (size_t)n - 1);
}

static double
between(TestRng *rng, double lo, double hi)
{
  return lo + (hi - lo) * 0.5 * (test_rng_uniform53(rng) + 1.0); /* [-1, 1) to [lo, hi) */
}

/* A valid configuration of every field at random (sizes kept small enough for a test). */
static void
random_config(CudafftFeaturesConfig *c, TestRng *rng, guint rate, guint channels,
              CudafftSampleFormat format)
{
  static const size_t sizes[] = {16, 64, 100, 256, 400, 441, 480, 512, 1000, 1024};
  do {
    cudafft_features_config_init(c);
    c->sample_rate = rate;
    c->channels = channels;
    c->format = format;
    c->kind = (CudafftFeaturesKind)pick(rng, 3);
    c->sample_scale = pick(rng, 2) ? 1.0f : (float)between(rng, 0.25, 4.0);
    c->fft_size = sizes[pick(rng, G_N_ELEMENTS(sizes))];
    c->win_length = pick(rng, 2) ? 0 : test_rng_range(rng, 1, c->fft_size);
    c->hop = test_rng_range(rng, 1, c->fft_size);
    c->window = (CudafftFeaturesWindow)pick(rng, 5);
    c->window_symmetric = pick(rng, 2);
    c->span = (CudafftFeaturesSpan)pick(rng, 2);
    c->edges = (CudafftFeaturesEdges)pick(rng, 4);
    c->pad = (CudafftFeaturesPad)pick(rng, 3);
    c->drop_last = pick(rng, 2);
    c->preemphasis = (CudafftFeaturesPreemphasis)pick(rng, 3);
    c->preemph_coeff = (float)between(rng, 0.9, 1.0);
    c->remove_dc = pick(rng, 2);
    c->dither = pick(rng, 4) ? 0.0f : 0.01f;
    c->dither_seed = test_rng_u64(rng);
    c->power = 1 + (unsigned)pick(rng, 2);
    c->normalized = pick(rng, 3);
    c->n_mels = (unsigned)test_rng_range(rng, 1, 48);
    c->mel_scale = (CudafftMelScale)pick(rng, 2);
    c->filters = (CudafftMelFilters)pick(rng, 3);
    c->mel_norm = (CudafftMelNorm)pick(rng, 2);
    c->f_min = pick(rng, 2) ? 0.0 : between(rng, 0.0, rate / 8.0);
    c->f_max = pick(rng, 3) == 0   ? 0.0
               : pick(rng, 2) == 0 ? -between(rng, 0.0, rate / 8.0)
                                   : between(rng, rate / 4.0, rate / 2.0);
    c->log = (CudafftFeaturesLog)pick(rng, 4);
    c->log_floor = pick(rng, 2) ? 1e-10 : 1e-6;
    c->db_ref = pick(rng, 2) ? 1.0 : 0.5;
    c->range = pick(rng, 2) ? 0.0f : (float)between(rng, 5.0, 80.0);
    c->shift = pick(rng, 2) ? 0.0f : (float)between(rng, -4.0, 4.0);
    c->scale = pick(rng, 2) ? 1.0f : (float)between(rng, 0.1, 2.0);
    c->energy = c->kind != CUDAFFT_FEATURES_MEL &&
                        (c->log == CUDAFFT_FEATURES_LN_ADD || c->log == CUDAFFT_FEATURES_LN_GUARD)
                    ? (CudafftFeaturesEnergy)pick(rng, 4)
                    : CUDAFFT_FEATURES_ENERGY_NONE;
    c->energy_floor = pick(rng, 2) ? 0.0f : (float)between(rng, 0.0, 1.0);
    c->n_mfcc = (unsigned)test_rng_range(rng, 1, c->n_mels);
    c->lifter_kind = (CudafftFeaturesLifter)pick(rng, 2);
    c->lifter = pick(rng, 2) ? 0.0f : (float)between(rng, 1.0, 30.0);
    c->delta_order = (unsigned)pick(rng, 3);
    c->delta_width = 3 + 2 * (unsigned)pick(rng, 3);
    c->delta_style = (CudafftFeaturesDeltas)pick(rng, 2);
    c->output = (CudafftFeaturesOutput)pick(rng, 3);
    c->window_frames = test_rng_range(rng, 1, 30);
    c->window_stride = test_rng_range(rng, 1, 30);
    c->chunk_samples = test_rng_range(rng, c->fft_size, rate / 2);
    c->layout = (CudafftFeaturesLayout)pick(rng, 2);
    c->precision = pick(rng, 4) ? CUDAFFT_FEATURES_F32 : CUDAFFT_FEATURES_F16;
    c->pad_partial = pick(rng, 2);
    c->pad_value = (float)between(rng, -1.0, 1.0);
  } while (cudafft_features_shape(c, NULL) != CUDAFFT_STATUS_OK);
}

/* Every property set by name from a random configuration: the tensors are the engine's, byte for
 * byte, whatever the input's format, channels and buffer sizes; the caps, stamps and every
 * property read back agree. */
GST_START_TEST(test_random_settings)
{
  static const guint rates[] = {8000, 16000, 22050, 44100};
  static const CudafftSampleFormat formats[] = {CUDAFFT_SAMPLE_S16, CUDAFFT_SAMPLE_S32,
                                                CUDAFFT_SAMPLE_F32, CUDAFFT_SAMPLE_F64};
  TestRng rng = test_rng("random settings %d", __i__);
  const guint rate = rates[pick(&rng, G_N_ELEMENTS(rates))];
  const guint channels = (guint)test_rng_range(&rng, 1, 3);
  CudafftFeaturesConfig c;
  random_config(&c, &rng, rate, channels, formats[pick(&rng, G_N_ELEMENTS(formats))]);
  TestSignal signal;
  test_signal_random(&signal, &rng, c.format, channels, rate,
                     test_rng_range(&rng, rate / 4, rate + rate / 2), TEST_READ_POW2);
  gchar *line = all_props(&c);
  gchar *row = g_strdup_printf("row %d (%u Hz, %u channels, %s): %s", __i__, rate, channels,
                               test_format_name(c.format), line);
  GstHarness *h = melspec_harness(
      line, c.precision == CUDAFFT_FEATURES_F16 ? "other/tensors,types=float16" : NULL);
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  const GstClockTime start = 3 * GST_SECOND + 7;
  push_pieces(h, &signal, 0, signal.frames, &rng, 2500, start, out);
  GstElement *e = eu_harness_element(h, "e");
  GString *why = g_string_new(NULL);
  gboolean same = TRUE;
  for (guint i = 0; i < G_N_ELEMENTS(props); i++)
    same &= reads_back(e, &c, &props[i], why);
  fail_unless(same, "%s: %s", row, why->str);
  eu_push_eos(h, out);
  FeaturesRun run;
  engine_run(&run, &c, &signal, 0, signal.frames, row);
  guint index = 0;
  fail_unless(check_run(out, &index, &run, &c, start, why), "%s: %s", row, why->str);
  fail_unless(index == out->len, "%s: %u buffers after the engine's %zu outputs", row,
              out->len - index, run.outputs);
  if (out->len > 0) {
    GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
    check_tensor_caps(caps, &c, row);
    gst_caps_unref(caps);
  }
  features_run_clear(&run);
  g_string_free(why, TRUE);
  gst_object_unref(e);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
  g_free(row);
  g_free(line);
}
GST_END_TEST;

/* Properties ------------------------------------------------------------------------------------
 */

GST_START_TEST(test_metadata)
{
  eu_check_element_metadata("cudamelspectrogram", "audio/x-raw", "other/tensors");
  GstElement *e = gst_element_factory_make("cudamelspectrogram", NULL);
  for (guint i = 0; i < G_N_ELEMENTS(props); i++)
    fail_unless(g_object_class_find_property(G_OBJECT_GET_CLASS(e), props[i].name) != NULL,
                "no property %s", props[i].name);
  /* preset: none and the library's presets, by the library's names, and nothing else */
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "preset");
  fail_unless(spec && G_IS_PARAM_SPEC_ENUM(spec));
  GEnumClass *klass = G_PARAM_SPEC_ENUM(spec)->enum_class;
  fail_unless(g_enum_get_value_by_nick(klass, "none") != NULL);
  guint n = 0;
  for (; cudafft_features_preset_name(n); n++) {
    GEnumValue *v = g_enum_get_value_by_nick(klass, cudafft_features_preset_name(n));
    fail_unless(v != NULL && v->value == (gint)n + 1, "preset %s is not value %u",
                cudafft_features_preset_name(n), n + 1);
  }
  fail_unless_equals_int(klass->n_values, n + 1);
  /* every enumeration's nicks are this test's, in the header's order */
  for (guint i = 0; i < G_N_ELEMENTS(props); i++) {
    if (props[i].type != P_ENUM)
      continue;
    spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), props[i].name);
    klass = G_PARAM_SPEC_ENUM(spec)->enum_class;
    guint k = 0;
    for (; props[i].nicks[k]; k++) {
      GEnumValue *v = g_enum_get_value_by_nick(klass, props[i].nicks[k]);
      fail_unless(v && v->value == (gint)k, "%s: %s is not value %u", props[i].name,
                  props[i].nicks[k], k);
    }
    fail_unless_equals_int(klass->n_values, k);
  }
  gst_object_unref(e);
}
GST_END_TEST;

/* A preset and explicit properties set in any order: the explicit ones win, the rest are the
 * preset's, and reading back gives that (at 16000 Hz before a stream). */
GST_START_TEST(test_preset_order)
{
  TestRng rng = test_rng("preset order");
  for (guint trial = 0; trial < 64; trial++) {
    const guint preset = (guint)pick(&rng, 8);
    const char *name = cudafft_features_preset_name(preset);
    CudafftFeaturesConfig values, want;
    random_config(&values, &rng, 16000, 1, CUDAFFT_SAMPLE_F32);
    if (preset == 0) /* Whisper takes 80 or 128 bands only */
      values.n_mels = pick(&rng, 2) ? 80 : 128;
    /* a few properties, in a random order with the preset among them */
    gboolean set[G_N_ELEMENTS(props)] = {FALSE};
    guint chosen[8], count = (guint)test_rng_range(&rng, 1, G_N_ELEMENTS(chosen) - 1);
    for (guint i = 0; i < count; i++)
      chosen[i] = (guint)pick(&rng, G_N_ELEMENTS(props));
    const guint preset_at = (guint)pick(&rng, (int)count + 1);
    GstElement *e = gst_element_factory_make("cudamelspectrogram", NULL);
    GString *order = g_string_new(NULL);
    for (guint i = 0; i <= count; i++) {
      if (i == preset_at) {
        gst_util_set_object_arg(G_OBJECT(e), "preset", name);
        g_string_append_printf(order, "preset=%s ", name);
      }
      if (i == count)
        break;
      const Prop *p = &props[chosen[i]];
      gchar *text = prop_text(&values, p);
      gst_util_set_object_arg(G_OBJECT(e), p->name, text);
      g_string_append_printf(order, "%s=%s ", p->name, text);
      g_free(text);
      set[chosen[i]] = TRUE;
    }
    /* the preset's (given n-mels where set), then every property set */
    gboolean mels_set = FALSE;
    for (guint i = 0; i < G_N_ELEMENTS(props); i++)
      mels_set |= set[i] && strcmp(props[i].name, "n-mels") == 0;
    fail_unless(cudafft_features_preset(&want, name, 16000.0, mels_set ? values.n_mels : 0) ==
                CUDAFFT_STATUS_OK);
    for (guint i = 0; i < G_N_ELEMENTS(props); i++) {
      const Prop *p = &props[i];
      if (set[i])
        memcpy((char *)&want + p->offset, (const char *)&values + p->offset,
               p->type == P_SIZE     ? sizeof(size_t)
               : p->type == P_DOUBLE ? sizeof(double)
               : p->type == P_U64    ? sizeof(uint64_t)
                                     : 4);
    }
    GString *why = g_string_new(NULL);
    gboolean same = TRUE;
    for (guint i = 0; i < G_N_ELEMENTS(props); i++)
      same &= reads_back(e, &want, &props[i], why);
    fail_unless(same, "%s: %s", order->str, why->str);
    g_string_free(why, TRUE);
    g_string_free(order, TRUE);
    gst_object_unref(e);
  }
}
GST_END_TEST;

/* hop-length 0 and an FFT size the engine does not take: refused where the user sees it, the
 * value in effect kept (GLib's log outside a pipeline, a WARNING on the bus inside one). */
GST_START_TEST(test_refused_values)
{
  static const struct {
    const char *property, *value, *kept;
  } rows[] = {{"hop-length", "0", "160"}, {"fft-size", "1001", "400"}, {"fft-size", "9999", "400"}};
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    GstElement *e = gst_element_factory_make("cudamelspectrogram", NULL);
    ASSERT_WARNING(gst_util_set_object_arg(G_OBJECT(e), rows[i].property, rows[i].value));
    guint got = 0;
    g_object_get(e, rows[i].property, &got, NULL);
    fail_unless_equals_int(got, atoi(rows[i].kept));
    GstElement *pipeline = gst_pipeline_new(NULL);
    gst_bin_add(GST_BIN(pipeline), e);
    GstBus *bus = gst_element_get_bus(pipeline);
    gst_util_set_object_arg(G_OBJECT(e), rows[i].property, rows[i].value);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, GST_SECOND, GST_MESSAGE_WARNING);
    fail_unless(m != NULL, "%s=%s in a pipeline: no WARNING", rows[i].property, rows[i].value);
    GError *err = NULL;
    gst_message_parse_warning(m, &err, NULL);
    gchar *kept = g_strdup_printf("%s=%s", rows[i].property, rows[i].kept);
    fail_unless(strstr(err->message, kept) != NULL, "the WARNING does not say %s: %s", kept,
                err->message);
    g_free(kept);
    g_clear_error(&err);
    gst_message_unref(m);
    g_object_get(e, rows[i].property, &got, NULL);
    fail_unless_equals_int(got, atoi(rows[i].kept));
    gst_object_unref(bus);
    gst_object_unref(pipeline);
  }
}
GST_END_TEST;

/* Caps, latency, stream events ------------------------------------------------------------------
 */

/* The configuration of a preset at a rate, with the stream's channels and format. */
static CudafftFeaturesConfig
preset_config(const char *name, guint rate, guint channels, CudafftSampleFormat format)
{
  CudafftFeaturesConfig c;
  fail_unless(cudafft_features_preset(&c, name, rate, 0) == CUDAFFT_STATUS_OK, "preset %s", name);
  c.channels = channels;
  c.format = format;
  return c;
}

/* The latency each framing reports: the engine's (its last frame's span after the output's
 * position, deltas' look-ahead, a window's later frames, a chunk's end) as a time; Kaldi's 25 ms
 * frames (a frame stands for its first sample), Whisper's 30 s chunks. */
GST_START_TEST(test_latency)
{
  static const struct {
    const char *properties;
    const char *preset;
    GstClockTime at_least, at_most;
  } rows[] = {
      {"preset=kaldi-fbank", "kaldi-fbank", 24 * GST_MSECOND, 25 * GST_MSECOND},
      {"preset=whisper", "whisper", 30 * GST_SECOND, 30 * GST_SECOND},
      {"preset=librosa", "librosa", 0, GST_SECOND},
  };
  const gint i = __i__;
  GstHarness *h = melspec_harness(rows[i].properties, NULL);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, 16000, 1));
  GstBuffer *in = gst_buffer_new_allocate(NULL, 4000 * sizeof(float), NULL);
  gst_buffer_memset(in, 0, 0, 4000 * sizeof(float));
  GST_BUFFER_PTS(in) = 0;
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  CudafftFeaturesConfig c = preset_config(rows[i].preset, 16000, 1, CUDAFFT_SAMPLE_F32);
  CudafftFeatures *f = NULL;
  fail_unless(cudafft_features_create(&f, CUDAFFT_BACKEND_CPU, -1, &c) == CUDAFFT_STATUS_OK);
  const GstClockTime want =
      gst_util_uint64_scale_round(cudafft_features_latency(f), GST_SECOND, 16000);
  cudafft_features_destroy(f);
  const GstClockTime got = gst_harness_query_latency(h);
  fail_unless(got == want && got >= rows[i].at_least && got <= rows[i].at_most,
              "%s: latency %" GST_TIME_FORMAT ", the engine's %" GST_TIME_FORMAT,
              rows[i].properties, GST_TIME_ARGS(got), GST_TIME_ARGS(want));
  gst_harness_teardown(h);
}
GST_END_TEST;

/* Kaldi's fbank over two signals with a DISCONT buffer, a timestamp gap, a caps change (rate,
 * channels and format) or a flush between them: each part is a run of its own, the first ended
 * as at EOS (its last frames made), the second from its own first sample and timestamp. */
GST_START_TEST(test_stream_events)
{
  enum { DISCONT, GAP, CAPS, FLUSH };
  const gint event = __i__;
  static const char *const names[] = {"DISCONT", "timestamp gap", "caps change", "flush"};
  TestRng rng = test_rng("events %d", event);
  TestSignal a, b;
  test_signal_random(&a, &rng, CUDAFFT_SAMPLE_F32, 1, 16000, 7013, TEST_READ_POW2);
  if (event == CAPS)
    test_signal_random(&b, &rng, CUDAFFT_SAMPLE_S16, 2, 8000, 5021, TEST_READ_POW2);
  else
    test_signal_random(&b, &rng, CUDAFFT_SAMPLE_F32, 1, 16000, 9007, TEST_READ_POW2);
  GstHarness *h = melspec_harness("preset=kaldi-fbank", NULL);
  eu_harness_signal_caps(h, &a);
  GPtrArray *out = eu_buffer_list();
  push_pieces(h, &a, 0, a.frames, &rng, 900, 0, out);
  const guint before_flush = out->len;
  GstClockTime b_start = 5 * GST_SECOND + 3;
  if (event == CAPS)
    eu_harness_signal_caps(h, &b);
  if (event == FLUSH) {
    eu_flush(h, NULL);
    b_start = 0;
  }
  GstBuffer *opening = eu_signal_buffer(&b, 0, 100, b_start);
  if (event == DISCONT)
    GST_BUFFER_FLAG_SET(opening, GST_BUFFER_FLAG_DISCONT);
  fail_unless_equals_int(gst_harness_push(h, opening), GST_FLOW_OK);
  if (event == FLUSH) /* what came before the flush is dropped with it */
    g_ptr_array_remove_range(out, 0, out->len);
  eu_pull_all(h, out);
  push_pieces(h, &b, 100, b.frames - 100, &rng, 900, b_start, out);
  eu_push_eos(h, out);

  const CudafftFeaturesConfig ca = preset_config("kaldi-fbank", 16000, 1, CUDAFFT_SAMPLE_F32);
  const CudafftFeaturesConfig cb =
      event == CAPS ? preset_config("kaldi-fbank", 8000, 2, CUDAFFT_SAMPLE_S16) : ca;
  FeaturesRun ra, rb;
  engine_run(&ra, &ca, &a, 0, a.frames, names[event]);
  engine_run(&rb, &cb, &b, 0, b.frames, names[event]);
  GString *why = g_string_new(NULL);
  guint index = 0;
  if (event != FLUSH)
    fail_unless(check_run(out, &index, &ra, &ca, 0, why), "%s: the first run: %s", names[event],
                why->str);
  else
    fail_unless(before_flush > 0 && before_flush <= ra.outputs, "flush: %u outputs before it",
                before_flush);
  fail_unless(check_run(out, &index, &rb, &cb, b_start, why), "%s: the second run: %s",
              names[event], why->str);
  fail_unless(index == out->len, "%s: %u buffers more", names[event], out->len - index);
  if (event == CAPS) {
    GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
    check_tensor_caps(caps, &cb, "after the caps change");
    gst_caps_unref(caps);
  }
  features_run_clear(&ra);
  features_run_clear(&rb);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&a);
  test_signal_clear(&b);
}
GST_END_TEST;

/* n-mels changed while playing: the run so far ends there (drained), new caps go out and the
 * rest is a run of the new settings from that buffer's timestamp. Settings the stream cannot have
 * (a window above the FFT size) are refused with a WARNING and the stream goes on. */
GST_START_TEST(test_change_while_playing)
{
  TestRng rng = test_rng("change while playing");
  TestSignal s, first, rest;
  test_signal_random(&s, &rng, CUDAFFT_SAMPLE_F32, 1, 16000, 20000, TEST_READ_POW2);
  test_signal_slice(&first, &s, 0, 8000);
  test_signal_slice(&rest, &s, 8000, 12000);
  GstHarness *h = melspec_harness("preset=kaldi-fbank", NULL);
  GstBus *bus = eu_harness_bus(h);
  GstElement *e = eu_harness_element(h, "e");
  eu_harness_signal_caps(h, &s);
  GPtrArray *out = eu_buffer_list();
  push_pieces(h, &s, 0, 4000, &rng, 700, 0, out);
  /* refused: 512 points cannot hold a window of 1000 */
  g_object_set(e, "win-length", 1000, NULL);
  push_pieces(h, &s, 4000, 4000, &rng, 700, 0, out);
  GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  fail_unless(m != NULL, "win-length=1000 with fft-size=512: no WARNING");
  GError *err = NULL;
  gst_message_parse_warning(m, &err, NULL);
  fail_unless(strstr(err->message, "window length") && strstr(err->message, "Keeping"),
              "the WARNING: %s", err->message);
  g_clear_error(&err);
  gst_message_unref(m);
  guint win = 0;
  g_object_get(e, "win-length", &win, NULL);
  fail_unless_equals_int(win, 400);
  /* taken: 40 bands from the next buffer */
  g_object_set(e, "n-mels", 40, NULL);
  push_pieces(h, &s, 8000, 12000, &rng, 700, 0, out);
  eu_push_eos(h, out);
  CudafftFeaturesConfig c = preset_config("kaldi-fbank", 16000, 1, CUDAFFT_SAMPLE_F32);
  FeaturesRun r1, r2;
  engine_run(&r1, &c, &first, 0, first.frames, "before the change");
  c.n_mels = 40;
  engine_run(&r2, &c, &rest, 0, rest.frames, "after the change");
  GString *why = g_string_new(NULL);
  guint index = 0;
  fail_unless(check_run(out, &index, &r1, &c, 0, why), "before the change: %s", why->str);
  fail_unless(check_run(out, &index, &r2, &c, eu_sample_time(0, 8000, 16000), why),
              "after the change: %s", why->str);
  fail_unless(index == out->len);
  GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
  check_tensor_caps(caps, &c, "after the change");
  gst_caps_unref(caps);
  features_run_clear(&r1);
  features_run_clear(&r2);
  g_string_free(why, TRUE);
  gst_object_unref(e);
  g_ptr_array_unref(out);
  eu_harness_teardown(h, bus);
  test_signal_clear(&s);
  test_signal_clear(&first);
  test_signal_clear(&rest);
}
GST_END_TEST;

/* Bad input -------------------------------------------------------------------------------------
 */

/* Settings the stream cannot have: one ERROR from the element that says why and what to do; no
 * output. */
GST_START_TEST(test_bad_settings)
{
  static const struct {
    const char *properties;
    guint rate;
    const char *words[3];
  } rows[] = {
      {"preset=whisper", 44100, {"audioresample", "16000", NULL}},
      {"preset=whisper n-mels=64", 16000, {"80 mel bands", "64", NULL}},
      {"win-length=600 fft-size=400", 16000, {"window length 600", "400", NULL}},
      {"f-max=9000", 16000, {"9000", "Nyquist", NULL}},
      {"f-min=5000 f-max=4000", 16000, {"f_min", NULL}},
      {"kind=mfcc n-mels=10 n-mfcc=13", 16000, {"13 MFCC", NULL}},
      {"output=chunks chunk-samples=100 fft-size=400 edges=snip", 16000, {"chunk", NULL}},
  };
  const gint i = __i__;
  GstHarness *h = melspec_harness(rows[i].properties, NULL);
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, rows[i].rate, 1));
  GstBuffer *in = gst_buffer_new_allocate(NULL, 2000 * sizeof(float), NULL);
  gst_buffer_memset(in, 0, 0, 2000 * sizeof(float));
  const GstFlowReturn flow = gst_harness_push(h, in);
  fail_unless(flow != GST_FLOW_OK, "%s at %u Hz: the push returned OK", rows[i].properties,
              rows[i].rate);
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "%s at %u Hz: no ERROR", rows[i].properties,
              rows[i].rate);
  for (guint w = 0; rows[i].words[w]; w++)
    fail_unless(strstr(text, rows[i].words[w]) != NULL, "%s: the ERROR does not say \"%s\": %s",
                rows[i].properties, rows[i].words[w], text);
  fail_unless(!eu_bus_pop_error(bus, NULL, NULL), "%s: a second ERROR", rows[i].properties);
  fail_unless_equals_int(gst_harness_buffers_received(h), 0);
  g_free(text);
  eu_harness_teardown(h, bus);
}
GST_END_TEST;

/* Whisper's 16 kHz: from 44.1 kHz through audioresample and a capsfilter, and from a source that
 * can make any rate (the element names 16 kHz first among the rates it takes, so that the source
 * picks it): EOS and no ERROR. audioresample alone keeps the input's rate (it prefers
 * passthrough), which the element refuses with the ERROR of test_bad_settings. */
GST_START_TEST(test_whisper_rate_negotiated)
{
  static const char *const lines[] = {
      "audiotestsrc num-buffers=40 ! audio/x-raw,rate=44100 ! audioresample ! "
      "audio/x-raw,rate=16000 ! cudamelspectrogram name=e preset=whisper backend=%s ! fakesink",
      "audiotestsrc num-buffers=40 ! cudamelspectrogram name=e preset=whisper backend=%s ! "
      "fakesink"};
  for (guint i = 0; i < G_N_ELEMENTS(lines); i++) {
    gchar *line = g_strdup_printf(lines[i], eu_backend);
    EuErrors got;
    eu_collect_errors(line, "e", 60, &got);
    fail_unless(got.eos && got.errors->len == 0 && got.others == 0,
                "%s: EOS %d, %u ERRORs from the element (%s), %u from others", line, got.eos,
                got.errors->len,
                got.errors->len ? (const char *)g_ptr_array_index(got.errors, 0) : "", got.others);
    eu_errors_clear(&got);
    g_free(line);
  }
}
GST_END_TEST;

/* More mel bands than the bins separate (torchaudio's defaults at 16 kHz: 128 bands on 201
 * bins): a WARNING naming the empty filters, as librosa warns; the features still flow. */
GST_START_TEST(test_empty_filters_warned)
{
  GstHarness *h = melspec_harness("preset=torchaudio", NULL);
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, 16000, 1));
  GstBuffer *in = gst_buffer_new_allocate(NULL, 4000 * sizeof(float), NULL);
  gst_buffer_memset(in, 0, 0, 4000 * sizeof(float));
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  fail_unless(gst_harness_buffers_received(h) > 0);
  CudafftFeaturesConfig c = preset_config("torchaudio", 16000, 1, CUDAFFT_SAMPLE_F32);
  unsigned empty[CUDAFFT_FEATURES_MAX_MELS], count = 0;
  fail_unless(cudafft_features_empty_filters(&c, empty, CUDAFFT_FEATURES_MAX_MELS, &count) ==
              CUDAFFT_STATUS_OK);
  fail_unless(count > 0, "torchaudio's defaults have no empty filter here");
  GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  fail_unless(m != NULL, "no WARNING for %u empty filters", count);
  GError *err = NULL;
  gst_message_parse_warning(m, &err, NULL);
  gchar *first = g_strdup_printf("filters %u", empty[0]);
  gchar *how_many = g_strdup_printf("%u of the 128", count);
  fail_unless(strstr(err->message, first) && strstr(err->message, how_many) &&
                  strstr(err->message, "n-mels"),
              "the WARNING does not name the empty filters (%s ...): %s", first, err->message);
  g_free(first);
  g_free(how_many);
  g_clear_error(&err);
  gst_message_unref(m);
  eu_harness_teardown(h, bus);
}
GST_END_TEST;

/* NaN and Inf samples make NaN or Inf only the frames whose windows read them: every tensor is
 * the engine's, byte for byte, and all but those few frames are finite. */
GST_START_TEST(test_nan_confined)
{
  TestRng rng = test_rng("nan");
  TestSignal s;
  test_signal_random(&s, &rng, CUDAFFT_SAMPLE_F32, 2, 16000, 16000, TEST_READ_POW2);
  test_signal_set(&s, 5000, 0, NAN);
  test_signal_set(&s, 11000, 1, INFINITY);
  GstHarness *h = melspec_harness("preset=kaldi-fbank", NULL);
  eu_harness_signal_caps(h, &s);
  GPtrArray *out = eu_buffer_list();
  push_pieces(h, &s, 0, s.frames, &rng, 3000, 0, out);
  eu_push_eos(h, out);
  const CudafftFeaturesConfig c = preset_config("kaldi-fbank", 16000, 2, CUDAFFT_SAMPLE_F32);
  FeaturesRun run;
  engine_run(&run, &c, &s, 0, s.frames, "NaN and Inf");
  GString *why = g_string_new(NULL);
  guint index = 0;
  fail_unless(check_run(out, &index, &run, &c, 0, why), "NaN and Inf: %s", why->str);
  /* a sample lies in at most ceil(400 / 160) = 3 frames of its channel */
  guint bad[2] = {0, 0};
  for (guint k = 0; k < out->len; k++)
    for (guint ch = 0; ch < 2; ch++) {
      gboolean finite = TRUE;
      for (guint j = 0; j < 23; j++)
        finite &= isfinite(tensor_value(g_ptr_array_index(out, k), FALSE, FALSE, ch, 0, j, 1, 23));
      bad[ch] += !finite;
    }
  fail_unless(bad[0] >= 1 && bad[0] <= 3 && bad[1] >= 1 && bad[1] <= 3,
              "frames not finite: %u and %u of %u", bad[0], bad[1], out->len);
  features_run_clear(&run);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* Buffers of 1 to 7 bytes (frames split anywhere, no timestamps) and one buffer of 20 s (two
 * thousand tensors from one push): the engine's tensors either way. */
GST_START_TEST(test_tiny_and_enormous_buffers)
{
  TestRng rng = test_rng("buffer sizes");
  TestSignal s;
  test_signal_random(&s, &rng, CUDAFFT_SAMPLE_F32, 2, 16000, 3000, TEST_READ_POW2);
  GstHarness *h = melspec_harness("preset=kaldi-fbank", NULL);
  eu_harness_signal_caps(h, &s);
  GPtrArray *out = eu_buffer_list();
  eu_push_bytes(h, s.raw, s.frames * test_signal_frame_bytes(&s), &rng, 7, out);
  eu_push_eos(h, out);
  CudafftFeaturesConfig c = preset_config("kaldi-fbank", 16000, 2, CUDAFFT_SAMPLE_F32);
  FeaturesRun run;
  engine_run(&run, &c, &s, 0, s.frames, "tiny buffers");
  GString *why = g_string_new(NULL);
  guint index = 0;
  fail_unless(check_run(out, &index, &run, &c, 0, why) && index == out->len, "tiny buffers: %s",
              why->str);
  features_run_clear(&run);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&s);

  test_signal_random(&s, &rng, CUDAFFT_SAMPLE_F32, 1, 16000, 20 * 16000, TEST_READ_POW2);
  h = melspec_harness("preset=kaldi-fbank", NULL);
  eu_harness_signal_caps(h, &s);
  out = eu_buffer_list();
  push_pieces(h, &s, 0, s.frames, NULL, 0, 0, out);
  eu_push_eos(h, out);
  c = preset_config("kaldi-fbank", 16000, 1, CUDAFFT_SAMPLE_F32);
  engine_run(&run, &c, &s, 0, s.frames, "one buffer of 20 s");
  index = 0;
  fail_unless(run.outputs > 1900 && check_run(out, &index, &run, &c, 0, why) && index == out->len,
              "one buffer of 20 s: %s", why->str);
  features_run_clear(&run);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&s);
}
GST_END_TEST;

/* Whether this build offers CUDA memory (gstreamer-cuda-1.0 found): its src template names it. */
static gboolean
build_has_cuda_memory(void)
{
  GstElementFactory *factory = gst_element_factory_find("cudamelspectrogram");
  gboolean has = FALSE;
  for (const GList *t = factory ? gst_element_factory_get_static_pad_templates(factory) : NULL; t;
       t = t->next) {
    GstStaticPadTemplate *templ = t->data;
    GstCaps *caps = gst_static_caps_get(&templ->static_caps);
    for (guint i = 0; i < gst_caps_get_size(caps); i++)
      has |= gst_caps_features_contains(gst_caps_get_features(caps, i), "memory:CUDAMemory");
    gst_caps_unref(caps);
  }
  if (factory)
    gst_object_unref(factory);
  return has;
}

/* A downstream that takes only CUDA memory, with the CPU backend: one ERROR that says so (the
 * element core's, as every element's). In builds with CUDA memory. */
GST_START_TEST(test_cuda_only_downstream_on_cpu)
{
  GstHarness *h = eu_harness_new("cudamelspectrogram name=e backend=cpu");
  gst_harness_set_sink_caps_str(h, "other/tensors(memory:CUDAMemory)");
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, 16000, 1));
  GstBuffer *in = gst_buffer_new_allocate(NULL, 2000 * sizeof(float), NULL);
  gst_buffer_memset(in, 0, 0, 2000 * sizeof(float));
  fail_unless(gst_harness_push(h, in) != GST_FLOW_OK);
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "no ERROR");
  fail_unless(strstr(text, "CUDA memory") && strstr(text, "backend"), "the ERROR: %s", text);
  g_free(text);
  eu_harness_teardown(h, bus);
}
GST_END_TEST;

GST_START_TEST(test_one_error_at_start)
{
  eu_check_one_error_at_start("cudamelspectrogram", "");
}
GST_END_TEST;

GST_START_TEST(test_channel_limit)
{
  eu_check_channel_limit("cudamelspectrogram", "");
}
GST_END_TEST;

GST_START_TEST(test_time_segment)
{
  eu_check_time_segment("cudamelspectrogram");
}
GST_END_TEST;

#ifdef CUDAFFT_TEST_TENSOR_META
/* GStreamer 1.26's GstTensorMeta on every buffer: one tensor, id cudamelspectrogram/<kind>, the
 * caps' type and dimensions (outermost first, row-major), its data the buffer's own memory. */
GST_START_TEST(test_tensor_meta)
{
  static const struct {
    const char *properties, *id;
    gsize dims[3];
    gboolean f16;
  } rows[] = {{"preset=kaldi-fbank", "cudamelspectrogram/log-mel", {1, 1, 23}, FALSE},
              {"preset=whisper", "cudamelspectrogram/log-mel", {1, 80, 3000}, FALSE},
              {"preset=kaldi-mfcc", "cudamelspectrogram/mfcc", {1, 1, 13}, TRUE}};
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    GstHarness *h =
        melspec_harness(rows[i].properties, rows[i].f16 ? "other/tensors,types=float16" : NULL);
    gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, 16000, 1));
    GstBuffer *in = gst_buffer_new_allocate(NULL, 8000 * sizeof(float), NULL);
    gst_buffer_memset(in, 0, 0, 8000 * sizeof(float));
    GST_BUFFER_PTS(in) = 0;
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    GPtrArray *out = eu_buffer_list();
    eu_push_eos(h, out);
    fail_unless(out->len > 0, "%s: no output", rows[i].properties);
    for (guint k = 0; k < out->len; k++) {
      GstBuffer *buf = g_ptr_array_index(out, k);
      GstTensorMeta *meta = gst_buffer_get_tensor_meta(buf);
      fail_unless(meta != NULL && meta->num_tensors == 1, "%s: buffer %u: no tensor meta",
                  rows[i].properties, k);
      const GstTensor *t = meta->tensors[0];
      fail_unless(t->id == g_quark_from_string(rows[i].id) &&
                      t->data_type == (rows[i].f16 ? GST_TENSOR_DATA_TYPE_FLOAT16
                                                   : GST_TENSOR_DATA_TYPE_FLOAT32) &&
                      t->dims_order == GST_TENSOR_DIM_ORDER_ROW_MAJOR && t->num_dims == 3 &&
                      t->dims[0] == rows[i].dims[0] && t->dims[1] == rows[i].dims[1] &&
                      t->dims[2] == rows[i].dims[2],
                  "%s: buffer %u: tensor %s, type %d, order %d, %zu dims (%zu x %zu x %zu)",
                  rows[i].properties, k, g_quark_to_string(t->id), t->data_type, t->dims_order,
                  t->num_dims, t->dims[0], t->dims[1], t->dims[2]);
      fail_unless(gst_buffer_n_memory(t->data) == 1 &&
                      gst_buffer_peek_memory(t->data, 0) == gst_buffer_peek_memory(buf, 0),
                  "%s: the tensor's data is not the buffer's memory", rows[i].properties);
    }
    g_ptr_array_unref(out);
    gst_harness_teardown(h);
  }
}
GST_END_TEST;
#endif

static Suite *
cudamelspectrogram_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudamelspectrogram", &tc);
  tcase_add_test(tc, test_metadata);
  tcase_add_test(tc, test_preset_order);
  tcase_add_test(tc, test_refused_values);
  tcase_add_loop_test(tc, test_library_references, 0, G_N_ELEMENTS(ref_cases));
  tcase_add_test(tc, test_whisper_float16);
  tcase_add_loop_test(tc, test_random_settings, 0, 24);
  tcase_add_loop_test(tc, test_latency, 0, 3);
  tcase_add_loop_test(tc, test_stream_events, 0, 4);
  tcase_add_test(tc, test_change_while_playing);
  tcase_add_loop_test(tc, test_bad_settings, 0, 7);
  tcase_add_test(tc, test_whisper_rate_negotiated);
  tcase_add_test(tc, test_empty_filters_warned);
  tcase_add_test(tc, test_nan_confined);
  tcase_add_test(tc, test_tiny_and_enormous_buffers);
  if (strcmp(eu_backend, "cpu") == 0 && build_has_cuda_memory())
    tcase_add_test(tc, test_cuda_only_downstream_on_cpu);
  tcase_add_test(tc, test_one_error_at_start);
  tcase_add_test(tc, test_channel_limit);
  tcase_add_test(tc, test_time_segment);
#ifdef CUDAFFT_TEST_TENSOR_META
  tcase_add_test(tc, test_tensor_meta);
#endif
  return s;
}

EU_MAIN(cudamelspectrogram_suite)
