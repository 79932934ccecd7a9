/* streams-bench: many live-sized streams in one process, as a media server runs them: N
 * independent pipelines, each
 *   audiotestsrc samplesperbuffer=480 ! audio/x-raw,format=F32LE,rate=48000,channels=2 !
 *   ELEMENT ! fakesink sync=false
 * (480 frames = 10 ms per buffer), for cudaconvolve with 1 s and 10 s responses,
 * cudamatrixconvolve with a 2 x 2 matrix of 1 s responses, cudafft and cudaspectrum (bands=1025,
 * 60 messages a second; spectrum-data: the same with message-lists=false, the float32 fields
 * without the GValue lists), on the GPU and on the CPU backend in the same run, at several N;
 * chains of two of our elements with the samples between them in system memory and in CUDA
 * memory (the GPU only); and GStreamer's `identity` in the element's place (backend "-"): the
 * pipelines' own cost, the floor under every element's host CPU per audio second; and GStreamer's
 * `spectrum` with cudaspectrum's settings (gst-spectrum), its peer. cudamelspectrogram's rows take
 * what speech models take, 16 kHz mono in 160-frame buffers (10 ms), to Whisper's features:
 * whisper (the preset: a tensor of 80 x 3000 per 30 s chunk, as Whisper takes them) and
 * whisper-frames (the same features a tensor per 10 ms frame, as they come: a buffer out per
 * buffer in), with identity-16k (identity on that audio) as their peer.
 *
 * All N pipelines play at once, each on its own streaming thread. After a warm-up (engines made,
 * kernels uploaded, every pipeline streaming) the program counts the buffers every pipeline has
 * taken during a measured window and the process's CPU time (user + system, getrusage) over it:
 *   aggregate = audio seconds taken by all N pipelines / wall seconds of the window
 *   host CPU  = CPU milliseconds of the process / audio seconds taken.
 * Pad probes time each buffer in the element: from its arrival at the element's sink pad to the
 * push of its output, or, where it gives no output (cudafft completes a frame every 4 or 5
 * buffers), to the source's next buffer (an upper bound: it includes fakesink and the source's
 * next buffer); median and 99th percentile over the window. Each streaming thread writes its own
 * records, so the probes take no lock.
 *
 * Usage: streams-bench [--streams N,..]
 *                      [--elements convolve1,convolve10,matrix1,fft,spectrum,spectrum-data,
 *                                  spectrum-silent,fft-ifft,fft-ifft-mem,convolve-convolve,
 *                                  convolve-convolve-mem,convolve-spectrum,
 *                                  convolve-spectrum-mem,matrix-convolve,matrix-convolve-mem,
 *                                  convolve-matrix,convolve-matrix-mem,identity,gst-spectrum,
 *                                  whisper,whisper-frames,identity-16k]
 *                      [--backends cuda,cpu] [--warmup S] [--window S] [--devices D,..]
 *                      [--one-pipeline [--buffers B] [--limit S]]
 *   Defaults: N = 1,16,64,256,1024; every element; both backends (cuda only with a device);
 *   1 s warm-up (2 s for 10 s responses), 3 s window.
 *   --devices: the cuda rows once for each D (backend "cuda D=2"): on the first D devices
 *   (cuda-device-id=-1, the library's own spread, where D is every device of the host; fewer:
 *   pipeline i pinned to device i mod D; more: skipped, saying why), so that one run compares
 *   D = 1 and D = 2; each such row is followed by each device's load while it ran (objects and
 *   state: cudafft_cuda_device_load(), read after the warm-up).
 *   --one-pipeline: instead, ONE pipeline of N such chains (as one gst-launch-1.0 line, or an
 *   application that monitors many inputs, builds them), each audiotestsrc num-buffers=B (2000:
 *   20 s) wave=white-noise, their messages taken off the one bus and freed by a bus watch on a
 *   GMainLoop; timed from PLAYING to EOS: aggregate (audio seconds of all chains per wall
 *   second), process CPU ms per audio second, element messages per chain, and each row against
 *   its peer's of the same N, which runs first (gst-spectrum's; identity-16k's for whisper and
 *   whisper-frames: issue 50's target, 1024 chains of Whisper's features at 70% of identity's
 *   aggregate or more and at most 1.5 times its CPU per audio second). Each row runs in a process
 * of its own (this program again), as gst-launch-1.0 runs one pipeline; a row past S seconds (60)
 * is reported as STALLED with the share of its audio through, its process ended, instead of
 * hanging. Defaults there: N = 64,256 and the elements spectrum,spectrum-data,gst-spectrum; the
 *   gpu-only chains are left out.
 *   Needs the plugin: GST_PLUGIN_PATH=<build>/plugin build/bench/streams-bench
 *
 * Length: past the ~800 lines a file usually keeps, as one benchmark program: its cases, their
 * timing and the report read together, and bench/ keeps one program per measurement. */
#include "bench_util.h"

#include <cudafft/common.h>

#include <gst/gst.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The audio of every row but those whose element names its own (Element.rate) */
#define RATE 48000
#define CHANNELS 2
#define FRAMES_PER_BUFFER 480
/* Per-buffer records a pipeline keeps over a window: 30 s of buffers, more than any window
 * takes (a pipeline that runs faster keeps its first ones). */
#define RECORDS_MAX 3000

typedef struct {
  const char *key;
  const char *factory;
  const char *properties;  /* besides backend=... */
  double ir_seconds;       /* the responses' length (cudaconvolve's kernel, cudamatrixconvolve's
                            * matrix: make_responses) */
  double warmup_factor;    /* the warm-up is this many times --warmup */
  gboolean drops_messages; /* cudaspectrum: its element messages are dropped at the bus */
  gboolean backendless;    /* identity: no backend property, one row per N */
  gboolean gpu_only;       /* a chain that runs on the GPU alone: no cpu rows */
} Element;

