/* test_cuda_memory.c: CUDA memory (memory:CUDAMemory) and the GstCudaContext shared with
 * GStreamer's CUDA elements (plugin/gstcudafftcontext.h), on the backend named by argv[1].
 *
 * cuda (a GPU, and nvcodec's cudaupload / cudadownload where the test needs them: a host whose
 * GStreamer lacks them fails those tests, saying so):
 * - cudaspectrumscope's frames in CUDA memory (GstCudaMemory, "gst.cuda.memory") into an appsink,
 *   byte for byte the frames of the system-memory path from the same random audio, and the same
 *   again through cudadownload;
 * - one context: cudaspectrumscope and cudadownload downstream (which starts first and asks its
 *   neighbours) answer the context query with the same GstCudaContext; with a cudaupload in the
 *   same pipeline started before everything else (its own context, made with cuCtxCreate, cached
 *   by the bin), cudaspectrumscope runs in that context and its frames are still exact; with an
 *   application's context (answered to need-context from a bus sync handler), the same; on a host
 *   of two GPUs, cuda-device-id=1 runs on device 1 beside the application's device-0 context;
 * - EOS, flushes and state cycles (READY and NULL) while CUDA memory flows; frames held past
 *   the pipeline's teardown stay readable.
 * cpu (CI, no GPU needed): backend=cpu with CUDA-memory-only caps fails with an ERROR that says
 * why; with a sink that takes anything, or caps that allow both, it negotiates system memory; the
 * state cycles in system memory. */
#include "element_util.h"

#include <cudafft/common.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define RATE 48000
#define CHANNELS 2
#define FRAMES (RATE / 2) /* half a second of audio: 15 frames at 30 fps */
#define VIDEO "format=BGRx,width=320,height=240,framerate=30/1"
#define CUDA_CAPS "video/x-raw(memory:CUDAMemory)," VIDEO
#define SYSTEM_CAPS "video/x-raw," VIDEO
#define CONTEXT_TYPE "gst.cuda.context"

static void
random_signal(TestSignal *s, const char *label)
{
  TestRng rng = test_rng("%s", label);
  test_signal_alloc(s, CUDAFFT_SAMPLE_F32, CHANNELS, RATE, FRAMES, TEST_READ_POW2);
  for (guint c = 0; c < CHANNELS; c++)
    for (gsize j = 0; j < FRAMES; j++)
      test_signal_set(s, j, c, 0.8 * test_rng_uniform53(&rng) - 0.4);
}

static GstElement *launch(const char *format, ...) G_GNUC_PRINTF(1, 2);

static GstElement *
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

