/* test_cuda_memory_streams.c: GStreamer 1.24's CUDA memory with a CUDA stream into our elements
 * (plugin/cuda/gstcudafftcudamemory.c, sync_memory_stream), on a GPU; built against GStreamer 1.24
 * or newer with gstreamer-cuda-1.0 (suite cuda-memory, cuda only: without a device there is no CUDA
 * memory to make).
 *
 * From 1.24 on, CUDA memory may carry the stream its producer works on: a pool configured with one
 * (gst_buffer_pool_config_set_cuda_stream, as cudaupload, cudaconvert and nvcodec's decoders do)
 * makes memory whose device map uploads a host copy written since on that stream without waiting,
 * leaving GST_CUDA_MEMORY_TRANSFER_NEED_SYNC set: the consumer must order its work after that
 * stream. Here the test makes such memory in the pipeline's own GstCudaContext (set on the
 * pipeline, so the elements read it in place on the device): each buffer's device bytes poisoned
 * (0xff) and synchronised, then the audio written on the host, so that the element's device map
 * queues the upload on the pool's stream. Into cudafft, cudaconvolve, cudamatrixconvolve and
 * cudaspectrum:
 * - the output byte for byte that of the same input in system memory (cudaspectrum's magnitudes
 *   bit for bit), no ERROR;
 * - every input memory read on the device (its host copy uploaded: NEED_UPLOAD clear) and its
 *   stream synchronised by the element (NEED_SYNC clear) once the pipeline is done. */
#define GST_USE_UNSTABLE_API /* gst/cuda */
#include "cuda_memory_util.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcuda.h>
#include <string.h>

/* Frames per input buffer: 16384 stereo floats, 128 KiB, an upload long enough on the bus that a
 * kernel not ordered after it would likely read the poison; 8 buffers. */
#define STREAM_FRAMES 16384
#define STREAM_BUFFERS 8

typedef struct {
  GstCudaContext *context;
  GstCudaStream *stream;
  GstBufferPool *pool;
} StreamMemory;

static void
stream_memory_open(StreamMemory *m, gsize bytes)
{
  fail_unless(gst_cuda_load_library(), "GStreamer's CUDA library cannot load the driver");
  gst_cuda_memory_init_once();
  m->context = gst_cuda_context_new(0);
  fail_unless(m->context != NULL, "no GstCudaContext on device 0");
  m->stream = gst_cuda_stream_new(m->context);
  fail_unless(m->stream != NULL, "no GstCudaStream");
  m->pool = gst_cuda_buffer_pool_new(m->context);
  /* the audio as GStreamer's CUDA allocator takes it: RGBA, one row of bytes / 4 pixels */
  GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGBA", "width",
                                      G_TYPE_INT, (gint)(bytes / 4), "height", G_TYPE_INT, 1,
                                      "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
  GstStructure *config = gst_buffer_pool_get_config(m->pool);
  gst_buffer_pool_config_set_params(config, caps, (guint)bytes, 0, 0);
  gst_buffer_pool_config_set_cuda_stream(config, m->stream);
  fail_unless(gst_buffer_pool_set_config(m->pool, config), "the CUDA pool refused its stream");
  fail_unless(gst_buffer_pool_set_active(m->pool, TRUE));
  gst_caps_unref(caps);
}

static void
stream_memory_close(StreamMemory *m)
{
  gst_buffer_pool_set_active(m->pool, FALSE);
  gst_object_unref(m->pool);
  gst_cuda_stream_unref(m->stream);
  gst_object_unref(m->context);
}

/* src's bytes in a buffer of the pool's CUDA memory: poisoned on the device first, then written
 * on the host (uploaded on the pool's stream at the next device map); src's flags, timestamps and
 * metas. */
