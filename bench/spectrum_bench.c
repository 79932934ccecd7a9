/* spectrum-bench: throughput of cudaspectrum on the GPU, on its CPU backend and of GStreamer's own
 * `spectrum`, in one run.
 *
 * For each case (channels, bands, interval, multi-channel) and element it builds
 *   appsrc ! ELEMENT bands=B interval=I multi-channel=M ... ! fakesink sync=false
 * with ELEMENT one of `cudaspectrum backend=cuda`, `cudaspectrum backend=cpu` and `spectrum`, F32LE
 * input at 48 kHz, interleaved. It pushes one warm-up buffer (caps, engine, first messages), then
 * pre-generated random audio in buffers of BUFFER frames from a second thread, and times the wall
 * clock from the first of those pushes to EOS on the bus. A bus sync handler consumes the
 * "spectrum" element messages as an application would, cheaply: it counts them, checks that the
 * first one of each run carries a `magnitude` of the right shape (a list of `bands` floats, or an
 * array of `channels` such arrays with multi-channel), and drops them. The count must match the
 * number of whole intervals pushed (+-1). Each element is timed RUNS times; the table gives the
 * median as audio seconds per wall second (the real-time factor) and as messages per second.
 *
 * How much audio: SECONDS (default 10 s), cut down per case and element so that one run takes
 * about MAX_WALL seconds at most (default 2 s): a short calibration run (0.5 s of audio, also a
 * warm-up, not reported) measures the speed first. --max-wall 0 always pushes SECONDS.
 *
 * Usage: spectrum-bench [--runs R] [--seconds S] [--max-wall W] [--buffer N] [--channels C,..]
 *          [--bands B,..] [--interval-ms I,..] [--multi 0|1[,..]] [--threshold T] [--phase]
 *          [--elements cuda,cpu,spectrum]
 *   Without the case options: 2 and 8 channels x 2049 bands x 10 and 1 ms x multi-channel 0, 1.
 *   The cuda element is skipped, saying why, where there is no CUDA device.
 *   Needs the plugin: GST_PLUGIN_PATH=<build>/plugin build/bench/spectrum-bench
 * Exit status: 0, or 1 when a pipeline failed or its messages were wrong (count or shape). */
#include "bench_util.h"
#include <cudafft/fft.h>

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE 48000
#define N_INPUT 8          /* distinct pre-generated input buffers, pushed in turn */
#define CALIBRATION_S 0.5  /* audio in the calibration run */
#define EOS_TIMEOUT_S 600u /* a run that takes longer than this counts as failed */

typedef struct {
  guint channels;
  guint bands;
  double interval_ms;
  gboolean multi;
} Case;

typedef struct {
  const char *key;     /* --elements name */
  const char *factory; /* GStreamer element factory */
  const char *backend; /* backend property value, or NULL */
  const char *label;   /* in the table */
} Element;

static const Element elements[] = {
    {"cuda", "cudaspectrum", "cuda", "cudaspectrum(cuda)"},
    {"cpu", "cudaspectrum", "cpu", "cudaspectrum(cpu)"},
    {"spectrum", "spectrum", NULL, "spectrum"},
};
#define N_ELEMENTS 3

/* Shared settings from the command line. */
static guint buffer_frames = 4096;
static int threshold = -60;
static gboolean phase = FALSE;

/* ---- messages ---- */

typedef struct {
  gint count; /* atomic: "spectrum" messages seen */
  const Case *c;
  gchar *problem; /* what was wrong with the first message, or NULL; written by the streaming
                     thread before EOS, read after it */
} Counter;

static gboolean
container_size(const GValue *v, guint *size)
{
  if (GST_VALUE_HOLDS_LIST(v))
    *size = gst_value_list_get_size(v);
  else if (GST_VALUE_HOLDS_ARRAY(v))
    *size = gst_value_array_get_size(v);
  else
    return FALSE;
  return TRUE;
}

static const GValue *
container_nth(const GValue *v, guint i)
{
  return GST_VALUE_HOLDS_LIST(v) ? gst_value_list_get_value(v, i) : gst_value_array_get_value(v, i);
}

