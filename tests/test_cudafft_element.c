/* test_cudafft_element.c: the cudafft element against its contract, through GstHarness, on the
 * backend named by argv[1] (cpu|cuda): metadata and properties, caps, frame values against FFTW in
 * double precision, framing, timestamps, offsets, flags and clipping meta, EOS, flushes,
 * discontinuities, bad segments and settings, NaN isolation, latency. One behaviour per test;
 * tables of formats, channels, windows, representations, sizes and buffer sizes.
 *
 * Length: past the ~800 lines a file usually keeps, as one test program (meson runs each as one
 * test of its suite) whose cases share one harness and one independent reference model; split,
 * each part would be a program of its own rebuilding the same setup. */
#include "element_util.h"
#include "stft_reference.h"

#include <math.h>
#include <string.h>

#define RATE 48000

static GstHarness *
fft_harness(const EuFft *fft, guint hop_property)
{
  return eu_harness_new("cudafft name=fft backend=%s fft-size=%u hop=%u window=%s "
                        "representation=%s",
                        eu_backend, fft->fft_size, hop_property, eu_window_nick(fft->window),
                        eu_representation_nick(fft->representation));
}

static const char *
enum_nick(GObject *object, const char *property)
{
  GValue value = G_VALUE_INIT;
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), property);
  fail_unless(spec != NULL, "no property %s", property);
  fail_unless(G_IS_PARAM_SPEC_ENUM(spec), "property %s is not an enum", property);
  g_value_init(&value, spec->value_type);
  g_object_get_property(object, property, &value);
  GEnumClass *klass = g_type_class_ref(spec->value_type);
  GEnumValue *v = g_enum_get_value(klass, g_value_get_enum(&value));
  const char *nick = v ? v->value_nick : "(none)";
  g_type_class_unref(klass);
  g_value_unset(&value);
  return nick;
}

/* Pushes a whole signal in chunks, EOS, and checks the output as one drained run. */
static void
check_one_run(const EuFft *fft, guint hop_property, const TestSignal *signal, gsize chunk,
              GstClockTime start, const char *row)
{
  GstHarness *h = fft_harness(fft, hop_property);
  eu_harness_signal_caps(h, signal);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, signal, 0, signal->frames, chunk, start, out);
  eu_push_eos(h, out);
  GString *why = g_string_new(NULL);
  guint index = 0;
  const EuRun run = {signal->values, signal->frames, GST_CLOCK_TIME_IS_VALID(start) ? start : 0,
                     TRUE};
  gboolean ok = eu_check_fft_runs(out, &index, fft, signal->channels, signal->rate, &run, 1, why);
  fail_unless(ok, "%s: %s", row, why->str);
  fail_unless(index == out->len, "%s: %u output buffers after the last frame", row,
              out->len - index);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
}

/* Metadata and properties ------------------------------------------------------------------ */

GST_START_TEST(test_metadata)
{
  eu_check_element_metadata("cudafft", "audio/x-raw", "audio/x-fft");
}
GST_END_TEST;

GST_START_TEST(test_property_defaults)
{
  GstElement *e = gst_element_factory_make("cudafft", NULL);
  fail_unless(e != NULL, "cannot make cudafft (GST_PLUGIN_PATH=%s)", g_getenv("GST_PLUGIN_PATH"));
  guint fft_size = 0, hop = 99;
  gint device = 0;
  g_object_get(e, "fft-size", &fft_size, "hop", &hop, "cuda-device-id", &device, NULL);
  fail_unless_equals_int(fft_size, 4096);
  fail_unless_equals_int(hop, 0);
  fail_unless_equals_int(device, -1);
  fail_unless_equals_string(enum_nick(G_OBJECT(e), "window"), "hann");
  fail_unless_equals_string(enum_nick(G_OBJECT(e), "representation"), "complex");
  fail_unless_equals_string(enum_nick(G_OBJECT(e), "backend"), "auto");

  /* The enums' nicks are the contract's names, all of them and no others. */
  static const struct {
    const char *property;
    const char *nicks[6];
  } enums[] = {
      {"window", {"rectangular", "hann", "hamming", "blackman", "blackman-harris", NULL}},
      {"representation", {"complex", "magnitude", "power", "db", NULL}},
      {"backend", {"auto", "cuda", "cpu", NULL}},
  };
  for (guint i = 0; i < G_N_ELEMENTS(enums); i++) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), enums[i].property);
    fail_unless(spec != NULL && G_IS_PARAM_SPEC_ENUM(spec));
    GEnumClass *klass = G_PARAM_SPEC_ENUM(spec)->enum_class;
    guint n = 0;
    for (; enums[i].nicks[n]; n++) {
      fail_unless(g_enum_get_value_by_nick(klass, enums[i].nicks[n]) != NULL, "%s has no value %s",
                  enums[i].property, enums[i].nicks[n]);
      gst_util_set_object_arg(G_OBJECT(e), enums[i].property, enums[i].nicks[n]);
      fail_unless_equals_string(enum_nick(G_OBJECT(e), enums[i].property), enums[i].nicks[n]);
    }
    fail_unless_equals_int(klass->n_values, n);
  }
  /* fft-size: an integer from 16 to 16384 (the sizes without a prime factor above 7 taken) */
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "fft-size");
  fail_unless(G_IS_PARAM_SPEC_UINT(spec));
  fail_unless_equals_int(G_PARAM_SPEC_UINT(spec)->minimum, 16);
  fail_unless_equals_int(G_PARAM_SPEC_UINT(spec)->maximum, 16384);
  fail_unless_equals_int(G_PARAM_SPEC_UINT(spec)->default_value, 4096);
  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "hop");
  fail_unless(G_IS_PARAM_SPEC_UINT(spec));
  fail_unless_equals_int(G_PARAM_SPEC_UINT(spec)->minimum, 0);
  fail_unless_equals_int(G_PARAM_SPEC_UINT(spec)->maximum, 16384);
  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "cuda-device-id");
  fail_unless(G_IS_PARAM_SPEC_INT(spec));
  gst_object_unref(e);
}
GST_END_TEST;

static guint
fft_size_of(GstElement *e)
{
  guint fft_size = 0;
  g_object_get(e, "fft-size", &fft_size, NULL);
  return fft_size;
}

