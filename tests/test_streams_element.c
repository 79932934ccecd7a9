/* test_streams_element.c: many pipelines in one process, as a media server runs them (on the CUDA
 * backend every engine object of them shares the device's executor, which batches their work):
 * 48 pipelines at once, each on its own thread, eight of each of
 *   appsrc ! cudafft ! fakesink                  (frames: element_util's cudafft contract, values
 *                                                 against stft_reference in double)
 *   appsrc ! cudafft ! cudaifft ! fakesink       (the input back within the round-trip tolerance)
 *   appsrc ! cudaspectrum ! fakesink             (every message's levels and phases against
 *                                                 spectrum_reference's model of spectrum)
 *   appsrc ! cudaconvolve kernel=... ! fakesink  (the whole output against convolve_reference)
 *   appsrc ! cudamatrixconvolve matrix=... ! fakesink (inputs x outputs random responses, set as
 *                                                 the text a launch line gives; the whole output
 *                                                 against the direct matrix convolution)
 *   appsrc ! cudamelspectrogram preset=... ! fakesink (every tensor byte for byte the features
 *                                                 engine's own over the same samples)
 * with random settings, formats, channel counts and buffer sizes (live 480-frame buffers among
 * them). Every pipeline's output is collected on its thread and checked afterwards (the
 * references plan FFTW transforms, which is not thread-safe). Argument: cpu or cuda. */
#include "convolve_reference.h"
#include "element_util.h"
#include "spectrum_reference.h"

#include <math.h>
#include <string.h>

#define PIPELINES_PER_KIND 8
/* cudaconvolve's whole output against the double convolution (test_cudaconvolve_element's) */
#define CONVOLVE_TOLERANCE 1e-5
/* cudaspectrum's levels and phases against the model (test_cudaspectrum_element's) */
#define SPECTRUM_DB_TOLERANCE 0.05
#define SPECTRUM_PHASE_TOLERANCE 0.02
#define SPECTRUM_PHASE_MIN_LEVEL -100.0

typedef enum {
  KIND_FFT,
  KIND_ROUNDTRIP,
  KIND_SPECTRUM,
  KIND_CONVOLVE,
  KIND_MATRIX,
  KIND_MELSPEC,
  KIND_COUNT
} Kind;

static const char *const kind_names[KIND_COUNT] = {
    "cudafft",      "cudafft ! cudaifft", "cudaspectrum",
    "cudaconvolve", "cudamatrixconvolve", "cudamelspectrogram"};

typedef struct {
  Kind kind;
  guint index;
  gchar *label;
  gchar *elements; /* the launch line between appsrc and fakesink */
  TestSignal signal;
  gsize chunk; /* frames per input buffer */
  EuFft fft;   /* cudafft */
  guint bands; /* cudaspectrum */
  guint64 interval;
  gint threshold;
  gboolean phase, multi;
  double *taps; /* cudaconvolve; cudamatrixconvolve: inputs x outputs rows of n_taps */
  gsize n_taps;
  guint outputs;                /* cudamatrixconvolve */
  CudafftFeaturesConfig config; /* cudamelspectrogram */
  /* filled on the pipeline's thread */
  GPtrArray *buffers;  /* output buffers */
  GPtrArray *messages; /* cudaspectrum's spectrum messages */
  gchar *why;
} Pipe;

/* Settings ------------------------------------------------------------------------------------ */