/* A 2 x 2 identity matrix, the responses cudamatrixconvolve needs to start (stream_open replaces
 * it with make_responses()'s). */
#define IDENTITY_MATRIX "matrix=\"<<1.0>, <0.0>, <0.0>, <1.0>>\""

static const Element elements[] = {
    {"convolve1", "cudaconvolve", "drain-tail=false", 1.0, 1.0, FALSE, FALSE, FALSE},
    {"convolve10", "cudaconvolve", "drain-tail=false", 10.0, 2.0, FALSE, FALSE, FALSE},
    /* a true-stereo reverb: every entry of the 2 x 2 matrix a 1 s response (the matrix written
     * inline is the one-pipeline mode's, which sets no responses of its own) */
    {"matrix1", "cudamatrixconvolve", "drain-tail=false " IDENTITY_MATRIX, 1.0, 1.0, FALSE, FALSE,
     FALSE},
    {"fft", "cudafft", "fft-size=4096 hop=2048", 0.0, 1.0, FALSE, FALSE, FALSE},
    {"spectrum", "cudaspectrum", "bands=1025 interval=16666667 post-messages=true", 0.0, 1.0, TRUE,
     FALSE, FALSE},
    /* the same messages without spectrum's GValue lists: the float32 fields alone */
    {"spectrum-data", "cudaspectrum",
     "bands=1025 interval=16666667 post-messages=true message-lists=false", 0.0, 1.0, TRUE, FALSE,
     FALSE},
    /* the analysis without messages: the engine's share of spectrum's cost */
    {"spectrum-silent", "cudaspectrum", "bands=1025 interval=16666667 post-messages=false", 0.0,
     1.0, FALSE, FALSE, FALSE},
    /* cudafft ! cudaifft with the frames between them in system memory and in CUDA
     * memory (the GPU only: --backends cuda); the per-buffer times are cudafft's */
    {"fft-ifft", "cudafft", "fft-size=4096 hop=2048 ! audio/x-fft ! cudaifft backend=cuda", 0.0,
     1.0, FALSE, FALSE, TRUE},
    {"fft-ifft-mem", "cudafft",
     "fft-size=4096 hop=2048 ! audio/x-fft(memory:CUDAMemory) ! cudaifft backend=cuda", 0.0, 1.0,
     FALSE, FALSE, TRUE},
    /* cudaconvolve ! cudaconvolve (1 s responses, both filters) with the samples between them in
     * system memory and in CUDA memory (GPU only); the per-buffer times are the first's */
    {"convolve-convolve", "cudaconvolve",
     "drain-tail=false ! audio/x-raw ! cudaconvolve name=e2 backend=cuda drain-tail=false", 1.0,
     1.0, FALSE, FALSE, TRUE},
    {"convolve-convolve-mem", "cudaconvolve",
     "drain-tail=false ! audio/x-raw(memory:CUDAMemory) ! cudaconvolve name=e2 backend=cuda "
     "drain-tail=false",
     1.0, 1.0, FALSE, FALSE, TRUE},
    /* cudaconvolve (1 s response) ! cudaspectrum, the samples between them in system memory and in
     * CUDA memory (GPU only); the per-buffer times are cudaconvolve's */
    {"convolve-spectrum", "cudaconvolve",
     "drain-tail=false ! audio/x-raw ! cudaspectrum backend=cuda bands=1025 interval=16666667 "
     "post-messages=true",
     1.0, 1.0, TRUE, FALSE, TRUE},
    {"convolve-spectrum-mem", "cudaconvolve",
     "drain-tail=false ! audio/x-raw(memory:CUDAMemory) ! cudaspectrum backend=cuda bands=1025 "
     "interval=16666667 post-messages=true",
     1.0, 1.0, TRUE, FALSE, TRUE},
    /* cudamatrixconvolve (2 x 2 of 1 s responses) ! cudaconvolve (1 s), the samples between them
     * in system memory and in CUDA memory (GPU only): the matrix's output side; the per-buffer
     * times are the matrix's */
    {"matrix-convolve", "cudamatrixconvolve",
     "drain-tail=false " IDENTITY_MATRIX " ! audio/x-raw ! cudaconvolve name=e2 backend=cuda "
     "drain-tail=false",
     1.0, 1.0, FALSE, FALSE, TRUE},
    {"matrix-convolve-mem", "cudamatrixconvolve",
     "drain-tail=false " IDENTITY_MATRIX " ! audio/x-raw(memory:CUDAMemory) ! cudaconvolve name=e2 "
     "backend=cuda drain-tail=false",
     1.0, 1.0, FALSE, FALSE, TRUE},
    /* cudaconvolve (1 s) ! cudamatrixconvolve (2 x 2 of 1 s responses), likewise: the matrix's
     * input side; the per-buffer times are cudaconvolve's */
    {"convolve-matrix", "cudaconvolve",
     "drain-tail=false ! audio/x-raw ! cudamatrixconvolve name=e2 backend=cuda "
     "drain-tail=false " IDENTITY_MATRIX,
     1.0, 1.0, FALSE, FALSE, TRUE},
    {"convolve-matrix-mem", "cudaconvolve",
     "drain-tail=false ! audio/x-raw(memory:CUDAMemory) ! cudamatrixconvolve name=e2 "
     "backend=cuda drain-tail=false " IDENTITY_MATRIX,
     1.0, 1.0, FALSE, FALSE, TRUE},
    {"identity", "identity", "", 0.0, 1.0, FALSE, TRUE, FALSE},
    /* GStreamer's own spectrum with cudaspectrum's settings: the peer of the spectrum rows */
    {"gst-spectrum", "spectrum", "bands=1025 interval=16666667 post-messages=true", 0.0, 1.0, TRUE,
     TRUE, FALSE},
    /* Whisper's features of 16 kHz mono in 10 ms buffers: its 30 s chunks, and a tensor a frame;
     * identity on the same audio, GStreamer's per-buffer floor, is their peer */
    {"whisper", "cudamelspectrogram", "preset=whisper", 0.0, 1.0, FALSE, FALSE, FALSE},
    {"whisper-frames", "cudamelspectrogram", "preset=whisper output=frames layout=frame-major", 0.0,
     1.0, FALSE, FALSE, FALSE},
    {"identity-16k", "identity", "", 0.0, 1.0, FALSE, TRUE, FALSE},
};