/* Every supported size parses by its number from a launch line (gst-launch-1.0 cudafft
 * fft-size=1000) and sets by g_object_set() with an int, and reads back; the old pipelines'
 * powers of two are unchanged. */
GST_START_TEST(test_fft_size_integer)
{
  static const guint good[] = {16,   18,   25,   256,  400,   480,   1000,
                               1536, 3000, 4096, 8192, 15625, 16200, 16384};
  for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
    gchar *line = g_strdup_printf("cudafft fft-size=%u", good[i]);
    GError *error = NULL;
    GstElement *e = gst_parse_launch(line, &error);
    fail_unless(e != NULL && error == NULL, "\"%s\": %s", line, error ? error->message : "?");
    fail_unless_equals_int(fft_size_of(e), good[i]);
    g_object_set(e, "fft-size", (gint)good[(i + 1) % G_N_ELEMENTS(good)], NULL);
    fail_unless_equals_int(fft_size_of(e), good[(i + 1) % G_N_ELEMENTS(good)]);
    gst_object_unref(e);
    g_free(line);
  }
}
GST_END_TEST;

/* A size with a prime factor above 7 is refused, naming the nearest sizes, and the size in effect
 * stays: outside a pipeline (a launch line's properties are set before there is a bus) in GLib's
 * log, in a pipeline by a WARNING message; sizes out of the range are GObject's to refuse. */
GST_START_TEST(test_fft_size_refused)
{
  static const struct {
    guint size, below, above;
  } bad[] = {{1001, 1000, 1008}, {4097, 4096, 4116}, {17, 16, 18}, {16383, 16200, 16384}};
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    gchar *line = g_strdup_printf("cudafft fft-size=%u", bad[i].size);
    GError *error = NULL;
    GstElement *e = NULL;
    ASSERT_WARNING(e = gst_parse_launch(line, &error));
    fail_unless(e != NULL && error == NULL, "\"%s\": %s", line, error ? error->message : "?");
    fail_unless_equals_int(fft_size_of(e), 4096);
    gst_object_unref(e);
    g_free(line);

    GstElement *pipeline = gst_pipeline_new(NULL);
    e = gst_element_factory_make("cudafft", NULL);
    gst_bin_add(GST_BIN(pipeline), e);
    GstBus *bus = gst_element_get_bus(pipeline);
    g_object_set(e, "fft-size", 1000, NULL);
    g_object_set(e, "fft-size", bad[i].size, NULL);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, GST_SECOND, GST_MESSAGE_WARNING);
    fail_unless(m != NULL, "fft-size=%u in a pipeline: no WARNING", bad[i].size);
    GError *err = NULL;
    gst_message_parse_warning(m, &err, NULL);
    gchar *nearest = g_strdup_printf("the nearest are %u and %u", bad[i].below, bad[i].above);
    fail_unless(err && strstr(err->message, nearest) && strstr(err->message, "fft-size=1000"),
                "fft-size=%u: the WARNING does not say \"%s\" and \"fft-size=1000\": %s",
                bad[i].size, nearest, err ? err->message : "");
    fail_unless_equals_int(fft_size_of(e), 1000);
    g_free(nearest);
    g_clear_error(&err);
    gst_message_unref(m);
    gst_object_unref(bus);
    gst_object_unref(pipeline);
  }
  GstElement *e = gst_element_factory_make("cudafft", NULL);
  ASSERT_WARNING(g_object_set(e, "fft-size", 8, NULL));
  ASSERT_WARNING(g_object_set(e, "fft-size", 32768, NULL));
  fail_unless_equals_int(fft_size_of(e), 4096);
  gst_object_unref(e);
}
GST_END_TEST;

/* Caps ------------------------------------------------------------------------------------- */

static const struct {
  guint fft_size, hop_property;
  CudafftRepresentation representation;
  CudafftWindow window;
  guint channels;
} caps_rows[] = {
    {256, 0, CUDAFFT_REPRESENTATION_COMPLEX, CUDAFFT_WINDOW_HANN, 1},
    {1024, 256, CUDAFFT_REPRESENTATION_MAGNITUDE, CUDAFFT_WINDOW_RECTANGULAR, 2},
    {4096, 0, CUDAFFT_REPRESENTATION_POWER, CUDAFFT_WINDOW_BLACKMAN, 3},
    {16384, 4096, CUDAFFT_REPRESENTATION_DB, CUDAFFT_WINDOW_BLACKMAN_HARRIS, 8},
    {512, 512, CUDAFFT_REPRESENTATION_COMPLEX, CUDAFFT_WINDOW_HAMMING, 2},
    {400, 160, CUDAFFT_REPRESENTATION_COMPLEX, CUDAFFT_WINDOW_HANN, 1},
    {375, 0, CUDAFFT_REPRESENTATION_DB, CUDAFFT_WINDOW_HANN, 2}, /* odd: 188 bins */
    {2048, 1000, CUDAFFT_REPRESENTATION_DB, CUDAFFT_WINDOW_HANN, 1},
};

GST_START_TEST(test_caps_and_bins)
{
  const guint i = __i__;
  const EuFft fft = {caps_rows[i].fft_size,
                     caps_rows[i].hop_property ? caps_rows[i].hop_property
                                               : caps_rows[i].fft_size / 2,
                     caps_rows[i].window, caps_rows[i].representation};
  const guint channels = caps_rows[i].channels;
  TestRng rng = test_rng("caps %u", i);
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, channels, 44100, fft.fft_size,
                     TEST_READ_POW2);
  GstHarness *h = fft_harness(&fft, caps_rows[i].hop_property);
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &signal, 0, signal.frames, signal.frames, 0, out);
  fail_unless(out->len > 0, "no frame after fft-size samples");

  GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
  fail_unless(caps != NULL && gst_caps_is_fixed(caps));
  gchar *text = gst_caps_to_string(caps);
  GstStructure *s = gst_caps_get_structure(caps, 0);
  gint v;
  fail_unless(gst_structure_has_name(s, "audio/x-fft"), "caps %s", text);
  fail_unless_equals_string(gst_structure_get_string(s, "format"), "F32LE");
  fail_unless_equals_string(gst_structure_get_string(s, "representation"),
                            eu_representation_nick(fft.representation));
  fail_unless_equals_string(gst_structure_get_string(s, "window"), eu_window_nick(fft.window));
  fail_unless(gst_structure_get_int(s, "fft-size", &v) && v == (gint)fft.fft_size, "caps %s", text);
  fail_unless(gst_structure_get_int(s, "hop", &v) && v == (gint)fft.hop, "caps %s (hop %u)", text,
              fft.hop);
  fail_unless(gst_structure_get_int(s, "bins", &v) && v == (gint)eu_bins(fft.fft_size), "caps %s",
              text);
  fail_unless(gst_structure_get_int(s, "rate", &v) && v == 44100, "caps %s", text);
  fail_unless(gst_structure_get_int(s, "channels", &v) && v == (gint)channels, "caps %s", text);
  gsize bytes = 0;
  for (guint b = 0; b < out->len; b++)
    bytes += gst_buffer_get_size(g_ptr_array_index(out, b));
  fail_unless_equals_uint64(bytes, eu_frames_complete(&fft, fft.fft_size) *
                                       eu_frame_floats(&fft, channels) * sizeof(float));
  g_free(text);
  gst_caps_unref(caps);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}
