/* test_cudaconvolve_live.c: cudaconvolve in a live pipeline in real time, on the CPU backend (the
 * target: "the CPU backend runs a stereo long response at 64-sample blocks in real time on
 * one core"):
 *
 *   audiotestsrc is-live=true samplesperbuffer=64 ! audio/x-raw,format=F32LE,rate=48000,channels=2
 *     ! cudaconvolve backend=cpu block-size=64 (a 2 s random decaying kernel) ! appsink sync=true
 *
 * for 20 s of running time. No buffer may reach the sink late, and the latency the element reports
 * downstream must be its share (block-size samples) plus upstream's (audiotestsrc live: one
 * buffer).
 *
 * How lateness is detected. A sink renders a buffer at its running time plus the pipeline latency
 * (the LATENCY event the sink got); a buffer that arrives after that instant is late: an audio sink
 * would glitch. A probe on the appsink's sink pad runs in the streaming thread just before the sink
 * waits on the clock, so it sees the arrival instant: it compares the clock's running time then
 * (clock time - base time) with the buffer's running time (its PTS in the segment) + the sink's
 * latency, and records every late buffer and the smallest margin. appsink's own verdict is not
 * used alone: with its default max-lateness of -1 it never judges a buffer late and posts no QoS
 * message whatever happens, so "no QoS message" would prove nothing. It is asked for as a second
 * opinion here (qos=true max-lateness=0: a late buffer is dropped and a QoS message posted), and
 * any QoS message fails the test too. The sink's processing-deadline (20 ms by default, added to
 * the pipeline's latency as the sink's own share) is one block period: a buffer is due one period
 * after the latency the source and the element declare. Not less: their latency is that of the
 * data alone (the source releases a buffer when its last sample's time has come, and the element's
 * output waits block-size samples more), so with no processing deadline every buffer would arrive
 * late by the time it took to make; GStreamer leaves that time to the sink's processing deadline.
 * One period is the real-time bound itself: the element must process each block within its
 * period.
 *
 * Twice: first a control with a 64-tap kernel (the element does next to nothing), then the 2 s
 * response. A late buffer in the control is the machine's (its scheduling of the source's and
 * sink's threads), not the element's: the two runs' figures side by side tell which.
 *
 * Alone (a meson benchmark: benchmarks run one at a time): other tests on the same cores would make
 * buffers late for reasons of their own. Not under AddressSanitizer (run-asan.sh does not run the
 * 'live' suite): its slowdown is not the element's. CPU only: it tests the CPU backend's real-time
 * performance. */
#include "element_util.h"

#include <gst/base/gstbasesink.h>

#include <math.h>
#include <stdio.h>

#define RATE 48000
#define CHANNELS 2
#define BLOCK_SIZE 64         /* cudaconvolve's block-size: its latency in samples */
#define SAMPLES_PER_BUFFER 64 /* audiotestsrc's buffers: upstream's latency in samples */
#define KERNEL_SECONDS 2
#define CONTROL_TAPS 64
#define RUN_SECONDS 20

/* What the sink's probe saw, from the streaming thread (read after the pipeline stopped). */
typedef struct {
  GstElement *sink;
  guint buffers;
  guint64 frames;
  guint late;
  GstClockTimeDiff worst_margin; /* the smallest deadline - arrival, ns */
  guint64 worst_at;              /* the buffer it happened to */
  GstClockTime expected_pts;     /* where the next buffer must start: PTS + duration of the last */
  guint gaps;                    /* buffers that did not start there */
  GstClockTime latency;          /* the sink's latency at the last buffer */
} Arrivals;

static GstPadProbeReturn
on_sink_buffer(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Arrivals *a = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
  GstClock *clock = gst_element_get_clock(a->sink);
  if (!clock)
    return GST_PAD_PROBE_OK;
  const GstClockTime now = gst_clock_get_time(clock) - gst_element_get_base_time(a->sink);
  gst_object_unref(clock);
  GstEvent *event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0);
  const GstSegment *segment = NULL;
  if (event)
    gst_event_parse_segment(event, &segment);
  const GstClockTime running =
      segment ? gst_segment_to_running_time(segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buf))
              : GST_CLOCK_TIME_NONE;
  if (event)
    gst_event_unref(event);
  a->latency = gst_base_sink_get_latency(GST_BASE_SINK(a->sink));
  if (GST_CLOCK_TIME_IS_VALID(running)) {
    const GstClockTimeDiff margin = GST_CLOCK_DIFF(now, running + a->latency);
    if (a->buffers == 0 || margin < a->worst_margin) {
      a->worst_margin = margin;
      a->worst_at = a->buffers;
    }
    if (margin < 0)
      a->late++;
  }
  if (a->buffers > 0 && GST_BUFFER_PTS(buf) != a->expected_pts)
    a->gaps++;
  a->expected_pts = GST_BUFFER_PTS(buf) + GST_BUFFER_DURATION(buf);
  a->frames += gst_buffer_get_size(buf) / (CHANNELS * sizeof(float));
  a->buffers++;
  return GST_PAD_PROBE_OK;
}