static GstBuffer *
stream_buffer(StreamMemory *m, GstBuffer *src)
{
  GstBuffer *buffer = NULL;
  fail_unless_equals_int(gst_buffer_pool_acquire_buffer(m->pool, &buffer, NULL), GST_FLOW_OK);
  GstMemory *memory = gst_buffer_peek_memory(buffer, 0);
  fail_unless(gst_cuda_memory_get_stream(GST_CUDA_MEMORY_CAST(memory)) == m->stream,
              "the pool's memory does not carry its stream");
  GstMapInfo map, in;
  fail_unless(gst_memory_map(memory, &map, GST_MAP_WRITE));
  memset(map.data, 0xff, map.size);
  gst_memory_unmap(memory, &map);
  fail_unless(gst_memory_map(memory, &map, GST_MAP_READ | GST_MAP_CUDA));
  gst_memory_unmap(memory, &map);
  gst_cuda_memory_sync(GST_CUDA_MEMORY_CAST(memory));
  fail_unless(gst_buffer_map(src, &in, GST_MAP_READ));
  fail_unless(in.size <= map.size);
  fail_unless(gst_memory_map(memory, &map, GST_MAP_WRITE));
  memcpy(map.data, in.data, in.size);
  gst_memory_unmap(memory, &map);
  const gsize size = in.size;
  gst_buffer_unmap(src, &in);
  fail_unless(GST_MEMORY_FLAG_IS_SET(memory, GST_CUDA_MEMORY_TRANSFER_NEED_UPLOAD),
              "a host write left no upload to do");
  fail_if(GST_MEMORY_FLAG_IS_SET(memory, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC));
  gst_buffer_set_size(buffer, (gssize)size);
  gst_buffer_copy_into(buffer, src,
                       GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS | GST_BUFFER_COPY_META, 0,
                       -1);
  return buffer;
}

/* Bus sync handler: the floats of the "spectrum" messages' magnitudes (one list per channel with
 * multi-channel) appended in order; the messages dropped. */
typedef struct {
  GMutex lock;
  GArray *values;
} Levels;

static void
append_floats(GArray *values, const GValue *v)
{
  if (GST_VALUE_HOLDS_ARRAY(v)) {
    for (guint i = 0; i < gst_value_array_get_size(v); i++)
      append_floats(values, gst_value_array_get_value(v, i));
  } else if (GST_VALUE_HOLDS_LIST(v)) {
    for (guint i = 0; i < gst_value_list_get_size(v); i++)
      append_floats(values, gst_value_list_get_value(v, i));
  } else {
    const gfloat f = G_VALUE_HOLDS_FLOAT(v) ? g_value_get_float(v) : (gfloat)NAN;
    g_array_append_val(values, f);
  }
}

static GstBusSyncReply
keep_levels(GstBus *bus, GstMessage *msg, gpointer data)
{
  (void)bus;
  Levels *l = data;
  if (GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ELEMENT || !gst_message_has_name(msg, "spectrum"))
    return GST_BUS_PASS;
  const GValue *magnitude = gst_structure_get_value(gst_message_get_structure(msg), "magnitude");
  g_mutex_lock(&l->lock);
  if (magnitude)
    append_floats(l->values, magnitude);
  g_mutex_unlock(&l->lock);
  gst_message_unref(msg);
  return GST_BUS_DROP;
}

/* appsrc (caps; in the pool's CUDA memory where m is given, the pipeline then in m's context) !
 * MIDDLE ! appsink over inputs to EOS, no ERROR: the output into out, the spectrum's magnitudes
 * into *levels; the buffers pushed into *pushed where given. cv0 gets the kernel. */
static void
run(const char *middle, GstCaps *caps, GPtrArray *inputs, StreamMemory *m, const double *taps,
    gsize n, GPtrArray *out, GArray **levels, GPtrArray *pushed)
{
  GstElement *pipeline =
      launch("appsrc name=src format=time ! %s ! appsink name=sink sync=false", middle);
  if (m) {
    /* the pipeline's CUDA context: every element takes it, and reads the pool's memory in place */
    GstContext *context = gst_context_new_cuda_context(m->context);
    gst_element_set_context(pipeline, context);
    gst_context_unref(context);
  }
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstCaps *src_caps = gst_caps_copy(caps);
  if (m)
    gst_caps_set_features(src_caps, 0, gst_caps_features_new("memory:CUDAMemory", NULL));
  g_object_set(src, "caps", src_caps, NULL);
  gst_caps_unref(src_caps);
  GstElement *cv = gst_bin_get_by_name(GST_BIN(pipeline), "cv0");
  if (cv)
    eu_set_kernel(cv, taps, n);
  gst_clear_object(&cv);
  Levels kept;
  g_mutex_init(&kept.lock);
  kept.values = g_array_new(FALSE, FALSE, sizeof(gfloat));
  GstBus *bus = gst_element_get_bus(pipeline);
  gst_bus_set_sync_handler(bus, keep_levels, &kept, NULL);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (guint i = 0; i < inputs->len; i++) {
    GstBuffer *input = g_ptr_array_index(inputs, i);
    GstBuffer *buffer = m ? stream_buffer(m, input) : gst_buffer_ref(input);
    if (pushed)
      g_ptr_array_add(pushed, gst_buffer_ref(buffer));
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), buffer), GST_FLOW_OK);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  pull_all(pipeline, out);
  gchar *text = NULL;
  fail_if(pipeline_error(pipeline, &text), "%s: %s", middle, text);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  gst_object_unref(bus);
  *levels = g_array_ref(kept.values);
  g_array_unref(kept.values);
  g_mutex_clear(&kept.lock);
  gst_object_unref(src);
  gst_object_unref(pipeline);
}