GST_END_TEST;

GST_START_TEST(test_too_many_channels_refused)
{
  const EuFft fft = {256, 128, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  GstHarness *h = fft_harness(&fft, 0);
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_S16, RATE, 1025));
  GstBuffer *buf = gst_buffer_new_allocate(NULL, 1025 * 2 * 300, NULL);
  gst_buffer_memset(buf, 0, 0, 1025 * 2 * 300);
  GST_BUFFER_PTS(buf) = 0;
  /* refused with an ERROR at the CAPS event; the push that retries the caps is answered FLUSHING,
   * which stops upstream without an ERROR of its own (one failure, one ERROR) */
  const GstFlowReturn flow = gst_harness_push(h, buf);
  fail_unless(flow == GST_FLOW_FLUSHING, "1025 channels: push returned %s",
              gst_flow_get_name(flow));
  fail_unless_equals_int(gst_harness_buffers_received(h), 0);
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "1025 channels: no ERROR");
  fail_unless(strstr(text, "1024") != NULL, "the error does not name the limit: %s", text);
  g_free(text);
  eu_harness_teardown(h, bus);
  /* and in a pipeline: it links, and the element says why it cannot run */
  eu_check_channel_limit("cudafft", "");
}
GST_END_TEST;

/* backend=cuda that cannot run: one ERROR at start, not one per caps retry. */
GST_START_TEST(test_one_error_at_start)
{
  eu_check_one_error_at_start("cudafft", "");
}
GST_END_TEST;

/* Frame values ----------------------------------------------------------------------------- */

static const struct {
  CudafftSampleFormat format;
  guint channels;
  CudafftWindow window;
  CudafftRepresentation representation;
  guint fft_size, hop; /* hop 0: the property left at 0 (fft_size / 2) */
  gsize chunk, samples;
} value_rows[] = {
    {CUDAFFT_SAMPLE_S16, 1, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX, 1024, 0, 1000,
     5003},
    {CUDAFFT_SAMPLE_S32, 2, CUDAFFT_WINDOW_HAMMING, CUDAFFT_REPRESENTATION_MAGNITUDE, 512, 128, 17,
     3001},
    {CUDAFFT_SAMPLE_F32, 3, CUDAFFT_WINDOW_BLACKMAN, CUDAFFT_REPRESENTATION_POWER, 2048, 1024, 4096,
     20000},
    {CUDAFFT_SAMPLE_F64, 8, CUDAFFT_WINDOW_BLACKMAN_HARRIS, CUDAFFT_REPRESENTATION_DB, 256, 64, 1,
     1500},
    {CUDAFFT_SAMPLE_F32, 1, CUDAFFT_WINDOW_RECTANGULAR, CUDAFFT_REPRESENTATION_COMPLEX, 16384, 8192,
     100000, 150000},
    {CUDAFFT_SAMPLE_S16, 8, CUDAFFT_WINDOW_RECTANGULAR, CUDAFFT_REPRESENTATION_MAGNITUDE, 4096,
     1000, 4096, 30000},
    {CUDAFFT_SAMPLE_F64, 2, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX, 8192, 2048, 100000,
     100000},
    {CUDAFFT_SAMPLE_S32, 3, CUDAFFT_WINDOW_BLACKMAN_HARRIS, CUDAFFT_REPRESENTATION_DB, 1024, 256,
     17, 4000},
    {CUDAFFT_SAMPLE_F32, 2, CUDAFFT_WINDOW_HAMMING, CUDAFFT_REPRESENTATION_POWER, 256, 256, 1000,
     7000},
    {CUDAFFT_SAMPLE_S16, 3, CUDAFFT_WINDOW_BLACKMAN, CUDAFFT_REPRESENTATION_DB, 4096, 3000, 1,
     9000},
    {CUDAFFT_SAMPLE_F64, 1, CUDAFFT_WINDOW_HAMMING, CUDAFFT_REPRESENTATION_MAGNITUDE, 16384, 0,
     4096, 40000},
    {CUDAFFT_SAMPLE_S32, 8, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_POWER, 2048, 512, 1000,
     12000},
    {CUDAFFT_SAMPLE_F32, 8, CUDAFFT_WINDOW_BLACKMAN_HARRIS, CUDAFFT_REPRESENTATION_COMPLEX, 512,
     384, 100000, 100000},
    /* the most channels the caps allow */
    {CUDAFFT_SAMPLE_S16, 1024, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX, 256, 0, 1000,
     1500},
    /* sizes of the mixed-radix kernels: Whisper's 400 / 160, 10 ms at 48 kHz, odd sizes */
    {CUDAFFT_SAMPLE_S16, 1, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX, 400, 160, 480,
     16000},
    {CUDAFFT_SAMPLE_F32, 2, CUDAFFT_WINDOW_HAMMING, CUDAFFT_REPRESENTATION_DB, 480, 0, 17, 4800},
    {CUDAFFT_SAMPLE_S32, 3, CUDAFFT_WINDOW_BLACKMAN, CUDAFFT_REPRESENTATION_MAGNITUDE, 1000, 250,
     1000, 9000},
    {CUDAFFT_SAMPLE_F64, 1, CUDAFFT_WINDOW_BLACKMAN_HARRIS, CUDAFFT_REPRESENTATION_POWER, 3000, 0,
     4096, 20000},
    {CUDAFFT_SAMPLE_F32, 2, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX, 375, 125, 1, 3000},
    {CUDAFFT_SAMPLE_S16, 1, CUDAFFT_WINDOW_RECTANGULAR, CUDAFFT_REPRESENTATION_COMPLEX, 16, 0, 17,
     500},
};

