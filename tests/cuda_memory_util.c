/* cuda_memory_util.c: see the header. */
#include "cuda_memory_util.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <stdio.h>
#include <string.h>

void
random_signal(TestSignal *s, const char *label)
{
  TestRng rng = test_rng("%s", label);
  test_signal_alloc(s, CUDAFFT_SAMPLE_F32, CM_CHANNELS, CM_RATE, CM_FRAMES, TEST_READ_POW2);
  for (guint c = 0; c < CM_CHANNELS; c++)
    for (gsize j = 0; j < CM_FRAMES; j++)
      test_signal_set(s, j, c, 0.8 * test_rng_uniform53(&rng) - 0.4);
}

GstElement *
launch(const char *format, ...)
{
  va_list args;
  va_start(args, format);
  gchar *desc = g_strdup_vprintf(format, args);
  va_end(args);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &error);
  fail_unless(pipeline && !error, "cannot make '%s': %s", desc, error ? error->message : "?");
  g_free(desc);
  return pipeline;
}

/* Pushes the whole signal in 480-frame buffers and EOS. */
void
push_signal(GstElement *pipeline, const TestSignal *s)
{
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  for (gsize first = 0; first < s->frames; first += 480) {
    const gsize n = MIN(480, s->frames - first);
    /* apart: gst-check's fail_unless_equals_int declares a variable named `first` */
    GstBuffer *buffer = eu_signal_buffer(s, first, n, 0);
    const GstFlowReturn ret = gst_app_src_push_buffer(GST_APP_SRC(src), buffer);
    fail_unless_equals_int(ret, GST_FLOW_OK);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  gst_object_unref(src);
}

/* Every sample up to EOS from the appsink, in out (GstSample). */
void
pull_all(GstElement *pipeline, GPtrArray *out)
{
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 60 * GST_SECOND);
    if (!sample)
      break;
    g_ptr_array_add(out, sample);
  }
  fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)), "no EOS within 60 s");
  gst_object_unref(sink);
}

/* The first ERROR of the pipeline's bus, if any (*text: message | debug). */
gboolean
pipeline_error(GstElement *pipeline, gchar **text)
{
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  gst_object_unref(bus);
  if (!msg)
    return FALSE;
  GError *error = NULL;
  gchar *debug = NULL;
  gst_message_parse_error(msg, &error, &debug);
  *text = g_strdup_printf("%s | %s", error->message, debug ? debug : "");
  g_error_free(error);
  g_free(debug);
  gst_message_unref(msg);
  return TRUE;
}

/* An empty list of frames (GstSample). */
GPtrArray *
frame_list(void)
{
  return g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
}

/* Plays pipeline over s to EOS, its frames into out; no ERROR may come. It stays PLAYING. */
void
play_to_eos(GstElement *pipeline, const TestSignal *s, GPtrArray *out)
{
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  push_signal(pipeline, s);
  pull_all(pipeline, out);
  gchar *text = NULL;
  fail_if(pipeline_error(pipeline, &text), "%s", text);
}

void
play_cycle(GstElement *pipeline, const TestSignal *s, guint cycle, GPtrArray *out)
{
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  if (cycle > 0) {
    fail_unless(gst_element_send_event(pipeline, gst_event_new_flush_start()));
    fail_unless(gst_element_send_event(pipeline, gst_event_new_flush_stop(TRUE)));
  }
  push_signal(pipeline, s);
  pull_all(pipeline, out);
  gchar *text = NULL;
  fail_if(pipeline_error(pipeline, &text), "cycle %u: %s", cycle, text);
  gst_element_set_state(pipeline, cycle % 2 ? GST_STATE_NULL : GST_STATE_READY);
}

gboolean
is_cuda_memory(GstBuffer *buffer)
{
  return gst_buffer_n_memory(buffer) == 1 &&
         gst_memory_is_type(gst_buffer_peek_memory(buffer, 0), "gst.cuda.memory");
}

gboolean
caps_have_cuda_memory(GstCaps *caps)
{
  GstCapsFeatures *features = gst_caps_get_features(caps, 0);
  return features && gst_caps_features_contains(features, "memory:CUDAMemory");
}

