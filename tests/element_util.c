/* element_util.c: see element_util.h.
 *
 * Length: past the ~800 lines a file usually keeps, as the one harness every element test shares
 * (pipelines, pushes, captures, checks); split, its parts would call each other across files. */
#include "element_util.h"

#include "stft_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const char *eu_backend = "cpu";

/* Setup ------------------------------------------------------------------------------------- */

void
eu_init(int *argc, char ***argv)
{
  /* test_begin reads argv[1]; gst_check_init leaves it where it is (it removes only the options
   * it knows). */
  eu_backend = test_begin(*argc > 2 ? 2 : *argc, *argv) == CUDAFFT_BACKEND_CPU ? "cpu" : "cuda";
  gst_check_init(argc, argv);
}

Suite *
eu_suite(const char *name, TCase **tc)
{
  Suite *suite = suite_create(name);
  *tc = tcase_create(name);
  tcase_set_timeout(*tc, 300);
  suite_add_tcase(suite, *tc);
  return suite;
}

int
eu_run(Suite *suite)
{
  /* gst_check_run_suite() without its closing line: the harness's report line says it, with the
   * counts. */
  SRunner *runner = srunner_create(suite);
  gchar *xml = NULL;
  if (g_getenv("GST_CHECK_XML")) {
    xml = g_strdup_printf("%s.check.xml", test_program());
    srunner_set_xml(runner, xml);
  }
  srunner_run_all(runner, CK_NORMAL);
  const int run = srunner_ntests_run(runner), failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  g_free(xml);
  test_count((unsigned)(run - failed), (unsigned)failed);
  return test_finish();
}

guint
eu_state_cycles(guint default_cycles)
{
  const char *env = g_getenv("CUDAFFT_TEST_STATE_CYCLES");
  return env && atoi(env) > 0 ? (guint)atoi(env) : default_cycles;
}

void
eu_run_threads(GThreadFunc func, gpointer items, gsize item_size, guint count)
{
  GThread **threads = g_new(GThread *, count);
  for (guint i = 0; i < count; i++)
    threads[i] = g_thread_new("test", func, (guint8 *)items + i * item_size);
  for (guint i = 0; i < count; i++)
    g_thread_join(threads[i]);
  g_free(threads);
}

void
eu_limit_address_space(guint gib)
{
  const char *fork_mode = g_getenv("CK_FORK");
  if (strcmp(eu_backend, "cpu") != 0 || (fork_mode && strcmp(fork_mode, "no") == 0) || EU_SANITIZED)
    return;
  struct rlimit limit = {(rlim_t)gib << 30, (rlim_t)gib << 30};
  setrlimit(RLIMIT_AS, &limit);
}

void
eu_set_kernel(GstElement *e, const double *taps, gsize n)
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

/* Signals ------------------------------------------------------------------------------------ */

GstCaps *
eu_raw_caps(CudafftSampleFormat format, guint rate, guint channels)
{
  GstCaps *caps = gst_caps_new_simple(
      "audio/x-raw", "format", G_TYPE_STRING, test_format_name(format), "layout", G_TYPE_STRING,
      "interleaved", "rate", G_TYPE_INT, (int)rate, "channels", G_TYPE_INT, (int)channels, NULL);
  if (channels > 2)
    gst_caps_set_simple(
        caps, "channel-mask", GST_TYPE_BITMASK,
        channels <= 8 ? gst_audio_channel_get_fallback_mask((gint)channels) : (guint64)0, NULL);
  return caps;
}

/* Harness ------------------------------------------------------------------------------------ */

GstHarness *
eu_harness_new(const char *format, ...)
{
  va_list args;
  va_start(args, format);
  gchar *line = g_strdup_vprintf(format, args);
  va_end(args);
  /* gst_harness_new_parse() asserts on a parse failure; check first for a readable failure. */
  GError *error = NULL;
  GstElement *probe = gst_parse_bin_from_description(line, FALSE, &error);
  fail_unless(probe != NULL && error == NULL, "cannot make \"%s\": %s (GST_PLUGIN_PATH=%s)", line,
              error ? error->message : "?", g_getenv("GST_PLUGIN_PATH"));
  gst_object_unref(probe);
  GstHarness *h = gst_harness_new_parse(line);
  fail_unless(h != NULL, "gst_harness_new_parse(\"%s\") failed", line);
  g_free(line);
  return h;
}

GstElement *
eu_harness_element(GstHarness *h, const char *name)
{
  GstElement *e = gst_harness_find_element(h, name);
  if (!e && GST_IS_BIN(h->element))
    e = gst_bin_get_by_name(GST_BIN(h->element), name);
  fail_unless(e != NULL, "no element named %s in the harness", name);
  return e;
}

GstBus *
eu_harness_bus(GstHarness *h)
{
  GstBus *bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  return bus;
}

void
eu_harness_teardown(GstHarness *h, GstBus *bus)
{
  gst_element_set_bus(h->element, NULL);
  gst_object_unref(bus);
  gst_harness_teardown(h);
}