static void
make_pipe(Pipe *p, Kind kind, guint index)
{
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->index = index;
  TestRng rng = test_rng("%s pipeline %u", kind_names[kind], index);
  static const guint rates[] = {44100, 48000};
  const guint rate = rates[test_rng_range(&rng, 0, 1)];
  const gsize frames = test_rng_range(&rng, rate / 2, 2 * rate);
  p->chunk = test_rng_range(&rng, 0, 1) ? 480 : test_rng_range(&rng, 1, 5000);
  guint channels = (guint)test_rng_range(&rng, 1, 4);
  switch (kind) {
  case KIND_FFT:
  case KIND_ROUNDTRIP: {
    static const guint sizes[] = {256, 1024, 2048, 4096, 16384};
    static const CudafftSampleFormat formats[] = {CUDAFFT_SAMPLE_S16, CUDAFFT_SAMPLE_F32};
    const CudafftSampleFormat format = formats[test_rng_range(&rng, 0, 1)];
    p->fft.fft_size = sizes[test_rng_range(&rng, 0, 4)];
    p->fft.hop = test_rng_range(&rng, 0, 1) ? p->fft.fft_size / 2 : p->fft.fft_size / 4;
    p->fft.window =
        kind == KIND_ROUNDTRIP ? CUDAFFT_WINDOW_HANN : (CudafftWindow)test_rng_range(&rng, 0, 4);
    p->fft.representation = kind == KIND_ROUNDTRIP
                                ? CUDAFFT_REPRESENTATION_COMPLEX
                                : (CudafftRepresentation)test_rng_range(&rng, 0, 3);
    test_signal_random(&p->signal, &rng, format, channels, rate, frames, TEST_READ_POW2);
    gchar *fft =
        g_strdup_printf("cudafft backend=%s fft-size=%u hop=%u window=%s "
                        "representation=%s",
                        eu_backend, p->fft.fft_size, p->fft.hop, eu_window_nick(p->fft.window),
                        eu_representation_nick(p->fft.representation));
    p->elements = kind == KIND_FFT ? g_strdup(fft)
                                   : g_strdup_printf("%s ! cudaifft backend=%s", fft, eu_backend);
    g_free(fft);
    break;
  }
  case KIND_SPECTRUM: {
    static const guint bands[] = {64, 129, 300, 1025, 1025, 2049};
    static const gint thresholds[] = {-60, -80, -90};
    const CudafftSampleFormat format =
        (CudafftSampleFormat)test_rng_range(&rng, 0, CUDAFFT_SAMPLE_COUNT_ - 1);
    channels = (guint)test_rng_range(&rng, 1, 8);
    p->bands = bands[test_rng_range(&rng, 0, 5)];
    p->interval =
        test_rng_range(&rng, 0, 1) ? 16666667 : test_rng_range(&rng, 1, 100) * GST_MSECOND;
    p->threshold = thresholds[test_rng_range(&rng, 0, 2)];
    p->phase = test_rng_range(&rng, 0, 1);
    p->multi = test_rng_range(&rng, 0, 1);
    test_signal_noise(&p->signal, &rng, format, channels, rate, frames,
                      TEST_READ_SPECTRUM | TEST_READ_F64_AS_FLOAT, 0.5);
    p->elements = g_strdup_printf("cudaspectrum backend=%s bands=%u interval=%" G_GUINT64_FORMAT
                                  " threshold=%d message-phase=%s multi-channel=%s "
                                  "post-messages=true",
                                  eu_backend, p->bands, p->interval, p->threshold,
                                  p->phase ? "true" : "false", p->multi ? "true" : "false");
    break;
  }
  case KIND_MATRIX: {
    static const guint block_sizes[] = {0, 32, 128, 1024}; /* 0: zero latency */
    const CudafftSampleFormat format =
        test_rng_range(&rng, 0, 1) ? CUDAFFT_SAMPLE_F64 : CUDAFFT_SAMPLE_F32;
    p->outputs = (guint)test_rng_range(&rng, 1, 3);
    p->n_taps = test_rng_range(&rng, 1, 300);
    const gsize rows = (gsize)channels * p->outputs;
    p->taps = g_new(double, rows * p->n_taps);
    for (gsize k = 0; k < rows * p->n_taps; k++)
      p->taps[k] = test_rng_uniform(&rng) / sqrt((double)channels);
    test_signal_random(&p->signal, &rng, format, channels, rate, frames, TEST_READ_F64_AS_FLOAT);
    /* the matrix as a launch line writes it: rows of taps, input-major (row i * outputs + j) */
    GString *matrix = g_string_new("<");
    for (gsize r = 0; r < rows; r++) {
      g_string_append(matrix, r ? ", <" : "<");
      for (gsize k = 0; k < p->n_taps; k++)
        g_string_append_printf(matrix, "%s%.17g", k ? ", " : "", p->taps[r * p->n_taps + k]);
      g_string_append(matrix, ">");
    }
    g_string_append(matrix, ">");
    p->elements = g_strdup_printf("cudamatrixconvolve backend=%s block-size=%u matrix=\"%s\"",
                                  eu_backend, block_sizes[test_rng_range(&rng, 0, 3)], matrix->str);
    g_string_free(matrix, TRUE);
    break;
  }
  case KIND_MELSPEC: {
    /* a preset at the stream's rate (Whisper's at 16 kHz, its chunks of 2 s here) */
    static const char *const presets[] = {"whisper", "kaldi-fbank",     "kaldi-mfcc",
                                          "librosa", "torchaudio-mfcc", "nemo"};
    static const CudafftSampleFormat formats[] = {CUDAFFT_SAMPLE_S16, CUDAFFT_SAMPLE_S32,
                                                  CUDAFFT_SAMPLE_F32, CUDAFFT_SAMPLE_F64};
    const char *preset = presets[test_rng_range(&rng, 0, G_N_ELEMENTS(presets) - 1)];
    const guint melspec_rate = strcmp(preset, "whisper") == 0 ? 16000 : rate;
    const CudafftSampleFormat format = formats[test_rng_range(&rng, 0, 3)];
    fail_unless(cudafft_features_preset(&p->config, preset, melspec_rate, 0) == CUDAFFT_STATUS_OK);
    p->config.channels = channels;
    p->config.format = format;
    if (strcmp(preset, "whisper") == 0)
      p->config.chunk_samples = 32000;
    test_signal_random(&p->signal, &rng, format, channels, melspec_rate, frames / 3,
                       TEST_READ_POW2);
    p->elements = g_strdup_printf("cudamelspectrogram backend=%s preset=%s chunk-samples=%zu",
                                  eu_backend, preset, p->config.chunk_samples);
    break;
  }
  default: {
    const CudafftSampleFormat format =
        test_rng_range(&rng, 0, 1) ? CUDAFFT_SAMPLE_F64 : CUDAFFT_SAMPLE_F32;
    p->n_taps = test_rng_range(&rng, 1, 300);
    p->taps = g_new(double, p->n_taps);
    for (gsize k = 0; k < p->n_taps; k++)
      p->taps[k] = test_rng_uniform(&rng);
    test_signal_random(&p->signal, &rng, format, channels, rate, frames, TEST_READ_F64_AS_FLOAT);
    p->elements = g_strdup_printf("cudaconvolve name=c backend=%s", eu_backend);
    break;
  }
  }
  p->label =
      g_strdup_printf("pipeline %s #%u (%.200s, %s %u ch %u Hz, %zu frames in buffers of %zu)",
                      kind_names[kind], index, p->elements, test_format_name(p->signal.format),
                      p->signal.channels, p->signal.rate, p->signal.frames, p->chunk);
}

