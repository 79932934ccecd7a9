/* test_cuda_memory.c: CUDA memory (memory:CUDAMemory) and the GstCudaContext shared with
 * GStreamer's CUDA elements (plugin/cuda/gstcudafftcontext.h), on the backend named by argv[1].
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
#include "cuda_memory_util.h"

#include <cudafft/common.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <stdio.h>
#include <string.h>

#define VIDEO "format=BGRx,width=320,height=240,framerate=30/1"
#define CUDA_CAPS "video/x-raw(memory:CUDAMemory)," VIDEO
#define SYSTEM_CAPS "video/x-raw," VIDEO
#define CONTEXT_TYPE "gst.cuda.context"

/* The pipeline appsrc ! cudaspectrumscope backend=B ! middle ! appsink, for signal s. */
static GstElement *
scope_pipeline(const TestSignal *s, const char *middle)
{
  gchar *scope = g_strdup_printf("cudaspectrumscope name=scope backend=%s fft-size=1024 ! %s",
                                 eu_backend, middle);
  GstElement *pipeline = audio_pipeline(s, scope);
  g_free(scope);
  return pipeline;
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
    play_cycle(pipeline, &s, cycle, cuda); /* the frames outlive the state change */
    check_same_frames(cuda, system, "a state cycle's CUDA-memory frames");
    g_ptr_array_unref(cuda);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_ptr_array_unref(system);
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
  return suite;
}

EU_MAIN(cuda_memory_suite)