GST_START_TEST(test_frame_values)
{
  const guint i = __i__;
  const EuFft fft = {value_rows[i].fft_size,
                     value_rows[i].hop ? value_rows[i].hop : value_rows[i].fft_size / 2,
                     value_rows[i].window, value_rows[i].representation};
  gchar *row =
      g_strdup_printf("%s %u ch, %s, %s, fft-size %u hop %u, %zu samples in buffers of "
                      "%zu",
                      test_format_name(value_rows[i].format), value_rows[i].channels,
                      eu_window_nick(fft.window), eu_representation_nick(fft.representation),
                      fft.fft_size, fft.hop, value_rows[i].samples, value_rows[i].chunk);
  TestRng rng = test_rng("values %u", i);
  TestSignal signal;
  test_signal_random(&signal, &rng, value_rows[i].format, value_rows[i].channels, RATE,
                     value_rows[i].samples, TEST_READ_POW2);
  check_one_run(&fft, value_rows[i].hop, &signal, value_rows[i].chunk, 0, row);
  test_signal_clear(&signal);
  g_free(row);
}
GST_END_TEST;

/* Framing and timestamps ------------------------------------------------------------------- */

GST_START_TEST(test_frames_pushed_when_complete)
{
  const EuFft fft = {1024, 256, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  TestRng rng = test_rng("as soon as complete");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 20000, TEST_READ_POW2);
  GstHarness *h = fft_harness(&fft, fft.hop);
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  const gsize frame_bytes = eu_frame_floats(&fft, 2) * sizeof(float);
  gsize pushed = 0, bytes = 0;
  guint seen = 0;
  while (pushed < signal.frames) {
    const gsize want = test_rng_range(&rng, 1, 700); /* (not inside MIN: it would draw twice) */
    const gsize n = MIN(want, signal.frames - pushed);
    eu_push_signal(h, &signal, pushed, n, n, 0, out);
    pushed += n;
    for (; seen < out->len; seen++)
      bytes += gst_buffer_get_size(g_ptr_array_index(out, seen));
    fail_unless_equals_uint64(bytes / frame_bytes, eu_frames_complete(&fft, pushed));
  }
  eu_push_eos(h, out);
  GString *why = g_string_new(NULL);
  guint index = 0;
  const EuRun run = {signal.values, signal.frames, 0, TRUE};
  fail_unless(eu_check_fft_runs(out, &index, &fft, 2, RATE, &run, 1, why), "%s", why->str);
  fail_unless_equals_int(index, out->len);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* Run starts and rates where sample times do not fall on whole nanoseconds. */
static const struct {
  guint rate, fft_size, hop;
  GstClockTime start; /* NONE: untimestamped input, the run starts at the segment start */
  GstClockTime segment_start;
  gsize chunk, samples;
} time_rows[] = {
    {44100, 1024, 441, 0, 0, 1000, 20000},
    {48000, 4096, 1000, 3 * GST_SECOND + 123456789, 0, 17, 9000},
    {22050, 256, 100, GST_CLOCK_TIME_NONE, 0, 999, 5000},
    {96000, 2048, 768, GST_CLOCK_TIME_NONE, 2 * GST_SECOND, 4096, 20000},
    {8000, 512, 512, 7 * GST_MSECOND, 0, 100000, 100000},
    {11025, 16384, 4000, 1, 0, 4096, 40000},
};

GST_START_TEST(test_timestamps_offsets_flags_clipping)
{
  const guint i = __i__;
  const EuFft fft = {time_rows[i].fft_size, time_rows[i].hop, CUDAFFT_WINDOW_HANN,
                     CUDAFFT_REPRESENTATION_MAGNITUDE};
  TestRng rng = test_rng("time %u", i);
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_S16, 2, time_rows[i].rate, time_rows[i].samples,
                     TEST_READ_POW2);
  GstHarness *h = fft_harness(&fft, fft.hop);
  eu_harness_signal_caps(h, &signal);
  if (time_rows[i].segment_start) {
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    segment.start = segment.time = segment.position = time_rows[i].segment_start;
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
  }
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &signal, 0, signal.frames, time_rows[i].chunk, time_rows[i].start, out);
  eu_push_eos(h, out);
  const GstClockTime start =
      GST_CLOCK_TIME_IS_VALID(time_rows[i].start) ? time_rows[i].start : time_rows[i].segment_start;
  GString *why = g_string_new(NULL);
  guint index = 0;
  const EuRun run = {signal.values, signal.frames, start, TRUE};
  fail_unless(eu_check_fft_runs(out, &index, &fft, 2, time_rows[i].rate, &run, 1, why),
              "rate %u fft-size %u hop %u start %" GST_TIME_FORMAT ": %s", time_rows[i].rate,
              fft.fft_size, fft.hop, GST_TIME_ARGS(start), why->str);
  fail_unless_equals_int(index, out->len);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* Frame counts at EOS around the edges: nothing, one sample, a hop either side, hop == fft-size. */
static const struct {
  guint fft_size, hop;
  gint samples; /* < 0: -k means k hops plus the row's offset */
  gint offset;
} eos_rows[] = {
    {512, 128, 0, 0},      {512, 128, 1, 0},      {512, 128, 127, 0},   {512, 128, 128, 0},
    {512, 128, 129, 0},    {512, 128, 512, 0},    {512, 128, 1543, 0},  {256, 256, 1, 0},
    {256, 256, 256, 0},    {256, 256, 257, 0},    {1024, 1000, 999, 0}, {1024, 1000, 2001, 0},
    {4096, 2048, 4095, 0}, {4096, 2048, 4097, 0},
};

