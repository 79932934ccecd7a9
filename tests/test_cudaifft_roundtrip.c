/* test_cudaifft_roundtrip.c: cudaifft, and cudafft ! cudaifft as a pair, against the contract, on
 * the backend named by argv[1] (cpu|cuda): the round trip gives back exactly the input (samples,
 * count, timestamps) for every fft size, two hops, every window, 1..8 channels and buffer sizes
 * from 1 to 100000 samples; EOS, flushes and discontinuities; settings changed while playing;
 * caps cudaifft must refuse, with one ERROR in the whole pipeline for each refusal (at the start
 * of the stream and in its middle); latency; state changes of whole pipelines, two at once. */
#include "element_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RATE 48000

static GstHarness *
pair_harness(guint fft_size, guint hop, CudafftWindow window)
{
  return eu_harness_new("cudafft name=fft backend=%s fft-size=%u hop=%u window=%s ! "
                        "cudaifft name=ifft backend=%s",
                        eu_backend, fft_size, hop, eu_window_nick(window), eu_backend);
}

GST_START_TEST(test_metadata)
{
  eu_check_element_metadata("cudaifft", "audio/x-fft", "audio/x-raw");
  GstElement *e = gst_element_factory_make("cudaifft", NULL);
  fail_unless(e != NULL);
  /* backend and cuda-device-id only */
  guint n = 0;
  GParamSpec **specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &n);
  /* (those GStreamer's own classes define, such as GstBaseTransform's qos, aside) */
  for (guint i = 0; i < n; i++)
    fail_unless(!g_str_has_prefix(g_type_name(specs[i]->owner_type), "GstCuda") ||
                    strcmp(specs[i]->name, "backend") == 0 ||
                    strcmp(specs[i]->name, "cuda-device-id") == 0,
                "cudaifft has an unexpected property %s (of %s)", specs[i]->name,
                g_type_name(specs[i]->owner_type));
  g_free(specs);
  gst_object_unref(e);
}
GST_END_TEST;

/* Round trips ------------------------------------------------------------------------------ */

/* Every fft size, hops fft-size/2 and /4, every window: 70 rows. The channels (1..8) and the
 * input buffer size (1, 17, 1000, 4096, 100000 samples) rotate over the rows; one-sample buffers
 * only up to fft-size 1024, where the run stays a few thousand pushes long. */
#define TRIP_ROWS (7 * 2 * CUDAFFT_WINDOW_COUNT_)

typedef struct {
  guint fft_size, hop;
  CudafftWindow window;
  guint channels;
  gsize chunk, samples;
} TripRow;

static TripRow
trip_row(guint i, TestRng *rng)
{
  static const gsize chunks[] = {1, 17, 1000, 4096, 100000};
  TripRow row;
  row.fft_size = 256u << (i / (2 * CUDAFFT_WINDOW_COUNT_));
  row.hop = row.fft_size / (i / CUDAFFT_WINDOW_COUNT_ % 2 ? 4 : 2);
  row.window = (CudafftWindow)(i % CUDAFFT_WINDOW_COUNT_);
  row.channels = 1 + (i * 3) % 8;
  row.chunk = chunks[(i + i / CUDAFFT_WINDOW_COUNT_) % G_N_ELEMENTS(chunks)];
  if (row.chunk == 1 && row.fft_size > 1024)
    row.chunk = 17;
  /* a few frames' worth, a random length (not a multiple of the hop) */
  row.samples = 3 * (gsize)row.fft_size + test_rng_range(rng, 0, row.fft_size);
  if (row.chunk == 100000)
    row.samples = 100000 + test_rng_range(rng, 0, 2 * row.fft_size);
  return row;
}

/* One row's round trip: the signal in, EOS, every sample back at its time. */
static void
check_trip(const TripRow row, TestRng rng)
{
  const GstClockTime start =
      test_rng_range(&rng, 0, 5000) * GST_MSECOND + test_rng_range(&rng, 0, 999);
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, row.channels, RATE, row.samples,
                     TEST_READ_POW2);
  GstHarness *h = pair_harness(row.fft_size, row.hop, row.window);
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &signal, 0, row.samples, row.chunk, start, out);
  eu_push_eos(h, out);
  GString *why = g_string_new(NULL);
  double error = 0.0;
  fail_unless(eu_check_roundtrip(out, &signal, start, &error, why),
              "fft-size %u hop %u %s, %u ch, %zu samples in buffers of %zu, start %" GST_TIME_FORMAT
              ": %s",
              row.fft_size, row.hop, eu_window_nick(row.window), row.channels, row.samples,
              row.chunk, GST_TIME_ARGS(start), why->str);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}

GST_START_TEST(test_roundtrip)
{
  const guint i = __i__;
  TestRng rng = test_rng("trip %u", i);
  const TripRow row = trip_row(i, &rng);
  check_trip(row, rng);
}
GST_END_TEST;

/* The sizes of the mixed-radix kernels: Whisper's 400 (hops 160, 200), 10 ms at 48 kHz (480),
 * 1000 and 3000, odd sizes (real transforms as complex ones), the smallest; every window. */
