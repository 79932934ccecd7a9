/* test_convolve_upstream.c: the checks of GStreamer's own unit test for `audiofirfilter`
 * (gst-plugins-good tests/check/elements/audiofirfilter.c: test_pipeline and, in newer releases,
 * test_fft_stereo_eos_flush), run on cudaconvolve on the backend named by argv[1] (cpu|cuda). They
 * are restated here, not copied, on F64 audio (which both filter in double precision):
 * - a pipeline of 1000 sine buffers whose 6-tap kernel {0, 0, 0, 0, 0, 1} is set from the
 *   rate-changed handler: the first buffer out starts with 5 exact zeros and then the signal,
 *   EOS comes, and nothing posts an ERROR or a WARNING;
 * - 13 buffers of 1024 stereo white-noise frames through a 64-tap kernel with latency 63, the
 *   element's input and output taken by pad probes: as many frames come out as went in, and
 *   output frame t of channel c is sum_i in[t + 63 - i][c] h[i] (input frames outside the input
 *   count as 0) within 1e-9, the tail at EOS included.
 * Unlike the upstream test, the sinks do not sync to the clock: the checks do not depend on
 * timing, and 1000 buffers in real time would take 23 s. */
#include "element_util.h"

#include <math.h>

/* The pipeline of audiotestsrc, a capsfilter to F64 (channels: 0 for any), the element and
 * fakesink, linked; the element in *filter (owned by the pipeline). */
static GstElement *
make_pipeline(guint channels, GstElement **filter, GstElement **src, GstElement **sink)
{
  GstElement *pipeline = gst_pipeline_new(NULL);
  *src = gst_element_factory_make("audiotestsrc", NULL);
  GstElement *caps_filter = gst_element_factory_make("capsfilter", NULL);
  *filter = gst_element_factory_make("cudaconvolve", NULL);
  *sink = gst_element_factory_make("fakesink", NULL);
  fail_unless(
      pipeline && *src && caps_filter && *filter && *sink,
      "cannot make the pipeline's elements (is GST_PLUGIN_PATH the build's plugin folder?)");
  GstCaps *caps = gst_caps_new_simple("audio/x-raw", "format", G_TYPE_STRING, GST_AUDIO_NE(F64),
                                      "layout", G_TYPE_STRING, "interleaved", NULL);
  if (channels)
    gst_caps_set_simple(caps, "channels", G_TYPE_INT, (int)channels, NULL);
  g_object_set(caps_filter, "caps", caps, NULL);
  gst_caps_unref(caps);
  gst_util_set_object_arg(G_OBJECT(*filter), "backend", eu_backend);
  g_object_set(*sink, "sync", FALSE, NULL);
  gst_bin_add_many(GST_BIN(pipeline), *src, caps_filter, *filter, *sink, NULL);
  fail_unless(gst_element_link_many(*src, caps_filter, *filter, *sink, NULL), "cannot link");
  return pipeline;
}

/* Plays the pipeline until EOS, an ERROR or a WARNING (60 s at most) and stops it; fails the test
 * on anything but EOS. */
static void
play_to_eos(GstElement *pipeline)
{
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE,
          "cannot set the pipeline to PLAYING");
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *message = gst_bus_timed_pop_filtered(
      bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
  gchar *text = NULL;
  if (message && GST_MESSAGE_TYPE(message) != GST_MESSAGE_EOS) {
    GError *error = NULL;
    gchar *debug = NULL;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR)
      gst_message_parse_error(message, &error, &debug);
    else
      gst_message_parse_warning(message, &error, &debug);
    text = g_strdup_printf("%s from %s: %s | %s", GST_MESSAGE_TYPE_NAME(message),
                           GST_OBJECT_NAME(GST_MESSAGE_SRC(message)), error->message,
                           debug ? debug : "");
    g_clear_error(&error);
    g_free(debug);
  }
  const gboolean eos = message && GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS;
  if (message)
    gst_message_unref(message);
  gst_object_unref(bus);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS,
              "cannot set the pipeline to NULL");
  fail_unless(eos, "no EOS within 60 s: %s", text ? text : "no message at all");
  g_free(text);
}

/* test_pipeline ------------------------------------------------------------------------------- */

/* The first output buffer's first samples, taken in the streaming thread and checked in the
 * test's. */
typedef struct {
  gboolean seen;
  gsize size;
  gdouble first[6];
} FirstBuffer;

static void
on_rate_changed(GstElement *element, gint rate, gpointer user_data)
{
  gint *rates = user_data;
  rates[0]++;
  rates[1] = rate;
  static const double delay5[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 1.0};
  eu_set_kernel(element, delay5, G_N_ELEMENTS(delay5));
}

static void
on_handoff(GstElement *sink, GstBuffer *buffer, GstPad *pad, gpointer user_data)
{
  (void)sink, (void)pad;
  FirstBuffer *first = user_data;
  if (first->seen)
    return;
  first->seen = TRUE;
  first->size = gst_buffer_get_size(buffer);
  gst_buffer_extract(buffer, 0, first->first, MIN(first->size, sizeof first->first));
}

