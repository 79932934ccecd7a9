/* test_messages.c: what the elements say, on the backend named by argv[1] (cpu|cuda), where a user
 * reads it: an ir-location that holds no audio (a PNG picture, a video-only Matroska file) fails
 * with one ERROR in the whole pipeline, from cudaconvolve, saying "no audio stream" and naming the
 * file and what it holds (not GStreamer's "Internal data stream error"); the decode's PROGRESS
 * message for a file comes before any ERROR about that file (a response decoded fine whose
 * channels do not fit the stream, and the file without audio); with backend=auto and no usable
 * GPU each element says once per start, in the debug log and in an INFO message on the bus, that
 * it runs on the CPU backend, with the reason (never empty parentheses; the library's words for
 * the host), and cudaspectrumscope makes its display once per start. */
#include "element_util.h"

#include <cudafft/common.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Runs a launch line to EOS (at most 30 s): fails the test where it does not. */
static void
run_to_eos(const char *line)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(line, &error);
  fail_unless(pipeline && !error, "\"%s\": %s", line, error ? error->message : "");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *m =
      gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS, "\"%s\" did not run to EOS", line);
  gst_message_unref(m);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}

/* A file made by GStreamer's own elements: `producer` ends in "! filesink location=". */
static gchar *
make_file(const char *label, const char *producer)
{
  gchar *path = g_strdup_printf("%s/cudafft-messages-%d-%s", g_get_tmp_dir(), (int)getpid(), label);
  gchar *line = g_strdup_printf("%s%s", producer, path);
  run_to_eos(line);
  g_free(line);
  return path;
}

static gchar *
convolve_line(const char *ir)
{
  return g_strdup_printf("audiotestsrc num-buffers=20 ! audio/x-raw,format=F32LE,rate=48000,"
                         "channels=2 ! cudaconvolve name=e backend=%s ir-location=\"%s\" ! "
                         "fakesink",
                         eu_backend, ir);
}

/* Files without audio: one ERROR, from cudaconvolve, that says so. */
GST_START_TEST(test_ir_without_audio)
{
  static const struct {
    const char *label, *producer, *holds;
  } files[] = {
      {"picture.png",
       "videotestsrc num-buffers=1 ! video/x-raw,width=64,height=48 ! pngenc ! filesink location=",
       "video/x-raw"},
      {"video.mkv",
       "videotestsrc num-buffers=10 ! video/x-raw,format=I420,width=64,height=48,framerate=25/1 "
       "! matroskamux ! filesink location=",
       "video/x-raw"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
    gchar *path = make_file(files[i].label, files[i].producer);
    gchar *line = convolve_line(path);
    const char *const words[] = {"no audio stream", path, files[i].holds, NULL};
    eu_check_one_error(line, 2, words);
    g_free(line);
    unlink(path);
    g_free(path);
  }
}
GST_END_TEST;

/* The bus of a run of `line`, from PLAYING to the first ERROR (at most 30 s): the PROGRESS message
 * that ended the decode of ir-location (COMPLETE or ERROR) must come before it. */
static void
check_progress_before_error(const char *line, GstProgressType want, const char *row)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(line, &error);
  fail_unless(pipeline && !error, "\"%s\": %s", line, error ? error->message : "");
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  gint ended = -1;
  gboolean errored = FALSE;
  const gint64 deadline = g_get_monotonic_time() + 30 * G_TIME_SPAN_SECOND;
  while (!errored && g_get_monotonic_time() < deadline) {
    GstMessage *m = gst_bus_timed_pop_filtered(
        bus, 100 * GST_MSECOND, GST_MESSAGE_ERROR | GST_MESSAGE_PROGRESS | GST_MESSAGE_EOS);
    if (!m)
      continue;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_PROGRESS) {
      GstProgressType type;
      gchar *code = NULL;
      gst_message_parse_progress(m, &type, &code, NULL);
      if (g_strcmp0(code, "ir-location") == 0 && type != GST_PROGRESS_TYPE_START &&
          type != GST_PROGRESS_TYPE_CONTINUE) {
        fail_unless(ended < 0, "%s: two PROGRESS ends for one decode", row);
        ended = type;
      }
      g_free(code);
    } else {
      fail_unless(GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR, "%s: EOS without an ERROR", row);
      errored = TRUE;
    }
    gst_message_unref(m);
  }
  fail_unless(errored, "%s: no ERROR", row);
  fail_unless(ended == (gint)want,
              "%s: the decode's PROGRESS (%d, expected %d) did not come "
              "before the ERROR",
              row, ended, want);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}