/* The elements whose chains take other audio than 48 kHz stereo in 480-frame buffers, and the
 * row each of their one-pipeline rows is set against (the others': gst-spectrum's). */
typedef struct {
  const char *key;
  int rate, channels, frames_per_buffer;
  const char *peer;
} Audio;

static const Audio other_audio[] = {
    {"whisper", 16000, 1, 160, "identity-16k"},
    {"whisper-frames", 16000, 1, 160, "identity-16k"},
    {"identity-16k", 16000, 1, 160, NULL},
};
#define N_ELEMENTS (int)(sizeof elements / sizeof elements[0])

static const char *const backends[] = {"cuda", "cpu"};

static const Audio *
audio_of(const Element *e)
{
  for (size_t i = 0; i < sizeof other_audio / sizeof other_audio[0]; i++)
    if (!strcmp(other_audio[i].key, e->key))
      return &other_audio[i];
  return NULL;
}

static int
rate_of(const Element *e)
{
  return audio_of(e) ? audio_of(e)->rate : RATE;
}

static int
channels_of(const Element *e)
{
  return audio_of(e) ? audio_of(e)->channels : CHANNELS;
}

static int
frames_per_buffer(const Element *e)
{
  return audio_of(e) ? audio_of(e)->frames_per_buffer : FRAMES_PER_BUFFER;
}

/* Seconds of audio in one buffer of e's chains. */
static double
audio_per_buffer(const Element *e)
{
  return (double)frames_per_buffer(e) / rate_of(e);
}

/* One pipeline and its probes' records (written by its streaming thread only). */
typedef struct {
  GstElement *pipeline;
  gint64 arrived;         /* monotonic us of the buffer in the element; 0: none open */
  volatile gint counting; /* set by the main thread during the window */
  guint64 taken;          /* buffers that arrived at the element while counting */
  guint records;
  double ms[RECORDS_MAX];
} Stream;

static void
close_record(Stream *s, gint64 now)
{
  if (s->arrived && g_atomic_int_get(&s->counting) && s->records < RECORDS_MAX)
    s->ms[s->records++] = (double)(now - s->arrived) / 1000.0;
  s->arrived = 0;
}

