/* scope-bench: cudaspectrumscope on the GPU, on its CPU backend and GStreamer's own spectrascope
 * (gst-plugins-bad), in one run: frames per wall second and host CPU time per second of audio.
 *
 * For each case (frame size, channels) and element it builds
 *   appsrc ! ELEMENT ! video/x-raw,format=BGRx,width=W,height=H,framerate=FPS/1 ! fakesink
 * (sync=false) with ELEMENT one of `cudaspectrumscope backend=cuda style=S fft-size=N` (frames in
 * page-locked system memory, each copied over the bus), the same with
 * video/x-raw(memory:CUDAMemory) caps (cuda-mem: frames in GStreamer's CUDA memory, which never
 * leave the device; the row after it gives its frames per second against cuda's),
 * `cudaspectrumscope backend=cpu ...` and `audioconvert ! audio/x-raw,format=S16LE,channels=2 !
 * spectrascope` (which takes stereo S16 only: the conversion, a downmix for 8 channels, is part of
 * its cost, as it is of a pipeline that uses it; the channels are positioned, GStreamer's fallback
 * layouts, so that audioconvert can downmix them). Input: F32LE at 48 kHz, interleaved, random,
 * pre-generated, pushed in buffers of BUFFER frames from a second thread after a warm-up buffer
 * (caps, engine, first frames). A probe on fakesink's pad counts the frames; cudaspectrumscope's
 * count must be the whole frames of the audio pushed (+-1). spectrascope's base class draws frames
 * as its adapter allows, not at the frame rate (fewer where its samples per frame, twice the
 * width, exceed the frame's; more where buffers end within a frame), so its count is reported
 * only: the CPU time per second of audio is the cost of showing the same audio, whatever number
 * of frames each element draws for it. Timed: the wall clock from the first timed push to EOS,
 * and the process's CPU time (user + system, every thread: getrusage) over the same span. Each
 * element runs RUNS times; the table gives medians: frames pushed per wall second, and host CPU
 * milliseconds per second of audio (what the element costs the host in real time: at the frame
 * rate FPS, one second of audio is FPS frames). The last column is the CPU time against
 * spectrascope's in the same case.
 *
 * How much audio: SECONDS (default 10 s), cut per case and element so that a run takes about
 * MAX_WALL seconds at most (default 4 s), after a calibration run of 0.5 s of audio.
 *
 * Usage: scope-bench [--runs R] [--seconds S] [--max-wall W] [--buffer N] [--fps F]
 *          [--sizes WxH,..] [--channels C,..] [--style spectrogram|bars] [--fft-size N]
 *          [--elements cuda,cuda-mem,cpu,spectrascope]
 *   Defaults: 1920x1080 and 3840x2160, 2 and 8 channels, 60 fps, spectrogram, fft-size 4096
 *   (any size the element takes: 4000 runs the mixed-radix kernel where 4096 runs a fused one).
 *   The cuda element is skipped, saying why, where there is no CUDA device; spectrascope where it
 *   is not installed (gstreamer1.0-plugins-bad).
 *   Needs the plugin: GST_PLUGIN_PATH=<build>/plugin build/bench/scope-bench
 * Exit status: 0, or 1 when a pipeline failed or its frame count was wrong. */
#include "bench_util.h"
#include <cudafft/common.h>

#include <gst/app/gstappsrc.h>
#include <gst/audio/audio.h>
#include <gst/gst.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define RATE 48000
#define N_INPUT 8
#define CALIBRATION_S 0.5
#define WARM_UP                                                                                    \
  3 /* buffers before the timed ones: spectrascope needs 2 frames' width of samples                \
     */
#define EOS_TIMEOUT_S 600u

typedef struct {
  guint width, height, channels;
} Case;

typedef struct {
  const char *key;     /* --elements name */
  const char *factory; /* the element whose presence is checked */
  const char *label;
  const char *features; /* the video caps' memory feature, "" for system memory */
} Element;

static const Element elements[] = {
    {"cuda", "cudaspectrumscope", "cudaspectrumscope(cuda)", ""},
    {"cpu", "cudaspectrumscope", "cudaspectrumscope(cpu)", ""},
    {"spectrascope", "spectrascope", "spectrascope", ""},
    {"cuda-mem", "cudaspectrumscope", "cudaspectrumscope(CUDAMem)", "(memory:CUDAMemory)"},
};
#define N_ELEMENTS 4
#define CUDA 0
#define SPECTRASCOPE 2
#define CUDA_MEMORY 3