/* Checks one row of band levels; NULL when it is right, else why not (to be freed). */
static gchar *
check_row(const GValue *row, guint bands, const char *where)
{
  guint n;
  if (!container_size(row, &n))
    return g_strdup_printf("%s is a %s, not a list or array", where, G_VALUE_TYPE_NAME(row));
  if (n != bands)
    return g_strdup_printf("%s holds %u values, expected %u bands", where, n, bands);
  for (guint i = 0; i < n; i++) {
    const GValue *v = container_nth(row, i);
    if (!G_VALUE_HOLDS_FLOAT(v))
      return g_strdup_printf("%s[%u] is a %s, not a float", where, i, G_VALUE_TYPE_NAME(v));
    /* random input in [-1, 1): every level is finite; the threshold is a floor */
    const float level = g_value_get_float(v);
    if (!isfinite(level) || level < threshold - 1e-3f)
      return g_strdup_printf("%s[%u] = %g dB (threshold %d)", where, i, level, threshold);
  }
  return NULL;
}

/* The shape spectrum gives `magnitude`: a list of bands floats, or with multi-channel an array of
 * one array of bands floats per channel. */
static gchar *
check_first(const GstStructure *s, const Case *c)
{
  const GValue *m = gst_structure_get_value(s, "magnitude");
  if (!m)
    return g_strdup("no magnitude field");
  if (!c->multi)
    return check_row(m, c->bands, "magnitude");
  guint n;
  if (!container_size(m, &n))
    return g_strdup_printf("magnitude is a %s, not an array", G_VALUE_TYPE_NAME(m));
  if (n != c->channels)
    return g_strdup_printf("magnitude holds %u rows, expected %u channels", n, c->channels);
  for (guint ch = 0; ch < n; ch++) {
    gchar *where = g_strdup_printf("magnitude[%u]", ch);
    gchar *why = check_row(container_nth(m, ch), c->bands, where);
    g_free(where);
    if (why)
      return why;
  }
  return NULL;
}

/* Runs in the streaming thread that posts: counts and drops the analyser's messages, passes the
 * rest (EOS, errors, state changes) on to the bus. */
static GstBusSyncReply
on_message(GstBus *bus, GstMessage *msg, gpointer data)
{
  (void)bus;
  if (GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ELEMENT || !gst_message_has_name(msg, "spectrum"))
    return GST_BUS_PASS;
  Counter *counter = data;
  if (g_atomic_int_add(&counter->count, 1) == 0)
    counter->problem = check_first(gst_message_get_structure(msg), counter->c);
  gst_message_unref(msg); /* a sync handler owns what it drops (GstBusSyncHandler) */
  return GST_BUS_DROP;
}

/* ---- one run ---- */

typedef struct {
  GstAppSrc *src;
  GstBuffer **input;
  guint64 buffers; /* after the warm-up one */
  Counter *counter;
  gint64 start;      /* monotonic us of the first timed push */
  gint counted_then; /* messages before the timed pushes */
} Pusher;

/* In its own thread, so that a pipeline error (seen by the main thread on the bus, which then
 * stops the pipeline) also ends a push blocked on a full appsrc. */
static gpointer
push_all(gpointer data)
{
  Pusher *p = data;
  GstFlowReturn ret = GST_FLOW_OK;
  p->counted_then = g_atomic_int_get(&p->counter->count);
  p->start = g_get_monotonic_time();
  for (guint64 i = 0; i < p->buffers && ret == GST_FLOW_OK; i++)
    ret = bench_push(p->src, p->input[(i + 1) % N_INPUT], (i + 1) * buffer_frames, buffer_frames,
                     RATE);
  if (ret == GST_FLOW_OK)
    gst_app_src_end_of_stream(p->src);
  return NULL;
}

static guint64
interval_ns(const Case *c)
{
  return (guint64)llround(c->interval_ms * 1e6);
}

/* Whole intervals in `frames` frames, as spectrum counts them (a partial one at EOS is dropped). */
static guint64
expected_messages(const Case *c, guint64 frames)
{
  const guint64 per_second = interval_ns(c) * RATE; /* ns x frames/s: GST_SECOND per frame */
  if (per_second < GST_SECOND)
    return frames; /* at least one frame an interval */
  return gst_util_uint64_scale(frames, GST_SECOND, per_second);
}

typedef struct {
  double wall;      /* seconds from the first timed push to EOS */
  gint messages;    /* in all, warm-up included */
  gint timed;       /* during the timed pushes */
  guint64 expected; /* whole intervals pushed */
  gchar *problem;   /* the first message's shape, or the count, when wrong */
} Run;