GST_START_TEST(test_eos_drains)
{
  const guint i = __i__;
  const EuFft fft = {eos_rows[i].fft_size, eos_rows[i].hop, CUDAFFT_WINDOW_BLACKMAN,
                     CUDAFFT_REPRESENTATION_COMPLEX};
  TestRng rng = test_rng("eos %u", i);
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 1, RATE, (gsize)eos_rows[i].samples,
                     TEST_READ_POW2);
  GstHarness *h = fft_harness(&fft, fft.hop);
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &signal, 0, signal.frames, signal.frames ? signal.frames : 1, 0, out);
  eu_push_eos(h, out);
  gsize frames = 0;
  for (guint b = 0; b < out->len; b++)
    frames +=
        gst_buffer_get_size(g_ptr_array_index(out, b)) / (eu_frame_floats(&fft, 1) * sizeof(float));
  fail_unless_equals_uint64(frames, eu_frames_drained(&fft, signal.frames));
  GString *why = g_string_new(NULL);
  guint index = 0;
  const EuRun run = {signal.values, signal.frames, 0, TRUE};
  fail_unless(eu_check_fft_runs(out, &index, &fft, 1, RATE, &run, 1, why), "%zu samples: %s",
              signal.frames, why->str);
  /* EOS goes on downstream after the frames */
  gboolean eos = FALSE;
  GstEvent *event;
  while ((event = gst_harness_try_pull_event(h)) != NULL) {
    eos |= GST_EVENT_TYPE(event) == GST_EVENT_EOS;
    gst_event_unref(event);
  }
  fail_unless(eos, "EOS was not forwarded");
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* Events ----------------------------------------------------------------------------------- */

GST_START_TEST(test_flush_discards_pending)
{
  const EuFft fft = {1024, 256, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  TestRng rng = test_rng("flush");
  TestSignal a, b;
  test_signal_random(&a, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 3000,
                     TEST_READ_POW2); /* 3000 is not a multiple of the hop */
  test_signal_random(&b, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 5000, TEST_READ_POW2);
  GstHarness *h = fft_harness(&fft, fft.hop);
  eu_harness_signal_caps(h, &a);
  GPtrArray *before = eu_buffer_list();
  GPtrArray *after = eu_buffer_list();
  eu_push_signal(h, &a, 0, a.frames, 700, 0, before);
  eu_flush(h, before); /* anything pushed while flushing belongs to the old data */
  const GstClockTime b_start = 10 * GST_SECOND;
  eu_push_signal(h, &b, 0, b.frames, 500, b_start, after);
  eu_push_eos(h, after);

  GString *why = g_string_new(NULL);
  guint index = 0;
  const EuRun run_a = {a.values, a.frames, 0, FALSE};
  fail_unless(eu_check_fft_runs(before, &index, &fft, 2, RATE, &run_a, 1, why),
              "before the flush: %s", why->str);
  fail_unless_equals_int(index, before->len);
  /* after the flush: exactly what the post-flush data alone gives */
  index = 0;
  const EuRun run_b = {b.values, b.frames, b_start, TRUE};
  fail_unless(eu_check_fft_runs(after, &index, &fft, 2, RATE, &run_b, 1, why),
              "after the flush: %s", why->str);
  fail_unless(index == after->len, "%u buffers too many after the flush", after->len - index);
  g_string_free(why, TRUE);
  g_ptr_array_unref(before);
  g_ptr_array_unref(after);
  gst_harness_teardown(h);
  test_signal_clear(&a);
  test_signal_clear(&b);
}
GST_END_TEST;

/* A second stretch of input after 3001 samples, in one of three ways. */
enum { DISCONT_FLAG, TIMESTAMP_GAP, SMALL_JITTER };

static void
check_second_stretch(int how)
{
  const EuFft fft = {1024, 256, CUDAFFT_WINDOW_HAMMING, CUDAFFT_REPRESENTATION_COMPLEX};
  const guint channels = 3;
  TestRng rng = test_rng("stretch %d", how);
  TestSignal all, b;
  test_signal_random(&all, &rng, CUDAFFT_SAMPLE_S32, channels, RATE, 3001 + 4000, TEST_READ_POW2);
  test_signal_slice(&b, &all, 3001, 4000);
  GstHarness *h = fft_harness(&fft, fft.hop);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_S32, RATE, channels));
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &all, 0, 3001, 1000, 0, out);

  /* Where the second stretch is stamped: on time (DISCONT flag), a hop late (more than half a
   * hop: a new run), or a quarter hop late (less: the same run). */
  const GstClockTime on_time = eu_sample_time(0, 3001, RATE);
  GstClockTime b_start = on_time;
  if (how == TIMESTAMP_GAP)
    b_start = on_time + gst_util_uint64_scale_round(fft.hop, GST_SECOND, RATE);
  else if (how == SMALL_JITTER)
    b_start = on_time + gst_util_uint64_scale_round(fft.hop / 4, GST_SECOND, RATE);
  GstBuffer *head = eu_signal_buffer(&b, 0, 500, b_start);
  if (how == DISCONT_FLAG)
    GST_BUFFER_FLAG_SET(head, GST_BUFFER_FLAG_DISCONT);
  fail_unless_equals_int(gst_harness_push(h, head), GST_FLOW_OK);
  eu_pull_all(h, out);
  eu_push_signal(h, &b, 500, b.frames - 500, 1000, b_start, out);
  eu_push_eos(h, out);

  GString *why = g_string_new(NULL);
  guint index = 0;
  gboolean ok;
  if (how == SMALL_JITTER) {
    const EuRun run = {all.values, all.frames, 0, TRUE};
    ok = eu_check_fft_runs(out, &index, &fft, channels, RATE, &run, 1, why);
  } else {
    const EuRun runs[2] = {{all.values, 3001, 0, TRUE}, {b.values, b.frames, b_start, TRUE}};
    ok = eu_check_fft_runs(out, &index, &fft, channels, RATE, runs, 2, why);
  }
  fail_unless(ok, "%s: %s",
              how == DISCONT_FLAG    ? "DISCONT flag"
              : how == TIMESTAMP_GAP ? "timestamp a hop late"
                                     : "timestamp a quarter hop late",
              why->str);
  fail_unless(index == out->len, "%u output buffers too many", out->len - index);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&all);
  test_signal_clear(&b);
}

GST_START_TEST(test_discont_flag_starts_new_run)
{
  check_second_stretch(DISCONT_FLAG);
}
GST_END_TEST;