/* cudaconvolve's own time per input buffer, from its sink pad to its src pad (the push of the
 * output it made), so that a failure tells the element's slowness from the machine's: a buffer can
 * be late with the element fast, when its thread waited for a core. */
typedef struct {
  gint64 entered; /* monotonic time, us, of the input buffer being filtered */
  guint buffers;
  gint64 total, worst; /* us */
} Processing;

static GstPadProbeReturn
on_element_input(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  ((Processing *)data)->entered = g_get_monotonic_time();
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
on_element_output(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  Processing *p = data;
  const gint64 took = g_get_monotonic_time() - p->entered;
  p->total += took;
  p->worst = MAX(p->worst, took);
  p->buffers++;
  return GST_PAD_PROBE_OK;
}

static void
probe_pad(GstElement *element, const char *pad_name, GstPadProbeCallback callback, gpointer data)
{
  GstPad *pad = gst_element_get_static_pad(element, pad_name);
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, callback, data, NULL);
  gst_object_unref(pad);
}

/* A 2 s response: uniform taps under a decaying envelope (a reverb's shape). */
static double *
reverb_kernel(gsize taps)
{
  TestRng rng = test_rng("live kernel");
  double *h = g_new(double, taps);
  for (gsize k = 0; k < taps; k++)
    h[k] = 0.05 * test_rng_uniform(&rng) * exp(-6.0 * (double)k / (double)taps);
  return h;
}

static GstClockTime
samples_time(guint samples)
{
  return gst_util_uint64_scale_int_round(samples, GST_SECOND, RATE);
}