gboolean
eu_bus_pop_error(GstBus *bus, GError **error, gchar **text)
{
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (!msg)
    return FALSE;
  GError *err = NULL;
  gchar *debug = NULL;
  gst_message_parse_error(msg, &err, &debug);
  if (text)
    *text = g_strdup_printf("%s | %s", err ? err->message : "", debug ? debug : "");
  if (error)
    *error = err;
  else
    g_clear_error(&err);
  g_free(debug);
  gst_message_unref(msg);
  return TRUE;
}

GstClockTime
eu_sample_time(GstClockTime start, guint64 s, guint rate)
{
  return start + gst_util_uint64_scale_round(s, GST_SECOND, rate);
}

GstBuffer *
eu_signal_buffer(const TestSignal *signal, gsize first, gsize count, GstClockTime start)
{
  const gsize frame_bytes = test_signal_frame_bytes(signal);
  GstBuffer *buf =
      count ? gst_buffer_new_memdup(signal->raw + first * frame_bytes, count * frame_bytes)
            : gst_buffer_new();
  if (GST_CLOCK_TIME_IS_VALID(start)) {
    GST_BUFFER_PTS(buf) = eu_sample_time(start, first, signal->rate);
    GST_BUFFER_DURATION(buf) =
        eu_sample_time(start, first + count, signal->rate) - GST_BUFFER_PTS(buf);
  }
  GST_BUFFER_OFFSET(buf) = first;
  GST_BUFFER_OFFSET_END(buf) = first + count;
  return buf;
}

GPtrArray *
eu_buffer_list(void)
{
  return g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
}

void
eu_harness_signal_caps(GstHarness *h, const TestSignal *signal)
{
  gst_harness_set_src_caps(h, eu_raw_caps(signal->format, signal->rate, signal->channels));
}

void
eu_flush(GstHarness *h, GPtrArray *out)
{
  fail_unless(gst_harness_push_event(h, gst_event_new_flush_start()));
  fail_unless(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  eu_pull_all(h, out);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
}

void
eu_pull_all(GstHarness *h, GPtrArray *out)
{
  GstBuffer *buf;
  while ((buf = gst_harness_try_pull(h)) != NULL) {
    if (out)
      g_ptr_array_add(out, buf);
    else
      gst_buffer_unref(buf);
  }
}

void
eu_push_signal(GstHarness *h, const TestSignal *signal, gsize first, gsize count, gsize chunk,
               GstClockTime start, GPtrArray *out)
{
  for (gsize done = 0; done < count;) {
    const gsize n = MIN(chunk, count - done);
    GstFlowReturn flow = gst_harness_push(h, eu_signal_buffer(signal, first + done, n, start));
    fail_unless_equals_int_hex(flow, GST_FLOW_OK);
    if (flow != GST_FLOW_OK)
      return;
    if (out)
      eu_pull_all(h, out);
    done += n;
  }
}

void
eu_push_eos(GstHarness *h, GPtrArray *out)
{
  fail_unless(gst_harness_push_event(h, gst_event_new_eos()), "EOS was refused");
  if (out)
    eu_pull_all(h, out);
}

void
eu_push_bytes(GstHarness *h, const guint8 *data, gsize size, TestRng *rng, gsize max_piece,
              GPtrArray *out)
{
  for (gsize at = 0; at < size;) {
    const gsize want =
        test_rng_range(rng, 1, max_piece); /* (not inside MIN: it would draw twice) */
    const gsize n = MIN(want, size - at);
    GstFlowReturn flow = gst_harness_push(h, gst_buffer_new_memdup(data + at, n));
    fail_unless_equals_int_hex(flow, GST_FLOW_OK);
    if (flow != GST_FLOW_OK)
      return;
    if (out)
      eu_pull_all(h, out);
    at += n;
  }
}

/* Errors of a whole pipeline ---------------------------------------------------------------- */

static void
count_message(GstMessage *msg, const char *name, EuErrors *out)
{
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS)
    out->eos = TRUE;
  if (GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ERROR)
    return;
  if (strcmp(GST_MESSAGE_SRC_NAME(msg), name) != 0) {
    out->others++;
    return;
  }
  GError *err = NULL;
  gchar *debug = NULL;
  gst_message_parse_error(msg, &err, &debug);
  g_ptr_array_add(out->errors,
                  g_strdup_printf("%s | %s", err ? err->message : "", debug ? debug : ""));
  g_clear_error(&err);
  g_free(debug);
}

void
eu_collect_errors(const char *description, const char *name, guint seconds, EuErrors *out)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline != NULL && error == NULL, "\"%s\" does not parse or link: %s", description,
              error ? error->message : "?");
  eu_collect_pipeline_errors(pipeline, name, seconds, out);
}

