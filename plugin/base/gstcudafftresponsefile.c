/* gstcudafftresponsefile.c: see the header. */
#define _POSIX_C_SOURCE 200809L /* open's O_CLOEXEC, fstat */
#include "gstcudafftresponsefile.h"

#include "gstcudafftproperties.h"

#include <gst/audio/audio.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

GST_DEBUG_CATEGORY_STATIC(gst_cudafft_response_file_debug);
#define GST_CAT_DEFAULT gst_cudafft_response_file_debug

/* The most a decode may take before it is given up. */
#define DECODE_TIMEOUT (60 * GST_SECOND)

/* Samples (all channels) a response file may decode to: 1 GiB of doubles, 6 hours of mono at
 * 48 kHz, far beyond a room; longer files are refused rather than exhausting memory. */
#define MAX_VALUES ((gsize)1 << 27)

struct _GstCudafftResponseFile {
  GstElement *owner;
  GMutex lock;
  GCond cond; /* signalled when there is work for the worker, a result, or a stop */

  /* under lock */
  gchar *location;   /* NULL: none; for a list (ir-locations), its files joined by ", " */
  gchar **locations; /* the files: one, or a list whose entries "" are empty entries */
  gboolean listed;   /* set as a list (ir-locations) */
  gint rate;         /* 0: not known */
  guint64 wanted;    /* the request: bumped by every change of location or rate */
  guint64 done;      /* the request `result` answers; 0: none */
  GstCudafftResponseFileResult *result;
  GThread *worker;     /* NULL while none runs */
  gboolean quit;       /* the worker is to end */
  guint64 stops;       /* bumped by every stop: waiters give up */
  gboolean announcing; /* the worker posts the result's PROGRESS: nobody takes it before */
  GstBus *decoding;    /* the bus of the decode in progress, which a cancel message ends */
  guint64 decoding_for;
};

/* Problems ----------------------------------------------------------------------------------- */

static void
problem_set(GstCudafftResponseFileProblem *problem, GQuark domain, gint code, gchar *text,
            gchar *debug)
{
  problem->domain = domain;
  problem->code = code;
  problem->text = text;
  problem->debug = debug;
}

void
gst_cudafft_response_file_problem_clear(GstCudafftResponseFileProblem *problem)
{
  g_free(problem->text);
  g_free(problem->debug);
  memset(problem, 0, sizeof *problem);
}

void
gst_cudafft_response_file_problem_post(const GstCudafftResponseFileProblem *problem,
                                       GstElement *element, gboolean fatal)
{
  if (fatal)
    gst_element_message_full(element, GST_MESSAGE_ERROR, problem->domain, problem->code,
                             g_strdup(problem->text), g_strdup(problem->debug), __FILE__,
                             GST_FUNCTION, __LINE__);
  else /* the file is refused and what is in force stays: a refusal like any other */
    gst_cudafft_refuse_value_full(element, problem->domain, problem->code, problem->debug, "%s",
                                  problem->text);
}

gboolean
gst_cudafft_response_file_check(const gchar *location, const gchar *property,
                                GstCudafftResponseFileProblem *problem)
{
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
  const int fd = open(location, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      problem_set(
          problem, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          g_strdup_printf("Impulse response file \"%s\" (%s) not found.", location, property),
          NULL);
    else
      problem_set(problem, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
                  g_strdup_printf("Cannot read the impulse response file \"%s\" (%s): %s.",
                                  location, property, g_strerror(err)),
                  NULL);
    return FALSE;
  }
  struct stat st;
  const gboolean stated = fstat(fd, &st) == 0;
  const int err = errno;
  close(fd);
  const gchar *why = !stated               ? g_strerror(err)
                     : S_ISDIR(st.st_mode) ? "it is a directory"
                     : !S_ISREG(st.st_mode)
                         ? "it is not a regular file (a FIFO, device or socket could block)"
                         : NULL;
  if (!why)
    return TRUE;
  problem_set(problem, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
              g_strdup_printf("Cannot read the impulse response file \"%s\" (%s): %s.", location,
                              property, why),
              NULL);
  return FALSE;
}

/* Results ------------------------------------------------------------------------------------ */

static void
result_clear(gpointer data)
{
  GstCudafftResponseFileResult *result = data;
  g_free(result->location);
  g_free(result->data);
  gst_cudafft_response_file_problem_clear(&result->problem);
}