GST_START_TEST(test_upstream_pipeline)
{
  GstElement *filter, *src, *sink;
  GstElement *pipeline = make_pipeline(0, &filter, &src, &sink);
  g_object_set(src, "num-buffers", 1000, NULL);
  gint rates[2] = {0, 0}; /* signals, last rate */
  FirstBuffer first = {0};
  g_signal_connect(filter, "rate-changed", G_CALLBACK(on_rate_changed), rates);
  g_object_set(sink, "signal-handoffs", TRUE, NULL);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), &first);
  play_to_eos(pipeline);
  gst_object_unref(pipeline);

  fail_unless(rates[0] >= 1 && rates[1] > 0, "rate-changed: %d signals, last rate %d", rates[0],
              rates[1]);
  fail_unless(first.seen, "no buffer reached the sink");
  fail_unless(first.size > 5 * sizeof(gdouble), "the first buffer holds %zu bytes", first.size);
  /* the delay: 5 exact zeros (the direct path's sum of zero products), then the sine, whose
   * first sample audiotestsrc makes nonzero */
  for (int i = 0; i < 5; i++)
    fail_unless(first.first[i] == 0.0, "sample %d is %g, want 0", i, first.first[i]);
  fail_unless(first.first[5] != 0.0, "sample 5 is 0: the input did not come through");
}
GST_END_TEST;

/* test_fft_stereo_eos_flush ------------------------------------------------------------------- */

#define FLUSH_TAPS 64 /* the partitioned path, and audiofirfilter's FFT mode */
#define FLUSH_CHANNELS 2
#define FLUSH_LATENCY (FLUSH_TAPS - 1)
#define FLUSH_FRAMES_PER_BUFFER 1024
#define FLUSH_BUFFERS 13
/* Absolute, on white noise of amplitude 0.8 through taps of at most 0.5: double precision end to
 * end gives 1e-15; any float rounding of the samples, taps or spectra 1e-7 or more. */
#define FLUSH_TOLERANCE 1e-9

static GstPadProbeReturn
collect_samples(GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  (void)pad;
  GArray *samples = user_data;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GstMapInfo map;
  if (gst_buffer_map(buffer, &map, GST_MAP_READ)) {
    g_array_append_vals(samples, map.data, (guint)(map.size / sizeof(gdouble)));
    gst_buffer_unmap(buffer, &map);
  }
  return GST_PAD_PROBE_OK;
}

static void
probe_pad(GstElement *element, const char *name, GArray *samples)
{
  GstPad *pad = gst_element_get_static_pad(element, name);
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, collect_samples, samples, NULL);
  gst_object_unref(pad);
}

GST_START_TEST(test_upstream_fft_stereo_eos_flush)
{
  double h[FLUSH_TAPS];
  for (guint i = 0; i < FLUSH_TAPS; i++)
    h[i] = (double)((i * 7919) % 101) / 100.0 - 0.5;
  GstElement *filter, *src, *sink;
  GstElement *pipeline = make_pipeline(FLUSH_CHANNELS, &filter, &src, &sink);
  g_object_set(src, "wave", 5 /* white noise */, "samplesperbuffer", FLUSH_FRAMES_PER_BUFFER,
               "num-buffers", FLUSH_BUFFERS, NULL);
  eu_set_kernel(filter, h, FLUSH_TAPS);
  /* drain-tail=false: at EOS as many frames as came in, audiofirfilter's rule */
  g_object_set(filter, "latency", (guint64)FLUSH_LATENCY, "drain-tail", FALSE, NULL);
  GArray *in = g_array_new(FALSE, FALSE, sizeof(gdouble));
  GArray *out = g_array_new(FALSE, FALSE, sizeof(gdouble));
  probe_pad(filter, "sink", in);
  probe_pad(filter, "src", out);
  play_to_eos(pipeline);
  gst_object_unref(pipeline);

  const guint in_frames = in->len / FLUSH_CHANNELS, out_frames = out->len / FLUSH_CHANNELS;
  const gdouble *x = (const gdouble *)in->data, *y = (const gdouble *)out->data;
  fail_unless(in_frames == FLUSH_BUFFERS * FLUSH_FRAMES_PER_BUFFER && out_frames == in_frames,
              "%u frames in (want %u), %u out", in_frames, FLUSH_BUFFERS * FLUSH_FRAMES_PER_BUFFER,
              out_frames);
  /* output frame t is y[t + latency] of the convolution: the last `latency` frames come from the
   * tail drained at EOS */
  double worst = 0.0;
  guint worst_t = 0;
  for (guint t = 0; t < out_frames; t++)
    for (guint c = 0; c < FLUSH_CHANNELS; c++) {
      double want = 0.0;
      for (guint i = 0; i < FLUSH_TAPS; i++) {
        const gint64 n = (gint64)t + FLUSH_LATENCY - (gint64)i;
        if (n >= 0 && n < (gint64)in_frames)
          want += x[n * FLUSH_CHANNELS + c] * h[i];
      }
      const double d = fabs(y[(gsize)t * FLUSH_CHANNELS + c] - want);
      if (d > worst || isnan(d)) {
        worst = d;
        worst_t = t;
      }
    }
  g_array_free(in, TRUE);
  g_array_free(out, TRUE);
  fail_unless(worst < FLUSH_TOLERANCE, "max error %g at output frame %u (tolerance %g)", worst,
              worst_t, FLUSH_TOLERANCE);
  g_print("fft_stereo_eos_flush: max error %.3g over %u frames x %d channels\n", worst, out_frames,
          FLUSH_CHANNELS);
}
GST_END_TEST;

static Suite *
convolve_upstream_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("convolve-upstream", &tc);
  tcase_add_test(tc, test_upstream_pipeline);
  tcase_add_test(tc, test_upstream_fft_stereo_eos_flush);
  return s;
}

EU_MAIN(convolve_upstream_suite)