/* The pipeline appsrc ! cudaspectrumscope backend=B ! middle ! appsink, for signal s. */
static GstElement *
scope_pipeline(const TestSignal *s, const char *middle)
{
  GstElement *pipeline =
      launch("appsrc name=src format=time ! cudaspectrumscope name=scope backend=%s fft-size=1024 "
             "! %s ! appsink name=sink sync=false",
             eu_backend, middle);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *caps = eu_raw_caps(s->format, s->rate, s->channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  gst_object_unref(src);
  return pipeline;
}

/* Pushes the whole signal in 480-frame buffers and EOS. */
static void
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
static void
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
static gboolean
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
static GPtrArray *
frame_list(void)
{
  return g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
}

/* Plays pipeline over s to EOS, its frames into out; no ERROR may come. It stays PLAYING. */
static void
play_to_eos(GstElement *pipeline, const TestSignal *s, GPtrArray *out)
{
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  push_signal(pipeline, s);
  pull_all(pipeline, out);
  gchar *text = NULL;
  fail_if(pipeline_error(pipeline, &text), "%s", text);
}

/* Runs the scope pipeline with `middle` over s to EOS; its frames into out. */
static void
run_frames(const TestSignal *s, const char *middle, GPtrArray *out)
{
  GstElement *pipeline = scope_pipeline(s, middle);
  play_to_eos(pipeline, s, out);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

static gboolean
is_cuda_memory(GstBuffer *buffer)
{
  return gst_buffer_n_memory(buffer) == 1 &&
         gst_memory_is_type(gst_buffer_peek_memory(buffer, 0), "gst.cuda.memory");
}

static gboolean
caps_have_cuda_memory(GstCaps *caps)
{
  GstCapsFeatures *features = gst_caps_get_features(caps, 0);
  return features && gst_caps_features_contains(features, "memory:CUDAMemory");
}

/* Every frame of got against want, row by row over the visible bytes (the pitches may differ). */
static void
check_same_frames(GPtrArray *got, GPtrArray *want, const char *what)
{
  fail_unless(want->len >= 10, "the system-memory path gave only %u frames", want->len);
  fail_unless_equals_int(got->len, want->len);
  for (guint i = 0; i < got->len; i++) {
    GstSample *a = g_ptr_array_index(got, i), *b = g_ptr_array_index(want, i);
    GstVideoInfo ia, ib;
    fail_unless(gst_video_info_from_caps(&ia, gst_sample_get_caps(a)));
    fail_unless(gst_video_info_from_caps(&ib, gst_sample_get_caps(b)));
    GstVideoFrame fa, fb;
    fail_unless(gst_video_frame_map(&fa, &ia, gst_sample_get_buffer(a), GST_MAP_READ),
                "%s: cannot map frame %u on the host", what, i);
    fail_unless(gst_video_frame_map(&fb, &ib, gst_sample_get_buffer(b), GST_MAP_READ));
    const gsize row = (gsize)GST_VIDEO_FRAME_WIDTH(&fa) * 4;
    guint bad_rows = 0;
    for (gint y = 0; y < GST_VIDEO_FRAME_HEIGHT(&fa); y++) {
      const guint8 *ra = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fa, 0) +
                         (gsize)y * GST_VIDEO_FRAME_PLANE_STRIDE(&fa, 0);
      const guint8 *rb = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fb, 0) +
                         (gsize)y * GST_VIDEO_FRAME_PLANE_STRIDE(&fb, 0);
      bad_rows += memcmp(ra, rb, row) != 0;
    }
    fail_unless_equals_uint64(GST_BUFFER_PTS(gst_sample_get_buffer(a)),
                              GST_BUFFER_PTS(gst_sample_get_buffer(b)));
    gst_video_frame_unmap(&fa);
    gst_video_frame_unmap(&fb);
    fail_unless(bad_rows == 0, "%s: frame %u differs from the system-memory frame in %u rows", what,
                i, bad_rows);
  }
  test_check(TRUE, "%s: %u frames byte for byte the system-memory path's", what, got->len);
}

static void
require_element(const char *name)
{
  GstElementFactory *factory = gst_element_factory_find(name);
  fail_unless(factory != NULL,
              "no element %s: this GStreamer lacks nvcodec (gst-plugins-bad with GStreamer's CUDA "
              "library; ../shared/gpu/make-gst-bundle --nvcodec on the GPU machine)",
              name);
  gst_object_unref(factory);
}

/* The GstCudaContext an element answers the context query with, through its own pad (NULL:
 * none); a reference. */
static GObject *
context_of(GstElement *pipeline, const char *name, const char *pad_name)
{
  GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), name);
  fail_unless(element != NULL, "no element %s", name);
  GstPad *pad = gst_element_get_static_pad(element, pad_name);
  GstQuery *query = gst_query_new_context(CONTEXT_TYPE);
  GObject *found = NULL;
  if (gst_pad_query(pad, query)) {
    GstContext *context = NULL;
    gst_query_parse_context(query, &context);
    const GstStructure *s = context ? gst_context_get_structure(context) : NULL;
    const GValue *value = s ? gst_structure_get_value(s, CONTEXT_TYPE) : NULL;
    if (value && G_VALUE_HOLDS_OBJECT(value))
      found = g_value_dup_object(value);
  }
  gst_query_unref(query);
  gst_object_unref(pad);
  gst_object_unref(element);
  return found;
}

/* ---- GPU ---- */