GST_START_TEST(test_live_block_size_real_time)
{
  gchar *description = g_strdup_printf(
      "audiotestsrc name=src is-live=true samplesperbuffer=%d wave=white-noise volume=0.5 ! "
      "audio/x-raw,format=F32LE,rate=%d,channels=%d,layout=interleaved ! "
      "cudaconvolve name=c backend=%s block-size=%d ! "
      "appsink name=sink sync=true qos=true max-lateness=0 processing-deadline=%" G_GUINT64_FORMAT
      " drop=true "
      "max-buffers=16",
      SAMPLES_PER_BUFFER, RATE, CHANNELS, eu_backend, BLOCK_SIZE,
      (guint64)samples_time(BLOCK_SIZE));
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  fail_unless(pipeline && !error, "cannot make %s: %s", description, error ? error->message : "?");
  GstElement *c = gst_bin_get_by_name(GST_BIN(pipeline), "c");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  /* first the control: CONTROL_TAPS, all in the head, so that the element does next to nothing */
  const gsize taps = __i__ == 0 ? CONTROL_TAPS : (gsize)KERNEL_SECONDS * RATE;
  double *kernel = reverb_kernel(taps);
  eu_set_kernel(c, kernel, taps);
  g_free(kernel);
  Arrivals arrivals = {.sink = sink};
  probe_pad(sink, "sink", on_sink_buffer, &arrivals);
  Processing processing = {0};
  probe_pad(c, "sink", on_element_input, &processing);
  probe_pad(c, "src", on_element_output, &processing);
  GstBus *bus = gst_element_get_bus(pipeline);

  /* A live source negotiates in PAUSED, on its streaming thread; the element learns the rate, and
   * so its latency in time, from the caps. Waiting for them before PLAYING makes the latency the
   * pipeline computes on the way to PLAYING the final one; a real application gets there too
   * through the LATENCY message the element posts then (handled below as gst-launch does). */
  fail_if(gst_element_set_state(pipeline, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE);
  GstPad *csrc = gst_element_get_static_pad(c, "src");
  for (guint i = 0; i < 500; i++) {
    GstCaps *caps = gst_pad_get_current_caps(csrc);
    if (caps) {
      gst_caps_unref(caps);
      break;
    }
    g_usleep(10000);
  }
  gst_object_unref(csrc);
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE);
  fail_unless(gst_element_get_state(pipeline, NULL, NULL, 10 * GST_SECOND) ==
                  GST_STATE_CHANGE_SUCCESS,
              "the pipeline did not reach PLAYING");

  /* The latency at the element's source pad: its share plus audiotestsrc's one buffer (each
   * rounded to the nanosecond on its own, so 1 ns of slack); the pipeline's adds the sink's
   * processing deadline. */
  const GstClockTime want = samples_time(BLOCK_SIZE) + samples_time(SAMPLES_PER_BUFFER);
  const GstClockTime deadline = samples_time(BLOCK_SIZE);
  GstClockTime element_latency = 0, pipeline_latency = 0;
  gboolean live = FALSE;
  GstQuery *query = gst_query_new_latency();
  GstPad *src_pad = gst_element_get_static_pad(c, "src");
  fail_unless(gst_pad_query(src_pad, query), "the LATENCY query at cudaconvolve's src failed");
  gst_object_unref(src_pad);
  gst_query_parse_latency(query, &live, &element_latency, NULL);
  gst_query_unref(query);
  fail_unless(live, "upstream of the sink is not live");
  query = gst_query_new_latency();
  fail_unless(gst_element_query(pipeline, query), "the pipeline's LATENCY query failed");
  gst_query_parse_latency(query, NULL, &pipeline_latency, NULL);
  gst_query_unref(query);
  fail_unless(element_latency + 1 >= want && element_latency <= want + 1,
              "latency at cudaconvolve's src %" GST_TIME_FORMAT ", expected %" GST_TIME_FORMAT
              " (block-size %d + one buffer of %d samples)",
              GST_TIME_ARGS(element_latency), GST_TIME_ARGS(want), BLOCK_SIZE, SAMPLES_PER_BUFFER);
  fail_unless(pipeline_latency == element_latency + deadline,
              "pipeline latency %" GST_TIME_FORMAT ", expected %" GST_TIME_FORMAT
              " + the sink's processing deadline %" GST_TIME_FORMAT,
              GST_TIME_ARGS(pipeline_latency), GST_TIME_ARGS(element_latency),
              GST_TIME_ARGS(deadline));

  /* 20 s of running time, reading the bus meanwhile: ERROR and QoS fail, LATENCY is applied. */
  guint qos = 0;
  gchar *failure = NULL;
  GstClock *clock = gst_pipeline_get_clock(GST_PIPELINE(pipeline));
  const GstClockTime base = gst_element_get_base_time(pipeline);
  while (!failure && gst_clock_get_time(clock) - base < (GstClockTime)RUN_SECONDS * GST_SECOND) {
    GstMessage *msg = gst_bus_timed_pop_filtered(
        bus, 100 * GST_MSECOND, GST_MESSAGE_ERROR | GST_MESSAGE_QOS | GST_MESSAGE_LATENCY);
    if (!msg)
      continue;
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      gst_message_parse_error(msg, &err, NULL);
      failure =
          g_strdup_printf("ERROR from %s: %s", GST_MESSAGE_SRC_NAME(msg), err ? err->message : "?");
      g_clear_error(&err);
    } else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_QOS) {
      qos++;
    } else {
      gst_bin_recalculate_latency(GST_BIN(pipeline));
    }
    gst_message_unref(msg);
  }
  gst_object_unref(clock);
  fail_if(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_FAILURE);
  fail_unless(failure == NULL, "%s", failure);

  gchar *summary = g_strdup_printf(
      "%u buffers, %.2f s; the smallest margin %.3f ms (buffer %" G_GUINT64_FORMAT
      "), %u late, %u QoS messages; cudaconvolve's time per buffer: mean %.3f ms, worst %.3f ms, "
      "budget %.3f ms",
      arrivals.buffers, (double)arrivals.frames / RATE, (double)arrivals.worst_margin / 1e6,
      arrivals.worst_at, arrivals.late, qos,
      processing.buffers ? (double)processing.total / processing.buffers / 1e3 : 0.0,
      (double)processing.worst / 1e3, (double)samples_time(BLOCK_SIZE) / 1e6);
  printf("live (%s, %" G_GSIZE_FORMAT " taps): %s\n", __i__ == 0 ? "control" : "response", taps,
         summary);
  fflush(stdout);
  fail_unless(arrivals.latency == pipeline_latency,
              "the sink's latency is %" GST_TIME_FORMAT ", not the pipeline's %" GST_TIME_FORMAT,
              GST_TIME_ARGS(arrivals.latency), GST_TIME_ARGS(pipeline_latency));
  /* the stream ran in real time: at most a few blocks short of 20 s (the start, the lag) */
  fail_unless(arrivals.frames + 8 * RATE / 100 >= (guint64)RUN_SECONDS * RATE,
              "only %" G_GUINT64_FORMAT " frames reached the sink in %d s: %s", arrivals.frames,
              RUN_SECONDS, summary);
  fail_unless(arrivals.late == 0 && qos == 0, "buffers reached the sink late: %s", summary);
  /* stamped from sample counts, the output is continuous: each buffer starts where the last ended
   */
  fail_unless(arrivals.gaps == 0, "%u buffers did not start where the one before ended",
              arrivals.gaps);
  g_free(summary);

  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(c);
  gst_object_unref(pipeline);
  g_free(description);
}
GST_END_TEST;

static Suite *
live_suite(void)
{
  TCase *tc;
  Suite *s = eu_suite("cudaconvolve-live", &tc);
  tcase_add_loop_test(tc, test_live_block_size_real_time, 0, 2);
  return s;
}

EU_MAIN(live_suite)