void
eu_collect_pipeline_errors(GstElement *pipeline, const char *name, guint seconds, EuErrors *out)
{
  memset(out, 0, sizeof *out);
  out->errors = g_ptr_array_new_with_free_func(g_free);
  GstBus *bus = gst_element_get_bus(pipeline);
  out->start_failed =
      gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE;
  const gint64 deadline = g_get_monotonic_time() + seconds * G_TIME_SPAN_SECOND;
  gboolean errored = FALSE;
  while (!out->eos && g_get_monotonic_time() < deadline) {
    GstMessage *msg = gst_bus_timed_pop_filtered(bus, errored ? GST_SECOND : 100 * GST_MSECOND,
                                                 GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (!msg && errored)
      break;
    if (!msg)
      continue;
    errored |= GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR;
    count_message(msg, name, out);
    gst_message_unref(msg);
  }
  fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) != GST_STATE_CHANGE_FAILURE,
              "%s does not go back to NULL", GST_OBJECT_NAME(pipeline));
  /* NULL has stopped every streaming thread: an ERROR one of them posted on its way out is here */
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_EOS)) != NULL) {
    count_message(msg, name, out);
    gst_message_unref(msg);
  }
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}

void
eu_errors_clear(EuErrors *errors)
{
  if (errors->errors)
    g_ptr_array_unref(errors->errors);
  errors->errors = NULL;
}

void
eu_check_errors_one(const EuErrors *got, const char *what, const char *const *words)
{
  fail_unless(got->errors->len == 1, "%s: %u ERRORs from the element, expected one", what,
              got->errors->len);
  fail_unless(got->others == 0,
              "%s: %u ERRORs from other elements besides the element's own (one failure is one "
              "ERROR)",
              what, got->others);
  const char *text = g_ptr_array_index(got->errors, 0);
  for (const char *const *w = words; w && *w; w++)
    fail_unless(strstr(text, *w) != NULL, "%s: the error does not say \"%s\": %s", what, *w, text);
}

void
eu_check_one_error(const char *description, guint runs, const char *const *words)
{
  for (guint r = 0; r < runs; r++) {
    gchar *what = g_strdup_printf("%s (run %u of %u)", description, r + 1, runs);
    EuErrors got;
    eu_collect_errors(description, "e", 20, &got);
    eu_check_errors_one(&got, what, words);
    eu_errors_clear(&got);
    g_free(what);
  }
}

/* Three runs: the same failure gives one ERROR each time. */
#define EU_ERROR_RUNS 3

void
eu_check_one_error_at_start(const char *name, const char *upstream)
{
  /* a device id no machine has: the start's probe refuses it on every machine */
  gchar *line = g_strdup_printf("audiotestsrc num-buffers=20 ! audio/x-raw,format=F32LE,channels=2 "
                                "! %s %s name=e backend=cuda cuda-device-id=4096 ! fakesink",
                                upstream, name);
  static const char *const words[] = {"backend=cpu", NULL};
  for (guint r = 0; r < EU_ERROR_RUNS; r++) {
    gchar *what = g_strdup_printf("%s (run %u of %d)", line, r + 1, EU_ERROR_RUNS);
    EuErrors got;
    eu_collect_errors(line, "e", 20, &got);
    fail_unless(got.start_failed, "%s: going to PLAYING did not fail", what);
    eu_check_errors_one(&got, what, words);
    eu_errors_clear(&got);
    g_free(what);
  }
  g_free(line);
}

void
eu_check_channel_limit(const char *name, const char *upstream)
{
  gchar *line = g_strdup_printf("audiotestsrc num-buffers=5 samplesperbuffer=256 ! "
                                "audio/x-raw,format=F32LE,channels=1025 ! %s %s name=e "
                                "backend=%s ! fakesink",
                                upstream, name, eu_backend);
  static const char *const words[] = {"1024", "1025", NULL};
  for (guint r = 0; r < EU_ERROR_RUNS; r++) {
    gchar *what = g_strdup_printf("%s (run %u of %d)", line, r + 1, EU_ERROR_RUNS);
    EuErrors got;
    eu_collect_errors(line, "e", 20, &got);
    eu_check_errors_one(&got, what, words);
    fail_unless(!got.eos, "%s: EOS came through 1025 channels", what);
    eu_errors_clear(&got);
    g_free(what);
  }
  g_free(line);
}

void
eu_check_time_segment(const char *name)
{
  /* filesrc's segment is in bytes; the caps make its bytes audio */
  gchar *line = g_strdup_printf("filesrc location=/dev/zero num-buffers=10 blocksize=4096 ! "
                                "audio/x-raw,format=F32LE,rate=48000,channels=1,"
                                "layout=interleaved ! %s name=e backend=%s ! fakesink",
                                name, eu_backend);
  static const char *const words[] = {"TIME", NULL};
  eu_check_one_error(line, EU_ERROR_RUNS, words);
  g_free(line);
}

/* The cudafft contract ---------------------------------------------------------------------- */

const char *
eu_window_nick(CudafftWindow window)
{
  static const char *const nicks[CUDAFFT_WINDOW_COUNT_] = {"rectangular", "hann", "hamming",
                                                           "blackman", "blackman-harris"};
  return (unsigned)window < CUDAFFT_WINDOW_COUNT_ ? nicks[window] : "(bad window)";
}