guint
count_cuda_memory(GPtrArray *samples)
{
  guint count = 0;
  for (guint i = 0; i < samples->len; i++)
    count += is_cuda_memory(gst_sample_get_buffer(g_ptr_array_index(samples, i)));
  return count;
}

GstElement *
audio_pipeline(const TestSignal *s, const char *middle)
{
  GstElement *pipeline =
      launch("appsrc name=src format=time ! %s ! appsink name=sink sync=false", middle);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *caps = eu_raw_caps(s->format, s->rate, s->channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  gst_object_unref(src);
  return pipeline;
}

void
run_audio(const TestSignal *s, const char *middle, GPtrArray *out)
{
  GstElement *pipeline = audio_pipeline(s, middle);
  play_to_eos(pipeline, s, out);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

/* Every buffer of got byte for byte, with its timestamps, the one of want at the same place. */
void
check_same_buffers(GPtrArray *got, GPtrArray *want, const char *what)
{
  fail_unless(want->len >= 5, "%s: the system-memory path gave only %u buffers", what, want->len);
  fail_unless_equals_int(got->len, want->len);
  guint64 bytes = 0;
  for (guint i = 0; i < got->len; i++) {
    GstBuffer *a = gst_sample_get_buffer(g_ptr_array_index(got, i));
    GstBuffer *b = gst_sample_get_buffer(g_ptr_array_index(want, i));
    GstMapInfo ma, mb;
    fail_unless(gst_buffer_map(a, &ma, GST_MAP_READ), "%s: cannot map buffer %u", what, i);
    fail_unless(gst_buffer_map(b, &mb, GST_MAP_READ));
    gsize first = G_MAXSIZE, differ = 0;
    for (gsize k = 0; k < MIN(ma.size, mb.size); k++)
      if (ma.data[k] != mb.data[k]) {
        first = MIN(first, k);
        differ++;
      }
    const gsize size_a = ma.size, size_b = mb.size;
    bytes += ma.size;
    gst_buffer_unmap(a, &ma);
    gst_buffer_unmap(b, &mb);
    fail_unless(size_a == size_b && differ == 0,
                "%s: buffer %u differs from the system-memory path's (%" G_GSIZE_FORMAT
                " and %" G_GSIZE_FORMAT " bytes; %" G_GSIZE_FORMAT
                " bytes differ from byte %" G_GSIZE_FORMAT " on)",
                what, i, size_a, size_b, differ, first);
    fail_unless_equals_uint64(GST_BUFFER_PTS(a), GST_BUFFER_PTS(b));
    fail_unless_equals_uint64(GST_BUFFER_DURATION(a), GST_BUFFER_DURATION(b));
  }
  test_check(TRUE,
             "%s: %u buffers (%" G_GUINT64_FORMAT " bytes) byte for byte the system-memory "
             "path's, timestamps included",
             what, got->len, bytes);
}

/* Probe: the caps the link between cudafft and cudaifft settled on. */
GstPadProbeReturn
keep_caps(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    gst_caps_replace((GstCaps **)data, caps);
  }
  return GST_PAD_PROBE_OK;
}

/* Buffer probe: counts the buffers that go out before their device work is done (they carry our
 * fence meta, looked up by its name: the test sees only the plugin's behaviour). */
static GstPadProbeReturn
count_fenced(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  const GType api = g_type_from_name("GstCudafftFenceMetaAPI");
  if (buffer && api && gst_buffer_get_meta(buffer, api))
    g_atomic_int_inc((gint *)data);
  return GST_PAD_PROBE_OK;
}

/* Counts into *fenced the buffers element `name` of pipeline pushes before their device work is
 * done. */
void
watch_fences(GstElement *pipeline, const char *name, gint *fenced)
{
  GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), name);
  fail_unless(element != NULL, "no element %s", name);
  GstPad *pad = gst_element_get_static_pad(element, "src");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, count_fenced, fenced, NULL);
  gst_object_unref(pad);
  gst_object_unref(element);
}

void
require_element(const char *name)
{
  GstElementFactory *factory = gst_element_factory_find(name);
  fail_unless(factory != NULL,
              "no element %s: this GStreamer lacks nvcodec (gst-plugins-bad with GStreamer's CUDA "
              "library; ../shared/gpu/make-gst-bundle --nvcodec on the GPU machine)",
              name);
  gst_object_unref(factory);
}