static void
clear_pipe(Pipe *p)
{
  g_free(p->label);
  g_free(p->elements);
  g_free(p->taps);
  g_free(p->why);
  if (p->buffers)
    g_ptr_array_unref(p->buffers);
  if (p->messages)
    g_ptr_array_unref(p->messages);
  test_signal_clear(&p->signal);
}

/* Running a pipeline on its own thread --------------------------------------------------------- */

static void
set_kernel(GstElement *e, const double *taps, gsize n)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GValueArray *array = g_value_array_new((guint)n);
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_TYPE_DOUBLE);
  for (gsize i = 0; i < n; i++) {
    g_value_set_double(&v, taps[i]);
    g_value_array_append(array, &v);
  }
  g_value_unset(&v);
  g_object_set(e, "kernel", array, NULL);
  g_value_array_free(array);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

/* fakesink's handoff, on the streaming thread (the only one touching the array until EOS). */
static void
on_handoff(GstElement *sink, GstBuffer *buffer, GstPad *pad, gpointer data)
{
  (void)sink;
  (void)pad;
  g_ptr_array_add(data, gst_buffer_ref(buffer));
}

/* Plays the pipeline once: the signal in buffers of `chunk` frames, EOS; collects the output
 * buffers and the spectrum messages. */
static gpointer
run_pipe(gpointer data)
{
  Pipe *p = data;
  gchar *description = g_strdup_printf("appsrc name=src format=time ! %s ! fakesink name=sink "
                                       "sync=false signal-handoffs=true",
                                       p->elements);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  g_free(description);
  if (!pipeline || error) {
    p->why = g_strdup_printf("cannot make it: %s", error ? error->message : "?");
    g_clear_error(&error);
    if (pipeline)
      gst_object_unref(pipeline);
    return NULL;
  }
  p->buffers = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  p->messages = g_ptr_array_new_with_free_func((GDestroyNotify)gst_message_unref);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  if (p->kind == KIND_CONVOLVE) {
    GstElement *c = gst_bin_get_by_name(GST_BIN(pipeline), "c");
    set_kernel(c, p->taps, p->n_taps);
    gst_object_unref(c);
  }
  GstCaps *caps = eu_raw_caps(p->signal.format, p->signal.rate, p->signal.channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), p->buffers);
  GstBus *bus = gst_element_get_bus(pipeline);
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    p->why = g_strdup("PLAYING failed");
  } else {
    for (gsize done = 0; done < p->signal.frames;) {
      const gsize n = MIN(p->chunk, p->signal.frames - done);
      GstFlowReturn flow;
      GstBuffer *buffer = eu_signal_buffer(&p->signal, done, n, 0);
      g_signal_emit_by_name(src, "push-buffer", buffer, &flow);
      gst_buffer_unref(buffer);
      if (flow != GST_FLOW_OK)
        break;
      done += n;
    }
    GstFlowReturn flow;
    g_signal_emit_by_name(src, "end-of-stream", &flow);
    /* element messages come before EOS, and a filtered pop drops what it does not ask for */
    for (;;) {
      GstMessage *msg = gst_bus_timed_pop_filtered(
          bus, 120 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
      if (!msg) {
        p->why = g_strdup("no EOS within 120 s");
        break;
      }
      if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ELEMENT) {
        const GstStructure *s = gst_message_get_structure(msg);
        if (s && gst_structure_has_name(s, "spectrum"))
          g_ptr_array_add(p->messages, gst_message_ref(msg));
        gst_message_unref(msg);
        continue;
      }
      if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError *err = NULL;
        gchar *debug = NULL;
        gst_message_parse_error(msg, &err, &debug);
        p->why = g_strdup_printf("error from %s: %s | %s", GST_MESSAGE_SRC_NAME(msg),
                                 err ? err->message : "", debug ? debug : "");
        g_clear_error(&err);
        g_free(debug);
      }
      gst_message_unref(msg);
      break;
    }
  }
  if (gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_FAILURE && !p->why)
    p->why = g_strdup("NULL failed");
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return NULL;
}