static const TripRow mixed_trip_rows[] = {
    {400, 160, CUDAFFT_WINDOW_HANN, 1, 480, 0},
    {400, 200, CUDAFFT_WINDOW_HAMMING, 2, 17, 0},
    {480, 240, CUDAFFT_WINDOW_HANN, 2, 480, 0},
    {480, 120, CUDAFFT_WINDOW_BLACKMAN, 3, 1000, 0},
    {1000, 250, CUDAFFT_WINDOW_BLACKMAN_HARRIS, 1, 4096, 0},
    {1000, 500, CUDAFFT_WINDOW_HANN, 8, 1, 0},
    {3000, 1500, CUDAFFT_WINDOW_HANN, 2, 4096, 0},
    {3000, 750, CUDAFFT_WINDOW_RECTANGULAR, 1, 100000, 0},
    {375, 125, CUDAFFT_WINDOW_HANN, 2, 17, 0},
    {1125, 375, CUDAFFT_WINDOW_HAMMING, 1, 1000, 0},
    {25, 5, CUDAFFT_WINDOW_HANN, 1, 1, 0},
    {16, 4, CUDAFFT_WINDOW_BLACKMAN_HARRIS, 3, 17, 0},
    {6615, 2205, CUDAFFT_WINDOW_HANN, 1, 4096, 0},
};

GST_START_TEST(test_roundtrip_mixed_sizes)
{
  const guint i = __i__;
  TestRng rng = test_rng("mixed trip %u", i);
  TripRow row = mixed_trip_rows[i];
  row.samples = row.chunk == 100000
                    ? 100000 + test_rng_range(&rng, 0, 2 * row.fft_size)
                    : 3 * (gsize)row.fft_size + test_rng_range(&rng, 0, row.fft_size);
  check_trip(row, rng);
}
GST_END_TEST;

GST_START_TEST(test_output_caps)
{
  TestRng rng = test_rng("output caps");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_S32, 3, 22050, 5000, TEST_READ_POW2);
  GstHarness *h = pair_harness(512, 128, CUDAFFT_WINDOW_HAMMING);
  eu_harness_signal_caps(h, &signal);
  eu_push_signal(h, &signal, 0, signal.frames, 1000, 0, NULL);
  GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
  fail_unless(caps != NULL, "no caps on the output");
  GstAudioInfo info;
  gchar *text = gst_caps_to_string(caps);
  /* Beyond two channels, raw audio caps carry a channel-mask (0: unpositioned); without one
   * gst_audio_info_from_caps() refuses them, and so do audioconvert and every audio sink. */
  fail_unless(gst_audio_info_from_caps(&info, caps),
              "output caps %s are not valid raw audio (gst_audio_info_from_caps fails: %s)", text,
              gst_structure_has_field(gst_caps_get_structure(caps, 0), "channel-mask")
                  ? "?"
                  : "no channel-mask for 3 channels");
  fail_unless(GST_AUDIO_INFO_FORMAT(&info) == GST_AUDIO_FORMAT_F32LE &&
                  GST_AUDIO_INFO_LAYOUT(&info) == GST_AUDIO_LAYOUT_INTERLEAVED &&
                  GST_AUDIO_INFO_RATE(&info) == 22050 && GST_AUDIO_INFO_CHANNELS(&info) == 3,
              "output caps %s, expected F32LE interleaved 22050 Hz 3 channels", text);
  g_free(text);
  gst_caps_unref(caps);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* The second stretch of input starts a new run: by a DISCONT flag (0) or a timestamp gap (1). Both
 * runs come back whole, each with its own timestamps. */
GST_START_TEST(test_roundtrip_discont)
{
  const guint how = __i__;
  const guint channels = 2;
  TestRng rng = test_rng("trip discont %u", how);
  TestSignal all, b;
  test_signal_random(&all, &rng, CUDAFFT_SAMPLE_F32, channels, RATE, 5001 + 7000, TEST_READ_POW2);
  test_signal_slice(&b, &all, 5001, 7000);
  GstHarness *h = pair_harness(1024, 256, CUDAFFT_WINDOW_HANN);
  eu_harness_signal_caps(h, &all);
  GPtrArray *out = eu_buffer_list();
  eu_push_signal(h, &all, 0, 5001, 1000, 0, out);
  GstClockTime b_start = eu_sample_time(0, 5001, RATE);
  if (how == 1)
    b_start += 250 * GST_MSECOND;
  GstBuffer *head = eu_signal_buffer(&b, 0, 1000, b_start);
  if (how == 0)
    GST_BUFFER_FLAG_SET(head, GST_BUFFER_FLAG_DISCONT);
  fail_unless_equals_int(gst_harness_push(h, head), GST_FLOW_OK);
  eu_push_signal(h, &b, 1000, b.frames - 1000, 1000, b_start, out);
  eu_push_eos(h, out);
  const gsize first[2] = {0, 5001};
  const GstClockTime starts[2] = {0, b_start};
  GString *why = g_string_new(NULL);
  fail_unless(eu_check_roundtrip_runs(out, &all, first, starts, 2, NULL, why), "%s: %s",
              how == 0 ? "DISCONT flag" : "timestamp gap", why->str);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_harness_teardown(h);
  test_signal_clear(&b);
  test_signal_clear(&all);
}
GST_END_TEST;