GST_START_TEST(test_timestamp_gap_starts_new_run)
{
  check_second_stretch(TIMESTAMP_GAP);
}
GST_END_TEST;

GST_START_TEST(test_small_jitter_keeps_run)
{
  check_second_stretch(SMALL_JITTER);
}
GST_END_TEST;

GST_START_TEST(test_non_time_segment_refused)
{
  const EuFft fft = {1024, 512, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  GstHarness *h = fft_harness(&fft, 0);
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, RATE, 1));
  GstElement *e = eu_harness_element(h, "fft");
  GstPad *sink = gst_element_get_static_pad(e, "sink");
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_BYTES);
  /* sent to the pad itself: a push of a sticky event reports success whatever the peer says */
  fail_if(gst_pad_send_event(sink, gst_event_new_segment(&segment)),
          "a BYTES segment was accepted");
  GError *error = NULL;
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, &error, &text), "no error message for a BYTES segment");
  fail_unless(error->domain == GST_CORE_ERROR || error->domain == GST_STREAM_ERROR,
              "error domain %s", g_quark_to_string(error->domain));
  fail_unless(error->message && *error->message, "error without a message");
  g_clear_error(&error);
  g_free(text);
  gst_object_unref(sink);
  gst_object_unref(e);
  eu_harness_teardown(h, bus);
  /* and in a pipeline: one ERROR, the element's, none from the source */
  eu_check_time_segment("cudafft");
}
GST_END_TEST;

GST_START_TEST(test_hop_larger_than_fft_size_fails)
{
  GstHarness *h = eu_harness_new("cudafft name=fft backend=%s fft-size=1024 hop=2048", eu_backend);
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, RATE, 1));
  TestRng rng = test_rng("hop > fft-size");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 1, RATE, 4096, TEST_READ_POW2);
  const GstFlowReturn flow = gst_harness_push(h, eu_signal_buffer(&signal, 0, 4096, 0));
  gchar *text = NULL;
  const gboolean error = eu_bus_pop_error(bus, NULL, &text);
  fail_unless(flow < GST_FLOW_OK || error,
              "hop 2048 > fft-size 1024: the push returned %s and no error was posted",
              gst_flow_get_name(flow));
  fail_unless_equals_int(gst_harness_buffers_received(h), 0);
  g_free(text);
  eu_harness_teardown(h, bus);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* Caps after a refused caps change (1025 channels: one ERROR at the CAPS event), then caps the
 * element takes: those in force before the refusal and others, each stretch giving the
 * reference's frames. */
GST_START_TEST(test_caps_after_refusal)
{
  const EuFft fft = {256, 128, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  TestRng rng = test_rng("caps after refusal");
  TestSignal a, c;
  test_signal_random(&a, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 3001, TEST_READ_POW2);
  test_signal_random(&c, &rng, CUDAFFT_SAMPLE_S16, 1, RATE, 2500, TEST_READ_POW2);
  GstHarness *h = fft_harness(&fft, 0);
  GstBus *bus = eu_harness_bus(h);
  GPtrArray *out[3] = {eu_buffer_list(), eu_buffer_list(), eu_buffer_list()};

  eu_harness_signal_caps(h, &a);
  eu_push_signal(h, &a, 0, a.frames, 1000, 0, out[0]);
  eu_flush(h, out[0]);

  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, RATE, 1025));
  GstBuffer *buf = gst_buffer_new_allocate(NULL, 1025 * sizeof(float) * 300, NULL);
  gst_buffer_memset(buf, 0, 0, 1025 * sizeof(float) * 300);
  GST_BUFFER_PTS(buf) = 0;
  const GstFlowReturn flow = gst_harness_push(h, buf);
  fail_unless(flow < GST_FLOW_OK, "1025 channels: the push returned %s", gst_flow_get_name(flow));
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "1025 channels: no ERROR");
  g_free(text);
  fail_unless_equals_int(gst_harness_buffers_in_queue(h), 0);

  /* the caps in force before the refusal, then others */
  eu_harness_signal_caps(h, &a);
  eu_push_signal(h, &a, 0, a.frames, 700, 0, out[1]);
  eu_flush(h, out[1]);
  eu_harness_signal_caps(h, &c);
  eu_push_signal(h, &c, 0, c.frames, 333, 0, out[2]);
  eu_push_eos(h, out[2]);

  const EuRun runs[3] = {{a.values, a.frames, 0, FALSE},
                         {a.values, a.frames, 0, FALSE},
                         {c.values, c.frames, 0, TRUE}};
  for (guint i = 0; i < 3; i++) {
    GString *why = g_string_new(NULL);
    guint index = 0;
    const gboolean ok =
        eu_check_fft_runs(out[i], &index, &fft, i < 2 ? 2 : 1, RATE, &runs[i], 1, why);
    fail_unless(ok, "stretch %u: %s", i, why->str);
    fail_unless(index == out[i]->len, "stretch %u: %u output buffers too many", i,
                out[i]->len - index);
    g_string_free(why, TRUE);
    g_ptr_array_unref(out[i]);
  }
  eu_harness_teardown(h, bus);
  test_signal_clear(&a);
  test_signal_clear(&c);
}
GST_END_TEST;

/* Hostile buffers ------------------------------------------------------------------------- */

/* Buffers that split frames (S16 stereo in 6-byte buffers: a frame and a half each; F64 x3 in
 * buffers of any byte count): the partial frame waits for the rest, no sample is lost, and the
 * frames are those of the whole stream. A partial frame left at EOS is dropped with a WARNING. */