GST_START_TEST(test_progress_before_error)
{
  /* decoded fine, but 3 channels for a stereo stream: the element's ERROR after "Decoded" */
  gchar *three = make_file("three.wav", "audiotestsrc num-buffers=2 samplesperbuffer=500 ! "
                                        "audio/x-raw,format=F32LE,rate=48000,channels=3 ! wavenc ! "
                                        "filesink location=");
  gchar *picture = make_file("order.png", "videotestsrc num-buffers=1 ! "
                                          "video/x-raw,width=32,height=32 ! pngenc ! "
                                          "filesink location=");
  for (guint run = 0; run < 5; run++) {
    gchar *line = convolve_line(three);
    check_progress_before_error(line, GST_PROGRESS_TYPE_COMPLETE, "3 channels");
    g_free(line);
    line = convolve_line(picture);
    check_progress_before_error(line, GST_PROGRESS_TYPE_ERROR, "a picture");
    g_free(line);
  }
  unlink(three);
  unlink(picture);
  g_free(three);
  g_free(picture);
}
GST_END_TEST;

/* The debug log's lines at WARNING level that say an element runs on the CPU backend, and the
 * lines that say where the scope's display runs (one per display made), counted by a log
 * function of the test's own. */
static gint cpu_warnings, empty_reasons, displays_made;

static void
count_log(GstDebugCategory *category, GstDebugLevel level, const gchar *file, const gchar *function,
          gint line, GObject *object, GstDebugMessage *message, gpointer data)
{
  (void)category;
  (void)file;
  (void)function;
  (void)line;
  (void)object;
  (void)data;
  const gchar *text = gst_debug_message_get(message);
  if (!text)
    return;
  if (level == GST_LEVEL_WARNING && strstr(text, "CPU backend")) {
    g_atomic_int_inc(&cpu_warnings);
    if (strstr(text, "()"))
      g_atomic_int_inc(&empty_reasons);
  }
  if (strstr(text, "the spectrum display runs on the") && strstr(text, "(asked for"))
    g_atomic_int_inc(&displays_made);
}

/* Runs `line` to EOS `starts` times (PLAYING, EOS, READY, again), counting the INFO messages that
 * say an element runs on the CPU, and those of them that do not hold `reason`. */
static void
run_counting_infos(const char *line, guint starts, const char *reason, guint *infos,
                   guint *without_reason)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(line, &error);
  fail_unless(pipeline && !error, "\"%s\": %s", line, error ? error->message : "");
  GstBus *bus = gst_element_get_bus(pipeline);
  *infos = *without_reason = 0;
  for (guint start = 0; start < starts; start++) {
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    for (;;) {
      GstMessage *m = gst_bus_timed_pop_filtered(
          bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_INFO);
      fail_unless(m && GST_MESSAGE_TYPE(m) != GST_MESSAGE_ERROR, "\"%s\" did not run to EOS", line);
      if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS) {
        gst_message_unref(m);
        break;
      }
      GError *err = NULL;
      gchar *debug = NULL;
      gst_message_parse_info(m, &err, &debug);
      /* gst-launch-1.0 prints an INFO's debug text: the sentence must be there too */
      if (err && strstr(err->message, "CPU") && debug && strstr(debug, err->message)) {
        (*infos)++;
        if (!strstr(err->message, reason) || !strstr(err->message, "backend=auto"))
          (*without_reason)++;
      }
      g_clear_error(&err);
      g_free(debug);
      gst_message_unref(m);
    }
    gst_element_set_state(pipeline, GST_STATE_READY);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}

/* With backend=auto and no usable GPU, each element says so once per start where gst-launch-1.0
 * shows it: an INFO message on the bus, its text (and debug text, which gst-launch-1.0 prints)
 * naming the reason the library gives (no driver, a driver too old, no device, no CUDA in the
 * build); nothing with a GPU, nothing with backend=cpu. */