GST_START_TEST(test_roundtrip_flush)
{
  const guint channels = 3;
  TestRng rng = test_rng("trip flush");
  TestSignal a, b;
  test_signal_random(&a, &rng, CUDAFFT_SAMPLE_F32, channels, RATE, 6000, TEST_READ_POW2);
  test_signal_random(&b, &rng, CUDAFFT_SAMPLE_F32, channels, RATE, 9000, TEST_READ_POW2);
  GstHarness *h = pair_harness(2048, 512, CUDAFFT_WINDOW_BLACKMAN);
  eu_harness_signal_caps(h, &a);
  GPtrArray *before = eu_buffer_list(), *after = eu_buffer_list();
  eu_push_signal(h, &a, 0, a.frames, 1000, 0, before);
  eu_flush(h, before);
  const GstClockTime b_start = 20 * GST_SECOND;
  eu_push_signal(h, &b, 0, b.frames, 1000, b_start, after);
  eu_push_eos(h, after);
  GString *why = g_string_new(NULL);
  fail_unless(eu_check_roundtrip(after, &b, b_start, NULL, why), "after the flush: %s", why->str);
  g_string_free(why, TRUE);
  g_ptr_array_unref(before);
  g_ptr_array_unref(after);
  gst_harness_teardown(h);
  test_signal_clear(&a);
  test_signal_clear(&b);
}
GST_END_TEST;

/* fft-size, hop and window changed between buffers while playing: the output is still the input,
 * sample for sample and timestamp for timestamp. */
GST_START_TEST(test_settings_change_while_playing)
{
  static const struct {
    gsize from;
    const char *fft_size, *hop, *window;
  } changes[] = {
      {7000, "4096", "0", "blackman"},
      {19017, "256", "64", "rectangular"},
      {24000, "16384", "4096", "blackman-harris"},
  };
  const guint channels = 2;
  TestRng rng = test_rng("settings change");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, channels, RATE, 61000, TEST_READ_POW2);
  GstHarness *h = pair_harness(1024, 512, CUDAFFT_WINDOW_HANN);
  GstElement *fft = eu_harness_element(h, "fft");
  eu_harness_signal_caps(h, &signal);
  GPtrArray *out = eu_buffer_list();
  gsize done = 0;
  for (guint c = 0; c <= G_N_ELEMENTS(changes); c++) {
    const gsize until = c < G_N_ELEMENTS(changes) ? changes[c].from : signal.frames;
    eu_push_signal(h, &signal, done, until - done, 1000, 0, out);
    done = until;
    if (c < G_N_ELEMENTS(changes)) {
      gst_util_set_object_arg(G_OBJECT(fft), "fft-size", changes[c].fft_size);
      gst_util_set_object_arg(G_OBJECT(fft), "hop", changes[c].hop);
      gst_util_set_object_arg(G_OBJECT(fft), "window", changes[c].window);
    }
  }
  eu_push_eos(h, out);
  /* each change starts a new run at the buffer after it, stamped from that buffer's PTS */
  gsize first[G_N_ELEMENTS(changes) + 1] = {0};
  GstClockTime starts[G_N_ELEMENTS(changes) + 1] = {0};
  for (guint c = 0; c < G_N_ELEMENTS(changes); c++) {
    first[c + 1] = changes[c].from;
    starts[c + 1] = eu_sample_time(0, changes[c].from, RATE);
  }
  GString *why = g_string_new(NULL);
  fail_unless(eu_check_roundtrip_runs(out, &signal, first, starts, G_N_ELEMENTS(first), NULL, why),
              "%s", why->str);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  gst_object_unref(fft);
  gst_harness_teardown(h);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* Caps cudaifft must refuse ---------------------------------------------------------------- */

static const struct {
  const char *what;
  const char *representation, *window;
  guint fft_size, hop, bins;
  gboolean error_names_values; /* the error message must name fft-size and hop */
} bad_caps_rows[] = {
    {"representation magnitude", "magnitude", "hann", 1024, 512, 513, FALSE},
    {"hann at hop = fft-size", "complex", "hann", 1024, 1024, 513, TRUE},
    {"blackman-harris at hop = 3/4 fft-size", "complex", "blackman-harris", 1024, 768, 513, TRUE},
    {"hamming at hop = fft-size", "complex", "hamming", 2048, 2048, 1025, TRUE},
    {"bins != fft-size/2 + 1", "complex", "hann", 1024, 512, 512, TRUE},
    {"fft-size with a prime factor above 7", "complex", "hann", 1001, 500, 501, TRUE},
    {"bins != fft-size/2 + 1 for an odd size", "complex", "hann", 375, 125, 189, TRUE},
};