void
gst_cudafft_response_file_result_unref(GstCudafftResponseFileResult *result)
{
  if (result)
    g_atomic_rc_box_release_full(result, result_clear);
}

static GstCudafftResponseFileResult *
result_new(const gchar *location, gint rate)
{
  GstCudafftResponseFileResult *result = g_atomic_rc_box_new0(GstCudafftResponseFileResult);
  result->location = g_strdup(location);
  result->rate = rate;
  return result;
}

/* Decoding ----------------------------------------------------------------------------------- */

/* Appends the samples of `sample` to `data` (interleaved F64); checks that the channel count
 * stays the same. */
static gboolean
append_samples(GstSample *sample, GArray *data, guint *channels)
{
  GstAudioInfo info;
  GstCaps *caps = gst_sample_get_caps(sample);
  if (!caps || !gst_audio_info_from_caps(&info, caps))
    return FALSE;
  if (*channels && *channels != (guint)GST_AUDIO_INFO_CHANNELS(&info))
    return FALSE;
  *channels = GST_AUDIO_INFO_CHANNELS(&info);
  GstBuffer *buffer = gst_sample_get_buffer(sample);
  GstMapInfo map;
  if (!buffer || !gst_buffer_map(buffer, &map, GST_MAP_READ))
    return FALSE;
  g_array_append_vals(data, map.data, map.size / sizeof(gdouble));
  gst_buffer_unmap(buffer, &map);
  return TRUE;
}

/* The decoder's streams: the first audio one goes to the conversion, the others are dropped (an
 * unlinked one would stop the decode with "Internal data stream error"); once the decoder has
 * all its streams and none is audio, the decode ends with a message saying so. */
typedef struct {
  GstElement *convert; /* the conversion's first element */
  GstBus *bus;
  GMutex lock;
  gboolean audio;  /* an audio stream is linked */
  GString *others; /* the media types of the other streams */
} DecodeStreams;

static GstPadProbeReturn
drop_data(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)info;
  (void)data;
  return GST_PAD_PROBE_DROP;
}

static void
stream_added(GstElement *decoder, GstPad *pad, gpointer data)
{
  DecodeStreams *streams = data;
  (void)decoder;
  GstCaps *caps = gst_pad_get_current_caps(pad);
  if (!caps)
    caps = gst_pad_query_caps(pad, NULL);
  const gchar *media = caps && gst_caps_get_size(caps) > 0
                           ? gst_structure_get_name(gst_caps_get_structure(caps, 0))
                           : "unknown";
  g_mutex_lock(&streams->lock);
  gboolean linked = FALSE;
  if (!streams->audio && g_str_has_prefix(media, "audio/")) {
    GstPad *sink = gst_element_get_static_pad(streams->convert, "sink");
    linked = gst_pad_link(pad, sink) == GST_PAD_LINK_OK;
    gst_object_unref(sink);
    streams->audio = linked;
  }
  if (!linked) {
    g_string_append_printf(streams->others, "%s%s", streams->others->len ? ", " : "", media);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM, drop_data, NULL, NULL);
  }
  g_mutex_unlock(&streams->lock);
  if (caps)
    gst_caps_unref(caps);
}

static void
streams_complete(GstElement *decoder, gpointer data)
{
  DecodeStreams *streams = data;
  (void)decoder;
  g_mutex_lock(&streams->lock);
  const gboolean audio = streams->audio;
  g_mutex_unlock(&streams->lock);
  if (!audio)
    gst_bus_post(streams->bus,
                 gst_message_new_application(NULL, gst_structure_new_empty("no-audio")));
}

/* Makes the decode of `request` cancellable through `bus`; FALSE when the request is already
 * stale (a newer one came, or a stop). */
static gboolean
begin_decoding(GstCudafftResponseFile *ir, guint64 request, GstBus *bus)
{
  g_mutex_lock(&ir->lock);
  const gboolean current = !ir->quit && request == ir->wanted;
  if (current) {
    ir->decoding = gst_object_ref(bus);
    ir->decoding_for = request;
  }
  g_mutex_unlock(&ir->lock);
  return current;
}

static void
end_decoding(GstCudafftResponseFile *ir)
{
  g_mutex_lock(&ir->lock);
  gst_clear_object(&ir->decoding);
  ir->decoding_for = 0;
  g_mutex_unlock(&ir->lock);
}

