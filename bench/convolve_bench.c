/* convolve-bench: throughput and latency of cudaconvolve on the GPU, on its CPU backend and of
 * GStreamer's own `audiofirfilter`, with the same kernel, in one run.
 *
 * For each case (channels, impulse response length) and element it builds
 *   appsrc ! ELEMENT ! fakesink sync=false
 * with ELEMENT one of `cudaconvolve backend=cuda`, `cudaconvolve backend=cpu` and
 * `audiofirfilter`, all given the same kernel through the `kernel` property: T seconds of decaying
 * noise (an exponential envelope falling 60 dB over T, like a room's reverb). The input is F32LE at
 * 48 kHz, interleaved, pre-generated random samples in buffers of BUFFER frames. It pushes one
 * warm-up buffer (caps, engine, kernel spectra), asks the element for its latency (a LATENCY query
 * on its src pad, in samples), then pushes the timed buffers from a second thread and times the
 * wall clock from the first of them to EOS on the bus (so the drain at EOS, audiofirfilter's last
 * block or cudaconvolve's tail, is inside the time; cudaconvolve runs with drain-tail=false so that
 * both push as many samples as came in). Each element is timed RUNS times; the table gives the
 * median as audio seconds per wall second (the real-time factor).
 *
 * How much audio: SECONDS (default 10 s), cut down per case and element so that one run takes
 * about MAX_WALL seconds (default 10 s) at most: a calibration run (2 s of audio or SECONDS if
 * less, also a warm-up, not reported) measures the speed first; the table says where the audio was
 * capped. audiofirfilter works in blocks of 4 x the kernel length and computes its last block at
 * EOS however little audio there is, so that for long kernels (10 s: 40 s blocks) its figure on a
 * short run is dominated by that last block; the table marks such rows ("< 1 block").
 *
 * Usage: convolve-bench [--runs R] [--seconds S] [--max-wall W] [--buffer N] [--channels C,..]
 *          [--ir-seconds T,..] [--elements cuda,cpu,audiofirfilter] [--pinned-input]
 *   Without --channels/--ir-seconds: 2 and 8 channels x 1 and 10 s responses, and 64 channels x
 *   2 s. The cuda element is skipped, saying why, where there is no CUDA device.
 *   Needs the plugin: GST_PLUGIN_PATH=<build>/plugin build/bench/convolve-bench
 * Exit status: 0, or 1 when a pipeline failed or an element put out the wrong number of samples. */
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
#define CALIBRATION_S 2.0  /* audio in the calibration run, at most */
#define EOS_TIMEOUT_S 900u /* a run that takes longer than this counts as failed */

typedef struct {
  guint channels;
  double ir_seconds;
} Case;

typedef struct {
  const char *key;     /* --elements name */
  const char *factory; /* GStreamer element factory */
  const char *props;   /* its properties */
  const char *label;   /* in the table */
} Element;

static const Element elements[] = {
    {"cuda", "cudaconvolve", "backend=cuda cuda-device-id=0 drain-tail=false",
     "cudaconvolve(cuda)"},
    {"cpu", "cudaconvolve", "backend=cpu drain-tail=false", "cudaconvolve(cpu)"},
    {"audiofirfilter", "audiofirfilter", "", "audiofirfilter"},
};
#define N_ELEMENTS 3

static guint buffer_frames = 4096;

/* ---- the kernel ---- */

/* T seconds of uniform noise under exp(-6.9 t / T) (-60 dB at the end), scaled to unit energy so
 * that the output keeps the input's level. */
static GValueArray *
make_kernel(double seconds, guint *taps)
{
  *taps = (guint)MAX(1, lround(seconds * RATE));
  GRand *rand = g_rand_new_with_seed(1234);
  double *h = g_new(double, *taps), energy = 0.0;
  for (guint k = 0; k < *taps; k++) {
    h[k] = g_rand_double_range(rand, -1.0, 1.0) * exp(-6.9 * k / (double)*taps);
    energy += h[k] * h[k];
  }
  g_rand_free(rand);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GValueArray *array = g_value_array_new(*taps);
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_TYPE_DOUBLE);
  for (guint k = 0; k < *taps; k++) {
    g_value_set_double(&v, h[k] / sqrt(energy));
    g_value_array_append(array, &v);
  }
  g_value_unset(&v);
  G_GNUC_END_IGNORE_DEPRECATIONS
  g_free(h);
  return array;
}

/* ---- one run ---- */