GST_START_TEST(test_bad_caps_refused)
{
  const guint i = __i__;
  GstHarness *h = eu_harness_new("cudaifft name=ifft backend=%s", eu_backend);
  GstBus *bus = eu_harness_bus(h);
  gchar *caps =
      g_strdup_printf("audio/x-fft, format=(string)F32LE, representation=(string)%s, "
                      "fft-size=(int)%u, hop=(int)%u, window=(string)%s, bins=(int)%u, "
                      "rate=(int)%d, channels=(int)1",
                      bad_caps_rows[i].representation, bad_caps_rows[i].fft_size,
                      bad_caps_rows[i].hop, bad_caps_rows[i].window, bad_caps_rows[i].bins, RATE);
  gst_harness_set_src_caps_str(h, caps);
  const gsize floats = (gsize)bad_caps_rows[i].bins * 2;
  GstBuffer *buf = gst_buffer_new_allocate(NULL, floats * sizeof(float), NULL);
  gst_buffer_memset(buf, 0, 0, floats * sizeof(float));
  GST_BUFFER_PTS(buf) = 0;
  GST_BUFFER_OFFSET(buf) = 0;
  GST_BUFFER_OFFSET_END(buf) = 1;
  /* refused with an ERROR at the CAPS event; the push that retries the caps is answered FLUSHING,
   * which stops upstream without an ERROR of its own (one failure, one ERROR) */
  const GstFlowReturn flow = gst_harness_push(h, buf);
  fail_unless(flow == GST_FLOW_FLUSHING, "%s (%s): push returned %s, expected flushing",
              bad_caps_rows[i].what, caps, gst_flow_get_name(flow));
  fail_unless_equals_int(gst_harness_buffers_received(h), 0);
  if (bad_caps_rows[i].error_names_values) {
    gchar *text = NULL;
    fail_unless(eu_bus_pop_error(bus, NULL, &text), "%s: no error message", bad_caps_rows[i].what);
    gchar *size = g_strdup_printf("%u", bad_caps_rows[i].fft_size);
    gchar *hop = g_strdup_printf("%u", bad_caps_rows[i].hop);
    gchar *bins = g_strdup_printf("%u", bad_caps_rows[i].bins);
    fail_unless(strstr(text, size) && (strstr(text, hop) || strstr(text, bins)),
                "%s: the error \"%s\" does not name the values (fft-size %s, hop %s / bins %s)",
                bad_caps_rows[i].what, text, size, hop, bins);
    g_free(size);
    g_free(hop);
    g_free(bins);
    g_free(text);
  }
  g_free(caps);
  eu_harness_teardown(h, bus);
}
GST_END_TEST;

/* A frame split between buffers is completed from the next one: the frames of a cudafft run, cut
 * into buffers of any byte count (the clipping meta's start on the first, its end on the last),
 * give the input back whole. */
GST_START_TEST(test_split_frames_carried)
{
  TestRng rng = test_rng("split frames");
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, 7000, TEST_READ_POW2);
  GstHarness *fft = eu_harness_new("cudafft backend=%s fft-size=512 hop=128", eu_backend);
  eu_harness_signal_caps(fft, &signal);
  GPtrArray *frames = eu_buffer_list();
  eu_push_signal(fft, &signal, 0, signal.frames, 1000, GST_CLOCK_TIME_NONE, frames);
  eu_push_eos(fft, frames);
  GstCaps *caps = gst_pad_get_current_caps(fft->sinkpad);
  guint64 clip_start = 0, clip_end = 0;
  GByteArray *bytes = g_byte_array_new();
  for (guint b = 0; b < frames->len; b++) {
    GstBuffer *buf = g_ptr_array_index(frames, b);
    GstAudioClippingMeta *meta = gst_buffer_get_audio_clipping_meta(buf);
    if (meta && meta->start)
      clip_start = meta->start;
    if (meta && meta->end)
      clip_end = meta->end;
    GstMapInfo map;
    gst_buffer_map(buf, &map, GST_MAP_READ);
    g_byte_array_append(bytes, map.data, (guint)map.size);
    gst_buffer_unmap(buf, &map);
  }
  fail_unless(clip_start > 0 && clip_end > 0, "cudafft marked no padding");

  GstHarness *h = eu_harness_new("cudaifft backend=%s", eu_backend);
  gst_harness_set_src_caps(h, caps);
  GPtrArray *out = eu_buffer_list();
  for (gsize at = 0; at < bytes->len;) {
    const gsize want = test_rng_range(&rng, 1, 20000);
    const gsize n = MIN(want, bytes->len - at);
    GstBuffer *buf = gst_buffer_new_memdup(bytes->data + at, n);
    if (at == 0)
      gst_buffer_add_audio_clipping_meta(buf, GST_FORMAT_DEFAULT, clip_start, 0);
    if (at + n == bytes->len)
      gst_buffer_add_audio_clipping_meta(buf, GST_FORMAT_DEFAULT, 0, clip_end);
    fail_unless_equals_int(gst_harness_push(h, buf), GST_FLOW_OK);
    eu_pull_all(h, out);
    at += n;
  }
  eu_push_eos(h, out);
  GString *why = g_string_new(NULL);
  fail_unless(eu_check_roundtrip(out, &signal, 0, NULL, why), "frames in split buffers: %s",
              why->str);
  g_string_free(why, TRUE);
  g_ptr_array_unref(out);
  g_byte_array_unref(bytes);
  g_ptr_array_unref(frames);
  gst_harness_teardown(h);
  gst_harness_teardown(fft);
  test_signal_clear(&signal);
}
GST_END_TEST;