/* Ends the decode in progress, if any, unless it is for the current request. */
static void
cancel_stale_decode_locked(GstCudafftResponseFile *ir)
{
  if (ir->decoding && (ir->quit || ir->decoding_for != ir->wanted))
    gst_bus_post(ir->decoding,
                 gst_message_new_application(NULL, gst_structure_new_empty("cancel")));
}

/* Decodes `location` (set by `property`) to F64 at `rate` with a sub-pipeline (any format
 * GStreamer decodes): a result with the samples or with the problem, or NULL when cancelled. */
static GstCudafftResponseFileResult *
decode_file(GstCudafftResponseFile *ir, guint64 request, const gchar *location,
            const gchar *property, gint rate)
{
  GstCudafftResponseFileResult *result = result_new(location, rate);
  if (!gst_cudafft_response_file_check(location, property, &result->problem))
    return result;
  gchar *description =
      g_strdup_printf("filesrc name=src ! decodebin name=decoder  audioconvert name=convert ! "
                      "audioresample ! "
                      "audio/x-raw, format=F64LE, layout=interleaved, rate=%d ! appsink name=sink "
                      "sync=false wait-on-eos=false",
                      rate);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  g_free(description);
  if (!pipeline || error) {
    problem_set(&result->problem, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN,
                g_strdup_printf("Cannot decode the impulse response file \"%s\": %s (are "
                                "gst-plugins-base's audioconvert and audioresample installed?)",
                                location, error ? error->message : "no pipeline"),
                NULL);
    g_clear_error(&error);
    if (pipeline)
      gst_object_unref(pipeline);
    return result;
  }
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_object_set(src, "location", location, NULL);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstElement *decoder = gst_bin_get_by_name(GST_BIN(pipeline), "decoder");
  DecodeStreams streams = {0};
  streams.convert = gst_bin_get_by_name(GST_BIN(pipeline), "convert");
  streams.bus = bus;
  g_mutex_init(&streams.lock);
  streams.others = g_string_new(NULL);
  g_signal_connect(decoder, "pad-added", G_CALLBACK(stream_added), &streams);
  g_signal_connect(decoder, "no-more-pads", G_CALLBACK(streams_complete), &streams);
  GArray *data = g_array_new(FALSE, FALSE, sizeof(gdouble));
  guint channels = 0;
  gboolean cancelled = !begin_decoding(ir, request, bus);
  gchar *problem = NULL, *debug = NULL;
  GQuark domain = GST_STREAM_ERROR;
  gint code = GST_STREAM_ERROR_DECODE;

  if (!cancelled && gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    problem = g_strdup("the decoding pipeline does not start");
  while (!cancelled && !problem) {
    GstMessage *msg = gst_bus_timed_pop_filtered(
        bus, DECODE_TIMEOUT, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_APPLICATION);
    if (!msg) {
      problem = g_strdup("decoding took more than a minute");
      break;
    }
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_APPLICATION &&
        gst_structure_has_name(gst_message_get_structure(msg), "no-audio")) {
      g_mutex_lock(&streams.lock);
      problem = streams.others->len
                    ? g_strdup_printf("it holds no audio stream (only %s)", streams.others->str)
                    : g_strdup("it holds no audio stream");
      g_mutex_unlock(&streams.lock);
      domain = GST_STREAM_ERROR;
      code = GST_STREAM_ERROR_WRONG_TYPE;
      gst_message_unref(msg);
      break;
    }
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_APPLICATION) {
      cancelled = TRUE;
      gst_message_unref(msg);
      break;
    }
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      gst_message_parse_error(msg, &err, &debug);
      problem = g_strdup(err ? err->message : "decoding failed");
      /* the message goes inside a sentence of ours */
      for (gsize n = strlen(g_strchomp(problem)); n > 0 && problem[n - 1] == '.'; n--)
        problem[n - 1] = '\0';
      if (err && (err->domain == GST_RESOURCE_ERROR || err->domain == GST_STREAM_ERROR)) {
        domain = err->domain;
        code = err->code;
      }
      g_clear_error(&err);
      gst_message_unref(msg);
      break;
    }
    gst_message_unref(msg);
    for (;;) { /* EOS: everything decoded is queued in the appsink */
      GstSample *sample = NULL;
      g_signal_emit_by_name(sink, "try-pull-sample", (GstClockTime)0, &sample);
      if (!sample)
        break;
      const gboolean ok = append_samples(sample, data, &channels);
      gst_sample_unref(sample);
      if (!ok) {
        problem = g_strdup("the decoder's output changed format or could not be read");
        break;
      }
      if (data->len > MAX_VALUES) {
        problem =
            g_strdup_printf("it is longer than %" G_GSIZE_FORMAT " samples", MAX_VALUES / channels);
        domain = GST_STREAM_ERROR;
        code = GST_STREAM_ERROR_FORMAT;
        break;
      }
    }
    if (!problem && (channels == 0 || data->len < channels))
      problem = g_strdup("it holds no audio samples");
    break;
  }
  end_decoding(ir);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  /* no streaming thread runs now: the handlers are done with `streams` */
  g_signal_handlers_disconnect_by_data(decoder, &streams);
  gst_object_unref(decoder);
  gst_object_unref(streams.convert);
  g_string_free(streams.others, TRUE);
  g_mutex_clear(&streams.lock);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);

  if (cancelled || problem) {
    g_array_free(data, TRUE);
    if (cancelled) {
      g_free(problem);
      g_free(debug);
      gst_cudafft_response_file_result_unref(result);
      return NULL;
    }
    problem_set(&result->problem, domain, code,
                g_strdup_printf("Cannot use \"%s\" as the impulse response (%s): %s.", location,
                                property, problem),
                debug);
    g_free(problem);
    return result;
  }
  result->channels = channels;
  result->frames = data->len / channels;
  result->data = (gdouble *)g_array_free(data, FALSE);
  return result;
}