const char *
eu_representation_nick(CudafftRepresentation representation)
{
  static const char *const nicks[CUDAFFT_REPRESENTATION_COUNT_] = {"complex", "magnitude", "power",
                                                                   "db"};
  return (unsigned)representation < CUDAFFT_REPRESENTATION_COUNT_ ? nicks[representation]
                                                                  : "(bad representation)";
}

guint
eu_bins(guint fft_size)
{
  return fft_size / 2 + 1;
}

gsize
eu_frame_floats(const EuFft *fft, guint channels)
{
  return (gsize)channels * eu_bins(fft->fft_size) *
         (fft->representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1);
}

guint
eu_lead(const EuFft *fft)
{
  return fft->fft_size - fft->hop;
}

gsize
eu_frames_drained(const EuFft *fft, gsize samples)
{
  return samples == 0 ? 0 : (samples - 1 + eu_lead(fft)) / fft->hop + 1;
}

gsize
eu_frames_complete(const EuFft *fft, gsize samples)
{
  return samples / fft->hop;
}

gsize
eu_tail_zeros(const EuFft *fft, gsize samples)
{
  const gsize frames = eu_frames_drained(fft, samples);
  return frames == 0 ? 0 : (frames - 1) * fft->hop + fft->fft_size - eu_lead(fft) - samples;
}

double *
eu_reference_frames(const EuFft *fft, const double *values, guint channels, gsize samples,
                    gsize frames)
{
  double *ref = g_malloc((frames * channels * eu_bins(fft->fft_size) * 2 + 1) * sizeof(double));
  stft_reference_frames(fft->fft_size, fft->hop, fft->window, values, channels, samples,
                        eu_lead(fft), frames, ref);
  return ref;
}

gboolean
eu_compare_frames(const EuFft *fft, guint channels, const float *got, const double *ref,
                  gsize frames, double *error, GString *why)
{
  const gsize values = frames * channels * eu_bins(fft->fft_size);
  double err2 = 0.0, ref2 = 0.0, worst_db = 0.0, max_power = 0.0;
  gsize nonfinite = 0, first_nonfinite = 0, worst_at = 0;
  for (gsize v = 0; v < values; v++) {
    const double p = ref[2 * v] * ref[2 * v] + ref[2 * v + 1] * ref[2 * v + 1];
    max_power = MAX(max_power, p);
  }
  for (gsize v = 0; v < values; v++) {
    const double re = ref[2 * v], im = ref[2 * v + 1];
    const double power = re * re + im * im;
    switch (fft->representation) {
    case CUDAFFT_REPRESENTATION_COMPLEX: {
      const double gr = got[2 * v], gi = got[2 * v + 1];
      if (!isfinite(gr) || !isfinite(gi)) {
        if (nonfinite++ == 0)
          first_nonfinite = v;
      }
      err2 += (gr - re) * (gr - re) + (gi - im) * (gi - im);
      ref2 += power;
      break;
    }
    case CUDAFFT_REPRESENTATION_MAGNITUDE:
    case CUDAFFT_REPRESENTATION_POWER: {
      const double r =
          fft->representation == CUDAFFT_REPRESENTATION_MAGNITUDE ? sqrt(power) : power;
      const double g = got[v];
      if (!isfinite(g)) {
        if (nonfinite++ == 0)
          first_nonfinite = v;
      }
      err2 += (g - r) * (g - r);
      ref2 += r * r;
      break;
    }
    default: {
      const double g = got[v];
      if (!isfinite(g)) {
        if (nonfinite++ == 0)
          first_nonfinite = v;
        break;
      }
      if (power > EU_DB_FLOOR * max_power) {
        const double r = 10.0 * log10(MAX(power, 1e-20));
        if (fabs(g - r) > worst_db) {
          worst_db = fabs(g - r);
          worst_at = v;
        }
      } else if (g < -200.0 - 1e-3 || g > 10.0 * log10(MAX(max_power, 1e-20) * 1e-6)) {
        /* Below the floor only the range is checked: float rounding alone puts such bins
         * anywhere from -200 dB to well under the bins that are compared. */
        if (worst_db < INFINITY) {
          g_string_append_printf(why,
                                 "db value %zu = %g dB is out of range for a bin at %g dB (max "
                                 "%g dB); ",
                                 v, g, 10.0 * log10(MAX(power, 1e-20)), 10.0 * log10(max_power));
          worst_db = INFINITY;
          worst_at = v;
        }
      }
      break;
    }
    }
  }
  const gsize bins = eu_bins(fft->fft_size);
  if (nonfinite) {
    g_string_append_printf(why, "%zu non-finite values, first at frame %zu channel %zu bin %zu",
                           nonfinite, first_nonfinite / (channels * bins),
                           first_nonfinite / bins % channels, first_nonfinite % bins);
    if (error)
      *error = INFINITY;
    return FALSE;
  }
  if (fft->representation == CUDAFFT_REPRESENTATION_DB) {
    if (error)
      *error = worst_db;
    if (worst_db > EU_DB_TOLERANCE) {
      const double r = 10.0 * log10(MAX(ref[2 * worst_at] * ref[2 * worst_at] +
                                            ref[2 * worst_at + 1] * ref[2 * worst_at + 1],
                                        1e-20));
      g_string_append_printf(why,
                             "db off by %.3g dB (tolerance %g) at frame %zu channel %zu bin %zu: "
                             "got %.6g, expected %.6g",
                             worst_db, EU_DB_TOLERANCE, worst_at / (channels * bins),
                             worst_at / bins % channels, worst_at % bins, got[worst_at], r);
      return FALSE;
    }
    return TRUE;
  }
  /* float32 rounds at 6e-8; the windowing, the FFT's log2(n) stages and (for integer input) the
   * conversion add up to well under 1e-6 on random input: 3e-6 is the contract's bound. Power is
   * the square of the magnitude, so its relative error is twice as large. */
  const double tolerance = fft->representation == CUDAFFT_REPRESENTATION_POWER
                               ? 2 * EU_FRAME_TOLERANCE
                               : EU_FRAME_TOLERANCE;
  const double rel = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  if (error)
    *error = rel;
  if (!(rel <= tolerance)) {
    /* name the worst frame, to tell a framing error (whole frames off) from arithmetic */
    gsize worst_frame = 0;
    double worst = -1.0;
    const gsize per_frame = channels * bins;
    for (gsize f = 0; f < frames; f++) {
      double e = 0.0;
      for (gsize v = f * per_frame; v < (f + 1) * per_frame; v++) {
        const double re = ref[2 * v], im = ref[2 * v + 1];
        double d;
        if (fft->representation == CUDAFFT_REPRESENTATION_COMPLEX)
          d = (got[2 * v] - re) * (got[2 * v] - re) + (got[2 * v + 1] - im) * (got[2 * v + 1] - im);
        else {
          const double p = re * re + im * im;
          const double r = fft->representation == CUDAFFT_REPRESENTATION_MAGNITUDE ? sqrt(p) : p;
          d = (got[v] - r) * (got[v] - r);
        }
        e += d;
      }
      if (e > worst) {
        worst = e;
        worst_frame = f;
      }
    }
    const gsize v0 = worst_frame * per_frame;
    g_string_append_printf(why,
                           "relative L2 error %.3g > %g over %zu frames; worst frame %zu, "
                           "bins 0..2 of channel 0:",
                           rel, tolerance, frames, worst_frame);
    for (gsize v = v0; v < v0 + 3; v++) {
      if (fft->representation == CUDAFFT_REPRESENTATION_COMPLEX)
        g_string_append_printf(why, " got %g%+gi", got[2 * v], got[2 * v + 1]);
      else
        g_string_append_printf(why, " got %g", got[v]);
      g_string_append_printf(why, " (spectrum %g%+gi)", ref[2 * v], ref[2 * v + 1]);
    }
    return FALSE;
  }
  return TRUE;
}