/* One run of `buffers` timed buffers; FALSE on a pipeline error (printed). */
static gboolean
run_once(const Case *c, const Element *e, GstBuffer **input, guint64 buffers, Run *out)
{
  gchar *desc = g_strdup_printf(
      "appsrc name=src format=time block=true max-bytes=%u caps=audio/x-raw,format=F32LE,"
      "layout=interleaved,rate=%d,channels=%u,channel-mask=(bitmask)0 ! %s name=an %s%s%s "
      "bands=%u interval=%" G_GUINT64_FORMAT " threshold=%d multi-channel=%s post-messages=true "
      "message-magnitude=true message-phase=%s ! fakesink sync=false",
      (guint)(8 * buffer_frames * c->channels * sizeof(float)), RATE, c->channels, e->factory,
      e->backend ? "backend=" : "", e->backend ? e->backend : "",
      e->backend && !strcmp(e->backend, "cuda") ? " cuda-device-id=0" : "", c->bands,
      interval_ns(c), threshold, c->multi ? "true" : "false", phase ? "true" : "false");
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &err);
  if (!pipeline || err) {
    fprintf(stderr, "cannot build the pipeline: %s\n  %s\n", err ? err->message : "?", desc);
    g_clear_error(&err);
    g_free(desc);
    if (pipeline)
      gst_object_unref(pipeline);
    return FALSE;
  }
  g_free(desc);
  GstAppSrc *src = GST_APP_SRC(gst_bin_get_by_name(GST_BIN(pipeline), "src"));
  GstBus *bus = gst_element_get_bus(pipeline);
  Counter counter = {0, c, NULL};
  gst_bus_set_sync_handler(bus, on_message, &counter, NULL);

  gboolean ok = gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
  GstFlowReturn ret = GST_FLOW_OK;
  if (ok)
    ret = bench_push(src, input[0], 0, buffer_frames,
                     RATE); /* warm-up: caps, engine, the first messages */
  ok = ok && ret == GST_FLOW_OK &&
       bench_wait_for(bus, GST_MESSAGE_ASYNC_DONE, 60 * GST_SECOND, "preroll");
  ok = ok &&
       gst_element_get_state(pipeline, NULL, NULL, 10 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS;
  if (!ok)
    fprintf(stderr, "the pipeline did not start (%s, %u channels)\n", e->label, c->channels);

  if (ok) {
    g_usleep(100000);
    Pusher p = {src, input, buffers, &counter, 0, 0};
    GThread *thread = g_thread_new("push", push_all, &p);
    ok = bench_wait_for(bus, GST_MESSAGE_EOS, EOS_TIMEOUT_S * GST_SECOND, "EOS");
    out->wall = (g_get_monotonic_time() - p.start) / 1e6;
    if (!ok)
      gst_element_set_state(pipeline, GST_STATE_NULL); /* unblocks the pusher */
    g_thread_join(thread);
    out->messages = g_atomic_int_get(&counter.count);
    out->timed = out->messages - p.counted_then;
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);

  out->expected = expected_messages(c, (buffers + 1) * buffer_frames);
  out->problem = NULL;
  if (ok && counter.problem)
    out->problem = g_strdup_printf("first message: %s", counter.problem);
  else if (ok && counter.count == 0)
    out->problem = g_strdup("no spectrum messages");
  else if (ok && llabs((long long)out->messages - (long long)out->expected) > 1)
    out->problem = g_strdup_printf("%d messages, expected %" G_GUINT64_FORMAT " (+-1)",
                                   out->messages, out->expected);
  g_free(counter.problem);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  return ok;
}

/* ---- one case and element ---- */

typedef struct {
  double audio_s;  /* per timed run */
  double realtime; /* audio seconds per wall second, median */
  double msgs_per_s;
  gint messages; /* per run, warm-up included */
  guint64 expected;
  gboolean counts_differ; /* between runs */
} Figures;

/* Calibrates, then times `runs` runs. FALSE on a pipeline error; *bad is set when the messages
 * were wrong (printed). */