GST_START_TEST(test_split_frames_carried)
{
  static const struct {
    CudafftSampleFormat format;
    guint channels;
    gsize piece; /* 0: random sizes from 1 to 1000 bytes */
  } rows[] = {{CUDAFFT_SAMPLE_S16, 2, 6}, {CUDAFFT_SAMPLE_F64, 3, 0}, {CUDAFFT_SAMPLE_S32, 1, 3}};
  const EuFft fft = {256, 64, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  for (guint r = 0; r < G_N_ELEMENTS(rows); r++) {
    TestRng rng = test_rng("split frames %u", r);
    TestSignal signal;
    test_signal_random(&signal, &rng, rows[r].format, rows[r].channels, RATE, 3333, TEST_READ_POW2);
    GstHarness *h = fft_harness(&fft, fft.hop);
    GstBus *bus = eu_harness_bus(h);
    eu_harness_signal_caps(h, &signal);
    GPtrArray *out = eu_buffer_list();
    const gsize bytes = signal.frames * test_signal_frame_bytes(&signal);
    if (rows[r].piece) {
      for (gsize at = 0; at < bytes; at += rows[r].piece) {
        const gsize n = MIN(rows[r].piece, bytes - at);
        fail_unless_equals_int(gst_harness_push(h, gst_buffer_new_memdup(signal.raw + at, n)),
                               GST_FLOW_OK);
        eu_pull_all(h, out);
      }
    } else {
      eu_push_bytes(h, signal.raw, bytes, &rng, 1000, out);
    }
    /* a stray byte at the end: no frame, a WARNING */
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_new_memdup(signal.raw, 1)), GST_FLOW_OK);
    eu_push_eos(h, out);
    GString *why = g_string_new(NULL);
    guint index = 0;
    const EuRun run = {signal.values, signal.frames, 0, TRUE};
    fail_unless(eu_check_fft_runs(out, &index, &fft, signal.channels, RATE, &run, 1, why),
                "%s x%u in split buffers: %s", test_format_name(signal.format), signal.channels,
                why->str);
    fail_unless_equals_int(index, out->len);
    GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
    fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_WARNING,
                "no WARNING for the byte left at EOS");
    gst_message_unref(msg);
    g_string_free(why, TRUE);
    g_ptr_array_unref(out);
    eu_harness_teardown(h, bus);
    test_signal_clear(&signal);
  }
}
GST_END_TEST;

/* The pipeline: 48000 stereo samples at fft-size 16384 and hop 1 make 8.4 GB of frames.
 * They come out, all of them, in buffers of at most 64 MiB (GST_CUDAFFT_MAX_OUTPUT_BYTES), never
 * one buffer of the whole (whose size overflowed the pool's 32 bits and the heap). Every buffer's
 * framing is checked, and the first frame of every 16th buffer against FFTW double. */
typedef struct {
  EuFft fft;
  const TestSignal *signal;
  gsize frame_bytes, frames, buffers, largest;
  GString *why;
} HugeOutput;

static GstPadProbeReturn
huge_output_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  HugeOutput *h = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
  const gsize size = gst_buffer_get_size(buf);
  if (h->why->len > 0)
    return GST_PAD_PROBE_OK;
  if (size == 0 || size % h->frame_bytes != 0 || GST_BUFFER_OFFSET(buf) != h->frames) {
    g_string_append_printf(h->why,
                           "buffer %zu: %zu bytes at offset %" G_GUINT64_FORMAT
                           " (frames of %zu bytes, %zu before it)",
                           h->buffers, size, GST_BUFFER_OFFSET(buf), h->frame_bytes, h->frames);
    return GST_PAD_PROBE_OK;
  }
  if (h->buffers % 16 == 0) {
    const guint channels = h->signal->channels;
    const gsize bins = eu_bins(h->fft.fft_size);
    double *ref = g_malloc(channels * bins * 2 * sizeof(double));
    /* frame k covers samples k hop - lead .. + fft_size */
    const gint64 start = (gint64)h->frames * h->fft.hop - eu_lead(&h->fft);
    const gsize skip = start > 0 ? (gsize)start : 0;
    stft_reference_frames(
        h->fft.fft_size, h->fft.hop, h->fft.window, h->signal->values + skip * channels, channels,
        h->signal->frames - MIN(skip, h->signal->frames), start < 0 ? (gsize)-start : 0, 1, ref);
    GstMapInfo map;
    gst_buffer_map(buf, &map, GST_MAP_READ);
    GString *detail = g_string_new(NULL);
    if (!eu_compare_frames(&h->fft, channels, (const float *)map.data, ref, 1, NULL, detail))
      g_string_append_printf(h->why, "frame %zu: %s", h->frames, detail->str);
    g_string_free(detail, TRUE);
    gst_buffer_unmap(buf, &map);
    g_free(ref);
  }
  h->frames += size / h->frame_bytes;
  h->buffers++;
  h->largest = MAX(h->largest, size);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST(test_huge_output_in_bounded_buffers)
{
  const EuFft fft = {16384, 1, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  TestRng rng = test_rng("huge output");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 48000, TEST_READ_POW2);
  gchar *line = g_strdup_printf("appsrc name=src format=time ! cudafft name=e backend=%s "
                                "fft-size=16384 hop=1 ! fakesink name=sink sync=false",
                                eu_backend);
  GstElement *pipeline = gst_parse_launch(line, NULL);
  fail_unless(pipeline != NULL, "cannot make %s", line);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstCaps *caps = eu_raw_caps(signal.format, signal.rate, signal.channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  HugeOutput h = {.fft = fft, .signal = &signal, .why = g_string_new(NULL)};
  h.frame_bytes = eu_frame_floats(&fft, signal.channels) * sizeof(float);
  GstPad *pad = gst_element_get_static_pad(sink, "sink");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, huge_output_probe, &h, NULL);
  GstBus *bus = gst_element_get_bus(pipeline);
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE);
  GstFlowReturn flow;
  g_signal_emit_by_name(src, "push-buffer", eu_signal_buffer(&signal, 0, signal.frames, 0), &flow);
  g_signal_emit_by_name(src, "end-of-stream", &flow);
  GstMessage *msg =
      gst_bus_timed_pop_filtered(bus, 500 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS, "%s: no EOS (%s)", line,
              msg ? "an ERROR" : "timeout");
  gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  fail_unless(h.why->len == 0, "%s", h.why->str);
  fail_unless_equals_uint64(h.frames, eu_frames_drained(&fft, signal.frames));
  fail_unless(h.largest <= MAX((gsize)64 << 20, h.frame_bytes),
              "a buffer of %zu bytes, more than 64 MiB", h.largest);
  fail_unless(h.buffers > 1);
  GST_INFO("%zu frames in %zu buffers, the largest %zu bytes", h.frames, h.buffers, h.largest);
  g_string_free(h.why, TRUE);
  gst_object_unref(pad);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  g_free(line);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* NaN and Inf ------------------------------------------------------------------------------ */