static guint buffer_frames = 4800;
static guint fps = 60;
static guint fft_size = 4096;
static const char *style = "spectrogram";

static double
cpu_seconds(void)
{
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec / 1e6;
}

static GstPadProbeReturn
count_frame(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  g_atomic_int_inc((gint *)data);
  return GST_PAD_PROBE_OK;
}

static gchar *
element_description(const Element *e)
{
  if (!strcmp(e->key, "spectrascope"))
    return g_strdup("audioconvert ! audio/x-raw,format=S16LE,channels=2 ! spectrascope");
  return g_strdup_printf("cudaspectrumscope backend=%s cuda-device-id=0 style=%s fft-size=%u",
                         !strcmp(e->key, "cpu") ? "cpu" : "cuda", style, fft_size);
}

typedef struct {
  GstAppSrc *src;
  GstBuffer **input;
  guint64 buffers;
  gint *frames;
  gint frames_then; /* frames before the timed pushes */
  gint64 start;
  double cpu_start;
} Pusher;

static gpointer
push_all(gpointer data)
{
  Pusher *p = data;
  GstFlowReturn ret = GST_FLOW_OK;
  p->frames_then = g_atomic_int_get(p->frames);
  p->cpu_start = cpu_seconds();
  p->start = g_get_monotonic_time();
  for (guint64 i = WARM_UP; i < WARM_UP + p->buffers && ret == GST_FLOW_OK; i++)
    ret = bench_push(p->src, p->input[i % N_INPUT], i * buffer_frames, buffer_frames, RATE);
  if (ret == GST_FLOW_OK)
    gst_app_src_end_of_stream(p->src);
  return NULL;
}

typedef struct {
  double wall, cpu; /* seconds, over the timed pushes */
  gint frames;      /* in all, warm-up included */
  gint timed;       /* during the timed pushes */
  guint64 expected;
  gchar *problem;
} Run;