GST_START_TEST(test_fallback_said_on_the_bus)
{
  char reason[256];
  const gboolean gpu = cudafft_cuda_unavailable_reason(reason, sizeof reason) == 0;
  static const struct {
    const char *line;
    guint elements; /* on auto */
  } lines[] = {
      {"audiotestsrc num-buffers=5 ! cudafft backend=auto ! fakesink", 1},
      {"audiotestsrc num-buffers=5 ! cudafft backend=auto ! cudaifft backend=auto ! fakesink", 2},
      {"audiotestsrc num-buffers=5 ! cudaspectrum backend=auto ! fakesink", 1},
      {"audiotestsrc num-buffers=5 ! audio/x-raw,format=F32LE ! cudaconvolve backend=auto ! "
       "fakesink",
       1},
      {"audiotestsrc num-buffers=5 ! cudaspectrumscope backend=auto ! fakesink", 1},
      {"audiotestsrc num-buffers=5 ! cudamelspectrogram backend=auto preset=kaldi-fbank ! "
       "fakesink",
       1},
      {"audiotestsrc num-buffers=5 ! cudafft backend=cpu ! cudaifft backend=cpu ! fakesink", 0},
  };
  for (guint i = 0; i < G_N_ELEMENTS(lines); i++) {
    guint infos = 0, without_reason = 0;
    run_counting_infos(lines[i].line, 2, reason, &infos, &without_reason);
    const guint want = gpu ? 0 : 2 * lines[i].elements;
    fail_unless(infos == want, "%s: %u INFO messages that the CPU runs in two starts, expected %u",
                lines[i].line, infos, want);
    fail_unless(without_reason == 0, "%s: an INFO without \"%s\" or backend=auto", lines[i].line,
                reason);
  }
}
GST_END_TEST;

GST_START_TEST(test_fallback_said_once)
{
  const gboolean gpu = cudafft_has_cuda_backend() && cudafft_cuda_device_count() > 0;
  /* the engine's INFO line counts the displays made (not DEBUG: a level that low would wake every
   * GST_DEBUG of the plugin) */
  gst_debug_set_threshold_for_name("cudafftbackend", GST_LEVEL_INFO);
  gst_debug_set_threshold_for_name("cudafftaudiofilter", GST_LEVEL_WARNING);
  gst_debug_add_log_function(count_log, NULL, NULL);
  static const char *const lines[] = {
      "audiotestsrc num-buffers=5 ! cudafft backend=auto ! fakesink",
      "audiotestsrc num-buffers=5 ! cudaspectrum backend=auto ! fakesink",
      "audiotestsrc num-buffers=5 ! audio/x-raw,format=F32LE ! cudaconvolve backend=auto ! "
      "fakesink",
      "audiotestsrc num-buffers=5 ! cudafft backend=cpu ! cudaifft backend=auto ! fakesink",
      "audiotestsrc num-buffers=5 ! cudaspectrumscope backend=auto ! fakesink",
  };
  for (guint i = 0; i < G_N_ELEMENTS(lines); i++) {
    g_atomic_int_set(&cpu_warnings, 0);
    g_atomic_int_set(&empty_reasons, 0);
    g_atomic_int_set(&displays_made, 0);
    run_to_eos(lines[i]);
    fail_unless(g_atomic_int_get(&cpu_warnings) == (gpu ? 0 : 1),
                "%s: %d warnings that the CPU backend runs, expected %d", lines[i],
                g_atomic_int_get(&cpu_warnings), gpu ? 0 : 1);
    fail_unless(g_atomic_int_get(&empty_reasons) == 0, "%s: a reason in empty parentheses",
                lines[i]);
    if (strstr(lines[i], "cudaspectrumscope"))
      fail_unless(g_atomic_int_get(&displays_made) == 1, "%s: the display made %d times", lines[i],
                  g_atomic_int_get(&displays_made));
  }
  gst_debug_remove_log_function(count_log);
}
GST_END_TEST;

static Suite *
messages_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("messages", &tc);
  tcase_add_test(tc, test_ir_without_audio);
  tcase_add_test(tc, test_progress_before_error);
  tcase_add_test(tc, test_fallback_said_once);
  tcase_add_test(tc, test_fallback_said_on_the_bus);
  return s;
}

EU_MAIN(messages_suite)