/* Decodes the files of a list (ir-locations) and puts their channels side by side, in order, as
 * the channels of one file (the shorter padded with zeros); an entry "" is one empty channel. The
 * first file that cannot be used is the result's problem; NULL when cancelled. */
static GstCudafftResponseFileResult *
decode_list(GstCudafftResponseFile *ir, guint64 request, gchar **locations, const gchar *display,
            gint rate)
{
  const guint n = g_strv_length(locations);
  GstCudafftResponseFileResult **parts = g_new0(GstCudafftResponseFileResult *, MAX(n, 1));
  GstCudafftResponseFileResult *result = NULL;
  guint channels = 0;
  gsize frames = 0;
  for (guint k = 0; k < n && !result; k++) {
    if (!*locations[k]) {
      channels++;
      continue;
    }
    parts[k] = decode_file(ir, request, locations[k], "ir-locations", rate);
    if (!parts[k] || !parts[k]->data) { /* cancelled, or the problem of the list */
      result = parts[k] ? g_atomic_rc_box_acquire(parts[k]) : NULL;
      if (!result)
        goto done;
      break;
    }
    channels += parts[k]->channels;
    frames = MAX(frames, parts[k]->frames);
  }
  if (!result) {
    result = result_new(display, rate);
    if ((gsize)channels * frames > MAX_VALUES) {
      problem_set(
          &result->problem, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
          g_strdup_printf("The impulse responses (ir-locations) are %u channels of %" G_GSIZE_FORMAT
                          " samples: more than %" G_GSIZE_FORMAT " values.",
                          channels, frames, MAX_VALUES),
          NULL);
      goto done;
    }
    result->channels = channels;
    result->frames = frames;
    result->data = g_new0(gdouble, MAX((gsize)channels * frames, 1));
    guint at = 0;
    for (guint k = 0; k < n; k++) {
      const GstCudafftResponseFileResult *part = parts[k];
      if (!part) { /* an empty entry: zeros */
        at++;
        continue;
      }
      for (gsize t = 0; t < part->frames; t++)
        for (guint c = 0; c < part->channels; c++)
          result->data[t * channels + at + c] = part->data[t * part->channels + c];
      at += part->channels;
    }
  }
done:
  for (guint k = 0; k < n; k++)
    gst_cudafft_response_file_result_unref(parts[k]);
  g_free(parts);
  return result;
}

/* The worker --------------------------------------------------------------------------------- */

static void
post_progress(GstCudafftResponseFile *ir, GstProgressType type, gchar *text)
{
  gst_element_post_message(ir->owner,
                           gst_message_new_progress(GST_OBJECT(ir->owner), type,
                                                    GST_CUDAFFT_RESPONSE_FILE_PROGRESS, text));
  g_free(text);
}

/* Decodes the request in force whenever it has not been answered, until told to quit. A result
 * that a newer request made stale on the way is dropped. */
