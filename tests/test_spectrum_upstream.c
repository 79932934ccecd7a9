/* test_spectrum_upstream.c: the checks of GStreamer's own unit test for `spectrum`
 * (gst-plugins-good tests/check/elements/spectrum.c: test_int16, test_int32, test_float32,
 * test_float64), run on cudaspectrum on the backend named by argv[1] (cpu|cuda). They are
 * restated here, not copied: with gst-check's pads around the element, one second of mono 44.1
 * kHz audio holding an 11025 Hz sine (the samples 0, max, 0, -max repeated) in one buffer, with
 * post-messages, interval 10 ms, 256 bands and threshold -80: the buffer passes through as the
 * same buffer with one reference, the first message comes from the element, is named spectrum and
 * has an endtime, and only the two bands around the middle (127 and 128) are above -20 dB; the
 * element and the bus end with the reference counts the upstream test asserts. */
#include "element_util.h"

#include <gst/audio/audio.h>

#define BANDS 256

#define CAPS_TEMPLATE                                                                              \
  "audio/x-raw, rate = (int) [ 1, MAX ], channels = (int) [ 1, MAX ], "                            \
  "layout = (string) interleaved, format = (string) { " GST_AUDIO_NE(S16) ", " GST_AUDIO_NE(       \
      S32) ", " GST_AUDIO_NE(F32) ", " GST_AUDIO_NE(F64) " }"

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(CAPS_TEMPLATE));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(CAPS_TEMPLATE));

static GstPad *src_pad, *sink_pad;

static const struct {
  const char *format;
  gsize sample_bytes;
} formats[] = {
    {GST_AUDIO_NE(S16), 2},
    {GST_AUDIO_NE(S32), 4},
    {GST_AUDIO_NE(F32), 4},
    {GST_AUDIO_NE(F64), 8},
};

/* The sine at a quarter of the rate: 0, +max, 0, -max, in the row's format. */
static GstBuffer *
quarter_rate_sine(guint row)
{
  const gsize samples = 44100, bytes = formats[row].sample_bytes;
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, samples * bytes, NULL);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  for (gsize j = 0; j < samples; j++) {
    const int sign = j % 4 == 1 ? 1 : j % 4 == 3 ? -1 : 0;
    guint8 *p = map.data + j * bytes;
    switch (row) {
    case 0: {
      const gint16 v = (gint16)(sign * 32767);
      memcpy(p, &v, sizeof v);
      break;
    }
    case 1: {
      const gint32 v = sign * 2147483647;
      memcpy(p, &v, sizeof v);
      break;
    }
    case 2: {
      const gfloat v = (gfloat)sign;
      memcpy(p, &v, sizeof v);
      break;
    }
    default: {
      const gdouble v = sign;
      memcpy(p, &v, sizeof v);
      break;
    }
    }
  }
  gst_buffer_unmap(buffer, &map);
  return buffer;
}

GST_START_TEST(test_upstream_spectrum_checks)
{
  const guint row = (guint)__i__;
  GstElement *spectrum = gst_check_setup_element("cudaspectrum");
  gst_util_set_object_arg(G_OBJECT(spectrum), "backend", eu_backend);
  src_pad = gst_check_setup_src_pad(spectrum, &src_template);
  sink_pad = gst_check_setup_sink_pad(spectrum, &sink_template);
  gst_pad_set_active(src_pad, TRUE);
  gst_pad_set_active(sink_pad, TRUE);
  g_object_set(spectrum, "post-messages", TRUE, "interval", GST_SECOND / 100, "bands", BANDS,
               "threshold", -80, NULL);
  fail_unless(gst_element_set_state(spectrum, GST_STATE_PLAYING) == GST_STATE_CHANGE_SUCCESS,
              "could not set to playing");

  GstBuffer *in = quarter_rate_sine(row);
  gchar *caps_string = g_strdup_printf("audio/x-raw, rate = (int) 44100, channels = (int) 1, "
                                       "layout = (string) interleaved, format = (string) %s",
                                       formats[row].format);
  GstCaps *caps = gst_caps_from_string(caps_string);
  g_free(caps_string);
  gst_check_setup_events(src_pad, spectrum, caps, GST_FORMAT_TIME);
  gst_caps_unref(caps);
  ASSERT_BUFFER_REFCOUNT(in, "inbuffer", 1);

  GstBus *bus = gst_bus_new();
  ASSERT_OBJECT_REFCOUNT(bus, "bus", 1);
  gst_element_set_bus(spectrum, bus);
  ASSERT_OBJECT_REFCOUNT(bus, "bus", 2);

  /* the element passes the buffer through untouched: the same buffer, one reference */
  fail_unless(gst_pad_push(src_pad, in) == GST_FLOW_OK);
  ASSERT_BUFFER_REFCOUNT(in, "inbuffer", 1);
  fail_unless_equals_int(g_list_length(buffers), 1);
  fail_unless(buffers->data == in);

  GstMessage *message = gst_bus_poll(bus, GST_MESSAGE_ELEMENT, -1);
  ASSERT_OBJECT_REFCOUNT(message, "message", 1);
  fail_unless(message != NULL);
  fail_unless(GST_MESSAGE_SRC(message) == GST_OBJECT(spectrum));
  fail_unless(GST_MESSAGE_TYPE(message) == GST_MESSAGE_ELEMENT);
  const GstStructure *structure = gst_message_get_structure(message);
  fail_if(structure == NULL);
  fail_unless_equals_string(gst_structure_get_name(structure), "spectrum");
  GstClockTime endtime;
  fail_unless(gst_structure_get_clock_time(structure, "endtime", &endtime));

  /* only the two bands around the middle are above -20 dB */
  const GValue *list = gst_structure_get_value(structure, "magnitude");
  for (guint i = 0; i < BANDS; ++i) {
    const gfloat level = g_value_get_float(gst_value_list_get_value(list, i));
    const gboolean middle = i == BANDS / 2 || i == BANDS / 2 - 1;
    fail_if(middle && level < -20.0, "band %u: %.2f dB", i, level);
    fail_if(!middle && level > -20.0, "band %u: %.2f dB", i, level);
  }
  fail_unless_equals_int(g_list_length(buffers), 1);
  fail_unless(buffers->data == in);

  gst_bus_set_flushing(bus, TRUE);
  ASSERT_OBJECT_REFCOUNT(spectrum, "spectrum", 2); /* the message holds one */
  gst_message_unref(message);
  ASSERT_OBJECT_REFCOUNT(spectrum, "spectrum", 1);
  gst_element_set_bus(spectrum, NULL);
  ASSERT_OBJECT_REFCOUNT(bus, "bus", 1);
  gst_object_unref(bus);
  fail_unless(gst_element_set_state(spectrum, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS,
              "could not set to null");
  ASSERT_OBJECT_REFCOUNT(spectrum, "spectrum", 1);

  gst_pad_set_active(src_pad, FALSE);
  gst_pad_set_active(sink_pad, FALSE);
  gst_check_teardown_src_pad(spectrum);
  gst_check_teardown_sink_pad(spectrum);
  gst_check_teardown_element(spectrum);
  gst_check_drop_buffers();
}
GST_END_TEST;

static Suite *
spectrum_upstream_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("spectrum-upstream", &tc);
  tcase_add_loop_test(tc, test_upstream_spectrum_checks, 0, G_N_ELEMENTS(formats));
  return s;
}

EU_MAIN(spectrum_upstream_suite)