/* Errors a user sees ------------------------------------------------------------------------ */

/* One failure, one ERROR: audiotestsrc ! cudafft <settings> ! cudaifft (the pipelines),
 * five times, and twice with queues between (a queue's task is another upstream task that reports
 * fatal flow returns): each time exactly one ERROR in the whole pipeline, from cudaifft, whose text
 * holds `words`. Before, the source (or a queue) posted an "Internal data stream error" of its own
 * for the refusal: two or three ERRORs per run. */
static void
check_one_ifft_error(const char *settings, const char *const *words)
{
  gchar *line = g_strdup_printf("audiotestsrc num-buffers=10 ! cudafft backend=%s %s ! cudaifft "
                                "name=e backend=%s ! fakesink",
                                eu_backend, settings, eu_backend);
  eu_check_one_error(line, 5, words);
  g_free(line);
  line = g_strdup_printf("audiotestsrc num-buffers=10 ! queue ! cudafft backend=%s %s ! queue ! "
                         "cudaifft name=e backend=%s ! fakesink",
                         eu_backend, settings, eu_backend);
  eu_check_one_error(line, 2, words);
  g_free(line);
}

/* cudafft representation=db ! cudaifft links, and cudaifft says why it cannot take the frames
 * (before, the link was refused and its message never showed). One ERROR, not one per retry, and
 * none from upstream. */
GST_START_TEST(test_representation_refused_with_message)
{
  static const char *const words[] = {"representation=complex", "db", NULL};
  check_one_ifft_error("representation=db", words);
}
GST_END_TEST;

static GstPadProbeReturn
change_hop_at_fifth_buffer(GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  guint *count = user_data;
  if (++*count == 5)
    g_object_set(GST_PAD_PARENT(pad), "hop", 1024, NULL);
  (void)info;
  return GST_PAD_PROBE_OK;
}

/* A window and hop that cannot be inverted: one ERROR naming them, not one per caps retry and none
 * from upstream (the pipeline: hop=4096 at the default fft-size 4096); the same where the
 * hop changes to fft-size in the middle of the stream (cudafft's new caps are refused while frames
 * flow); and a start that cannot run, one ERROR. */
GST_START_TEST(test_one_error_per_failure)
{
  static const char *const words[] = {"hop 4096", "hann", NULL};
  check_one_ifft_error("hop=4096", words);

  static const char *const middle_words[] = {"hop 1024", "hann", NULL};
  for (guint r = 0; r < 3; r++) {
    gchar *line = g_strdup_printf("audiotestsrc num-buffers=20 samplesperbuffer=1024 ! cudafft "
                                  "name=f backend=%s fft-size=1024 hop=256 ! cudaifft name=e "
                                  "backend=%s ! fakesink",
                                  eu_backend, eu_backend);
    GError *error = NULL;
    GstElement *pipeline = gst_parse_launch(line, &error);
    fail_unless(pipeline != NULL && error == NULL, "%s: %s", line, error ? error->message : "?");
    GstElement *f = gst_bin_get_by_name(GST_BIN(pipeline), "f");
    GstPad *sink = gst_element_get_static_pad(f, "sink");
    guint count = 0;
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, change_hop_at_fifth_buffer, &count, NULL);
    gst_object_unref(sink);
    gst_object_unref(f);
    EuErrors got;
    eu_collect_pipeline_errors(pipeline, "e", 20, &got);
    gchar *what = g_strdup_printf("%s, hop 1024 from the fifth buffer (run %u of 3)", line, r + 1);
    eu_check_errors_one(&got, what, middle_words);
    eu_errors_clear(&got);
    g_free(what);
    g_free(line);
  }

  eu_check_one_error_at_start("cudaifft", "cudafft backend=cpu !");
}
GST_END_TEST;

/* A caps change cudaifft refuses (cudafft's hop changed to fft-size while playing: those frames
 * cannot be inverted, one ERROR), then acceptable caps again (the hop back): from there the round
 * trip gives back every sample of the next stretch at its time. Before, cudafft kept trying to
 * push the refused frames of the old run first, and every later push answered FLUSHING with no
 * further ERROR: the stream stuck for good. */