static GstPadProbeReturn
on_element_input(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  Stream *s = data;
  const gint64 now = g_get_monotonic_time();
  close_record(s, now); /* none open unless the last buffer gave no output */
  s->arrived = now;
  if (g_atomic_int_get(&s->counting))
    s->taken++;
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
on_element_output(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  close_record(data, g_get_monotonic_time());
  return GST_PAD_PROBE_OK;
}

/* The source's next buffer closes the record of one that gave no output. */
static GstPadProbeReturn
on_source_output(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  close_record(data, g_get_monotonic_time());
  return GST_PAD_PROBE_OK;
}

/* A sync handler that drops a message owns it (GstBusSyncHandler): gst_bus_post() does not free
 * what the handler drops. */
static GstBusSyncReply
drop_element_messages(GstBus *bus, GstMessage *message, gpointer data)
{
  (void)bus;
  (void)data;
  if (GST_MESSAGE_TYPE(message) != GST_MESSAGE_ELEMENT)
    return GST_BUS_PASS;
  gst_message_unref(message);
  return GST_BUS_DROP;
}

/* The responses every filter of a case gets: cudaconvolve's kernel, decaying noise of `seconds`,
 * and cudamatrixconvolve's CHANNELS x CHANNELS matrix, that kernel in every entry. */
typedef struct {
  GValueArray *kernel;
  GValue matrix; /* GST_TYPE_ARRAY of rows */
} Responses;

static void
make_responses(double seconds, Responses *r)
{
  const guint taps = (guint)(seconds * RATE);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  r->kernel = g_value_array_new(taps);
  G_GNUC_END_IGNORE_DEPRECATIONS
  GValue row = G_VALUE_INIT, v = G_VALUE_INIT;
  g_value_init(&row, GST_TYPE_ARRAY);
  g_value_init(&v, G_TYPE_DOUBLE);
  GRand *rand = g_rand_new_with_seed(42);
  for (guint i = 0; i < taps; i++) {
    g_value_set_double(&v, (2.0 * g_rand_double(rand) - 1.0) * exp(-6.9 * i / taps) * 0.05);
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    g_value_array_append(r->kernel, &v);
    G_GNUC_END_IGNORE_DEPRECATIONS
    gst_value_array_append_value(&row, &v);
  }
  g_rand_free(rand);
  g_value_unset(&v);
  g_value_init(&r->matrix, GST_TYPE_ARRAY);
  for (guint entry = 0; entry < CHANNELS * CHANNELS; entry++)
    gst_value_array_append_value(&r->matrix, &row);
  g_value_unset(&row);
}

static void
free_responses(Responses *r)
{
  if (!r->kernel)
    return;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  g_value_array_free(r->kernel);
  G_GNUC_END_IGNORE_DEPRECATIONS
  g_value_unset(&r->matrix);
  r->kernel = NULL;
}

/* Gives a filter of ours its responses: a cudamatrixconvolve the matrix, a cudaconvolve the
 * kernel. */
static void
set_responses(GstElement *element, const Responses *r)
{
  GstElementFactory *factory = gst_element_get_factory(element);
  if (factory && !strcmp(GST_OBJECT_NAME(factory), "cudamatrixconvolve"))
    g_object_set_property(G_OBJECT(element), "matrix", &r->matrix);
  else
    g_object_set(element, "kernel", r->kernel, NULL);
}

/* The cuda-device-id of pipeline `index` on the first `devices` devices (0: no --devices): -1 (the
 * library's choice) where that is every device of the host, else index mod devices. */
static int
device_for(guint index, int devices)
{
  return devices == 0 || devices >= cudafft_cuda_device_count() ? -1 : (int)(index % devices);
}

static gboolean
stream_open(Stream *s, const Element *e, const char *backend, int devices,
            const Responses *responses, guint index)
{
  gchar *device = e->backendless || strcmp(backend, "cuda")
                      ? g_strdup("")
                      : g_strdup_printf("cuda-device-id=%d", device_for(index, devices));
  gchar *launch = g_strdup_printf(
      "audiotestsrc name=src samplesperbuffer=%d is-live=false ! audio/x-raw,format=F32LE,"
      "rate=%d,channels=%d,layout=interleaved ! %s name=e %s%s %s %s ! fakesink sync=false",
      frames_per_buffer(e), rate_of(e), channels_of(e), e->factory,
      e->backendless ? "" : "backend=", e->backendless ? "" : backend, device, e->properties);
  g_free(device);
  GError *error = NULL;
  s->pipeline = gst_parse_launch(launch, &error);
  g_free(launch);
  if (!s->pipeline) {
    fprintf(stderr, "stream %u: %s\n", index, error ? error->message : "cannot parse");
    g_clear_error(&error);
    return FALSE;
  }
  GstElement *el = gst_bin_get_by_name(GST_BIN(s->pipeline), "e");
  GstElement *src = gst_bin_get_by_name(GST_BIN(s->pipeline), "src");
  GstElement *second = gst_bin_get_by_name(GST_BIN(s->pipeline), "e2");
  if (responses)
    set_responses(el, responses);
  if (responses && second) /* a chain's second filter */
    set_responses(second, responses);
  gst_clear_object(&second);
  GstPad *sink = gst_element_get_static_pad(el, "sink");
  GstPad *out = gst_element_get_static_pad(el, "src");
  GstPad *from = gst_element_get_static_pad(src, "src");
  gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, on_element_input, s, NULL);
  gst_pad_add_probe(out, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                    on_element_output, s, NULL);
  gst_pad_add_probe(from, GST_PAD_PROBE_TYPE_BUFFER, on_source_output, s, NULL);
  gst_object_unref(sink);
  gst_object_unref(out);
  gst_object_unref(from);
  gst_object_unref(src);
  gst_object_unref(el);
  if (e->drops_messages) {
    GstBus *bus = gst_element_get_bus(s->pipeline);
    gst_bus_set_sync_handler(bus, drop_element_messages, NULL, NULL);
    gst_object_unref(bus);
  }
  return TRUE;
}

/* The first error any pipeline posted, printed; FALSE if there was one. */
static gboolean
no_errors(Stream *streams, guint n)
{
  for (guint i = 0; i < n; i++) {
    GstBus *bus = gst_element_get_bus(streams[i].pipeline);
    GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    gst_object_unref(bus);
    if (msg) {
      GError *err = NULL;
      gchar *debug = NULL;
      gst_message_parse_error(msg, &err, &debug);
      fprintf(stderr, "stream %u: error from %s: %s (%s)\n", i,
              GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message, debug ? debug : "");
      g_error_free(err);
      g_free(debug);
      gst_message_unref(msg);
      return FALSE;
    }
  }
  return TRUE;
}

/* CPU seconds run so far by the process's threads whose names start with "cudafft-" (the
 * library's executor and worker threads), from /proc's per-thread scheduler statistics
 * (nanoseconds); 0 where /proc has none. */
static double
library_cpu_seconds(void)
{
  GDir *dir = g_dir_open("/proc/self/task", 0, NULL);
  if (!dir)
    return 0.0;
  double seconds = 0.0;
  const gchar *tid;
  while ((tid = g_dir_read_name(dir)) != NULL) {
    gchar *path = g_strdup_printf("/proc/self/task/%s/comm", tid);
    gchar *name = NULL;
    if (g_file_get_contents(path, &name, NULL, NULL) && g_str_has_prefix(name, "cudafft-")) {
      gchar *stat_path = g_strdup_printf("/proc/self/task/%s/schedstat", tid);
      gchar *stat = NULL;
      if (g_file_get_contents(stat_path, &stat, NULL, NULL))
        seconds += g_ascii_strtod(stat, NULL) / 1e9;
      g_free(stat);
      g_free(stat_path);
    }
    g_free(name);
    g_free(path);
  }
  g_dir_close(dir);
  return seconds;
}