GST_START_TEST(test_frames_in_cuda_memory)
{
  TestSignal s;
  random_signal(&s, "cuda memory frames");
  GPtrArray *system = frame_list();
  GPtrArray *cuda = frame_list();
  run_frames(&s, SYSTEM_CAPS, system);
  run_frames(&s, CUDA_CAPS, cuda);
  guint in_cuda = 0;
  for (guint i = 0; i < cuda->len; i++) {
    GstSample *sample = g_ptr_array_index(cuda, i);
    in_cuda += is_cuda_memory(gst_sample_get_buffer(sample)) &&
               caps_have_cuda_memory(gst_sample_get_caps(sample));
  }
  fail_unless_equals_int(in_cuda, cuda->len);
  test_check(TRUE, "every frame is GstCudaMemory under memory:CUDAMemory caps (%u)", in_cuda);
  /* the pipelines are gone: the frames held past their teardown are read now */
  check_same_frames(cuda, system, "CUDA memory into appsink");
  g_ptr_array_unref(cuda);

  /* a sink that takes anything gets system memory, as before CUDA memory existed */
  GPtrArray *any = frame_list();
  run_frames(&s, "identity", any);
  fail_unless(any->len > 0);
  fail_if(caps_have_cuda_memory(gst_sample_get_caps(g_ptr_array_index(any, 0))),
          "a sink that takes anything was given CUDA memory");
  g_ptr_array_unref(any);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

GST_START_TEST(test_cudadownload_same_frames_and_context)
{
  require_element("cudadownload");
  TestSignal s;
  random_signal(&s, "cudadownload frames");
  GPtrArray *system = frame_list();
  GPtrArray *down = frame_list();
  run_frames(&s, SYSTEM_CAPS, system);
  /* cudadownload starts first (sink to source) and asks its neighbours: the scope answers */
  GstElement *pipeline = scope_pipeline(&s, CUDA_CAPS " ! cudadownload name=down ! " SYSTEM_CAPS);
  play_to_eos(pipeline, &s, down);
  GObject *ours = context_of(pipeline, "scope", "src");
  GObject *theirs = context_of(pipeline, "down", "sink");
  fail_unless(ours && theirs, "a context query went unanswered (scope %p, cudadownload %p)", ours,
              theirs);
  fail_unless(ours == theirs, "two contexts in one pipeline: scope %p, cudadownload %p", ours,
              theirs);
  test_check(TRUE, "cudaspectrumscope and cudadownload share one GstCudaContext (%p)", ours);
  g_object_unref(ours);
  g_object_unref(theirs);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  check_same_frames(down, system, "CUDA memory through cudadownload");
  g_ptr_array_unref(down);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* A pipeline whose cudaupload starts before everything else makes GStreamer's own context
 * (cuCtxCreate: not the primary one) and posts it; the scope, started after, must run in it. */
GST_START_TEST(test_foreign_context_first)
{
  require_element("cudaupload");
  TestSignal s;
  random_signal(&s, "foreign context frames");
  GPtrArray *system = frame_list();
  GPtrArray *cuda = frame_list();
  run_frames(&s, SYSTEM_CAPS, system);
  GstElement *pipeline = scope_pipeline(&s, CUDA_CAPS);
  GstElement *other = launch("videotestsrc num-buffers=3 ! cudaupload name=up ! fakesink");
  GstElement *up = gst_bin_get_by_name(GST_BIN(other), "up");
  gst_bin_remove(GST_BIN(other), up);
  gst_object_unref(other);
  gst_bin_add(GST_BIN(pipeline), up); /* unlinked: it asks nobody but the bin */
  /* GStreamer 1.22's CUDA elements make their context at READY to PAUSED */
  fail_unless(gst_element_set_state(up, GST_STATE_PAUSED) == GST_STATE_CHANGE_SUCCESS);
  play_to_eos(pipeline, &s, cuda);
  GObject *ours = context_of(pipeline, "scope", "src");
  GObject *theirs = context_of(pipeline, "up", "src");
  fail_unless(ours && theirs && ours == theirs,
              "cudaspectrumscope did not join cudaupload's context (%p, %p)", ours, theirs);
  test_check(TRUE, "cudaspectrumscope joined the context cudaupload made first (%p)", ours);
  g_object_unref(ours);
  g_object_unref(theirs);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(up);
  gst_object_unref(pipeline);
  check_same_frames(cuda, system, "CUDA memory in cudaupload's context");
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* The application's context, answered to need-context. */
static GstBusSyncReply
answer_need_context(GstBus *bus, GstMessage *msg, gpointer data)
{
  (void)bus;
  const gchar *type = NULL;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_NEED_CONTEXT &&
      gst_message_parse_context_type(msg, &type) && !g_strcmp0(type, CONTEXT_TYPE))
    gst_element_set_context(GST_ELEMENT(GST_MESSAGE_SRC(msg)), data);
  return GST_BUS_PASS;
}

/* An application's context: the one GStreamer made for a cudaupload of the application's own
 * (cuCtxCreate) on `device`, in a pipeline *maker kept PAUSED; *object is the GstCudaContext. */
static GstContext *
application_context(guint device, GstElement **maker, GObject **object)
{
  *maker = launch("videotestsrc ! cudaupload name=up cuda-device-id=%u ! fakesink", device);
  /* its context is made at READY to PAUSED; PAUSED completes once fakesink prerolled */
  gst_element_set_state(*maker, GST_STATE_PAUSED);
  fail_unless(gst_element_get_state(*maker, NULL, NULL, 30 * GST_SECOND) ==
              GST_STATE_CHANGE_SUCCESS);
  *object = context_of(*maker, "up", "src");
  fail_unless(*object != NULL, "cudaupload made no context");
  GstContext *context = gst_context_new(CONTEXT_TYPE, TRUE);
  gst_structure_set(gst_context_writable_structure(context), CONTEXT_TYPE, G_OBJECT_TYPE(*object),
                    *object, NULL);
  return context;
}

/* Runs the scope with CUDA-memory caps and cuda-device-id=device_id over s, the application
 * answering need-context with `context`; the frames into out, and the context the scope runs in
 * (a reference) returned. */
static GObject *
run_with_application_context(const TestSignal *s, GstContext *context, gint device_id,
                             GPtrArray *out)
{
  GstElement *pipeline = scope_pipeline(s, CUDA_CAPS);
  GstElement *scope = gst_bin_get_by_name(GST_BIN(pipeline), "scope");
  g_object_set(scope, "cuda-device-id", device_id, NULL);
  gst_object_unref(scope);
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_bus_set_sync_handler(bus, answer_need_context, context, NULL);
  play_to_eos(pipeline, s, out);
  GObject *ours = context_of(pipeline, "scope", "src");
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return ours;
}

GST_START_TEST(test_application_context)
{
  require_element("cudaupload");
  GstElement *maker = NULL;
  GObject *app = NULL;
  GstContext *context = application_context(0, &maker, &app);
  TestSignal s;
  random_signal(&s, "application context frames");
  GPtrArray *system = frame_list();
  GPtrArray *cuda = frame_list();
  run_frames(&s, SYSTEM_CAPS, system);
  GObject *ours = run_with_application_context(&s, context, -1, cuda);
  fail_unless(ours == app, "cudaspectrumscope runs in %p, not the application's %p", ours, app);
  test_check(TRUE, "cudaspectrumscope runs in the application's context (%p)", app);
  g_object_unref(ours);
  check_same_frames(cuda, system, "CUDA memory in the application's context");
  g_ptr_array_set_size(cuda, 0);

  /* an explicit cuda-device-id of another device wins over the application's context */
  if (cudafft_cuda_device_count() < 2) {
    printf("# one CUDA device: cuda-device-id=1 against a context of device 0 needs two\n");
  } else {
    ours = run_with_application_context(&s, context, 1, cuda);
    gint device = -1;
    if (ours)
      g_object_get(ours, "cuda-device-id", &device, NULL);
    fail_unless(ours && ours != app && device == 1,
                "cuda-device-id=1 ran in %p (device %d), the application's is %p on device 0", ours,
                device, app);
    test_check(TRUE, "cuda-device-id=1 keeps to device 1 beside the application's device-0 "
                     "context");
    g_clear_object(&ours);
    check_same_frames(cuda, system, "CUDA memory on device 1");
  }
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  gst_element_set_state(maker, GST_STATE_NULL);
  gst_object_unref(maker);
  gst_context_unref(context);
  g_object_unref(app);
  test_signal_clear(&s);
}
GST_END_TEST;

/* EOS, a flush and state cycles while CUDA memory flows: frames keep coming and stay exact. */
GST_START_TEST(test_cycles_while_cuda_memory_flows)
{
  TestSignal s;
  random_signal(&s, "cuda memory cycles");
  GPtrArray *system = frame_list();
  run_frames(&s, SYSTEM_CAPS, system);
  /* on the CPU the same cycles in system memory: the element's part of it, without a GPU */
  const char *caps = !strcmp(eu_backend, "cpu") ? SYSTEM_CAPS : CUDA_CAPS;
  GstElement *pipeline = scope_pipeline(&s, caps);
  for (guint cycle = 0; cycle < 5; cycle++) {
    GPtrArray *cuda = frame_list();
    fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    if (cycle > 0) {
      /* a flush before any data (the run starts afresh); appsink keeps its EOS through READY,
       * and the flush clears it */
      fail_unless(gst_element_send_event(pipeline, gst_event_new_flush_start()));
      fail_unless(gst_element_send_event(pipeline, gst_event_new_flush_stop(TRUE)));
    }
    push_signal(pipeline, &s);
    pull_all(pipeline, cuda);
    gchar *text = NULL;
    fail_if(pipeline_error(pipeline, &text), "cycle %u: %s", cycle, text);
    /* the frames outlive the state change back to NULL */
    gst_element_set_state(pipeline, cycle % 2 ? GST_STATE_NULL : GST_STATE_READY);
    check_same_frames(cuda, system, "a state cycle's CUDA-memory frames");
    g_ptr_array_unref(cuda);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* ---- audio: cudafft's frames and cudaifft's input ---- */

/* appsrc ! MIDDLE ! appsink over s (the audio caps on appsrc), to EOS; the buffers into out. */
static void
run_audio(const TestSignal *s, const char *middle, GPtrArray *out)
{
  GstElement *pipeline =
      launch("appsrc name=src format=time ! %s ! appsink name=sink sync=false", middle);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *caps = eu_raw_caps(s->format, s->rate, s->channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  gst_object_unref(src);
  play_to_eos(pipeline, s, out);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

/* Every buffer of got byte for byte, with its timestamps, the one of want at the same place. */
static void
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

#define FFT "cudafft fft-size=1024 hop=256"

GST_START_TEST(test_fft_frames_in_cuda_memory)
{
  TestSignal s;
  random_signal(&s, "cudafft frames in CUDA memory");
  GPtrArray *system = frame_list(), *cuda = frame_list(), *any = frame_list();
  run_audio(&s, FFT " ! audio/x-fft", system);
  run_audio(&s, FFT " ! audio/x-fft(memory:CUDAMemory)", cuda);
  guint in_cuda = 0;
  for (guint i = 0; i < cuda->len; i++) {
    GstSample *sample = g_ptr_array_index(cuda, i);
    in_cuda += is_cuda_memory(gst_sample_get_buffer(sample)) &&
               caps_have_cuda_memory(gst_sample_get_caps(sample));
  }
  fail_unless_equals_int(in_cuda, cuda->len);
  test_check(TRUE,
             "every cudafft buffer is GstCudaMemory under audio/x-fft(memory:CUDAMemory) "
             "(%u)",
             in_cuda);
  check_same_buffers(cuda, system, "cudafft frames in CUDA memory into appsink");
  /* a sink that takes anything keeps system memory */
  run_audio(&s, FFT, any);
  fail_unless(any->len > 0 &&
                  !caps_have_cuda_memory(gst_sample_get_caps(g_ptr_array_index(any, 0))),
              "cudafft gave an appsink that takes anything CUDA memory");
  g_ptr_array_unref(any);
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* Probe: the caps the link between cudafft and cudaifft settled on. */
static GstPadProbeReturn
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

GST_START_TEST(test_fft_ifft_cuda_link)
{
  TestSignal s;
  random_signal(&s, "cudafft ! cudaifft in CUDA memory");
  GPtrArray *system = frame_list(), *cuda = frame_list();
  run_audio(&s, FFT " ! audio/x-fft ! cudaifft", system);
  /* nothing asked: the two agree on CUDA memory between them */
  GstElement *pipeline = launch("appsrc name=src format=time ! " FFT " name=fft ! cudaifft ! "
                                "appsink name=sink sync=false");
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *caps = eu_raw_caps(s.format, s.rate, s.channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  gst_object_unref(src);
  GstElement *fft = gst_bin_get_by_name(GST_BIN(pipeline), "fft");
  GstPad *fft_src = gst_element_get_static_pad(fft, "src");
  GstCaps *link = NULL;
  gst_pad_add_probe(fft_src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, keep_caps, &link, NULL);
  play_to_eos(pipeline, &s, cuda);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  fail_unless(link && caps_have_cuda_memory(link), "cudafft ! cudaifft linked in %" GST_PTR_FORMAT,
              link);
  test_check(TRUE, "cudafft ! cudaifft agree on CUDA memory between them");
  gst_caps_unref(link);
  gst_object_unref(fft_src);
  gst_object_unref(fft);
  gst_object_unref(pipeline);
  check_same_buffers(cuda, system, "cudafft ! cudaifft through CUDA memory");
  g_ptr_array_unref(cuda);
  g_ptr_array_unref(system);
  test_signal_clear(&s);
}
GST_END_TEST;

/* ---- audio: cudaconvolve both ways ---- */

/* Runs appsrc ! MIDDLE ! appsink over s, where MIDDLE's cudaconvolve elements are named cv0, cv1
 * (those present get the kernel); the buffers into out, the caps of cv0's output into *link. */
static void
run_convolve(const TestSignal *s, const char *middle, const double *taps, gsize n, GPtrArray *out,
             GstCaps **link)
{
  GstElement *pipeline =
      launch("appsrc name=src format=time ! %s ! appsink name=sink sync=false", middle);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *caps = eu_raw_caps(s->format, s->rate, s->channels);
  g_object_set(src, "caps", caps, NULL);
  gst_caps_unref(caps);
  gst_object_unref(src);
  for (guint i = 0; i < 2; i++) {
    gchar *name = g_strdup_printf("cv%u", i);
    GstElement *cv = gst_bin_get_by_name(GST_BIN(pipeline), name);
    g_free(name);
    if (!cv)
      continue;
    eu_set_kernel(cv, taps, n);
    if (i == 0) {
      GstPad *pad = gst_element_get_static_pad(cv, "src");
      gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, keep_caps, link, NULL);
      gst_object_unref(pad);
    }
    gst_object_unref(cv);
  }
  play_to_eos(pipeline, s, out);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

/* cudaconvolve ! cudaconvolve: the link in CUDA memory when nothing else is asked, in system
 * memory where a capsfilter says so, and the output in CUDA memory where the sink asks for it;
 * every chain gives the samples of the one whose links are all system memory, byte for byte (the
 * same kernels run on the same samples), its timestamps too. The second filter drops its first
 * 100 samples (latency=100), so that its output buffers start inside their memory. */
GST_START_TEST(test_convolve_cuda_links)
{
  TestSignal s;
  random_signal(&s, "cudaconvolve in CUDA memory");
  TestRng rng = test_rng("cudaconvolve kernel");
  enum { TAPS = 3000 };
  double *taps = g_new(double, TAPS);
  for (gsize k = 0; k < TAPS; k++)
    taps[k] = (test_rng_uniform53(&rng) - 0.5) * 0.1 * exp(-4.0 * (double)k / TAPS);
  const struct {
    const char *middle;
    gboolean link_cuda, out_cuda;
  } chains[] = {
      {"cudaconvolve name=cv0 ! cudaconvolve name=cv1 latency=100", TRUE, FALSE},
      {"cudaconvolve name=cv0 ! cudaconvolve name=cv1 latency=100 ! "
       "audio/x-raw(memory:CUDAMemory)",
       TRUE, TRUE},
      {"cudaconvolve name=cv0 ! audio/x-raw ! cudaconvolve name=cv1 latency=100 ! "
       "audio/x-raw(memory:CUDAMemory)",
       FALSE, TRUE},
      {"cudaconvolve name=cv0 ! audio/x-raw(memory:CUDAMemory) ! cudaconvolve name=cv1 "
       "latency=100 ! audio/x-raw",
       TRUE, FALSE},
  };
  GPtrArray *system = frame_list();
  GstCaps *link = NULL;
  run_convolve(&s, "cudaconvolve name=cv0 ! audio/x-raw ! cudaconvolve name=cv1 latency=100", taps,
               TAPS, system, &link);
  fail_unless(link && !caps_have_cuda_memory(link));
  gst_clear_caps(&link);
  for (guint i = 0; i < G_N_ELEMENTS(chains); i++) {
    GPtrArray *got = frame_list();
    run_convolve(&s, chains[i].middle, taps, TAPS, got, &link);
    fail_unless(link && caps_have_cuda_memory(link) == chains[i].link_cuda,
                "%s: linked in %" GST_PTR_FORMAT, chains[i].middle, link);
    gst_clear_caps(&link);
    guint in_cuda = 0;
    for (guint k = 0; k < got->len; k++)
      in_cuda += is_cuda_memory(gst_sample_get_buffer(g_ptr_array_index(got, k)));
    fail_unless_equals_int(in_cuda, chains[i].out_cuda ? got->len : 0);
    check_same_buffers(got, system, chains[i].middle);
    g_ptr_array_unref(got);
  }
  g_ptr_array_unref(system);
  g_free(taps);
  test_signal_clear(&s);
}
GST_END_TEST;

/* ---- CPU ---- */

GST_START_TEST(test_cpu_refuses_cuda_memory)
{
  TestSignal s;
  random_signal(&s, "cpu refuses");
  GstElement *pipeline = scope_pipeline(&s, CUDA_CAPS);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  gst_app_src_push_buffer(GST_APP_SRC(src), eu_signal_buffer(&s, 0, 4800, 0));
  gst_object_unref(src);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_ERROR);
  gst_object_unref(bus);
  fail_unless(msg != NULL, "backend=cpu with CUDA-memory-only caps posted no ERROR");
  GError *error = NULL;
  gst_message_parse_error(msg, &error, NULL);
  fail_unless(strstr(error->message, "CUDA memory") && strstr(error->message, "backend"),
              "the ERROR does not say why: %s", error->message);
  test_check(TRUE, "backend=cpu refuses CUDA-memory-only caps: %s", error->message);
  g_error_free(error);
  gst_message_unref(msg);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);

  /* cudafft's caps never name CUDA memory with backend=cpu: the link is refused where it is
   * made, naming the caps */
  error = NULL;
  pipeline = gst_parse_launch("audiotestsrc ! cudafft backend=cpu ! "
                              "audio/x-fft(memory:CUDAMemory) ! fakesink",
                              &error);
  fail_unless(error && strstr(error->message, "memory:CUDAMemory"),
              "cudafft backend=cpu linked to CUDA-memory-only caps (%s)",
              error ? error->message : "no error");
  test_check(TRUE, "cudafft backend=cpu will not link to CUDA-memory-only caps: %s",
             error->message);
  g_clear_error(&error);
  gst_clear_object(&pipeline);
  pipeline = gst_parse_launch("audiotestsrc ! cudaconvolve backend=cpu ! "
                              "audio/x-raw(memory:CUDAMemory) ! fakesink",
                              &error);
  fail_unless(error && strstr(error->message, "memory:CUDAMemory"),
              "cudaconvolve backend=cpu linked to CUDA-memory-only caps (%s)",
              error ? error->message : "no error");
  test_check(TRUE, "cudaconvolve backend=cpu will not link to CUDA-memory-only caps: %s",
             error->message);
  g_clear_error(&error);
  gst_clear_object(&pipeline);

  /* caps that allow both, and a sink that takes anything: system memory */
  const char *middles[] = {"video/x-raw(memory:CUDAMemory);video/x-raw", "identity"};
  for (guint i = 0; i < G_N_ELEMENTS(middles); i++) {
    GPtrArray *frames = frame_list();
    run_frames(&s, middles[i], frames);
    fail_unless(frames->len > 0, "%s: no frames", middles[i]);
    for (guint k = 0; k < frames->len; k++) {
      GstSample *sample = g_ptr_array_index(frames, k);
      fail_if(caps_have_cuda_memory(gst_sample_get_caps(sample)) ||
                  is_cuda_memory(gst_sample_get_buffer(sample)),
              "%s: backend=cpu made CUDA memory", middles[i]);
    }
    test_check(TRUE, "backend=cpu, downstream %s: %u frames in system memory", middles[i],
               frames->len);
    g_ptr_array_unref(frames);
  }
  test_signal_clear(&s);
}
GST_END_TEST;

static Suite *
cuda_memory_suite(void)
{
  TCase *tc;
  Suite *suite = eu_suite("cuda-memory", &tc);
  if (!strcmp(eu_backend, "cpu")) {
    tcase_add_test(tc, test_cpu_refuses_cuda_memory);
    tcase_add_test(tc, test_cycles_while_cuda_memory_flows);
    return suite;
  }
  tcase_add_test(tc, test_frames_in_cuda_memory);
  tcase_add_test(tc, test_cudadownload_same_frames_and_context);
  tcase_add_test(tc, test_foreign_context_first);
  tcase_add_test(tc, test_application_context);
  tcase_add_test(tc, test_cycles_while_cuda_memory_flows);
  tcase_add_test(tc, test_fft_frames_in_cuda_memory);
  tcase_add_test(tc, test_fft_ifft_cuda_link);
  tcase_add_test(tc, test_convolve_cuda_links);
  return suite;
}

EU_MAIN(cuda_memory_suite)