GST_START_TEST(test_caps_after_refusal)
{
  const guint channels = 2;
  TestRng rng = test_rng("caps after refusal");
  TestSignal a, b;
  test_signal_random(&a, &rng, CUDAFFT_SAMPLE_F32, channels, RATE, 6000, TEST_READ_POW2);
  test_signal_random(&b, &rng, CUDAFFT_SAMPLE_F32, channels, RATE, 9000, TEST_READ_POW2);
  GstHarness *h = pair_harness(1024, 256, CUDAFFT_WINDOW_HANN);
  GstBus *bus = eu_harness_bus(h);
  eu_harness_signal_caps(h, &a);
  GPtrArray *before = eu_buffer_list(), *after = eu_buffer_list();
  eu_push_signal(h, &a, 0, a.frames, 1000, 0, before);

  GstElement *fft = eu_harness_element(h, "fft");
  g_object_set(fft, "hop", 1024, NULL);
  /* the refusal shows when cudafft pushes its first frame of the new hop */
  GstFlowReturn flow = GST_FLOW_OK;
  for (guint i = 0; i < 6 && flow == GST_FLOW_OK; i++)
    flow = gst_harness_push(h, eu_signal_buffer(&a, i * 1000, 1000, 10 * GST_SECOND));
  fail_unless(flow < GST_FLOW_OK, "hop = fft-size: the pushes returned %s",
              gst_flow_get_name(flow));
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "hop = fft-size: no ERROR");
  fail_unless(strstr(text, "1024") != NULL, "the error does not name the hop: %s", text);
  g_free(text);
  eu_pull_all(h, before);

  g_object_set(fft, "hop", 256, NULL);
  const GstClockTime b_start = 20 * GST_SECOND;
  GstBuffer *head = eu_signal_buffer(&b, 0, 1000, b_start);
  GST_BUFFER_FLAG_SET(head, GST_BUFFER_FLAG_DISCONT);
  flow = gst_harness_push(h, head);
  fail_unless(flow == GST_FLOW_OK, "acceptable caps again: the push returned %s",
              gst_flow_get_name(flow));
  eu_pull_all(h, after);
  eu_push_signal(h, &b, 1000, b.frames - 1000, 1000, b_start, after);
  eu_push_eos(h, after);
  GString *why = g_string_new(NULL);
  fail_unless(eu_check_roundtrip(after, &b, b_start, NULL, why), "after the refusal: %s", why->str);
  g_string_free(why, TRUE);
  gst_object_unref(fft);
  g_ptr_array_unref(before);
  g_ptr_array_unref(after);
  eu_harness_teardown(h, bus);
  test_signal_clear(&a);
  test_signal_clear(&b);
}
GST_END_TEST;

/* Frames of more channels than the limit: refused with a message that names it. */
GST_START_TEST(test_too_many_channels_refused)
{
  GstHarness *h = eu_harness_new("cudaifft backend=%s", eu_backend);
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps_str(h, "audio/x-fft, format=(string)F32LE, "
                                  "representation=(string)complex, fft-size=(int)256, "
                                  "hop=(int)128, window=(string)hann, bins=(int)129, "
                                  "rate=(int)48000, channels=(int)1025");
  GstBuffer *buf = gst_buffer_new_allocate(NULL, 1025 * 129 * 8, NULL);
  gst_buffer_memset(buf, 0, 0, 1025 * 129 * 8);
  /* the refusal's ERROR says why; the push that retries the refused caps is answered FLUSHING,
   * which stops upstream without an ERROR of its own (one failure, one ERROR) */
  fail_unless_equals_int(gst_harness_push(h, buf), GST_FLOW_FLUSHING);
  gchar *text = NULL;
  fail_unless(eu_bus_pop_error(bus, NULL, &text), "1025 channels: no ERROR");
  fail_unless(strstr(text, "1024") != NULL && strstr(text, "1025") != NULL,
              "the error does not name the limit: %s", text);
  g_free(text);
  eu_harness_teardown(h, bus);
}
GST_END_TEST;

/* Latency ---------------------------------------------------------------------------------- */

GST_START_TEST(test_latency)
{
  const GstClockTime upstream = 3 * GST_MSECOND;
  GstHarness *h = eu_harness_new("cudaifft backend=%s", eu_backend);
  gst_harness_set_src_caps_str(h, "audio/x-fft, format=(string)F32LE, "
                                  "representation=(string)complex, fft-size=(int)1024, "
                                  "hop=(int)256, window=(string)hann, bins=(int)513, "
                                  "rate=(int)32000, channels=(int)2");
  gst_harness_set_upstream_latency(h, upstream);
  GstQuery *query = gst_query_new_latency();
  fail_unless(gst_pad_peer_query(h->sinkpad, query));
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency(query, &live, &min, &max);
  /* (fft-size - hop) / rate = 768 / 32000 */
  fail_unless(min == upstream + 24 * GST_MSECOND, "cudaifft min latency %" GST_TIME_FORMAT,
              GST_TIME_ARGS(min));
  fail_unless(max == GST_CLOCK_TIME_NONE);
  gst_query_unref(query);
  gst_harness_teardown(h);

  /* the pair: hop / rate + (fft-size - hop) / rate = fft-size / rate */
  h = pair_harness(1024, 256, CUDAFFT_WINDOW_HANN);
  gst_harness_set_src_caps(h, eu_raw_caps(CUDAFFT_SAMPLE_F32, 32000, 2));
  gst_harness_set_upstream_latency(h, upstream);
  query = gst_query_new_latency();
  fail_unless(gst_pad_peer_query(h->sinkpad, query));
  gst_query_parse_latency(query, &live, &min, &max);
  fail_unless(min == upstream + 32 * GST_MSECOND,
              "cudafft ! cudaifft min latency %" GST_TIME_FORMAT, GST_TIME_ARGS(min));
  gst_query_unref(query);
  gst_harness_teardown(h);
}
GST_END_TEST;