typedef struct {
  GstAppSrc *src;
  GstBuffer **input;
  guint64 buffers; /* after the warm-up one */
  gint64 start;    /* monotonic us of the first timed push */
} Pusher;

/* In its own thread, so that a pipeline error (seen by the main thread on the bus, which then
 * stops the pipeline) also ends a push blocked on a full appsrc. */
static gpointer
push_all(gpointer data)
{
  Pusher *p = data;
  GstFlowReturn ret = GST_FLOW_OK;
  p->start = g_get_monotonic_time();
  for (guint64 i = 0; i < p->buffers && ret == GST_FLOW_OK; i++)
    ret = bench_push(p->src, p->input[(i + 1) % N_INPUT], (i + 1) * buffer_frames, buffer_frames,
                     RATE);
  if (ret == GST_FLOW_OK)
    gst_app_src_end_of_stream(p->src);
  return NULL;
}

/* Counts the frames that reach the sink, to check that nothing is lost. */
static GstPadProbeReturn
count_frames(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  guint64 *bytes = data;
  *bytes += gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info));
  return GST_PAD_PROBE_OK;
}

typedef struct {
  double wall;        /* seconds from the first timed push to EOS */
  gint64 latency;     /* samples, from the LATENCY query; -1 when it failed */
  guint64 out_frames; /* frames that reached the sink */
} Run;