static gpointer
worker_main(gpointer data)
{
  GstCudafftResponseFile *ir = data;
  g_mutex_lock(&ir->lock);
  while (!ir->quit) {
    if (ir->done == ir->wanted || !ir->location || ir->rate <= 0) {
      g_cond_wait(&ir->cond, &ir->lock);
      continue;
    }
    const guint64 request = ir->wanted;
    gchar *location = g_strdup(ir->location);
    gchar **locations = g_strdupv(ir->locations);
    const gboolean list = ir->listed;
    const gint rate = ir->rate;
    g_mutex_unlock(&ir->lock);

    GST_DEBUG_OBJECT(ir->owner, "decoding %s at %d Hz (request %" G_GUINT64_FORMAT ")", location,
                     rate, request);
    post_progress(ir, GST_PROGRESS_TYPE_START,
                  g_strdup_printf("Decoding the impulse response \"%s\" at %d Hz", location, rate));
    GstCudafftResponseFileResult *result =
        list ? decode_list(ir, request, locations, location, rate)
             : decode_file(ir, request, location, "ir-location", rate);
    g_strfreev(locations);

    /* The outcome is posted before anyone can use the result: the streaming thread, which may
     * post an ERROR or WARNING about it (a channel count that does not fit the stream), waits
     * while it is announced, so that the decode's PROGRESS comes first on the bus. */
    g_mutex_lock(&ir->lock);
    const gboolean current = result && !ir->quit && request == ir->wanted;
    if (current) {
      gst_cudafft_response_file_result_unref(ir->result);
      ir->result = result;
      ir->done = request;
      ir->announcing = TRUE;
    }
    g_mutex_unlock(&ir->lock);

    if (!current)
      post_progress(ir, GST_PROGRESS_TYPE_CANCELED,
                    g_strdup_printf("Stopped decoding the impulse response \"%s\"", location));
    else if (result->data)
      post_progress(ir, GST_PROGRESS_TYPE_COMPLETE,
                    g_strdup_printf("Decoded the impulse response \"%s\": %" G_GSIZE_FORMAT
                                    " samples of %u channels at %d Hz",
                                    location, result->frames, result->channels, rate));
    else
      post_progress(ir, GST_PROGRESS_TYPE_ERROR, g_strdup(result->problem.text));
    g_mutex_lock(&ir->lock);
    ir->announcing = FALSE;
    g_cond_broadcast(&ir->cond);
    g_mutex_unlock(&ir->lock);
    GST_INFO_OBJECT(ir->owner, "%s at %d Hz: %s", location, rate,
                    !current       ? "cancelled"
                    : result->data ? "decoded"
                                   : result->problem.text);
    if (!current)
      gst_cudafft_response_file_result_unref(result);
    g_free(location);
    g_mutex_lock(&ir->lock);
  }
  g_mutex_unlock(&ir->lock);
  return NULL;
}

/* After a change of location or rate: a new request, which the worker (started if need be) takes
 * up; a decode in progress for an older one is cancelled. */
static void
request_locked(GstCudafftResponseFile *ir)
{
  ir->wanted++;
  cancel_stale_decode_locked(ir);
  if (!ir->worker && !ir->quit && ir->location && ir->rate > 0) {
    GError *error = NULL;
    ir->worker = g_thread_try_new("cudaconvolve-ir", worker_main, ir, &error);
    if (!ir->worker) {
      /* answered at once, so that nobody waits for a worker that does not exist */
      GstCudafftResponseFileResult *result = result_new(ir->location, ir->rate);
      problem_set(&result->problem, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
                  g_strdup_printf("Cannot decode the impulse response file \"%s\" "
                                  "(ir-location): no thread to decode it on: %s.",
                                  ir->location, error ? error->message : "unknown error"),
                  NULL);
      g_clear_error(&error);
      gst_cudafft_response_file_result_unref(ir->result);
      ir->result = result;
      ir->done = ir->wanted;
    }
  }
  g_cond_broadcast(&ir->cond);
}

/* The object --------------------------------------------------------------------------------- */

GstCudafftResponseFile *
gst_cudafft_response_file_new(GstElement *owner)
{
  static gsize category = 0;
  if (g_once_init_enter(&category)) {
    GST_DEBUG_CATEGORY_INIT(gst_cudafft_response_file_debug, "cudafftresponsefile", 0,
                            "gst-cudafft: response files decoded");
    g_once_init_leave(&category, 1);
  }
  GstCudafftResponseFile *ir = g_new0(GstCudafftResponseFile, 1);
  ir->owner = owner;
  g_mutex_init(&ir->lock);
  g_cond_init(&ir->cond);
  return ir;
}