GST_START_TEST(test_nan_isolation)
{
  const EuFft fft = {1024, 256, CUDAFFT_WINDOW_HANN, CUDAFFT_REPRESENTATION_COMPLEX};
  TestRng rng = test_rng("nan");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 1, RATE, 9000, TEST_READ_POW2);
  const gsize bad[2] = {3000, 6500};
  const float bad_value[2] = {NAN, INFINITY};
  for (int j = 0; j < 2; j++) {
    memcpy(signal.raw + 4 * bad[j], &bad_value[j], 4);
    signal.values[bad[j]] = bad_value[j];
  }
  GstHarness *h = fft_harness(&fft, fft.hop);
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &signal, 0, signal.frames, 1000, 0, out);
  eu_push_eos(h, out);

  const gsize frames = eu_frames_drained(&fft, signal.frames);
  const gsize floats = eu_frame_floats(&fft, 1);
  double *ref = eu_reference_frames(&fft, signal.values, 1, signal.frames, frames);
  float *got = g_malloc(frames * floats * sizeof(float));
  gsize have = 0;
  for (guint b = 0; b < out->len; b++) {
    GstBuffer *buf = g_ptr_array_index(out, b);
    const gsize size = gst_buffer_get_size(buf);
    fail_unless(have + size <= frames * floats * sizeof(float), "more output than %zu frames",
                frames);
    gst_buffer_extract(buf, 0, (guint8 *)got + have, size);
    have += size;
  }
  fail_unless_equals_uint64(have, frames * floats * sizeof(float));
  const guint lead = eu_lead(&fft);
  gsize nonfinite_frames = 0;
  for (gsize f = 0; f < frames; f++) {
    gboolean contains = FALSE;
    for (int j = 0; j < 2; j++) {
      const int64_t first = (int64_t)(f * fft.hop) - lead;
      contains |= (int64_t)bad[j] >= first && (int64_t)bad[j] < first + fft.fft_size;
    }
    if (contains) {
      gsize count = 0;
      for (gsize v = 0; v < floats; v++)
        count += !isfinite(got[f * floats + v]);
      fail_unless(count > 0, "frame %zu contains a NaN or Inf sample but is all finite", f);
      nonfinite_frames++;
    } else {
      GString *why = g_string_new(NULL);
      fail_unless(eu_compare_frames(&fft, 1, got + f * floats, ref + f * floats, 1, NULL, why),
                  "frame %zu (no NaN or Inf in it): %s", f, why->str);
      g_string_free(why, TRUE);
    }
  }
  fail_unless_equals_uint64(nonfinite_frames, 2 * (fft.fft_size / fft.hop));
  g_free(ref);
  g_free(got);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* Latency ---------------------------------------------------------------------------------- */

static const struct {
  guint fft_size, hop_property, rate;
  GstClockTime expected; /* hop / rate */
} latency_rows[] = {
    {1024, 256, 32000, 8 * GST_MSECOND},
    {1024, 0, 32000, 16 * GST_MSECOND},
    {4096, 441, 44100, 10 * GST_MSECOND},
    {16384, 16384, 16000, 1024 * GST_MSECOND},
};

GST_START_TEST(test_latency)
{
  const guint i = __i__;
  const EuFft fft = {latency_rows[i].fft_size, 0, CUDAFFT_WINDOW_HANN,
                     CUDAFFT_REPRESENTATION_COMPLEX};
  GstHarness *h = fft_harness(&fft, latency_rows[i].hop_property);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, latency_rows[i].rate, 2));
  const GstClockTime upstream = 5 * GST_MSECOND;
  gst_harness_set_upstream_latency(h, upstream);
  GstQuery *query = gst_query_new_latency();
  fail_unless(gst_pad_peer_query(h->sinkpad, query), "latency query failed");
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency(query, &live, &min, &max);
  fail_unless(min == upstream + latency_rows[i].expected,
              "min latency %" GST_TIME_FORMAT ", expected %" GST_TIME_FORMAT
              " (upstream) + %" GST_TIME_FORMAT,
              GST_TIME_ARGS(min), GST_TIME_ARGS(upstream), GST_TIME_ARGS(latency_rows[i].expected));
  /* the harness reports an unlimited upstream maximum, which stays unlimited */
  fail_unless(max == GST_CLOCK_TIME_NONE, "max latency %" GST_TIME_FORMAT ", expected none",
              GST_TIME_ARGS(max));
  fail_unless(live);
  gst_query_unref(query);
  gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *
cudafft_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudafft", &tc);
  tcase_add_test(tc, test_metadata);
  tcase_add_test(tc, test_property_defaults);
  tcase_add_test(tc, test_fft_size_integer);
  tcase_add_test(tc, test_fft_size_refused);
  tcase_add_loop_test(tc, test_caps_and_bins, 0, G_N_ELEMENTS(caps_rows));
  tcase_add_test(tc, test_too_many_channels_refused);
  tcase_add_test(tc, test_caps_after_refusal);
  tcase_add_test(tc, test_one_error_at_start);
  tcase_add_loop_test(tc, test_frame_values, 0, G_N_ELEMENTS(value_rows));
  tcase_add_test(tc, test_frames_pushed_when_complete);
  tcase_add_loop_test(tc, test_timestamps_offsets_flags_clipping, 0, G_N_ELEMENTS(time_rows));
  tcase_add_loop_test(tc, test_eos_drains, 0, G_N_ELEMENTS(eos_rows));
  tcase_add_test(tc, test_flush_discards_pending);
  tcase_add_test(tc, test_discont_flag_starts_new_run);
  tcase_add_test(tc, test_timestamp_gap_starts_new_run);
  tcase_add_test(tc, test_small_jitter_keeps_run);
  tcase_add_test(tc, test_non_time_segment_refused);
  tcase_add_test(tc, test_hop_larger_than_fft_size_fails);
  tcase_add_test(tc, test_split_frames_carried);
  tcase_add_test(tc, test_huge_output_in_bounded_buffers);
  tcase_add_test(tc, test_nan_isolation);
  tcase_add_loop_test(tc, test_latency, 0, G_N_ELEMENTS(latency_rows));
  return s;
}

EU_MAIN(cudafft_suite)