static gboolean
measure(const Case *c, const Element *e, GstBuffer **input, double seconds, double max_wall,
        int runs, Figures *f, gboolean *bad)
{
  guint64 buffers = bench_buffers_for(seconds, RATE, buffer_frames);
  Run r;
  if (max_wall > 0.0) {
    const guint64 calibration = MIN(buffers, bench_buffers_for(CALIBRATION_S, RATE, buffer_frames));
    if (!run_once(c, e, input, calibration, &r))
      return FALSE;
    if (r.problem) {
      printf("  %s calibration run: %s\n", e->label, r.problem);
      g_free(r.problem);
      *bad = TRUE;
    }
    /* at least 4 buffers and 20 intervals, whatever the speed */
    const double least = MAX(4.0 * buffer_frames / RATE, 20.0 * c->interval_ms / 1e3);
    buffers =
        bench_capped_buffers(seconds, max_wall, calibration, r.wall, least, RATE, buffer_frames);
  }
  double *walls = g_new(double, runs);
  gboolean ok = TRUE;
  f->counts_differ = FALSE;
  for (int i = 0; i < runs && ok; i++) {
    ok = run_once(c, e, input, buffers, &r);
    if (!ok)
      break;
    walls[i] = r.wall;
    if (i > 0 && r.messages != f->messages)
      f->counts_differ = TRUE;
    f->messages = r.messages;
    f->expected = r.expected;
    if (r.problem) {
      if (!*bad) /* the first problem only: they tend to repeat */
        printf("  %s run %d: %s\n", e->label, i + 1, r.problem);
      g_free(r.problem);
      *bad = TRUE;
    }
  }
  if (ok) {
    const double wall = bench_median(walls, runs);
    f->audio_s = buffers * buffer_frames / (double)RATE;
    f->realtime = f->audio_s / wall;
    f->msgs_per_s = r.timed / wall;
  }
  g_free(walls);
  return ok;
}

/* Random samples in [-1, 1), N_INPUT buffers of buffer_frames frames. */
static void
make_input(GstBuffer **input, guint channels)
{
  for (int b = 0; b < N_INPUT; b++)
    input[b] = bench_random_input((gsize)buffer_frames * channels, FALSE);
}

/* ---- command line and the table ---- */