/* Checks, on the main thread ----------------------------------------------------------------- */

static void
check_fft(Pipe *p)
{
  const EuRun run = {p->signal.values, p->signal.frames, 0, TRUE};
  guint index = 0;
  GString *why = g_string_new(NULL);
  const gboolean ok = eu_check_fft_runs(p->buffers, &index, &p->fft, p->signal.channels,
                                        p->signal.rate, &run, 1, why);
  fail_unless(ok, "%s: %s", p->label, why->str);
  fail_unless(index == p->buffers->len, "%s: %u buffers more than the run's", p->label,
              p->buffers->len - index);
  g_string_free(why, TRUE);
}

static void
check_roundtrip(Pipe *p)
{
  double error = 0.0;
  GString *why = g_string_new(NULL);
  fail_unless(eu_check_roundtrip(p->buffers, &p->signal, 0, &error, why), "%s: %s", p->label,
              why->str);
  g_string_free(why, TRUE);
}

/* The output samples (F32 or F64, as the input) as doubles. */
static double *
read_samples(Pipe *p, gsize *count)
{
  const gsize bytes = test_sample_bytes(p->signal.format);
  gsize total = 0;
  for (guint b = 0; b < p->buffers->len; b++)
    total += gst_buffer_get_size(g_ptr_array_index(p->buffers, b)) / bytes;
  double *values = g_new(double, total + 1);
  gsize at = 0;
  for (guint b = 0; b < p->buffers->len; b++) {
    GstMapInfo map;
    GstBuffer *buffer = g_ptr_array_index(p->buffers, b);
    fail_unless(gst_buffer_map(buffer, &map, GST_MAP_READ), "%s: cannot map a buffer", p->label);
    for (gsize i = 0; i < map.size / bytes; i++) {
      if (p->signal.format == CUDAFFT_SAMPLE_F64) {
        double v;
        memcpy(&v, map.data + i * bytes, sizeof v);
        values[at++] = v;
      } else {
        float v;
        memcpy(&v, map.data + i * bytes, sizeof v);
        values[at++] = v;
      }
    }
    gst_buffer_unmap(buffer, &map);
  }
  *count = total;
  return values;
}

/* A filter's output against the double-precision model: every value finite, the relative L2
 * error within CONVOLVE_TOLERANCE. */
static void
check_filtered(const Pipe *p, const double *got, const double *want, gsize count)
{
  double err2 = 0.0, ref2 = 0.0;
  gsize nonfinite = 0;
  for (gsize i = 0; i < count; i++) {
    nonfinite += !isfinite(got[i]);
    err2 += (got[i] - want[i]) * (got[i] - want[i]);
    ref2 += want[i] * want[i];
  }
  fail_unless(nonfinite == 0 && sqrt(err2 / ref2) <= CONVOLVE_TOLERANCE,
              "%s: %zu values not finite, relative L2 error %.3g (tolerance %g)", p->label,
              nonfinite, sqrt(err2 / ref2), CONVOLVE_TOLERANCE);
}