static double
cpu_seconds(void)
{
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

typedef struct {
  gboolean ok;
  double aggregate;   /* audio seconds per wall second, all streams */
  double cpu_ms;      /* process CPU ms per audio second */
  double library_ms;  /* of which the library's own threads (executor, workers) */
  double median, p99; /* ms per buffer in the element */
  guint64 buffers;
  char spread[256]; /* each device's load after the warm-up ("" without --devices) */
  const char *why;  /* what failed, where no ERROR message says it */
} Figures;

static double
percentile(double *sorted, size_t n, double q)
{
  return n ? sorted[(size_t)(q * (double)(n - 1) + 0.5)] : 0.0;
}

static Figures
run_case(const Element *e, const char *backend, int devices, const Responses *responses, guint n,
         double warmup, double window)
{
  Figures f = {0};
  Stream *streams = g_new0(Stream, n);
  gboolean ok = TRUE;
  for (guint i = 0; i < n && ok; i++)
    ok = stream_open(&streams[i], e, backend, devices, responses, i);
  for (guint i = 0; i < n && ok; i++)
    ok = gst_element_set_state(streams[i].pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
  if (ok) {
    g_usleep((gulong)(warmup * e->warmup_factor * G_USEC_PER_SEC));
    ok = no_errors(streams, n);
    if (devices > 0)
      bench_format_device_load(f.spread, sizeof f.spread);
  }
  if (ok) {
    for (guint i = 0; i < n; i++)
      g_atomic_int_set(&streams[i].counting, 1);
    const gint64 start = g_get_monotonic_time();
    const double cpu_start = cpu_seconds();
    const double library_start = library_cpu_seconds();
    g_usleep((gulong)(window * G_USEC_PER_SEC));
    for (guint i = 0; i < n; i++)
      g_atomic_int_set(&streams[i].counting, 0);
    const double wall = (double)(g_get_monotonic_time() - start) / 1e6;
    const double cpu = cpu_seconds() - cpu_start;
    const double library = library_cpu_seconds() - library_start;
    ok = no_errors(streams, n);
    guint64 buffers = 0;
    size_t records = 0;
    for (guint i = 0; i < n; i++) {
      buffers += streams[i].taken;
      records += streams[i].records;
    }
    double *all = g_new(double, records > 0 ? records : 1);
    size_t at = 0;
    for (guint i = 0; i < n; i++) {
      memcpy(all + at, streams[i].ms, streams[i].records * sizeof(double));
      at += streams[i].records;
    }
    qsort(all, records, sizeof(double), bench_compare_doubles);
    const double audio = (double)buffers * audio_per_buffer(e);
    f.ok = ok && buffers > 0;
    if (ok && buffers == 0)
      f.why = "no buffer reached the elements during the window: the pipelines were still starting "
              "(their engines being made); a longer --warmup";
    f.buffers = buffers;
    f.aggregate = audio / wall;
    f.cpu_ms = audio > 0.0 ? 1000.0 * cpu / audio : 0.0;
    f.library_ms = audio > 0.0 ? 1000.0 * library / audio : 0.0;
    f.median = percentile(all, records, 0.5);
    f.p99 = percentile(all, records, 0.99);
    g_free(all);
  }
  for (guint i = 0; i < n; i++)
    if (streams[i].pipeline) {
      gst_element_set_state(streams[i].pipeline, GST_STATE_NULL);
      gst_object_unref(streams[i].pipeline);
    }
  g_free(streams);
  return f;
}

/* One pipeline of n chains ---------------------------------------------------------------------
 * All chains in one pipeline, as one gst-launch-1.0 command or an application that monitors many
 * inputs builds them: their messages meet on one bus, taken off it and freed by a bus watch on a
 * GMainLoop (as gst-launch-1.0 and applications do), not dropped by a sync handler. */

typedef struct {
  GMainLoop *loop;
  gboolean eos;
  gboolean error;
  gboolean timed_out;
  guint64 element_messages;
} OneRun;

static gboolean
on_one_message(GstBus *bus, GstMessage *message, gpointer data)
{
  (void)bus;
  OneRun *run = data;
  switch (GST_MESSAGE_TYPE(message)) {
  case GST_MESSAGE_ELEMENT:
    run->element_messages++;
    break;
  case GST_MESSAGE_EOS:
    run->eos = TRUE;
    g_main_loop_quit(run->loop);
    break;
  case GST_MESSAGE_ERROR: {
    GError *err = NULL;
    gchar *debug = NULL;
    gst_message_parse_error(message, &err, &debug);
    fprintf(stderr, "error from %s: %s (%s)\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(message)),
            err->message, debug ? debug : "");
    g_error_free(err);
    g_free(debug);
    run->error = TRUE;
    g_main_loop_quit(run->loop);
    break;
  }
  default:
    break;
  }
  return G_SOURCE_CONTINUE; /* the watch frees the message */
}

static gboolean
on_one_limit(gpointer data)
{
  OneRun *run = data;
  run->timed_out = TRUE;
  g_main_loop_quit(run->loop);
  return G_SOURCE_REMOVE;
}

/* The launch line of n chains, each of `buffers` buffers of white noise into the element, its
 * elements named apart (the element's own "name=e2" of a two-element chain becomes e2_<i>). */
static gchar *
one_pipeline_launch(const Element *e, const char *backend, guint n, guint buffers)
{
  GString *launch = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    gchar *second = g_strdup_printf("name=e2_%u", i);
    gchar **parts = g_strsplit(e->properties, "name=e2", -1);
    gchar *properties = g_strjoinv(second, parts);
    g_strfreev(parts);
    g_free(second);
    g_string_append_printf(
        launch,
        "audiotestsrc name=src%u num-buffers=%u samplesperbuffer=%d wave=white-noise ! "
        "audio/x-raw,format=F32LE,rate=%d,channels=%d,layout=interleaved ! %s name=e%u %s%s %s ! "
        "fakesink name=sink%u sync=false ",
        i, buffers, frames_per_buffer(e), rate_of(e), channels_of(e), e->factory, i,
        e->backendless ? "" : "backend=", e->backendless ? "" : backend, properties, i);
    g_free(properties);
  }
  return g_string_free(launch, FALSE);
}

/* Audio seconds the chains' sinks had taken (their positions), for a run that did not finish. */
static double
one_pipeline_progress(GstElement *pipeline, guint n)
{
  double seconds = 0.0;
  for (guint i = 0; i < n; i++) {
    gchar *name = g_strdup_printf("sink%u", i);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), name);
    g_free(name);
    gint64 position = 0;
    if (sink && gst_element_query_position(sink, GST_FORMAT_TIME, &position) && position > 0)
      seconds += (double)position / GST_SECOND;
    gst_clear_object(&sink);
  }
  return seconds;
}