static void
usage(const char *name)
{
  fprintf(stderr,
          "usage: %s [--runs R] [--seconds S] [--max-wall W] [--buffer N] [--channels C,..] "
          "[--bands B,..] [--interval-ms I,..] [--multi 0|1[,..]] [--threshold T] [--phase] "
          "[--elements cuda,cpu,spectrum]\n",
          name);
}

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  setvbuf(stdout, NULL, _IOLBF, 0); /* each row as soon as it is measured */
  int runs = 5;
  double seconds = 10.0, max_wall = 2.0;
  double channels[8] = {2, 8}, bands[8] = {2049}, intervals[8] = {10, 1}, multis[8] = {0, 1};
  int n_channels = 2, n_bands = 1, n_intervals = 2, n_multis = 2;
  gboolean wanted[N_ELEMENTS] = {TRUE, TRUE, TRUE};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    gboolean good = value != NULL;
    if (!strcmp(arg, "--phase")) {
      phase = TRUE;
      continue;
    } else if (!good)
      ;
    else if (!strcmp(arg, "--runs"))
      good = (runs = atoi(value)) >= 1;
    else if (!strcmp(arg, "--seconds"))
      good = (seconds = g_ascii_strtod(value, NULL)) > 0.0;
    else if (!strcmp(arg, "--max-wall"))
      good = (max_wall = g_ascii_strtod(value, NULL)) >= 0.0;
    else if (!strcmp(arg, "--buffer"))
      good = (buffer_frames = (guint)atoi(value)) >= 1;
    else if (!strcmp(arg, "--threshold"))
      good = (threshold = atoi(value)) <= 0;
    else if (!strcmp(arg, "--channels"))
      good = (n_channels = bench_parse_list(value, channels, 8)) > 0;
    else if (!strcmp(arg, "--bands"))
      good = (n_bands = bench_parse_list(value, bands, 8)) > 0;
    else if (!strcmp(arg, "--interval-ms"))
      good = (n_intervals = bench_parse_list(value, intervals, 8)) > 0;
    else if (!strcmp(arg, "--multi"))
      good = (n_multis = bench_parse_list(value, multis, 8)) > 0;
    else if (!strcmp(arg, "--elements"))
      good = bench_parse_elements(value, &elements[0].key, sizeof elements[0], N_ELEMENTS, wanted);
    else
      good = FALSE;
    if (!good) {
      usage(argv[0]);
      return 2;
    }
    i++;
  }
  for (int k = 0; k < n_channels; k++)
    if (channels[k] < 1 || channels[k] > 1024)
      return usage(argv[0]), 2;
  for (int k = 0; k < n_bands; k++)
    if (bands[k] < 2)
      return usage(argv[0]), 2;
  for (int k = 0; k < n_intervals; k++)
    if (!(intervals[k] * 1e6 >= 1.0))
      return usage(argv[0]), 2;

  bench_print_machine("cudaspectrum(cuda)");
  printf("settings: F32LE %d Hz interleaved, buffers of %u frames, up to %.1f s of audio a run "
         "(less where a run would take over %.1f s wall), median of %d runs, threshold %d dB, "
         "message-magnitude, %s; elements:",
         RATE, buffer_frames, seconds, max_wall, runs, threshold,
         phase ? "message-phase" : "no phase");
  for (int e = 0; e < N_ELEMENTS; e++)
    if (wanted[e])
      printf(" %s", elements[e].label);
  printf("\n");
  printf("%-19s %4s %6s %8s %5s %8s %11s %10s %16s\n", "element", "ch", "bands", "intv-ms", "multi",
         "audio-s", "x-realtime", "msgs/s", "msgs (expected)");

  int status = 0;
  const int cuda_devices = cudafft_cuda_device_count();
  for (int ci = 0; ci < n_channels; ci++)
    for (int bi = 0; bi < n_bands; bi++)
      for (int ii = 0; ii < n_intervals; ii++)
        for (int mi = 0; mi < n_multis; mi++) {
          const Case c = {(guint)channels[ci], (guint)bands[bi], intervals[ii], multis[mi] != 0};
          GstBuffer *input[N_INPUT];
          make_input(input, c.channels);
          double realtime[N_ELEMENTS] = {0};
          for (int e = 0; e < N_ELEMENTS; e++) {
            const Element *el = &elements[e];
            if (!wanted[e])
              continue;
            gchar *row = g_strdup_printf("%-19s %4u %6u %8.2f %5d ", el->label, c.channels, c.bands,
                                         c.interval_ms, c.multi);
            GstElementFactory *factory = gst_element_factory_find(el->factory);
            if (!factory) {
              printf("%s  skipped: no element %s (GST_PLUGIN_PATH=<build>/plugin?)\n", row,
                     el->factory);
              g_free(row);
              status = 1;
              continue;
            }
            gst_object_unref(factory);
            if (el->backend && !strcmp(el->backend, "cuda") && cuda_devices == 0) {
              printf("%s  skipped: no CUDA device on this machine\n", row);
              g_free(row);
              continue;
            }
            Figures f = {0};
            gboolean bad = FALSE;
            if (!measure(&c, el, input, seconds, max_wall, runs, &f, &bad)) {
              printf("%s  failed (the error is above)\n", row);
              g_free(row);
              status = 1;
              continue;
            }
            if (bad)
              status = 1;
            realtime[e] = f.realtime;
            printf("%s%8.2f %11.2f %10.0f %7d (%" G_GUINT64_FORMAT ")%s%s\n", row, f.audio_s,
                   f.realtime, f.msgs_per_s, f.messages, f.expected,
                   f.counts_differ ? " counts differ between runs" : "",
                   bad ? " WRONG MESSAGES" : "");
            g_free(row);
          }
          if (realtime[0] > 0.0 && (realtime[1] > 0.0 || realtime[2] > 0.0)) {
            printf("  -> cudaspectrum(cuda)");
            if (realtime[2] > 0.0)
              printf(" / spectrum: %.1fx", realtime[0] / realtime[2]);
            if (realtime[1] > 0.0)
              printf("%s / cudaspectrum(cpu): %.1fx", realtime[2] > 0.0 ? "," : "",
                     realtime[0] / realtime[1]);
            printf("\n");
          } else if (realtime[1] > 0.0 && realtime[2] > 0.0)
            printf("  -> cudaspectrum(cpu) / spectrum: %.2fx\n", realtime[1] / realtime[2]);
          for (int b = 0; b < N_INPUT; b++)
            gst_buffer_unref(input[b]);
        }
  return status;
}