/* One run of `buffers` timed buffers; FALSE on a pipeline error (printed). */
static gboolean
run_once(const Case *c, const Element *e, GValueArray *kernel, GstBuffer **input, guint64 buffers,
         Run *out)
{
  gchar *desc = g_strdup_printf(
      "appsrc name=src format=time block=true max-bytes=%u caps=audio/x-raw,format=F32LE,"
      "layout=interleaved,rate=%d,channels=%u,channel-mask=(bitmask)0 ! %s name=el %s ! "
      "fakesink name=sink sync=false async=false",
      (guint)(8 * buffer_frames * c->channels * sizeof(float)), RATE, c->channels, e->factory,
      e->props);
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
  GstElement *el = gst_bin_get_by_name(GST_BIN(pipeline), "el");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_object_set(el, "kernel", kernel, NULL);
  GstPad *sinkpad = gst_element_get_static_pad(sink, "sink");
  guint64 out_bytes = 0;
  gst_pad_add_probe(sinkpad, GST_PAD_PROBE_TYPE_BUFFER, count_frames, &out_bytes, NULL);
  GstBus *bus = gst_element_get_bus(pipeline);

  /* The sink does not preroll (async=false): audiofirfilter puts nothing out before a whole
   * block of 4 x taps has come. The warm-up is done when the element has its caps (cudaconvolve
   * has made its engine then) and has had a moment for the warm-up buffer. */
  gboolean ok = gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
  GstFlowReturn ret = GST_FLOW_OK;
  if (ok)
    ret = bench_push(src, input[0], 0, buffer_frames,
                     RATE); /* warm-up: caps, engine, kernel spectra */
  ok = ok && ret == GST_FLOW_OK;
  GstPad *srcpad = gst_element_get_static_pad(el, "src");
  for (int waited = 0; ok && !gst_pad_has_current_caps(srcpad); waited++) {
    GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    if (msg || waited == 120 * 100) {
      if (msg)
        gst_message_unref(msg);
      ok = FALSE;
    }
    g_usleep(10000);
  }
  if (!ok)
    fprintf(stderr, "the pipeline did not start (%s, %u channels)\n", e->label, c->channels);

  out->latency = -1;
  if (ok) {
    g_usleep(200000);
    GstQuery *query = gst_query_new_latency();
    if (gst_pad_query(srcpad, query)) {
      gboolean live;
      GstClockTime min, max;
      gst_query_parse_latency(query, &live, &min, &max);
      out->latency = (gint64)gst_util_uint64_scale_round(min, RATE, GST_SECOND);
    }
    gst_query_unref(query);
    Pusher p = {src, input, buffers, 0};
    GThread *thread = g_thread_new("push", push_all, &p);
    ok = bench_wait_for(bus, GST_MESSAGE_EOS, EOS_TIMEOUT_S * GST_SECOND, "EOS");
    out->wall = (g_get_monotonic_time() - p.start) / 1e6;
    if (!ok)
      gst_element_set_state(pipeline, GST_STATE_NULL); /* unblocks the pusher */
    g_thread_join(thread);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  out->out_frames = out_bytes / (c->channels * sizeof(float));
  gst_object_unref(srcpad);
  gst_object_unref(sinkpad);
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(el);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  return ok;
}

/* ---- one case and element ---- */

typedef struct {
  double audio_s;  /* per timed run */
  double realtime; /* audio seconds per wall second, median */
  gint64 latency;  /* samples */
  gboolean capped; /* less audio than --seconds */
  gchar *problem;  /* the output's length, when wrong */
} Figures;

/* Calibrates, then times `runs` runs. FALSE on a pipeline error. */
static gboolean
measure(const Case *c, const Element *e, GValueArray *kernel, GstBuffer **input, double seconds,
        double max_wall, int runs, Figures *f)
{
  const guint64 all = bench_buffers_for(seconds, RATE, buffer_frames);
  guint64 buffers = all;
  Run r;
  if (max_wall > 0.0) {
    const guint64 calibration = MIN(all, bench_buffers_for(CALIBRATION_S, RATE, buffer_frames));
    if (!run_once(c, e, kernel, input, calibration, &r))
      return FALSE;
    buffers = bench_capped_buffers(seconds, max_wall, calibration, r.wall,
                                   4.0 * buffer_frames / RATE, RATE, buffer_frames);
  }
  f->capped = buffers < all;
  double *walls = g_new(double, runs);
  gboolean ok = TRUE;
  for (int i = 0; i < runs && ok; i++) {
    ok = run_once(c, e, kernel, input, buffers, &r);
    walls[i] = r.wall;
    const guint64 in_frames = (buffers + 1) * buffer_frames;
    if (ok && r.out_frames != in_frames && !f->problem)
      f->problem = g_strdup_printf("%" G_GUINT64_FORMAT " frames out of %" G_GUINT64_FORMAT " in",
                                   r.out_frames, in_frames);
  }
  if (ok) {
    f->audio_s = buffers * buffer_frames / (double)RATE;
    f->realtime = f->audio_s / bench_median(walls, runs);
    f->latency = r.latency;
  }
  g_free(walls);
  return ok;
}

static gboolean pinned_input = FALSE;

/* Random samples in [-1, 1), N_INPUT buffers of buffer_frames frames, in plain memory or (with
 * --pinned-input) page-locked, as an upstream element gets them when it allocates from what
 * cudaconvolve proposes in the allocation query. */
static void
make_input(GstBuffer **input, guint channels)
{
  for (int b = 0; b < N_INPUT; b++)
    input[b] = bench_random_input((gsize)buffer_frames * channels, pinned_input);
}

/* ---- command line and the table ---- */

static void
usage(const char *name)
{
  fprintf(stderr,
          "usage: %s [--runs R] [--seconds S] [--max-wall W] [--buffer N] [--channels C,..] "
          "[--ir-seconds T,..] [--elements cuda,cpu,audiofirfilter] [--pinned-input]\n",
          name);
}

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  setvbuf(stdout, NULL, _IOLBF, 0); /* each row as soon as it is measured */
  int runs = 5;
  double seconds = 10.0, max_wall = 10.0;
  double channels[8], ir_seconds[8];
  int n_channels = 0, n_ir = 0;
  gboolean wanted[N_ELEMENTS] = {TRUE, TRUE, TRUE};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--pinned-input")) {
      pinned_input = TRUE;
      continue;
    }
    gboolean good = value != NULL;
    if (!good)
      ;
    else if (!strcmp(arg, "--runs"))
      good = (runs = atoi(value)) >= 1;
    else if (!strcmp(arg, "--seconds"))
      good = (seconds = g_ascii_strtod(value, NULL)) > 0.0;
    else if (!strcmp(arg, "--max-wall"))
      good = (max_wall = g_ascii_strtod(value, NULL)) >= 0.0;
    else if (!strcmp(arg, "--buffer"))
      good = (buffer_frames = (guint)atoi(value)) >= 1;
    else if (!strcmp(arg, "--channels"))
      good = (n_channels = bench_parse_list(value, channels, 8)) > 0;
    else if (!strcmp(arg, "--ir-seconds"))
      good = (n_ir = bench_parse_list(value, ir_seconds, 8)) > 0;
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
  for (int k = 0; k < n_ir; k++)
    if (!(ir_seconds[k] * RATE >= 1.0) || ir_seconds[k] > 60.0)
      return usage(argv[0]), 2;

  /* the cases: the lists' product, or the default set */
  Case cases[64];
  int n_cases = 0;
  if (n_channels == 0 && n_ir == 0) {
    static const Case defaults[] = {{2, 1.0}, {2, 10.0}, {8, 1.0}, {8, 10.0}, {64, 2.0}};
    n_cases = G_N_ELEMENTS(defaults);
    memcpy(cases, defaults, sizeof defaults);
  } else {
    if (n_channels == 0)
      channels[n_channels++] = 2;
    if (n_ir == 0)
      ir_seconds[n_ir++] = 1.0;
    for (int ci = 0; ci < n_channels; ci++)
      for (int ii = 0; ii < n_ir; ii++)
        cases[n_cases++] = (Case){(guint)channels[ci], ir_seconds[ii]};
  }

  bench_print_machine("cudaconvolve(cuda)");
  printf("settings: F32LE %d Hz interleaved, %s input buffers of %u frames, up to %.1f s of audio "
         "a run "
         "(less where a run would take over %.1f s wall: marked 'capped'), median of %d runs; "
         "kernels of decaying noise; elements:",
         RATE, pinned_input ? "page-locked" : "plain", buffer_frames, seconds, max_wall, runs);
  for (int e = 0; e < N_ELEMENTS; e++)
    if (wanted[e])
      printf(" %s", elements[e].label);
  printf("\n");
  printf("%-19s %4s %6s %8s %9s %11s %9s %10s\n", "element", "ch", "ir-s", "taps", "audio-s",
         "x-realtime", "latency", "latency-ms");

  int status = 0;
  const int cuda_devices = cudafft_cuda_device_count();
  for (int k = 0; k < n_cases; k++) {
    const Case *c = &cases[k];
    guint taps;
    GValueArray *kernel = make_kernel(c->ir_seconds, &taps);
    GstBuffer *input[N_INPUT];
    make_input(input, c->channels);
    double realtime[N_ELEMENTS] = {0};
    for (int e = 0; e < N_ELEMENTS; e++) {
      const Element *el = &elements[e];
      if (!wanted[e])
        continue;
      gchar *row =
          g_strdup_printf("%-19s %4u %6.2f %8u ", el->label, c->channels, c->ir_seconds, taps);
      GstElementFactory *factory = gst_element_factory_find(el->factory);
      if (!factory) {
        printf("%s  skipped: no element %s (GST_PLUGIN_PATH=<build>/plugin?)\n", row, el->factory);
        g_free(row);
        status = 1;
        continue;
      }
      gst_object_unref(factory);
      if (e == 0 && cuda_devices == 0) {
        printf("%s  skipped: no CUDA device on this machine\n", row);
        g_free(row);
        continue;
      }
      Figures f = {0};
      if (!measure(c, el, kernel, input, seconds, max_wall, runs, &f)) {
        printf("%s  failed (the error is above)\n", row);
        g_free(row);
        status = 1;
        continue;
      }
      realtime[e] = f.realtime;
      /* audiofirfilter's block: 4 x taps, rounded up to a fast FFT length */
      const gboolean short_run = e == 2 && f.audio_s * RATE < 3.0 * taps;
      printf("%s%9.2f %11.2f %9" G_GINT64_FORMAT " %10.1f%s%s%s%s\n", row, f.audio_s, f.realtime,
             f.latency, f.latency >= 0 ? f.latency * 1e3 / RATE : -1.0, f.capped ? "  capped" : "",
             short_run ? "  < 1 block" : "", f.problem ? "  WRONG LENGTH: " : "",
             f.problem ? f.problem : "");
      if (f.problem)
        status = 1;
      g_free(f.problem);
      g_free(row);
    }
    if (realtime[0] > 0.0 && (realtime[1] > 0.0 || realtime[2] > 0.0)) {
      printf("  -> cudaconvolve(cuda)");
      if (realtime[2] > 0.0)
        printf(" / audiofirfilter: %.1fx", realtime[0] / realtime[2]);
      if (realtime[1] > 0.0)
        printf("%s / cudaconvolve(cpu): %.1fx", realtime[2] > 0.0 ? "," : "",
               realtime[0] / realtime[1]);
      printf("\n");
    } else if (realtime[1] > 0.0 && realtime[2] > 0.0)
      printf("  -> cudaconvolve(cpu) / audiofirfilter: %.2fx\n", realtime[1] / realtime[2]);
    for (int b = 0; b < N_INPUT; b++)
      gst_buffer_unref(input[b]);
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    g_value_array_free(kernel);
    G_GNUC_END_IGNORE_DEPRECATIONS
  }
  return status;
}