/* Pipelines -------------------------------------------------------------------------------- */

/* Plays the pipeline to EOS `cycles` times (NULL -> PLAYING -> EOS -> NULL). Returns NULL or what
 * went wrong. */
static gchar *
cycle_pipeline(const char *description, guint cycles)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  if (!pipeline || error) {
    gchar *why =
        g_strdup_printf("cannot make \"%s\": %s", description, error ? error->message : "?");
    g_clear_error(&error);
    if (pipeline)
      gst_object_unref(pipeline);
    return why;
  }
  GstBus *bus = gst_element_get_bus(pipeline);
  gchar *why = NULL;
  for (guint c = 0; c < cycles && !why; c++) {
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      why = g_strdup_printf("cycle %u: PLAYING failed", c);
    } else {
      GstMessage *msg =
          gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
      if (!msg) {
        why = g_strdup_printf("cycle %u: no EOS within 30 s", c);
      } else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError *err = NULL;
        gchar *debug = NULL;
        gst_message_parse_error(msg, &err, &debug);
        why = g_strdup_printf("cycle %u: error from %s: %s (%s)", c, GST_MESSAGE_SRC_NAME(msg),
                              err->message, debug ? debug : "");
        g_clear_error(&err);
        g_free(debug);
      }
      if (msg)
        gst_message_unref(msg);
    }
    if (gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_FAILURE && !why)
      why = g_strdup_printf("cycle %u: NULL failed", c);
  }
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return why;
}

GST_START_TEST(test_state_cycles)
{
  gchar *description = g_strdup_printf("audiotestsrc num-buffers=5 ! cudafft backend=%s ! "
                                       "cudaifft backend=%s ! fakesink",
                                       eu_backend, eu_backend);
  /* 20 by default (CI); CUDAFFT_TEST_STATE_CYCLES=100 for the long run */
  const guint cycles = eu_state_cycles(20);
  gchar *why = cycle_pipeline(description, cycles);
  fail_unless(why == NULL, "%s: %s", description, why);
  g_free(description);
}
GST_END_TEST;

typedef struct {
  gchar *description;
  guint cycles;
  gchar *why;
} PipelineRun;

static gpointer
pipeline_thread(gpointer data)
{
  PipelineRun *run = data;
  run->why = cycle_pipeline(run->description, run->cycles);
  return NULL;
}

GST_START_TEST(test_two_pipelines_at_once)
{
  PipelineRun runs[2];
  static const char *const settings[2] = {"fft-size=1024 hop=256 window=blackman-harris",
                                          "fft-size=4096 window=hamming"};
  for (int p = 0; p < 2; p++) {
    runs[p].description =
        g_strdup_printf("audiotestsrc num-buffers=40 wave=white-noise ! "
                        "audio/x-raw,format=F32LE,channels=%d ! cudafft backend=%s %s ! "
                        "cudaifft backend=%s ! fakesink sync=false",
                        p + 1, eu_backend, settings[p], eu_backend);
    runs[p].cycles = MAX(5u, eu_state_cycles(20) / 4);
    runs[p].why = NULL;
  }
  eu_run_threads(pipeline_thread, runs, sizeof runs[0], 2);
  for (int p = 0; p < 2; p++) {
    fail_unless(runs[p].why == NULL, "%s: %s", runs[p].description, runs[p].why);
    g_free(runs[p].description);
  }
}
GST_END_TEST;

/* An application between the two (cudafft ! appsink, its own buffers, appsrc ! cudaifft) keeps
 * what it can keep: each buffer's PTS, duration, OFFSET and OFFSET_END, and the caps; not the
 * clipping meta (PyGObject hands a bare Gst.Meta) nor the flags. The round trip is still exact:
 * cudaifft takes cudafft's lead from the framing and the end from the timestamps, every sample at
 * its time, with no WARNING; two runs (a DISCONT at the cut, which the copies lose too: the gap in
 * their timestamps and the OFFSET back to 0 mark it), sizes, hops and lengths varied. Without
 * timestamps the end cannot be known: a WARNING says so and what to keep. */
static const struct {
  guint fft_size, hop;
  const char *window;
  gsize samples, chunk;
} app_rows[] = {{1024, 512, "hann", 48000, 1000},
                {4096, 1024, "blackman-harris", 48000, 4800},
                {512, 128, "hamming", 7001, 333},
                {2048, 2048, "rectangular", 10000, 1024},
                {256, 64, "hann", 5, 5}};

static GstBuffer *
copy_as_app(GstBuffer *frames, gboolean timed)
{
  GstMapInfo map;
  fail_unless(gst_buffer_map(frames, &map, GST_MAP_READ));
  GstBuffer *copy = gst_buffer_new_memdup(map.data, map.size);
  gst_buffer_unmap(frames, &map);
  if (timed) {
    GST_BUFFER_PTS(copy) = GST_BUFFER_PTS(frames);
    GST_BUFFER_DURATION(copy) = GST_BUFFER_DURATION(frames);
  }
  GST_BUFFER_OFFSET(copy) = GST_BUFFER_OFFSET(frames);
  GST_BUFFER_OFFSET_END(copy) = GST_BUFFER_OFFSET_END(frames);
  return copy;
}

