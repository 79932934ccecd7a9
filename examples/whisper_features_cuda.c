/* whisper-features-cuda: an application that takes Whisper's input features from
 * cudamelspectrogram as CUDA memory and reads them where they are, on the device, without a copy
 * to the host: what an application hands to its TensorRT or ONNX Runtime session.
 *
 *   audiotestsrc ! audio/x-raw,rate=16000 ! cudamelspectrogram preset=whisper \
 *       ! other/tensors(memory:CUDAMemory) ! appsink
 *
 * Each buffer is one 30 s window: a tensor of [1][80][3000] float32 (the caps' dimensions
 * "3000:80:1", innermost first), contiguous from the device pointer on, complete when the buffer
 * arrives. The application maps it with GST_MAP_CUDA (the device pointer, no copy) and makes the
 * buffer's CUDA context current (the pipeline's shared GstCudaContext owns the memory). There a
 * model would take it:
 *
 *   TensorRT:     context->setTensorAddress("input_features", map.data);
 *                 context->enqueueV3(stream);
 *   ONNX Runtime: Ort::MemoryInfo cuda("Cuda", OrtDeviceAllocator, device_id, OrtMemTypeDefault);
 *                 Ort::Value input = Ort::Value::CreateTensor<float>(cuda, (float *)map.data,
 *                                                                    80 * 3000, shape, 3);
 *                 binding.BindInput("input_features", input);
 *
 * Here the application's own kernel (row_sums.cu) sums each mel band's 3000 values' bytes on the
 * device, and only those 80 sums come back; they are checked against the same pipeline's tensors
 * in system memory, summed on the host. Exit 0 when every window agrees; 77 where there is no
 * CUDA device. */
#define GST_USE_UNSTABLE_API /* gst/cuda is unstable API in GStreamer 1.22 */
#include "row_sums.h"

#include <cudafft/common.h>

#include <gst/app/gstappsink.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/gst.h>

#include <stdio.h>
#include <string.h>

#define MELS 80
#define FRAMES 3000
/* 70 s of a sawtooth sweeping through its harmonics: two full windows and a padded third */
#define SOURCE                                                                                     \
  "audiotestsrc wave=saw freq=220 num-buffers=70 samplesperbuffer=16000 ! "                        \
  "audio/x-raw,rate=16000,channels=1"

/* The tensors of one run to EOS (GstSample, in order) with the output caps `caps`. */
static GPtrArray *
run(const char *caps)
{
  gchar *desc = g_strdup_printf("%s ! cudamelspectrogram preset=whisper backend=cuda ! %s ! "
                                "appsink name=sink sync=false",
                                SOURCE, caps);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &error);
  g_free(desc);
  if (!pipeline) {
    fprintf(stderr, "whisper-features-cuda: %s\n", error->message);
    g_error_free(error);
    return NULL;
  }
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GPtrArray *tensors = g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample *sample;
  while ((sample = gst_app_sink_pull_sample(GST_APP_SINK(sink))))
    g_ptr_array_add(tensors, sample);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (msg) {
    gst_message_parse_error(msg, &error, NULL);
    fprintf(stderr, "whisper-features-cuda: %s\n", error->message);
    g_error_free(error);
    gst_message_unref(msg);
    g_ptr_array_set_size(tensors, 0);
  }
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return tensors;
}

/* Each mel band's byte sum, on the device, by the application's own kernel. */
static gboolean
sums_on_device(GstSample *sample, guint64 *sums)
{
  GstBuffer *buffer = gst_sample_get_buffer(sample);
  GstMemory *memory = gst_buffer_peek_memory(buffer, 0);
  if (gst_buffer_n_memory(buffer) != 1 || !gst_is_cuda_memory(memory)) {
    fprintf(stderr, "whisper-features-cuda: a tensor is not CUDA memory\n");
    return FALSE;
  }
  GstMapInfo map;
  if (!gst_memory_map(memory, &map, GST_MAP_READ | GST_MAP_CUDA))
    return FALSE;
  /* the memory's context current while the application's CUDA code reads it */
  gst_cuda_context_push(GST_CUDA_MEMORY_CAST(memory)->context);
  char error[256] = "";
  const int status = row_sums_on_device(map.data, FRAMES * sizeof(float), FRAMES * sizeof(float),
                                        MELS, sums, error, sizeof error);
  gst_cuda_context_pop(NULL);
  gst_memory_unmap(memory, &map);
  if (status != 0)
    fprintf(stderr, "whisper-features-cuda: %s\n", error);
  return status == 0;
}

/* The same sums of a tensor in system memory, on the host. */
static void
sums_on_host(GstSample *sample, guint64 *sums)
{
  GstMapInfo map;
  gst_buffer_map(gst_sample_get_buffer(sample), &map, GST_MAP_READ);
  for (guint m = 0; m < MELS; m++) {
    guint64 sum = 0;
    for (gsize i = 0; i < FRAMES * sizeof(float); i++)
      sum += map.data[m * FRAMES * sizeof(float) + i];
    sums[m] = sum;
  }
  gst_buffer_unmap(gst_sample_get_buffer(sample), &map);
}

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);
  if (cudafft_cuda_device_count() == 0) {
    printf("whisper-features-cuda: no CUDA device here; nothing to show\n");
    return 77;
  }
  GPtrArray *on_device = run("other/tensors(memory:CUDAMemory)");
  GPtrArray *in_system = run("other/tensors");
  if (!on_device || !in_system || on_device->len != 3 || in_system->len != 3) {
    fprintf(stderr,
            "whisper-features-cuda: %u windows in CUDA memory, %u in system memory (3 "
            "expected)\n",
            on_device ? on_device->len : 0, in_system ? in_system->len : 0);
    return 1;
  }
  guint bad = 0;
  for (guint i = 0; i < on_device->len; i++) {
    GstSample *sample = g_ptr_array_index(on_device, i);
    const GstStructure *s = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
    guint64 device_sums[MELS], host_sums[MELS];
    if (g_strcmp0(gst_structure_get_string(s, "dimensions"), "3000:80:1") != 0 ||
        gst_buffer_get_size(gst_sample_get_buffer(sample)) != MELS * FRAMES * sizeof(float) ||
        !sums_on_device(sample, device_sums))
      return 1;
    sums_on_host(g_ptr_array_index(in_system, i), host_sums);
    bad += memcmp(device_sums, host_sums, sizeof host_sums) != 0;
    printf("whisper-features-cuda: window %u at %" GST_TIME_FORMAT ": 80 x 3000 features in CUDA "
           "memory, read on the device\n",
           i, GST_TIME_ARGS(GST_BUFFER_PTS(gst_sample_get_buffer(sample))));
  }
  printf("whisper-features-cuda: %u windows of Whisper features summed band by band on the device "
         "by the application's own kernel: %u of them differ from the same windows in system "
         "memory\n",
         on_device->len, bad);
  g_ptr_array_unref(on_device);
  g_ptr_array_unref(in_system);
  return bad == 0 ? 0 : 1;
}
