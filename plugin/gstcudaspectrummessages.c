/* gstcudaspectrummessages.c: see gstcudaspectrummessages.h. */
#include "gstcudaspectrummessages.h"

#include "gstcudaspectrumpost.h"

/* cudaspectrum's: these are its messages, logged with the rest of its work */
GST_DEBUG_CATEGORY_EXTERN(gst_cuda_spectrum_debug);
#define GST_CAT_DEFAULT gst_cuda_spectrum_debug

/* A worker thread joins the streaming thread for each this many values in a push's messages:
 * for fewer, waking one costs about what it saves. Chosen with spectrum-bench, pushes of two to
 * eight messages of 129 to 1025 values; rerun it to recheck. */
#define VALUES_PER_WORKER 1024

/* Threads that build, the streaming thread included: more would mostly wait for the streaming
 * thread, which posts the messages (running the bus sync handlers) alone. */
#define MAX_BUILDERS 8

static GQuark q_spectrum, q_endtime, q_timestamp, q_stream_time, q_running_time, q_duration,
    q_magnitude, q_phase, q_magnitude_data, q_phase_data, q_bands, q_channels, q_frequencies;

void
gst_cuda_spectrum_messages_init_names(void)
{
  q_spectrum = g_quark_from_static_string("spectrum");
  q_endtime = g_quark_from_static_string("endtime");
  q_timestamp = g_quark_from_static_string("timestamp");
  q_stream_time = g_quark_from_static_string("stream-time");
  q_running_time = g_quark_from_static_string("running-time");
  q_duration = g_quark_from_static_string("duration");
  q_magnitude = g_quark_from_static_string("magnitude");
  q_phase = g_quark_from_static_string("phase");
  q_magnitude_data = g_quark_from_static_string("magnitude-data");
  q_phase_data = g_quark_from_static_string("phase-data");
  q_bands = g_quark_from_static_string("bands");
  q_channels = g_quark_from_static_string("channels");
  q_frequencies = g_quark_from_static_string("frequencies");
}

/* GValues of floats into `container` without a heap allocation per value: the container is
 * sized up front and each value is moved into it, not copied. What is left per value (type checks
 * in g_value_init and in the append, the container's compatibility check) is GLib's and
 * GStreamer's own and has no cheaper public way round; hence building messages in parallel. */
static void
append_floats(GValue *container, gboolean list, const float *values, size_t count)
{
  void (*const append)(GValue *, GValue *) =
      list ? gst_value_list_append_and_take_value : gst_value_array_append_and_take_value;
  for (size_t i = 0; i < count; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_FLOAT);
    g_value_set_float(&v, values[i]);
    append(container, &v);
  }
}

/* spectrum's shapes: a list of bands values, or with multi-channel an array of arrays. */
static void
take_values(GstStructure *s, GQuark field, const float *values, size_t bands, size_t spectra,
            gboolean multi_channel)
{
  GValue container = G_VALUE_INIT;
  if (!multi_channel) {
    gst_value_list_init(&container, (guint)bands);
    append_floats(&container, TRUE, values, bands);
  } else {
    gst_value_array_init(&container, (guint)spectra);
    for (size_t c = 0; c < spectra; c++) {
      GValue row = G_VALUE_INIT;
      gst_value_array_init(&row, (guint)bands);
      append_floats(&row, FALSE, values + c * bands, bands);
      gst_value_array_append_and_take_value(&container, &row);
    }
  }
  gst_structure_id_take_value(s, field, &container);
}

static void
take_bytes(GstStructure *s, GQuark field, const float *values, size_t count)
{
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_TYPE_BYTES);
  g_value_take_boxed(&v, g_bytes_new(values, count * sizeof(float)));
  gst_structure_id_take_value(s, field, &v);
}

/* What the messages of one push share. */
typedef struct {
  GstElement *element;
  size_t spectra;
  gboolean multi_channel;
} MessageShape;