typedef struct {
  gboolean ok;      /* it ran to EOS, or stalled, without an error */
  gboolean stalled; /* past the limit */
  double aggregate; /* audio seconds of all chains per wall second, start to EOS */
  double cpu_ms;    /* process CPU ms per audio second */
  double done;      /* share of the audio through (1 unless stalled) */
  double messages;  /* element messages per chain taken off the bus */
} OneFigures;

/* How a row's process hands its figures to the table's. */
#define ROW_FORMAT "one-pipeline-row %d %d %.6f %.6f %.6f %.3f\n"

static void
print_row_figures(const OneFigures *f)
{
  printf(ROW_FORMAT, f->ok, f->stalled, f->aggregate, f->cpu_ms, f->done, f->messages);
  fflush(stdout);
}

/* Runs the pipeline of n chains of e to EOS and prints its figures (ROW_FORMAT). Where it stalls
 * (past `limit` seconds) it prints how far it got and ends the process at once: a stalled
 * pipeline may take minutes to stop, and this process is the row's own (one_pipeline_row). */
static int
run_one_pipeline(const Element *e, const char *backend, guint n, guint buffers, double limit)
{
  OneFigures f = {0};
  gchar *launch = one_pipeline_launch(e, backend, n, buffers);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(launch, &error);
  g_free(launch);
  if (!pipeline || error) {
    fprintf(stderr, "%s: %s\n", e->key, error ? error->message : "cannot parse");
    g_clear_error(&error);
    gst_clear_object(&pipeline);
    print_row_figures(&f);
    return 1;
  }
  OneRun run = {.loop = g_main_loop_new(NULL, FALSE)};
  GstBus *bus = gst_element_get_bus(pipeline);
  const guint watch = gst_bus_add_watch(bus, on_one_message, &run);
  const guint timer = g_timeout_add((guint)(limit * 1000.0), on_one_limit, &run);

  const double audio = (double)n * buffers * audio_per_buffer(e);
  const double cpu_start = cpu_seconds();
  const gint64 start = g_get_monotonic_time();
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE)
    g_main_loop_run(run.loop);
  else
    run.error = TRUE;
  const double wall = (double)(g_get_monotonic_time() - start) / 1e6;
  const double cpu = cpu_seconds() - cpu_start;

  f.stalled = run.timed_out;
  f.ok = !run.error && (run.eos || run.timed_out);
  const double through = run.eos ? audio : one_pipeline_progress(pipeline, n);
  f.done = audio > 0.0 ? through / audio : 0.0;
  f.aggregate = through / wall;
  f.cpu_ms = through > 0.0 ? 1000.0 * cpu / through : 0.0;
  f.messages = (double)run.element_messages / n;
  print_row_figures(&f);
  if (f.stalled)
    _exit(0);

  g_source_remove(timer);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  g_source_remove(watch);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  g_main_loop_unref(run.loop);
  return f.ok ? 0 : 1;
}

/* One row in a process of its own (this program with --one-pipeline-row), as one gst-launch-1.0
 * runs one pipeline: a stalled row ends its process without holding up the next rows, and no row
 * inherits another's threads or heaps. */
static OneFigures
one_pipeline_row(const char *program, const Element *e, const char *backend, guint n, guint buffers,
                 double limit)
{
  OneFigures f = {0};
  gchar *args[8] = {(gchar *)program,
                    "--one-pipeline-row",
                    (gchar *)e->key,
                    (gchar *)backend,
                    g_strdup_printf("%u", n),
                    g_strdup_printf("%u", buffers),
                    g_strdup_printf("%.3f", limit),
                    NULL};
  gchar *out = NULL;
  GError *error = NULL;
  /* stderr passes through: the row's errors show as they come */
  if (!g_spawn_sync(NULL, args, NULL, G_SPAWN_CHILD_INHERITS_STDERR, NULL, NULL, &out, NULL, NULL,
                    &error)) {
    fprintf(stderr, "cannot run the row's process: %s\n", error->message);
    g_clear_error(&error);
  }
  const char *line = out ? strstr(out, "one-pipeline-row ") : NULL;
  int ok = 0, stalled = 0;
  if (line && sscanf(line, "one-pipeline-row %d %d %lf %lf %lf %lf", &ok, &stalled, &f.aggregate,
                     &f.cpu_ms, &f.done, &f.messages) == 6) {
    f.ok = ok;
    f.stalled = stalled;
  }
  g_free(out);
  for (int i = 4; i < 7; i++)
    g_free(args[i]);
  return f;
}

