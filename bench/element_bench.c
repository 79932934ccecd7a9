/* element-bench: throughput of the cudafft element on the GPU and on the CPU backend, in one run.
 *
 * For each case (channels, buffer size) and backend it builds
 *   appsrc ! cudafft backend=B fft-size=4096 hop=2048 ! fakesink sync=false
 * with F32LE input at 48 kHz, pushes one warm-up buffer (the engine is made on the first caps),
 * then SECONDS seconds of pre-generated random audio in buffers of BUFFER samples, and times the
 * wall clock from the first push to EOS at the sink. It repeats that RUNS times and reports the
 * median as audio seconds processed per wall second (the real-time factor). Pad probes on the
 * element time each input buffer from its arrival to the push of its frames: the median and 99th
 * percentile of that are the per-buffer cost.
 *
 * --chain times `cudafft ! LINK ! cudaifft ! fakesink` on the GPU instead, the frames
 * between the two in CUDA memory (LINK audio/x-fft(memory:CUDAMemory): written and read on the
 * device) and in system memory (audio/x-fft: down to the host and up again), in place of the two
 * backends; the per-buffer figures are still cudafft's own.
 *
 * Usage: element-bench [--runs R] [--seconds S] [--channels C] [--buffer N] [--backend cpu|cuda]
 *          [--chain]
 *   Without --channels/--buffer it runs 2 and 64 channels at 4096-sample buffers and 64 channels
 *   at 48000-sample buffers. --pinned-input puts the input in page-locked memory, as an upstream
 *   element gets it when it allocates from what cudafft proposes in the allocation query. */
#include "bench_util.h"
#include <cudafft/fft.h>

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE 48000

typedef struct {
  GArray *arrivals; /* gint64 per input buffer (monotonic us) */
  GArray *costs;    /* gdouble ms per input buffer that produced output */
  gint64 last_in;
} Probes;

static GstPadProbeReturn
on_input(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  ((Probes *)data)->last_in = g_get_monotonic_time();
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
on_output(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  Probes *p = data;
  const gdouble ms = (g_get_monotonic_time() - p->last_in) / 1000.0;
  g_array_append_val(p->costs, ms);
  return GST_PAD_PROBE_OK;
}

static double
percentile(GArray *values, double q)
{
  if (values->len == 0)
    return 0.0;
  qsort(values->data, values->len, sizeof(double), bench_compare_doubles);
  size_t i = (size_t)(q * (values->len - 1) + 0.5);
  return g_array_index(values, double, i);
}

static gboolean
wait_for(GstElement *pipeline, GstMessageType type)
{
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 120 * GST_SECOND, type | GST_MESSAGE_ERROR);
  gboolean ok = msg && GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ERROR;
  if (msg && !ok) {
    GError *err = NULL;
    gst_message_parse_error(msg, &err, NULL);
    fprintf(stderr, "pipeline error: %s\n", err->message);
    g_error_free(err);
  }
  if (msg)
    gst_message_unref(msg);
  gst_object_unref(bus);
  return ok;
}

static gboolean pinned_input = FALSE;
static gboolean chain = FALSE; /* --chain: cudafft ! LINK ! cudaifft, "backend" names the link */

/* Pushes `seconds` of audio after the warm-up buffer, then EOS; returns the wall seconds from the
 * first push to EOS at the sink, or < 0 on failure. */
static double
timed_pushes(GstElement *pipeline, GstAppSrc *src, GstBuffer *data, guint buffer_samples,
             double seconds, GstPad *sink_pad, GstPad *src_pad, Probes *probes)
{
  gulong in_id = gst_pad_add_probe(sink_pad, GST_PAD_PROBE_TYPE_BUFFER, on_input, probes, NULL);
  gulong out_id = gst_pad_add_probe(src_pad, GST_PAD_PROBE_TYPE_BUFFER, on_output, probes, NULL);
  const guint64 total = (guint64)(seconds * RATE);
  const gint64 start = g_get_monotonic_time();
  guint64 position = buffer_samples;
  for (guint64 done = 0; done < total; done += buffer_samples, position += buffer_samples)
    bench_push(src, data, position, buffer_samples, RATE);
  gst_app_src_end_of_stream(src);
  const gboolean ok = wait_for(pipeline, GST_MESSAGE_EOS);
  const double wall = (g_get_monotonic_time() - start) / 1e6;
  gst_pad_remove_probe(sink_pad, in_id);
  gst_pad_remove_probe(src_pad, out_id);
  return ok ? wall : -1.0;
}