/* drain-tail (the default): input + taps - 1 frames of y = h * x. */
static void
check_convolve(Pipe *p)
{
  const guint channels = p->signal.channels;
  const gsize expected = p->signal.frames + p->n_taps - 1;
  gsize count = 0;
  double *got = read_samples(p, &count);
  fail_unless(count == expected * channels, "%s: %zu values, expected %zu", p->label, count,
              expected * channels);
  double *want = convolve_reference(p->taps, p->n_taps, 1, p->signal.values, channels,
                                    p->signal.frames, expected);
  check_filtered(p, got, want, count);
  free(want);
  g_free(got);
}

/* drain-tail (the default): input + taps - 1 frames of y_j = sum_i h_ij * x_i, within the
 * relative L2 error of cudaconvolve's check. */
static void
check_matrix(Pipe *p)
{
  const guint inputs = p->signal.channels, outputs = p->outputs;
  const gsize expected = p->signal.frames + p->n_taps - 1;
  gsize count = 0;
  double *got = read_samples(p, &count);
  fail_unless(count == expected * outputs, "%s: %zu values, expected %zu frames of %u outputs",
              p->label, count, expected, outputs);
  double *want = g_new0(double, expected *outputs);
  double *term = g_new(double, expected);
  for (guint i = 0; i < inputs; i++)
    for (guint j = 0; j < outputs; j++) {
      convolve_reference_channel(p->taps + ((gsize)i * outputs + j) * p->n_taps, p->n_taps,
                                 p->signal.values, inputs, i, p->signal.frames, 0, expected, term);
      for (gsize n = 0; n < expected; n++)
        want[n * outputs + j] += term[n];
    }
  check_filtered(p, got, want, count);
  g_free(term);
  g_free(want);
  g_free(got);
}

/* Every tensor against the features engine run directly over the same samples. */
static void
check_melspec(Pipe *p)
{
  GString *why = g_string_new(NULL);
  gsize outputs = 0, bytes = 0;
  guint8 *want =
      eu_features_run(&p->config, p->signal.raw, p->signal.frames, &outputs, &bytes, why);
  guint index = 0;
  fail_unless(want &&
                  eu_check_features(p->buffers, &index, &p->config, want, outputs, bytes, 0, why),
              "%s: %s", p->label, why->str);
  fail_unless(index == p->buffers->len, "%s: %u buffers more than the engine's %zu tensors",
              p->label, p->buffers->len - index, outputs);
  g_free(want);
  g_string_free(why, TRUE);
}

/* The model's intervals: levels, phases and lowest levels copied out. */
typedef struct {
  gsize frames, ffts;
  guint rows;
  double *level, *phase, *min_level;
} Interval;

static void
collect_interval(void *context, const SpectrumRefInterval *r)
{
  GArray *out = context;
  const gsize count = (gsize)r->rows * r->bands;
  Interval iv = {r->frames,
                 r->ffts,
                 r->rows,
                 g_memdup2(r->level, count * sizeof(double)),
                 g_memdup2(r->phase, count * sizeof(double)),
                 g_memdup2(r->min_level, count * sizeof(double))};
  g_array_append_val(out, iv);
}

static void
clear_interval(gpointer data)
{
  Interval *iv = data;
  g_free(iv->level);
  g_free(iv->phase);
  g_free(iv->min_level);
}

/* `field` ("magnitude-data", "phase-data") of a message: rows x bands floats, or NULL. */
static const float *
message_floats(GstMessage *msg, const char *field, gsize count)
{
  const GValue *v = gst_structure_get_value(gst_message_get_structure(msg), field);
  if (!v || !G_VALUE_HOLDS(v, G_TYPE_BYTES))
    return NULL;
  gsize size = 0;
  const float *data = g_bytes_get_data(g_value_get_boxed(v), &size);
  return size == count * sizeof(float) ? data : NULL;
}

/* Every message (spectrum posts the partial interval at EOS too) against the model: levels within
 * SPECTRUM_DB_TOLERANCE where the model is above threshold + 1 dB, at the threshold up to 1 dB
 * and the tolerance elsewhere, NaN where the model's is; phases modulo 2 pi / FFTs where every
 * FFT's level was above SPECTRUM_PHASE_MIN_LEVEL. A value is asserted only where it fails: check's
 * fail_unless writes its place to the runner's pipe even when it passes, a system call per value,
 * and a pipeline of 2049 bands x 8 channels with 1 ms intervals has tens of millions of values (an
 * unlucky seed ran past the test's timeout under AddressSanitizer). */
