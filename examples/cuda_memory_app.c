/* cuda-memory-app: an application that takes our elements' output as CUDA memory from an
 * appsink and works on it with its own CUDA code, without copying it to the host: cudafft's
 * spectra and cudaspectrumscope's video frames.
 *
 * It runs the same audio (a sine, deterministic) through pairs of pipelines:
 *   audiotestsrc ! cudafft ! audio/x-fft(memory:CUDAMemory) ! appsink
 *   audiotestsrc ! cudafft ! audio/x-fft ! appsink
 *   audiotestsrc ! cudaspectrumscope ! video/x-raw(memory:CUDAMemory),... ! appsink
 *   audiotestsrc ! cudaspectrumscope ! video/x-raw,... ! appsink
 * For each CUDA-memory buffer it maps it with GST_MAP_CUDA (the device pointer, no copy), makes
 * the buffer's CUDA context current (the pipeline's shared GstCudaContext: the memory belongs to
 * it), and sums bytes with its own kernel (row_sums.cu): each row of a video frame, the whole of
 * a buffer of spectra (its bytes are contiguous: one row). It checks the sums against the same
 * buffers in system memory, summed on the host. Exit 0 when everything agrees; 77 where there is
 * no CUDA device (nothing to show).
 *
 * Where the data is: a video frame is one plane of the negotiated format, `GstCudaMemory.info
 * .stride[0]` bytes from one row to the next (the buffer's GstVideoMeta says the same); a buffer
 * of spectra is the bytes of the same buffer in system memory (frames of channels x bins of
 * float re, im), from the device pointer on. Both are complete when the buffer arrives. */
#define GST_USE_UNSTABLE_API /* gst/cuda is unstable API in GStreamer 1.22 */
#include "row_sums.h"

#include <cudafft/common.h>

#include <gst/app/gstappsink.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <stdio.h>
#include <string.h>

#define FRAMES 30
#define VIDEO "format=BGRx,width=640,height=360,framerate=30/1"
#define SCOPE "cudaspectrumscope backend=cuda"
#define FFT "cudafft backend=cuda fft-size=4096 hop=1024"

/* The buffers of one pipeline run to EOS (GstSample, in order): element, then caps. */
static GPtrArray *
run(const char *element, const char *caps)
{
  gchar *desc = g_strdup_printf("audiotestsrc wave=sine freq=440 num-buffers=%d "
                                "samplesperbuffer=1600 ! audio/x-raw,rate=48000,channels=2 ! "
                                "%s ! %s ! appsink name=sink sync=false",
                                FRAMES, element, caps);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &error);
  g_free(desc);
  if (!pipeline) {
    fprintf(stderr, "cuda-memory-app: %s\n", error->message);
    g_error_free(error);
    return NULL;
  }
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample *sample;
  while ((sample = gst_app_sink_pull_sample(GST_APP_SINK(sink))))
    g_ptr_array_add(frames, sample);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (msg) {
    gst_message_parse_error(msg, &error, NULL);
    fprintf(stderr, "cuda-memory-app: %s\n", error->message);
    g_error_free(error);
    gst_message_unref(msg);
    g_ptr_array_set_size(frames, 0);
  }
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return frames;
}

/* The row sums of a buffer in CUDA memory, on the device by the application's own kernel: rows of
 * row_bytes, the memory's pitch apart (one row: the whole buffer). */
static gboolean
sums_on_device(GstSample *sample, guint64 *sums, guint rows, gsize row_bytes)
{
  GstMemory *memory = gst_buffer_peek_memory(gst_sample_get_buffer(sample), 0);
  if (!gst_is_cuda_memory(memory)) {
    fprintf(stderr, "cuda-memory-app: a frame is not CUDA memory\n");
    return FALSE;
  }
  GstCudaMemory *cuda = GST_CUDA_MEMORY_CAST(memory);
  GstMapInfo map;
  if (!gst_memory_map(memory, &map, GST_MAP_READ | GST_MAP_CUDA))
    return FALSE;
  /* the memory's context current while the application's CUDA code reads it */
  gst_cuda_context_push(cuda->context);
  char error[256] = "";
  const gsize pitch = rows > 1 ? (gsize)GST_VIDEO_INFO_PLANE_STRIDE(&cuda->info, 0) : row_bytes;
  const int status =
      row_sums_on_device(map.data, pitch, row_bytes, rows, sums, error, sizeof error);
  gst_cuda_context_pop(NULL);
  gst_memory_unmap(memory, &map);
  if (status != 0)
    fprintf(stderr, "cuda-memory-app: %s\n", error);
  return status == 0;
}