static gboolean
run_once(const Case *c, const Element *e, GstBuffer **input, guint64 buffers, Run *out)
{
  gchar *element = element_description(e);
  gchar *desc = g_strdup_printf(
      "appsrc name=src format=time block=true max-bytes=%u caps=audio/x-raw,format=F32LE,"
      "layout=interleaved,rate=%d,channels=%u,channel-mask=(bitmask)0x%" G_GINT64_MODIFIER
      "x ! %s ! "
      "video/x-raw%s,format=BGRx,width=%u,height=%u,framerate=%u/1 ! fakesink name=sink "
      "sync=false",
      (guint)(8 * buffer_frames * c->channels * sizeof(float)), RATE, c->channels,
      /* positioned channels (up to 8), which audioconvert can downmix for spectrascope */
      c->channels <= 8 ? gst_audio_channel_get_fallback_mask((gint)c->channels) : (guint64)0,
      element, e->features, c->width, c->height, fps);
  g_free(element);
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
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstPad *sinkpad = gst_element_get_static_pad(sink, "sink");
  gint frames = 0;
  gst_pad_add_probe(sinkpad, GST_PAD_PROBE_TYPE_BUFFER, count_frame, &frames, NULL);
  GstBus *bus = gst_element_get_bus(pipeline);

  gboolean ok = gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
  GstFlowReturn ret = GST_FLOW_OK;
  for (guint i = 0; ok && ret == GST_FLOW_OK && i < WARM_UP; i++)
    ret = bench_push(src, input[i], i * buffer_frames, buffer_frames, RATE);
  ok = ok && ret == GST_FLOW_OK &&
       bench_wait_for(bus, GST_MESSAGE_ASYNC_DONE, 60 * GST_SECOND, "preroll");
  ok = ok &&
       gst_element_get_state(pipeline, NULL, NULL, 10 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS;
  if (!ok)
    fprintf(stderr, "the pipeline did not start (%s, %ux%u, %u channels)\n", e->label, c->width,
            c->height, c->channels);
  if (ok) {
    g_usleep(100000);
    Pusher p = {src, input, buffers, &frames, 0, 0, 0.0};
    GThread *thread = g_thread_new("push", push_all, &p);
    ok = bench_wait_for(bus, GST_MESSAGE_EOS, EOS_TIMEOUT_S * GST_SECOND, "EOS");
    out->wall = (g_get_monotonic_time() - p.start) / 1e6;
    out->cpu = cpu_seconds() - p.cpu_start;
    out->timed = g_atomic_int_get(&frames) - p.frames_then;
    if (!ok)
      gst_element_set_state(pipeline, GST_STATE_NULL);
    g_thread_join(thread);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  out->frames = g_atomic_int_get(&frames);
  out->expected = (buffers + WARM_UP) * buffer_frames * fps / RATE;
  out->problem = NULL;
  /* spectrascope's base class emits frames as its adapter allows, not at the frame rate */
  if (ok && strcmp(e->key, "spectrascope") != 0 &&
      llabs((long long)out->frames - (long long)out->expected) > 1)
    out->problem = g_strdup_printf("%d frames, expected %" G_GUINT64_FORMAT " (+-1)", out->frames,
                                   out->expected);
  gst_object_unref(bus);
  gst_object_unref(sinkpad);
  gst_object_unref(sink);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  return ok;
}

typedef struct {
  double audio_s, frames_per_s, realtime, cpu_ms_per_audio_s;
  gint frames;
  guint64 expected;
} Figures;

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
    buffers = bench_capped_buffers(seconds, max_wall, calibration, r.wall,
                                   4.0 * buffer_frames / RATE, RATE, buffer_frames);
  }
  double *walls = g_new(double, runs), *cpus = g_new(double, runs), *rates = g_new(double, runs);
  gboolean ok = TRUE;
  for (int i = 0; i < runs && ok; i++) {
    ok = run_once(c, e, input, buffers, &r);
    if (!ok)
      break;
    walls[i] = r.wall;
    cpus[i] = r.cpu;
    rates[i] = r.timed / r.wall;
    f->frames = r.frames;
    f->expected = r.expected;
    if (r.problem) {
      if (!*bad)
        printf("  %s run %d: %s\n", e->label, i + 1, r.problem);
      g_free(r.problem);
      *bad = TRUE;
    }
  }
  if (ok) {
    f->audio_s = buffers * buffer_frames / (double)RATE;
    f->frames_per_s = bench_median(rates, runs);
    f->realtime = f->audio_s / bench_median(walls, runs);
    f->cpu_ms_per_audio_s = 1e3 * bench_median(cpus, runs) / f->audio_s;
  }
  g_free(walls);
  g_free(cpus);
  g_free(rates);
  return ok;
}

static void
usage(const char *name)
{
  fprintf(stderr,
          "usage: %s [--runs R] [--seconds S] [--max-wall W] [--buffer N] [--fps F] "
          "[--sizes WxH,..] [--channels C,..] [--style spectrogram|bars] [--fft-size N] "
          "[--elements cuda,cuda-mem,cpu,spectrascope]\n",
          name);
}