static void
print_one_row(const char *key, const char *label, guint n, const OneFigures *f,
              const OneFigures *reference, const char *peer, double limit)
{
  if (!f->ok)
    printf("%-15s %-9s %6u  FAILED (see the error above)\n", key, label, n);
  else if (f->stalled)
    printf("%-15s %-9s %6u  STALLED: past the %.0f s limit, %.1f%% of the audio through (%.1fx "
           "real time, %.2f cpu ms/audio s so far)\n",
           key, label, n, limit, 100.0 * f->done, f->aggregate, f->cpu_ms);
  else if (reference && reference->ok && !reference->stalled)
    printf("%-15s %-9s %6u %11.1fx %14.2f %10.0f %8.2fx %5.0f%%  of %s\n", key, label, n,
           f->aggregate, f->cpu_ms, f->messages, f->aggregate / reference->aggregate,
           100.0 * f->cpu_ms / reference->cpu_ms, peer);
  else
    printf("%-15s %-9s %6u %11.1fx %14.2f %10.0f\n", key, label, n, f->aggregate, f->cpu_ms,
           f->messages);
  fflush(stdout);
}

/* The element e's one-pipeline rows are set against: its own peer, else gst-spectrum; -1 where
 * that is not in the table. */
static int
peer_of(int e, const gboolean *want_element)
{
  const Audio *audio = audio_of(&elements[e]);
  const char *key = !audio ? "gst-spectrum" : audio->peer;
  if (!key)
    return -1;
  for (int p = 0; p < N_ELEMENTS; p++)
    if (p != e && want_element[p] && !strcmp(elements[p].key, key))
      return p;
  return -1;
}

/* The one-pipeline table: for each N the peers first (GStreamer's spectrum for the spectrum
 * rows, identity on 16 kHz mono for the features rows), then every other element on each backend,
 * each row set against its peer's of the same N where that completed. A stalled peer is reported,
 * not counted as a failure; a stalled element of ours is one. */
static int
one_pipeline_table(const char *program, const gboolean *want_element, const gboolean *want_backend,
                   const double *counts, int n_counts, guint buffers, double limit)
{
  printf("ONE pipeline of N chains audiotestsrc num-buffers=%u wave=white-noise ! F32LE (stereo "
         "48 kHz in %d-frame buffers; 16 kHz mono in 160-frame buffers for whisper and "
         "identity-16k) ! ELEMENT ! fakesink sync=false, messages taken off the bus by a "
         "GMainLoop bus watch; a process per row, timed from PLAYING to EOS, stalled past %.0f "
         "s\n",
         buffers, FRAMES_PER_BUFFER, limit);
  printf("%-15s %-9s %6s %12s %14s %10s %16s\n", "element", "backend", "N", "aggregate",
         "cpu ms/audio s", "msgs/chain", "vs peer");
  gboolean is_peer[N_ELEMENTS] = {FALSE};
  for (int e = 0; e < N_ELEMENTS; e++)
    if (want_element[e] && peer_of(e, want_element) >= 0)
      is_peer[peer_of(e, want_element)] = TRUE;
  int failures = 0;
  for (int c = 0; c < n_counts; c++) {
    const guint n = (guint)counts[c];
    OneFigures peers[N_ELEMENTS];
    memset(peers, 0, sizeof peers);
    for (int p = 0; p < N_ELEMENTS; p++) {
      if (!is_peer[p])
        continue;
      peers[p] = one_pipeline_row(program, &elements[p], "-", n, buffers, limit);
      print_one_row(elements[p].key, "-", n, &peers[p], NULL, NULL, limit);
      failures += !peers[p].ok;
    }
    for (int e = 0; e < N_ELEMENTS; e++) {
      if (!want_element[e] || is_peer[e] || elements[e].gpu_only)
        continue;
      const int peer = peer_of(e, want_element);
      for (int b = 0; b < 2; b++) {
        if (elements[e].backendless ? b > 0 : !want_backend[b])
          continue;
        const char *label = elements[e].backendless ? "-" : backends[b];
        const OneFigures f =
            one_pipeline_row(program, &elements[e], backends[b], n, buffers, limit);
        print_one_row(elements[e].key, label, n, &f, peer >= 0 ? &peers[peer] : NULL,
                      peer >= 0 ? elements[peer].key : NULL, limit);
        failures += !f.ok || f.stalled;
      }
    }
  }
  return failures;
}