/* One timed run; returns the wall seconds, or < 0 on failure. */
static double
run_once(const char *backend, int channels, guint buffer_samples, double seconds, Probes *probes)
{
  /* --chain: backend names the link, the element runs on the GPU */
  const gboolean cuda_link = chain && !strcmp(backend, "cuda-mem");
  gchar *desc = g_strdup_printf(
      "appsrc name=src format=time block=true max-bytes=%u caps=audio/x-raw,format=F32LE,"
      "layout=interleaved,rate=%d,channels=%d,channel-mask=(bitmask)0 ! cudafft name=fft "
      "backend=%s cuda-device-id=0 fft-size=4096 hop=2048 ! %s%s fakesink sync=false",
      (guint)(8 * buffer_samples * channels * sizeof(float)), RATE, channels,
      chain ? "cuda" : backend,
      !chain      ? ""
      : cuda_link ? "audio/x-fft(memory:CUDAMemory) ! "
                  : "audio/x-fft ! ",
      chain ? "cudaifft backend=cuda cuda-device-id=0 ! " : "");
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &err);
  g_free(desc);
  if (!pipeline) {
    fprintf(stderr, "cannot build the pipeline: %s\n", err->message);
    g_error_free(err);
    return -1.0;
  }
  GstAppSrc *src = GST_APP_SRC(gst_bin_get_by_name(GST_BIN(pipeline), "src"));
  GstElement *fft = gst_bin_get_by_name(GST_BIN(pipeline), "fft");
  GstPad *sink_pad = gst_element_get_static_pad(fft, "sink");
  GstPad *src_pad = gst_element_get_static_pad(fft, "src");

  GstBuffer *data = bench_random_input((gsize)buffer_samples * channels, pinned_input);

  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  bench_push(src, data, 0, buffer_samples, RATE); /* warm-up: caps, engine, first frames */
  double wall = -1.0;
  if (gst_element_get_state(pipeline, NULL, NULL, 30 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS) {
    g_usleep(200000);
    wall = timed_pushes(pipeline, src, data, buffer_samples, seconds, sink_pad, src_pad, probes);
  } else {
    fprintf(stderr, "the pipeline did not start (%s backend, %d channels)\n", backend, channels);
    wait_for(pipeline, GST_MESSAGE_ERROR); /* prints the error, if one was posted */
  }

  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_buffer_unref(data);
  gst_object_unref(sink_pad);
  gst_object_unref(src_pad);
  gst_object_unref(fft);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  return wall;
}

typedef struct {
  double realtime, per_buffer_ms, p99_ms;
} Figures;

static gboolean
measure(const char *backend, int channels, guint buffer_samples, double seconds, int runs,
        Figures *out)
{
  GArray *walls = g_array_new(FALSE, FALSE, sizeof(double));
  Probes probes = {NULL, g_array_new(FALSE, FALSE, sizeof(double)), 0};
  gboolean ok = TRUE;
  for (int r = 0; r < runs && ok; r++) {
    const double wall = run_once(backend, channels, buffer_samples, seconds, &probes);
    ok = wall > 0.0;
    g_array_append_val(walls, wall);
  }
  if (ok) {
    const double audio =
        (double)((guint64)(seconds * RATE + buffer_samples - 1) / buffer_samples * buffer_samples) /
        RATE;
    out->realtime = audio / percentile(walls, 0.5);
    out->per_buffer_ms = percentile(probes.costs, 0.5);
    out->p99_ms = percentile(probes.costs, 0.99);
  }
  g_array_free(walls, TRUE);
  g_array_free(probes.costs, TRUE);
  return ok;
}

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  setvbuf(stdout, NULL, _IOLBF, 0); /* each row as soon as it is measured */
  int runs = 5, channels = 0;
  guint buffer = 0;
  double seconds = 0.0;
  const char *only_backend = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--channels") && i + 1 < argc)
      channels = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--buffer") && i + 1 < argc)
      buffer = (guint)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--pinned-input"))
      pinned_input = TRUE;
    else if (!strcmp(argv[i], "--chain"))
      chain = TRUE;
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
      only_backend = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s [--runs R] [--seconds S] [--channels C] [--buffer N] "
              "[--backend cpu|cuda] [--pinned-input] [--chain]\n",
              argv[0]);
      return 2;
    }
  }
  struct {
    int channels;
    guint buffer;
  } cases[] = {{2, 4096}, {64, 4096}, {64, 48000}};
  int n_cases = 3;
  if (channels > 0 || buffer > 0) {
    cases[0].channels = channels > 0 ? channels : 2;
    cases[0].buffer = buffer > 0 ? buffer : 4096;
    n_cases = 1;
  }
  /* --chain: the frames' link in CUDA memory, then in system memory */
  const char *backends[] = {chain ? "cuda-mem" : "cuda", chain ? "sys-mem" : "cpu"};
  printf("%s, F32LE %d Hz, fft-size 4096, hop 2048, complex frames; median of %d "
         "runs; input in %s memory\n",
         chain ? "cudafft ! LINK ! cudaifft on the GPU (the first column: LINK's memory)"
               : "cudafft element",
         RATE, runs, pinned_input ? "page-locked" : "plain");
  printf("%-8s %8s %8s %9s %12s %14s %12s\n", "backend", "channels", "buffer", "audio-s",
         "x-realtime", "ms/buffer-med", "ms/buf-p99");
  int status = 0;
  for (int c = 0; c < n_cases; c++) {
    double realtime[2] = {0.0, 0.0};
    for (int b = 0; b < 2; b++) {
      if (only_backend && strcmp(only_backend, backends[b]))
        continue;
      if ((b == 0 || chain) && cudafft_cuda_device_count() == 0) {
        printf("%-8s %8d %8u   skipped: no CUDA device on this machine\n", backends[b],
               cases[c].channels, cases[c].buffer);
        continue;
      }
      /* enough audio for ~1 s of work on the slower backend */
      double s = seconds > 0.0 ? seconds : (cases[c].channels > 8 ? 100.0 : 200.0);
      if (b == 1 && seconds <= 0.0 && !chain)
        s /= 10.0;
      Figures f;
      if (!measure(backends[b], cases[c].channels, cases[c].buffer, s, runs, &f)) {
        status = 1;
        continue;
      }
      realtime[b] = f.realtime;
      printf("%-8s %8d %8u %9.1f %12.1f %14.3f %12.3f\n", backends[b], cases[c].channels,
             cases[c].buffer, s, f.realtime, f.per_buffer_ms, f.p99_ms);
    }
    if (realtime[0] > 0.0 && realtime[1] > 0.0)
      printf(chain ? "  -> CUDA-memory link / system-memory link: %.2fx\n"
                   : "  -> GPU / CPU backend: %.1fx\n",
             realtime[0] / realtime[1]);
  }
  return status;
}