void
gst_cudafft_response_file_stop(GstCudafftResponseFile *ir)
{
  g_mutex_lock(&ir->lock);
  ir->quit = TRUE;
  ir->stops++;
  cancel_stale_decode_locked(ir);
  GThread *worker = ir->worker;
  ir->worker = NULL;
  g_cond_broadcast(&ir->cond);
  g_mutex_unlock(&ir->lock);
  if (worker)
    g_thread_join(worker);

  g_mutex_lock(&ir->lock);
  ir->quit = FALSE;
  ir->rate = 0;
  ir->wanted++; /* what was decoded before is for another stream */
  gst_cudafft_response_file_result_unref(ir->result);
  ir->result = NULL;
  ir->done = 0;
  g_mutex_unlock(&ir->lock);
}

void
gst_cudafft_response_file_free(GstCudafftResponseFile *ir)
{
  if (!ir)
    return;
  gst_cudafft_response_file_stop(ir);
  g_free(ir->location);
  g_strfreev(ir->locations);
  g_mutex_clear(&ir->lock);
  g_cond_clear(&ir->cond);
  g_free(ir);
}

void
gst_cudafft_response_file_set_location(GstCudafftResponseFile *ir, const gchar *location)
{
  const gchar *one[] = {location, NULL};
  g_mutex_lock(&ir->lock);
  g_free(ir->location);
  g_strfreev(ir->locations);
  ir->location = location && *location ? g_strdup(location) : NULL;
  ir->locations = ir->location ? g_strdupv((gchar **)one) : NULL;
  ir->listed = FALSE;
  request_locked(ir);
  g_mutex_unlock(&ir->lock);
}

void
gst_cudafft_response_file_set_locations(GstCudafftResponseFile *ir, gchar **locations)
{
  const gboolean some = locations && locations[0];
  g_mutex_lock(&ir->lock);
  g_free(ir->location);
  g_strfreev(ir->locations);
  ir->location = some ? g_strjoinv(", ", locations) : NULL;
  ir->locations = some ? g_strdupv(locations) : NULL;
  ir->listed = some;
  request_locked(ir);
  g_mutex_unlock(&ir->lock);
}

gchar *
gst_cudafft_response_file_dup_location(GstCudafftResponseFile *ir)
{
  g_mutex_lock(&ir->lock);
  gchar *location = g_strdup(ir->location);
  g_mutex_unlock(&ir->lock);
  return location;
}

void
gst_cudafft_response_file_set_rate(GstCudafftResponseFile *ir, gint rate)
{
  g_mutex_lock(&ir->lock);
  if (rate != ir->rate) {
    ir->rate = rate;
    request_locked(ir);
  }
  g_mutex_unlock(&ir->lock);
}

GstCudafftResponseFileState
gst_cudafft_response_file_get(GstCudafftResponseFile *ir, gboolean wait,
                              GstCudafftResponseFileResult **result, guint64 *request)
{
  *result = NULL;
  *request = 0;
  g_mutex_lock(&ir->lock);
  const guint64 stops = ir->stops;
  /* a decode can come only while there is a worker (or its failure answered the request) */
  while (wait && ir->stops == stops && ir->location && ir->rate > 0 && ir->done != ir->wanted &&
         ir->worker)
    g_cond_wait(&ir->cond, &ir->lock);
  /* a moment at most: the decode's PROGRESS goes out before anything about its result */
  while (ir->announcing && ir->stops == stops)
    g_cond_wait(&ir->cond, &ir->lock);
  GstCudafftResponseFileState state = GST_CUDAFFT_RESPONSE_FILE_NONE;
  if (ir->location && ir->done == ir->wanted && ir->result) {
    state = GST_CUDAFFT_RESPONSE_FILE_READY;
    *result = g_atomic_rc_box_acquire(ir->result);
    *request = ir->done;
  } else if (ir->location) {
    state = GST_CUDAFFT_RESPONSE_FILE_PENDING;
  }
  g_mutex_unlock(&ir->lock);
  return state;
}

gboolean
gst_cudafft_response_source_equal(const GstCudafftResponseSource *a,
                                  const GstCudafftResponseSource *b)
{
  return a->ir_request ? a->ir_request == b->ir_request : !b->ir_request && a->serial == b->serial;
}