GST_START_TEST(test_stream_memory_into_elements)
{
  TestSignal s;
  TestRng rng = test_rng("CUDA memory with a stream");
  test_signal_alloc(&s, CUDAFFT_SAMPLE_F32, CM_CHANNELS, CM_RATE, STREAM_FRAMES * STREAM_BUFFERS,
                    TEST_READ_POW2);
  for (guint c = 0; c < CM_CHANNELS; c++)
    for (gsize j = 0; j < s.frames; j++)
      test_signal_set(&s, j, c, 0.8 * test_rng_uniform53(&rng) - 0.4);
  GstCaps *caps = eu_raw_caps(s.format, s.rate, s.channels);
  GPtrArray *inputs = eu_buffer_list();
  for (gsize first = 0; first < s.frames; first += STREAM_FRAMES)
    g_ptr_array_add(inputs, eu_signal_buffer(&s, first, MIN(STREAM_FRAMES, s.frames - first), 0));
  const double taps[] = {0.5, -0.25, 0.125, 0.3, 0.05};
  static const char *const middles[] = {
      "cudafft fft-size=1024 hop=256",
      "cudaconvolve name=cv0",
      "cudamatrixconvolve block-size=256 matrix=\"<<0.5, -0.25, 0.125>, <0.3>, <0.05, 0.1>, "
      "<1.0>>\"",
      "cudaspectrum bands=513 interval=10000000 post-messages=true multi-channel=true",
  };
  StreamMemory m;
  stream_memory_open(&m, STREAM_FRAMES * s.channels * sizeof(gfloat));
  for (guint e = 0; e < G_N_ELEMENTS(middles); e++) {
    GPtrArray *want = frame_list(), *got = frame_list(), *pushed = eu_buffer_list();
    GArray *want_levels = NULL, *got_levels = NULL;
    run(middles[e], caps, inputs, NULL, taps, G_N_ELEMENTS(taps), want, &want_levels, NULL);
    run(middles[e], caps, inputs, &m, taps, G_N_ELEMENTS(taps), got, &got_levels, pushed);
    gchar *what =
        g_strdup_printf("%s fed CUDA memory whose upload runs on its pool's stream", middles[e]);
    check_same_buffers(got, want, what);
    fail_unless(
        got_levels->len == want_levels->len &&
            memcmp(got_levels->data, want_levels->data, want_levels->len * sizeof(gfloat)) == 0,
        "%s: the spectrum's %u magnitudes differ from system memory's (%u)", what, got_levels->len,
        want_levels->len);
    guint on_device = 0, synced = 0;
    for (guint i = 0; i < pushed->len; i++) {
      GstMemory *memory = gst_buffer_peek_memory(g_ptr_array_index(pushed, i), 0);
      on_device += !GST_MEMORY_FLAG_IS_SET(memory, GST_CUDA_MEMORY_TRANSFER_NEED_UPLOAD);
      synced += !GST_MEMORY_FLAG_IS_SET(memory, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
    }
    fail_unless(on_device == pushed->len,
                "%s: %u of %u input buffers were not read on the device (host copies)", what,
                pushed->len - on_device, pushed->len);
    fail_unless(synced == pushed->len,
                "%s: %u of %u input buffers' streams were left unsynchronised", what,
                pushed->len - synced, pushed->len);
    test_check(TRUE,
               "%s: %u buffers read on the device after their stream, output byte for byte "
               "system memory's%s",
               what, pushed->len, want_levels->len > 0 ? ", magnitudes bit for bit" : "");
    g_free(what);
    g_array_unref(want_levels);
    g_array_unref(got_levels);
    g_ptr_array_unref(pushed);
    g_ptr_array_unref(want);
    g_ptr_array_unref(got);
  }
  stream_memory_close(&m);
  gst_caps_unref(caps);
  g_ptr_array_unref(inputs);
  test_signal_clear(&s);
}
GST_END_TEST;

static Suite *
cuda_memory_streams_suite(void)
{
  TCase *tc;
  Suite *suite = eu_suite("cuda-memory-streams", &tc);
  tcase_add_test(tc, test_stream_memory_into_elements);
  return suite;
}

EU_MAIN(cuda_memory_streams_suite)