GST_START_TEST(test_roundtrip_through_application)
{
  const guint i = __i__ / 2;
  const gboolean timed = __i__ % 2 == 0;
  TestRng rng = test_rng("through an application %u", i);
  TestSignal signal;
  test_signal_random(&signal, &rng, CUDAFFT_SAMPLE_F32, 2, RATE, app_rows[i].samples,
                     TEST_READ_POW2);
  GstHarness *fft = eu_harness_new("cudafft backend=%s fft-size=%u hop=%u window=%s", eu_backend,
                                   app_rows[i].fft_size, app_rows[i].hop, app_rows[i].window);
  eu_harness_signal_caps(fft, &signal);
  const GstClockTime start = 3 * GST_SECOND + 17;
  /* two runs: the second part after a gap of a second */
  const gsize cut = signal.frames / 2;
  const GstClockTime later = start + GST_SECOND; /* sample s of the second part: later + s/rate */
  const GstClockTime second = eu_sample_time(later, cut, RATE);
  GPtrArray *frames = eu_buffer_list();
  eu_push_signal(fft, &signal, 0, cut, app_rows[i].chunk, start, frames);
  eu_push_signal(fft, &signal, cut, signal.frames - cut, app_rows[i].chunk, later, frames);
  eu_push_eos(fft, frames);
  GstCaps *caps = gst_pad_get_current_caps(fft->sinkpad);

  GstHarness *h = eu_harness_new("cudaifft backend=%s", eu_backend);
  GstBus *bus = eu_harness_bus(h);
  gst_harness_set_src_caps(h, caps);
  GPtrArray *out = eu_buffer_list();
  for (guint b = 0; b < frames->len; b++) {
    fail_unless_equals_int(gst_harness_push(h, copy_as_app(g_ptr_array_index(frames, b), timed)),
                           GST_FLOW_OK);
    eu_pull_all(h, out);
  }
  eu_push_eos(h, out);
  GstMessage *warning = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  const gchar *row = timed ? "timed" : "untimed";
  if (timed) {
    GString *why = g_string_new(NULL);
    const gsize first[] = {0, cut};
    const GstClockTime starts[] = {start, second};
    double error = 0.0;
    fail_unless(eu_check_roundtrip_runs(out, &signal, first, starts, cut > 0 ? 2 : 1, &error, why),
                "fft-size %u hop %u, %zu samples through an application: %s", app_rows[i].fft_size,
                app_rows[i].hop, signal.frames, why->str);
    g_string_free(why, TRUE);
    fail_unless(warning == NULL, "%s: a WARNING", row);
  } else {
    fail_unless(warning != NULL, "untimed frames without an end: no WARNING");
    GError *err = NULL;
    gst_message_parse_warning(warning, &err, NULL);
    fail_unless(strstr(err->message, "PTS and duration") != NULL, "the WARNING: %s", err->message);
    g_clear_error(&err);
    /* the samples are there, at most fft-size - 1 of padding more per run */
    gsize got = 0;
    for (guint b = 0; b < out->len; b++)
      got += gst_buffer_get_size(g_ptr_array_index(out, b)) / (2 * sizeof(float));
    fail_unless(got >= signal.frames && got < signal.frames + 2 * app_rows[i].fft_size,
                "untimed: %zu samples out for %zu in", got, signal.frames);
  }
  if (warning)
    gst_message_unref(warning);
  g_ptr_array_unref(out);
  g_ptr_array_unref(frames);
  eu_harness_teardown(h, bus);
  gst_harness_teardown(fft);
  test_signal_clear(&signal);
}
GST_END_TEST;

static Suite *
roundtrip_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudaifft", &tc);
  tcase_add_test(tc, test_metadata);
  tcase_add_test(tc, test_output_caps);
  tcase_add_loop_test(tc, test_roundtrip, 0, TRIP_ROWS);
  tcase_add_loop_test(tc, test_roundtrip_mixed_sizes, 0, G_N_ELEMENTS(mixed_trip_rows));
  tcase_add_loop_test(tc, test_roundtrip_discont, 0, 2);
  tcase_add_test(tc, test_roundtrip_flush);
  tcase_add_test(tc, test_settings_change_while_playing);
  tcase_add_loop_test(tc, test_bad_caps_refused, 0, G_N_ELEMENTS(bad_caps_rows));
  tcase_add_test(tc, test_split_frames_carried);
  tcase_add_loop_test(tc, test_roundtrip_through_application, 0, 2 * G_N_ELEMENTS(app_rows));
  tcase_add_test(tc, test_representation_refused_with_message);
  tcase_add_test(tc, test_one_error_per_failure);
  tcase_add_test(tc, test_too_many_channels_refused);
  tcase_add_test(tc, test_caps_after_refusal);
  tcase_add_test(tc, test_latency);
  tcase_add_test(tc, test_state_cycles);
  tcase_add_test(tc, test_two_pipelines_at_once);
  return s;
}

EU_MAIN(roundtrip_suite)