static void
usage(const char *program)
{
  fprintf(stderr,
          "usage: %s [--streams N,..] [--elements "
          "convolve1,convolve10,matrix1,fft,spectrum,spectrum-data,spectrum-silent,fft-ifft,"
          "fft-ifft-mem,convolve-convolve,convolve-convolve-mem,convolve-spectrum,"
          "convolve-spectrum-mem,matrix-convolve,matrix-convolve-mem,convolve-matrix,"
          "convolve-matrix-mem,identity,gst-spectrum,whisper,whisper-frames,identity-16k] "
          "[--backends cuda,cpu] [--warmup S] [--window S] [--devices D,..] "
          "[--one-pipeline [--buffers B] [--limit S]]\n",
          program);
}

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  /* one row of the one-pipeline table, in the process one_pipeline_row started */
  if (argc == 7 && !strcmp(argv[1], "--one-pipeline-row")) {
    for (int e = 0; e < N_ELEMENTS; e++)
      if (!strcmp(elements[e].key, argv[2]))
        return run_one_pipeline(&elements[e], argv[3], (guint)atoi(argv[4]), (guint)atoi(argv[5]),
                                g_ascii_strtod(argv[6], NULL));
    return 2;
  }
  double counts[16] = {1, 16, 64, 256, 1024};
  int n_counts = 5;
  gboolean want_element[N_ELEMENTS];
  for (int e = 0; e < N_ELEMENTS; e++)
    want_element[e] = TRUE;
  gboolean want_backend[2] = {TRUE, TRUE};
  double warmup = 1.0, window = 3.0;
  double device_list[16] = {0};
  int n_devices = 0;
  gboolean one_pipeline = FALSE, elements_given = FALSE, streams_given = FALSE;
  double buffers = 2000.0, limit = 60.0;
  for (int i = 1; i < argc; i++) {
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--one-pipeline")) {
      one_pipeline = TRUE;
      continue;
    }
    gboolean good = value != NULL;
    if (good && !strcmp(argv[i], "--streams"))
      good = (n_counts = bench_parse_list(value, counts, 16)) > 0 && (streams_given = TRUE);
    else if (good && !strcmp(argv[i], "--elements")) {
      good = bench_parse_elements(value, &elements[0].key, sizeof elements[0], N_ELEMENTS,
                                  want_element);
      elements_given = TRUE;
    } else if (good && !strcmp(argv[i], "--buffers"))
      good = (buffers = g_ascii_strtod(value, NULL)) >= 1.0;
    else if (good && !strcmp(argv[i], "--limit"))
      good = (limit = g_ascii_strtod(value, NULL)) > 0.0;
    else if (good && !strcmp(argv[i], "--backends"))
      good = bench_parse_elements(value, &backends[0], sizeof backends[0], 2, want_backend);
    else if (good && !strcmp(argv[i], "--warmup"))
      good = (warmup = g_ascii_strtod(value, NULL)) >= 0.0;
    else if (good && !strcmp(argv[i], "--devices"))
      good = (n_devices = bench_parse_list(value, device_list, 16)) > 0;
    else if (good && !strcmp(argv[i], "--window"))
      good = (window = g_ascii_strtod(value, NULL)) > 0.0;
    else
      good = FALSE;
    if (!good) {
      usage(argv[0]);
      return 2;
    }
    i++;
  }
  if (cudafft_cuda_device_count() == 0)
    want_backend[0] = FALSE;

  bench_print_machine("the cuda backend");
  if (one_pipeline) {
    if (!streams_given) {
      counts[0] = 64;
      counts[1] = 256;
      n_counts = 2;
    }
    for (int e = 0; e < N_ELEMENTS && !elements_given; e++)
      want_element[e] = !strcmp(elements[e].key, "spectrum") ||
                        !strcmp(elements[e].key, "spectrum-data") ||
                        !strcmp(elements[e].key, "gst-spectrum");
    gchar *self = g_file_read_link("/proc/self/exe", NULL);
    const int failures = one_pipeline_table(self ? self : argv[0], want_element, want_backend,
                                            counts, n_counts, (guint)buffers, limit);
    g_free(self);
    return failures ? 1 : 0;
  }
  printf("N pipelines of audiotestsrc (480-frame buffers, F32 stereo 48 kHz; 160-frame buffers "
         "of 16 kHz mono for whisper and identity-16k) ! ELEMENT ! fakesink sync=false in one "
         "process; %.1f s warm-up, %.1f s window\n",
         warmup, window);
  printf("%-15s %-9s %6s %12s %14s %10s %10s %10s\n", "element", "backend", "N", "aggregate",
         "cpu ms/audio s", "of it lib", "median ms", "p99 ms");
  int failures = 0;
  for (int e = 0; e < N_ELEMENTS; e++) {
    if (!want_element[e])
      continue;
    Responses responses = {NULL, G_VALUE_INIT};
    if (elements[e].ir_seconds > 0.0)
      make_responses(elements[e].ir_seconds, &responses);
    for (int c = 0; c < n_counts; c++) {
      Figures by_backend[2] = {{0}};
      /* turns: the cuda backend once for each D (once without --devices), then cpu */
      const int cuda_turns = n_devices > 0 ? n_devices : 1;
      for (int turn = 0; turn < cuda_turns + 1; turn++) {
        const int b = turn < cuda_turns ? 0 : 1;
        const int devices = b == 0 && n_devices > 0 ? (int)device_list[turn] : 0;
        /* identity has no backend: once, in the first backend's turn whatever --backends says */
        if (elements[e].backendless ? turn > 0
                                    : !want_backend[b] || (b == 1 && elements[e].gpu_only))
          continue;
        char label[24];
        if (devices > 0 && !elements[e].backendless)
          snprintf(label, sizeof label, "cuda D=%d", devices);
        else
          snprintf(label, sizeof label, "%s", elements[e].backendless ? "-" : backends[b]);
        const guint n = (guint)counts[c];
        if (devices > cudafft_cuda_device_count()) {
          printf("%-15s %-9s %6u  skipped: this host has %d CUDA devices\n", elements[e].key, label,
                 n, cudafft_cuda_device_count());
          continue;
        }
        Figures f = run_case(&elements[e], backends[b], devices,
                             responses.kernel ? &responses : NULL, n, warmup, window);
        if (turn == 0 || b == 1)
          by_backend[b] = f; /* gpu/cpu: the first D against the cpu */
        if (!f.ok) {
          printf("%-15s %-9s %6u  FAILED (%s)\n", elements[e].key, label, n,
                 f.why ? f.why : "see the error above");
          failures++;
          continue;
        }
        printf("%-15s %-9s %6u %11.1fx %14.2f %10.2f %10.3f %10.3f\n", elements[e].key, label, n,
               f.aggregate, f.cpu_ms, f.library_ms, f.median, f.p99);
        if (f.spread[0])
          printf("%-15s %-9s %6u   per device: %s\n", "", "", n, f.spread);
        fflush(stdout);
      }
      if (by_backend[0].ok && by_backend[1].ok)
        printf("%-15s  gpu/cpu %6u %11.2fx %13.0f%%\n", elements[e].key, (guint)counts[c],
               by_backend[0].aggregate / by_backend[1].aggregate,
               100.0 * by_backend[0].cpu_ms / by_backend[1].cpu_ms);
    }
    free_responses(&responses);
  }
  return failures ? 1 : 0;
}