static void
check_spectrum(Pipe *p)
{
  GArray *intervals = g_array_new(FALSE, TRUE, sizeof(Interval));
  g_array_set_clear_func(intervals, clear_interval);
  const SpectrumRefSettings settings = {p->bands, p->multi, p->interval, p->threshold, p->phase};
  SpectrumRef *ref = spectrum_ref_new(p->signal.channels, p->signal.rate, &settings, NULL);
  spectrum_ref_push(ref, p->signal.values, p->signal.frames, collect_interval, intervals);
  spectrum_ref_finish(ref, collect_interval, intervals);
  spectrum_ref_free(ref);
  fail_unless(p->messages->len == intervals->len, "%s: %u messages, the model has %u intervals",
              p->label, p->messages->len, intervals->len);
  const double step_base = 2.0 * G_PI;
  for (guint j = 0; j < intervals->len; j++) {
    const Interval *iv = &g_array_index(intervals, Interval, j);
    const gsize count = (gsize)iv->rows * p->bands;
    GstMessage *msg = g_ptr_array_index(p->messages, j);
    const float *mag = message_floats(msg, "magnitude-data", count);
    const float *phase = message_floats(msg, "phase-data", count);
    fail_unless(mag && (phase != NULL) == p->phase,
                "%s: message %u: magnitude-data %s, phase-data %s (%zu values each expected)",
                p->label, j, mag ? "present" : "missing or not that size",
                phase ? "present" : "absent", count);
    for (gsize q = 0; q < count; q++) {
      const double g = mag[q], r = iv->level[q];
      const gboolean ok =
          isnan(r) ? isnan(g)
          : r > p->threshold + 1.0
              ? fabs(g - r) <= SPECTRUM_DB_TOLERANCE
              : g >= p->threshold - 1e-3 && g <= p->threshold + 1.0 + SPECTRUM_DB_TOLERANCE;
      if (!ok)
        fail("%s: message %u (%zu frames, %zu FFTs) row %zu band %zu: %.4f dB, model "
             "%.4f (threshold %d)",
             p->label, j, iv->frames, iv->ffts, q / p->bands, q % p->bands, g, r, p->threshold);
      if (!phase || isnan(r) || !(iv->min_level[q] > SPECTRUM_PHASE_MIN_LEVEL))
        continue;
      const double d = remainder(phase[q] - iv->phase[q], step_base / (double)iv->ffts);
      if (!(fabs(d) <= SPECTRUM_PHASE_TOLERANCE))
        fail("%s: message %u row %zu band %zu: phase %.5f, model %.5f (mod 2pi/%zu)", p->label, j,
             q / p->bands, q % p->bands, phase[q], iv->phase[q], iv->ffts);
    }
  }
  g_array_unref(intervals);
}

/* The test ------------------------------------------------------------------------------------ */

GST_START_TEST(test_many_pipelines_at_once)
{
  Pipe pipes[KIND_COUNT * PIPELINES_PER_KIND];
  for (guint i = 0; i < G_N_ELEMENTS(pipes); i++)
    make_pipe(&pipes[i], (Kind)(i % KIND_COUNT), i / KIND_COUNT);
  eu_run_threads(run_pipe, pipes, sizeof pipes[0], G_N_ELEMENTS(pipes));
  for (guint i = 0; i < G_N_ELEMENTS(pipes); i++) {
    Pipe *p = &pipes[i];
    fail_unless(p->why == NULL, "%s: %s", p->label, p->why);
    switch (p->kind) {
    case KIND_FFT:
      check_fft(p);
      break;
    case KIND_ROUNDTRIP:
      check_roundtrip(p);
      break;
    case KIND_SPECTRUM:
      check_spectrum(p);
      break;
    case KIND_MATRIX:
      check_matrix(p);
      break;
    case KIND_MELSPEC:
      check_melspec(p);
      break;
    default:
      check_convolve(p);
      break;
    }
    clear_pipe(p);
  }
}
GST_END_TEST;

static Suite *
streams_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("streams", &tc);
  tcase_add_test(tc, test_many_pipelines_at_once);
  return s;
}

EU_MAIN(streams_suite)