/* The row sums of a frame in system memory, on the host. */
static void
sums_on_host(GstSample *sample, guint64 *sums)
{
  GstVideoInfo info;
  gst_video_info_from_caps(&info, gst_sample_get_caps(sample));
  GstVideoFrame frame;
  gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ);
  for (gint y = 0; y < GST_VIDEO_FRAME_HEIGHT(&frame); y++) {
    const guint8 *row = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&frame, 0) +
                        (gsize)y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
    guint64 sum = 0;
    for (gint x = 0; x < GST_VIDEO_FRAME_WIDTH(&frame) * 4; x++)
      sum += row[x];
    sums[y] = sum;
  }
  gst_video_frame_unmap(&frame);
}

/* The byte sum of a buffer in system memory, on the host. */
static guint64
sum_on_host(GstSample *sample)
{
  GstMapInfo map;
  guint64 sum = 0;
  gst_buffer_map(gst_sample_get_buffer(sample), &map, GST_MAP_READ);
  for (gsize i = 0; i < map.size; i++)
    sum += map.data[i];
  gst_buffer_unmap(gst_sample_get_buffer(sample), &map);
  return sum;
}

/* cudafft's spectra: each buffer's byte sum on the device against the host's. */
static int
check_spectra(void)
{
  GPtrArray *on_device = run(FFT, "audio/x-fft(memory:CUDAMemory)");
  GPtrArray *in_system = run(FFT, "audio/x-fft");
  if (!on_device || !in_system || on_device->len == 0 || on_device->len != in_system->len) {
    fprintf(stderr,
            "cuda-memory-app: %u buffers of spectra in CUDA memory, %u in system "
            "memory\n",
            on_device ? on_device->len : 0, in_system ? in_system->len : 0);
    return 1;
  }
  guint bad = 0;
  gsize bytes = 0;
  for (guint i = 0; i < on_device->len; i++) {
    GstSample *sample = g_ptr_array_index(on_device, i);
    const gsize size = gst_buffer_get_size(gst_sample_get_buffer(sample));
    guint64 sum = 0;
    if (!sums_on_device(sample, &sum, 1, size))
      return 1;
    bad += sum != sum_on_host(g_ptr_array_index(in_system, i));
    bytes += size;
  }
  printf("cuda-memory-app: %u buffers of cudafft spectra (%zu bytes) in CUDA memory, summed "
         "on the device by the application's own kernel: %u of them differ from the same buffers "
         "in system memory\n",
         on_device->len, bytes, bad);
  g_ptr_array_unref(on_device);
  g_ptr_array_unref(in_system);
  return bad == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  if (cudafft_cuda_device_count() == 0) {
    printf("cuda-memory-app: no CUDA device here; nothing to show\n");
    return 77;
  }
  if (check_spectra() != 0)
    return 1;
  GPtrArray *on_device = run(SCOPE, "video/x-raw(memory:CUDAMemory)," VIDEO);
  GPtrArray *in_system = run(SCOPE, "video/x-raw," VIDEO);
  if (!on_device || !in_system || on_device->len == 0 || on_device->len != in_system->len) {
    fprintf(stderr, "cuda-memory-app: %u frames in CUDA memory, %u in system memory\n",
            on_device ? on_device->len : 0, in_system ? in_system->len : 0);
    return 1;
  }
  GstVideoInfo info;
  gst_video_info_from_caps(&info, gst_sample_get_caps(g_ptr_array_index(on_device, 0)));
  const guint rows = GST_VIDEO_INFO_HEIGHT(&info);
  const gsize row_bytes = (gsize)GST_VIDEO_INFO_WIDTH(&info) * 4;
  guint64 *device_sums = g_new(guint64, rows), *host_sums = g_new(guint64, rows);
  guint bad = 0;
  for (guint i = 0; i < on_device->len; i++) {
    if (!sums_on_device(g_ptr_array_index(on_device, i), device_sums, rows, row_bytes))
      return 1;
    sums_on_host(g_ptr_array_index(in_system, i), host_sums);
    bad += memcmp(device_sums, host_sums, rows * sizeof *host_sums) != 0;
  }
  printf("cuda-memory-app: %u frames of %ux%u in CUDA memory, summed row by row on the "
         "device by the application's own kernel: %u of them differ from the same frames in "
         "system memory\n",
         on_device->len, GST_VIDEO_INFO_WIDTH(&info), rows, bad);
  g_free(device_sums);
  g_free(host_sums);
  g_ptr_array_unref(on_device);
  g_ptr_array_unref(in_system);
  return bad == 0 ? 0 : 1;
}