static GstAudioClippingMeta *
clipping_meta(GstBuffer *buf)
{
  return gst_buffer_get_audio_clipping_meta(buf);
}

gboolean
eu_check_fft_runs(GPtrArray *bufs, guint *index, const EuFft *fft, guint channels, guint rate,
                  const EuRun *runs, guint n_runs, GString *why)
{
  const gsize frame_bytes = eu_frame_floats(fft, channels) * sizeof(float);
  for (guint r = 0; r < n_runs; r++) {
    const EuRun *run = &runs[r];
    const gsize frames =
        run->drained ? eu_frames_drained(fft, run->samples) : eu_frames_complete(fft, run->samples);
    double *ref = eu_reference_frames(fft, run->values, channels, run->samples, frames);
    gsize next = 0;
    gboolean ok = TRUE;
    while (ok && next < frames) {
      if (*index >= bufs->len) {
        g_string_append_printf(why, "run %u: only %zu of its %zu frames came out", r, next, frames);
        ok = FALSE;
        break;
      }
      GstBuffer *buf = g_ptr_array_index(bufs, *index);
      const gsize size = gst_buffer_get_size(buf);
      const gboolean first = next == 0;
      gchar *where =
          g_strdup_printf("run %u, output buffer %u (frame %zu of %zu)", r, *index, next, frames);
      if (size == 0 || size % frame_bytes != 0) {
        g_string_append_printf(why, "%s: %zu bytes is not a whole number of %zu-byte frames", where,
                               size, frame_bytes);
        ok = FALSE;
      }
      const gsize count = size / frame_bytes;
      if (ok && next + count > frames) {
        g_string_append_printf(why, "%s: %zu frames, more than the %zu expected", where,
                               next + count, frames);
        ok = FALSE;
      }
      const gboolean last = next + count == frames;
      if (ok && (GST_BUFFER_OFFSET(buf) != next || GST_BUFFER_OFFSET_END(buf) != next + count)) {
        g_string_append_printf(
            why,
            "%s: OFFSET %" G_GUINT64_FORMAT " OFFSET_END %" G_GUINT64_FORMAT ", expected %zu %zu",
            where, GST_BUFFER_OFFSET(buf), GST_BUFFER_OFFSET_END(buf), next, next + count);
        ok = FALSE;
      }
      const GstClockTime pts = eu_sample_time(run->start, (guint64)next * fft->hop, rate);
      /* a buffer lasts the input samples its frames complete, clipped to a drained run's input:
       * the frames only the appended zeros complete last 0 */
      guint64 end_sample = (guint64)(next + count) * fft->hop;
      if (run->drained)
        end_sample = MIN(end_sample, MAX((guint64)run->samples, (guint64)next * fft->hop));
      const GstClockTime end = eu_sample_time(run->start, end_sample, rate);
      if (ok && (GST_BUFFER_PTS(buf) != pts || GST_BUFFER_DURATION(buf) != end - pts)) {
        g_string_append_printf(why,
                               "%s: PTS %" GST_TIME_FORMAT " duration %" GST_TIME_FORMAT
                               ", expected %" GST_TIME_FORMAT " %" GST_TIME_FORMAT,
                               where, GST_TIME_ARGS(GST_BUFFER_PTS(buf)),
                               GST_TIME_ARGS(GST_BUFFER_DURATION(buf)), GST_TIME_ARGS(pts),
                               GST_TIME_ARGS(end - pts));
        ok = FALSE;
      }
      if (ok && (GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT) != first)) {
        g_string_append_printf(why, "%s: DISCONT is %s", where, first ? "not set" : "set");
        ok = FALSE;
      }
      if (ok) {
        GstAudioClippingMeta *meta = clipping_meta(buf);
        const guint64 want_start = first ? eu_lead(fft) : 0;
        const guint64 want_end = last && run->drained ? eu_tail_zeros(fft, run->samples) : 0;
        if (!meta) {
          if (want_start || want_end) {
            g_string_append_printf(why,
                                   "%s: no GstAudioClippingMeta (expected start %" G_GUINT64_FORMAT
                                   " end %" G_GUINT64_FORMAT ")",
                                   where, want_start, want_end);
            ok = FALSE;
          }
        } else if (meta->format != GST_FORMAT_DEFAULT || meta->start != want_start ||
                   meta->end != want_end) {
          g_string_append_printf(
              why,
              "%s: clipping meta %s start %" G_GUINT64_FORMAT " end %" G_GUINT64_FORMAT
              ", expected default start %" G_GUINT64_FORMAT " end %" G_GUINT64_FORMAT,
              where, gst_format_get_name(meta->format), meta->start, meta->end, want_start,
              want_end);
          ok = FALSE;
        }
      }
      if (ok) {
        GstMapInfo map;
        fail_unless(gst_buffer_map(buf, &map, GST_MAP_READ));
        GString *detail = g_string_new(NULL);
        if (!eu_compare_frames(fft, channels, (const float *)map.data,
                               ref + next * channels * eu_bins(fft->fft_size) * 2, count, NULL,
                               detail)) {
          g_string_append_printf(why, "%s: values: %s", where, detail->str);
          ok = FALSE;
        }
        g_string_free(detail, TRUE);
        gst_buffer_unmap(buf, &map);
      }
      g_free(where);
      next += count;
      (*index)++;
    }
    g_free(ref);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

gboolean
eu_check_roundtrip(GPtrArray *bufs, const TestSignal *input, GstClockTime start, double *error,
                   GString *why)
{
  const gsize first = 0;
  return eu_check_roundtrip_runs(bufs, input, &first, &start, 1, error, why);
}

gboolean
eu_check_roundtrip_runs(GPtrArray *bufs, const TestSignal *input, const gsize *first,
                        const GstClockTime *start, guint n_runs, double *error, GString *why)
{
  const guint channels = input->channels;
  const gsize total = input->frames;
  gsize s = 0;
  double err2 = 0.0, ref2 = 0.0;
  gsize nonfinite = 0;
  for (guint b = 0; b < bufs->len; b++) {
    GstBuffer *buf = g_ptr_array_index(bufs, b);
    const gsize size = gst_buffer_get_size(buf);
    if (size % (channels * sizeof(float)) != 0) {
      g_string_append_printf(why,
                             "output buffer %u: %zu bytes is not whole F32 frames of %u "
                             "channels",
                             b, size, channels);
      return FALSE;
    }
    const gsize count = size / (channels * sizeof(float));
    if (count == 0)
      continue;
    guint r = 0;
    while (r + 1 < n_runs && first[r + 1] <= s)
      r++;
    if (r + 1 < n_runs && s + count > first[r + 1]) {
      g_string_append_printf(why,
                             "output buffer %u (samples %zu..%zu) straddles the start of run "
                             "%u at sample %zu",
                             b, s, s + count, r + 1, first[r + 1]);
      return FALSE;
    }
    const GstClockTime pts = eu_sample_time(start[r], s - first[r], input->rate);
    const GstClockTime end = eu_sample_time(start[r], s + count - first[r], input->rate);
    if (GST_BUFFER_PTS(buf) != pts || GST_BUFFER_DURATION(buf) != end - pts) {
      g_string_append_printf(
          why,
          "output buffer %u (samples %zu..%zu): PTS %" GST_TIME_FORMAT " duration %" GST_TIME_FORMAT
          ", expected %" GST_TIME_FORMAT " %" GST_TIME_FORMAT,
          b, s, s + count, GST_TIME_ARGS(GST_BUFFER_PTS(buf)),
          GST_TIME_ARGS(GST_BUFFER_DURATION(buf)), GST_TIME_ARGS(pts), GST_TIME_ARGS(end - pts));
      return FALSE;
    }
    if (s + count > total) {
      g_string_append_printf(why,
                             "output has more than the %zu input samples (buffer %u ends at "
                             "%zu)",
                             total, b, s + count);
      return FALSE;
    }
    GstMapInfo map;
    fail_unless(gst_buffer_map(buf, &map, GST_MAP_READ));
    const float *got = (const float *)map.data;
    for (gsize i = 0; i < count * channels; i++) {
      const double want = input->values[s * channels + i];
      if (!isfinite(got[i]))
        nonfinite++;
      err2 += (got[i] - want) * (got[i] - want);
      ref2 += want * want;
    }
    gst_buffer_unmap(buf, &map);
    s += count;
  }
  if (s != total) {
    g_string_append_printf(why, "%zu samples came out of %zu put in", s, total);
    return FALSE;
  }
  const double rel = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  if (error)
    *error = rel;
  if (nonfinite) {
    g_string_append_printf(why, "%zu non-finite output samples", nonfinite);
    return FALSE;
  }
  /* The analysis and the synthesis each round to float (6e-8) through a window, two FFTs and the
   * overlap-add normalisation (which the hop/window pairs the element accepts keep within 100x):
   * 1e-5 is the contract's bound. */
  if (!(rel <= EU_ROUNDTRIP_TOLERANCE)) {
    /* where is it wrong: first sample off by more than 1e-3 */
    gsize bad = 0;
    gboolean found = FALSE;
    gsize off = 0;
    for (guint b = 0; b < bufs->len && !found; b++) {
      GstBuffer *buf = g_ptr_array_index(bufs, b);
      GstMapInfo map;
      gst_buffer_map(buf, &map, GST_MAP_READ);
      const float *got = (const float *)map.data;
      const gsize count = map.size / sizeof(float);
      for (gsize i = 0; i < count; i++)
        if (fabs(got[i] - input->values[off + i]) > 1e-3) {
          bad = off + i;
          found = TRUE;
          break;
        }
      off += count;
      gst_buffer_unmap(buf, &map);
    }
    g_string_append_printf(why, "relative L2 error %.3g > %g", rel, EU_ROUNDTRIP_TOLERANCE);
    if (found)
      g_string_append_printf(why, "; first sample off by > 1e-3: sample %zu channel %zu",
                             bad / channels, bad % channels);
    return FALSE;
  }
  return TRUE;
}

static void
check_template(GstElementFactory *factory, const char *name, GstPadDirection direction,
               const char *media)
{
  const GList *l = gst_element_factory_get_static_pad_templates(factory);
  GstStaticPadTemplate *found = NULL;
  for (; l; l = l->next) {
    GstStaticPadTemplate *t = l->data;
    if (strcmp(t->name_template, name) == 0)
      found = t;
  }
  fail_unless(found != NULL, "%s has no \"%s\" pad template", GST_OBJECT_NAME(factory), name);
  fail_unless_equals_int(found->direction, direction);
  fail_unless_equals_int(found->presence, GST_PAD_ALWAYS);
  GstCaps *caps = gst_static_caps_get(&found->static_caps);
  gboolean has = FALSE;
  for (guint i = 0; i < gst_caps_get_size(caps); i++)
    has |= gst_structure_has_name(gst_caps_get_structure(caps, i), media);
  gchar *text = gst_caps_to_string(caps);
  fail_unless(has, "%s's \"%s\" template caps %s do not include %s", GST_OBJECT_NAME(factory), name,
              text, media);
  g_free(text);
  gst_caps_unref(caps);
}

/* The cudamelspectrogram contract ------------------------------------------------------------- */

guint8 *
eu_features_run(const CudafftFeaturesConfig *c, const void *raw, gsize frames, gsize *outputs,
                gsize *bytes, GString *why)
{
  CudafftFeatures *f = NULL;
  const CudafftBackend backend =
      strcmp(eu_backend, "cuda") == 0 ? CUDAFFT_BACKEND_CUDA : CUDAFFT_BACKEND_CPU;
  CudafftStatus status = cudafft_features_create(&f, backend, -1, c);
  if (status != CUDAFFT_STATUS_OK) {
    g_string_append_printf(why, "the engine: %s", cudafft_last_error_message());
    return NULL;
  }
  *bytes = cudafft_features_output_bytes(f);
  const gsize pushed = cudafft_features_outputs_for(f, frames);
  guint8 *out = g_malloc((pushed + 1) * *bytes);
  size_t n = 0, more = 0;
  status = cudafft_features_push(f, raw, frames, out, &n);
  if (status == CUDAFFT_STATUS_OK) {
    out = g_realloc(out, (n + cudafft_features_finish_outputs(f) + 1) * *bytes);
    status = cudafft_features_finish(f, out + n * *bytes, &more);
  }
  if (status != CUDAFFT_STATUS_OK) {
    g_string_append_printf(why, "the engine's run: %s", cudafft_last_error_message());
    g_free(out);
    out = NULL;
  }
  *outputs = n + more;
  cudafft_features_destroy(f);
  return out;
}

gboolean
eu_check_features(GPtrArray *bufs, guint *index, const CudafftFeaturesConfig *c, const guint8 *want,
                  gsize outputs, gsize bytes, GstClockTime start, GString *why)
{
  const guint64 step = c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES ? c->hop
                       : c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS
                           ? (guint64)c->hop * c->window_stride
                           : c->chunk_samples;
  const guint rate = (guint)c->sample_rate;
  if (*index + outputs > bufs->len) {
    g_string_append_printf(why, "%u buffers from %u, the engine made %zu tensors", bufs->len,
                           *index, outputs);
    return FALSE;
  }
  for (gsize k = 0; k < outputs; k++) {
    GstBuffer *buf = g_ptr_array_index(bufs, *index + k);
    const GstClockTime pts = eu_sample_time(start, k * step, rate);
    const GstClockTime end = eu_sample_time(start, (k + 1) * step, rate);
    if (gst_buffer_get_size(buf) != bytes ||
        gst_buffer_memcmp(buf, 0, want + k * bytes, bytes) != 0) {
      g_string_append_printf(why, "tensor %zu: %zu bytes, not the engine's %zu", k,
                             gst_buffer_get_size(buf), bytes);
      return FALSE;
    }
    if (GST_BUFFER_PTS(buf) != pts || GST_BUFFER_DURATION(buf) != end - pts ||
        GST_BUFFER_OFFSET(buf) != k || GST_BUFFER_OFFSET_END(buf) != k + 1 ||
        GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT) != (k == 0)) {
      g_string_append_printf(why,
                             "tensor %zu: PTS %" GST_TIME_FORMAT " duration %" GST_TIME_FORMAT
                             " offsets %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
                             "; expected %" GST_TIME_FORMAT ", %" GST_TIME_FORMAT ", %zu..%zu",
                             k, GST_TIME_ARGS(GST_BUFFER_PTS(buf)),
                             GST_TIME_ARGS(GST_BUFFER_DURATION(buf)), GST_BUFFER_OFFSET(buf),
                             GST_BUFFER_OFFSET_END(buf), GST_TIME_ARGS(pts),
                             GST_TIME_ARGS(end - pts), k, k + 1);
      return FALSE;
    }
  }
  *index += (guint)outputs;
  return TRUE;
}