/* "1920x1080,3840x2160" into widths and heights; the count, 0 on a bad list. */
static int
parse_sizes(const char *text, guint *widths, guint *heights, int max)
{
  gchar **parts = g_strsplit(text, ",", -1);
  int n = 0;
  for (int i = 0; parts[i] && n >= 0; i++) {
    guint w = 0, h = 0;
    if (n == max || sscanf(parts[i], "%ux%u", &w, &h) != 2 || w < 16 || h < 16)
      n = -1;
    else {
      widths[n] = w;
      heights[n] = h;
      n++;
    }
  }
  g_strfreev(parts);
  return n > 0 ? n : 0;
}

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  setvbuf(stdout, NULL, _IOLBF, 0);
  int runs = 3;
  double seconds = 10.0, max_wall = 4.0;
  guint widths[8] = {1920, 3840}, heights[8] = {1080, 2160};
  int n_sizes = 2;
  double channels[8] = {2, 8};
  int n_channels = 2;
  gboolean wanted[N_ELEMENTS] = {TRUE, TRUE, TRUE, TRUE};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
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
    else if (!strcmp(arg, "--fps"))
      good = (fps = (guint)atoi(value)) >= 1 && fps <= 1000;
    else if (!strcmp(arg, "--fft-size"))
      good = cudafft_fft_size_supported(fft_size = (guint)atoi(value));
    else if (!strcmp(arg, "--style"))
      good = !strcmp(style = value, "spectrogram") || !strcmp(value, "bars");
    else if (!strcmp(arg, "--sizes"))
      good = (n_sizes = parse_sizes(value, widths, heights, 8)) > 0;
    else if (!strcmp(arg, "--channels"))
      good = (n_channels = bench_parse_list(value, channels, 8)) > 0;
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

  bench_print_machine("cudaspectrumscope(cuda)");
  printf("settings: F32LE %d Hz interleaved in buffers of %u frames, BGRx at %u fps, %s, "
         "fft-size %u; up to %.1f s of audio a run (less where a run would take over %.1f s "
         "wall), median of %d runs\n",
         RATE, buffer_frames, fps, style, fft_size, seconds, max_wall, runs);
  printf("%-24s %10s %3s %8s %10s %11s %12s %16s %17s\n", "element", "size", "ch", "audio-s",
         "frames/s", "x-realtime", "cpu-ms/s", "cpu/spectrascope", "frames (at fps)");

  int status = 0;
  const int cuda_devices = cudafft_cuda_device_count();
  for (int si = 0; si < n_sizes; si++)
    for (int ci = 0; ci < n_channels; ci++) {
      const Case c = {widths[si], heights[si], (guint)channels[ci]};
      GstBuffer *input[N_INPUT];
      for (int b = 0; b < N_INPUT; b++)
        input[b] = bench_random_input((gsize)buffer_frames * c.channels, FALSE);
      Figures figures[N_ELEMENTS] = {0};
      gboolean measured[N_ELEMENTS] = {FALSE};
      /* spectrascope first, so that the others can be put against it */
      static const int order[N_ELEMENTS] = {SPECTRASCOPE, CUDA, CUDA_MEMORY, 1};
      for (int o = 0; o < N_ELEMENTS; o++) {
        const int e = order[o];
        const Element *el = &elements[e];
        if (!wanted[e])
          continue;
        gchar *row =
            g_strdup_printf("%-24s %5ux%-4u %3u ", el->label, c.width, c.height, c.channels);
        GstElementFactory *factory = gst_element_factory_find(el->factory);
        if (!factory) {
          printf("%s  skipped: no element %s%s\n", row, el->factory,
                 e == SPECTRASCOPE ? " (gstreamer1.0-plugins-bad)"
                                   : " (GST_PLUGIN_PATH=<build>/plugin?)");
          g_free(row);
          if (e != SPECTRASCOPE)
            status = 1;
          continue;
        }
        gst_object_unref(factory);
        if ((e == CUDA || e == CUDA_MEMORY) && cuda_devices == 0) {
          printf("%s  skipped: no CUDA device on this machine\n", row);
          g_free(row);
          continue;
        }
        Figures *f = &figures[e];
        gboolean bad = FALSE;
        if (!measure(&c, el, input, seconds, max_wall, runs, f, &bad)) {
          printf("%s  failed (the error is above)\n", row);
          g_free(row);
          status = 1;
          continue;
        }
        measured[e] = TRUE;
        if (bad)
          status = 1;
        const Figures *peer = &figures[SPECTRASCOPE];
        gchar *against =
            measured[SPECTRASCOPE] && e != SPECTRASCOPE && peer->cpu_ms_per_audio_s > 0.0
                ? g_strdup_printf("%15.1f%%",
                                  100.0 * f->cpu_ms_per_audio_s / peer->cpu_ms_per_audio_s)
                : g_strdup("");
        printf("%s%8.2f %10.1f %11.2f %12.1f %16s %8d (%" G_GUINT64_FORMAT ")%s\n", row, f->audio_s,
               f->frames_per_s, f->realtime, f->cpu_ms_per_audio_s, against, f->frames, f->expected,
               bad ? " WRONG FRAME COUNT" : "");
        g_free(against);
        g_free(row);
        if (e == CUDA_MEMORY && measured[CUDA] && figures[CUDA].frames_per_s > 0.0)
          printf("%-24s %5ux%-4u %3u   CUDA memory / system memory: %.2fx the frames a second\n",
                 "", c.width, c.height, c.channels, f->frames_per_s / figures[CUDA].frames_per_s);
      }
      for (int b = 0; b < N_INPUT; b++)
        gst_buffer_unref(input[b]);
    }
  return status;
}