static void
build_message(gpointer data, gpointer user_data)
{
  GstCudaSpectrumMessage *job = data;
  const MessageShape *shape = user_data;
  const CudafftSpectrumResult *result = &job->result;
  GstStructure *s = gst_structure_new_id(
      q_spectrum, q_endtime, GST_TYPE_CLOCK_TIME, job->endtime, q_timestamp, G_TYPE_UINT64,
      job->timestamp, q_stream_time, G_TYPE_UINT64, job->stream_time, q_running_time, G_TYPE_UINT64,
      job->running_time, q_duration, G_TYPE_UINT64, job->duration, NULL);
  if (job->with_magnitude && job->with_lists)
    take_values(s, q_magnitude, result->magnitude, job->bands, shape->spectra,
                shape->multi_channel);
  if (result->phase && job->with_lists)
    take_values(s, q_phase, result->phase, job->bands, shape->spectra, shape->multi_channel);
  if (job->with_magnitude)
    take_bytes(s, q_magnitude_data, result->magnitude, job->bands * shape->spectra);
  if (result->phase)
    take_bytes(s, q_phase_data, result->phase, job->bands * shape->spectra);
  gst_structure_id_set(s, q_bands, G_TYPE_UINT, (guint)job->bands, q_channels, G_TYPE_UINT,
                       (guint)shape->spectra, NULL);
  if (job->centres)
    take_bytes(s, q_frequencies, job->centres, job->bands);
  job->message = gst_message_new_element(GST_OBJECT(shape->element), s);
}

/* Posts a built message, one post at a time per pipeline (gstcudaspectrumpost.h: streaming threads
 * posting on one bus at once can stall each other), without waiting for another's post. */
static void
post_message(gpointer data, gpointer user_data)
{
  GstCudaSpectrumMessage *job = data;
  const MessageShape *shape = user_data;
  /* Messages built in parallel took their sequence numbers in the order they were begun; they
   * get new ones in the order of the bus, as when built one by one. */
  gst_message_set_seqnum(job->message, gst_util_seqnum_next());
  gst_cuda_spectrum_post(shape->element, job->message);
  job->message = NULL;
}

/* The workers, made when first worth it; NULL (all on the streaming thread) where they cannot be
 * made or there is one processor. */
static GstCudaSpectrumFanout *
fanout(GstCudaSpectrumMessages *messages, GstElement *element)
{
  if (messages->fanout || messages->fanout_failed)
    return messages->fanout;
  const guint workers = MIN((guint)g_get_num_processors(), MAX_BUILDERS) - 1;
  GError *error = NULL;
  if (workers > 0)
    messages->fanout = gst_cuda_spectrum_fanout_new(workers, &error);
  if (messages->fanout) {
    GST_DEBUG_OBJECT(element, "building messages on %u worker threads and this one", workers);
  } else {
    GST_WARNING_OBJECT(element, "building messages on the streaming thread only: %s",
                       error ? error->message : "one processor");
    g_clear_error(&error);
    messages->fanout_failed = TRUE;
  }
  return messages->fanout;
}

void
gst_cuda_spectrum_messages_post(GstCudaSpectrumMessages *messages, GstElement *element,
                                GstCudaSpectrumMessage *batch, guint n, gsize spectra,
                                gboolean multi_channel)
{
  if (n == 0)
    return;
  const MessageShape shape = {
      .element = element,
      .spectra = spectra,
      .multi_channel = multi_channel,
  };
  /* the GValues are the cost; the float32 fields are one copy each */
  size_t values = 0;
  for (guint i = 0; i < n; i++) {
    const size_t fields = (batch[i].with_magnitude ? 1 : 0) + (batch[i].result.phase ? 1 : 0);
    values += batch[i].with_lists ? fields * batch[i].bands * shape.spectra : 0;
  }
  const guint helpers = (guint)MIN(values / VALUES_PER_WORKER, n - 1);
  messages->built_lists |= values > 0;
  gst_cuda_spectrum_fanout_run(helpers > 0 ? fanout(messages, element) : NULL, batch, sizeof *batch,
                               n, helpers, build_message, post_message, (gpointer)&shape);
}

void
gst_cuda_spectrum_messages_close(GstCudaSpectrumMessages *messages)
{
  gst_cuda_spectrum_fanout_free(messages->fanout);
  messages->fanout = NULL;
  messages->fanout_failed = FALSE;
}

void
gst_cuda_spectrum_messages_stop(GstCudaSpectrumMessages *messages, GstElement *element)
{
  gst_cuda_spectrum_post_flush(element);
  if (messages->built_lists)
    gst_cuda_spectrum_fanout_trim();
  messages->built_lists = FALSE;
}