void
eu_check_element_metadata(const char *factory_name, const char *sink_media, const char *src_media)
{
  GstElementFactory *factory = gst_element_factory_find(factory_name);
  fail_unless(factory != NULL, "no element factory %s (GST_PLUGIN_PATH=%s)", factory_name,
              g_getenv("GST_PLUGIN_PATH"));
  static const char *const keys[] = {GST_ELEMENT_METADATA_LONGNAME, GST_ELEMENT_METADATA_KLASS,
                                     GST_ELEMENT_METADATA_DESCRIPTION, GST_ELEMENT_METADATA_AUTHOR};
  for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
    const gchar *value = gst_element_factory_get_metadata(factory, keys[i]);
    fail_unless(value != NULL && *value != '\0', "%s: metadata %s is empty", factory_name, keys[i]);
  }
  const gchar *klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
  fail_unless(strstr(klass, "Audio") != NULL, "%s: klass \"%s\" does not say Audio", factory_name,
              klass);
  check_template(factory, "sink", GST_PAD_SINK, sink_media);
  check_template(factory, "src", GST_PAD_SRC, src_media);

  GstElement *element = gst_element_factory_create(factory, NULL);
  fail_unless(element != NULL, "cannot create %s", factory_name);
  guint n = 0;
  GParamSpec **specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(element), &n);
  for (guint i = 0; i < n; i++) {
    const gchar *blurb = g_param_spec_get_blurb(specs[i]);
    fail_unless(blurb != NULL && *blurb != '\0', "%s: property %s has no blurb", factory_name,
                specs[i]->name);
    fail_unless(g_param_spec_get_nick(specs[i]) != NULL, "%s: property %s has no nick",
                factory_name, specs[i]->name);
  }
  g_free(specs);
  fail_unless(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "backend") != NULL);
  fail_unless(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "cuda-device-id") != NULL);
  gst_object_unref(element);
  gst_object_unref(factory);
}
