/* bench_util.c: see bench_util.h. */
#include "bench_util.h"

#include <cudafft/fft.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

guint64
bench_buffers_for(double seconds, gint rate, guint frames)
{
  const guint64 n = (guint64)ceil(seconds * rate / frames - 1e-9);
  return n > 0 ? n : 1;
}

guint64
bench_capped_buffers(double seconds, double max_wall, guint64 calibration, double calibration_wall,
                     double least_s, gint rate, guint frames)
{
  const guint64 buffers = bench_buffers_for(seconds, rate, frames);
  const double speed = calibration * frames / (double)rate / calibration_wall;
  if (seconds / speed <= max_wall)
    return buffers;
  return MIN(buffers, bench_buffers_for(MAX(speed * max_wall, least_s), rate, frames));
}

int
bench_parse_list(const char *text, double *values, int max)
{
  gchar **parts = g_strsplit(text, ",", -1);
  int n = 0;
  for (gchar **p = parts; *p; p++) {
    char *end;
    const double v = g_ascii_strtod(*p, &end);
    if (end == *p || *end || n == max) {
      n = 0;
      break;
    }
    values[n++] = v;
  }
  g_strfreev(parts);
  return n;
}

static const char *
element_key(const char *const *first, size_t stride, int e)
{
  return *(const char *const *)((const char *)first + (size_t)e * stride);
}

gboolean
bench_parse_elements(const char *value, const char *const *first, size_t stride, int n,
                     gboolean *wanted)
{
  gchar **names = g_strsplit(value, ",", -1);
  gboolean good = TRUE;
  for (int e = 0; e < n; e++)
    wanted[e] = g_strv_contains((const gchar *const *)names, element_key(first, stride, e));
  for (gchar **name = names; *name; name++) {
    gboolean known = FALSE;
    for (int e = 0; e < n; e++)
      known |= !strcmp(*name, element_key(first, stride, e));
    good &= known;
  }
  g_strfreev(names);
  return good;
}

static void
free_pinned(gpointer data)
{
  cudafft_pinned_free(data, 1);
}

GstBuffer *
bench_random_input(gsize count, gboolean pinned)
{
  const gsize bytes = count * sizeof(float);
  int is_pinned = 0;
  float *samples = pinned ? cudafft_pinned_alloc(bytes, 1, &is_pinned) : NULL;
  GstBuffer *buffer;
  if (is_pinned)
    buffer = gst_buffer_new_wrapped_full(0, samples, bytes, 0, bytes, samples, free_pinned);
  else {
    if (samples)
      cudafft_pinned_free(samples, 0);
    samples = g_new(float, count);
    buffer = gst_buffer_new_wrapped(samples, bytes);
  }
  for (gsize i = 0; i < count; i++)
    samples[i] = (float)(2.0 * g_random_double() - 1.0);
  return buffer;
}

GstFlowReturn
bench_push(GstAppSrc *src, GstBuffer *data, guint64 first_frame, guint frames, gint rate)
{
  GstBuffer *b = gst_buffer_copy(data);
  GST_BUFFER_PTS(b) = gst_util_uint64_scale_int(first_frame, GST_SECOND, rate);
  GST_BUFFER_DURATION(b) =
      gst_util_uint64_scale_int(first_frame + frames, GST_SECOND, rate) - GST_BUFFER_PTS(b);
  return gst_app_src_push_buffer(src, b);
}

gboolean
bench_wait_for(GstBus *bus, GstMessageType type, GstClockTime timeout, const char *what)
{
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, timeout, type | GST_MESSAGE_ERROR);
  const gboolean ok = msg && GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ERROR;
  if (!msg)
    fprintf(stderr, "pipeline error: no %s within %" G_GUINT64_FORMAT " s\n", what,
            timeout / GST_SECOND);
  else if (!ok) {
    GError *err = NULL;
    gchar *debug = NULL;
    gst_message_parse_error(msg, &err, &debug);
    fprintf(stderr, "pipeline error from %s: %s\n  (%s)\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)),
            err->message, debug ? debug : "no details");
    g_error_free(err);
    g_free(debug);
  }
  if (msg)
    gst_message_unref(msg);
  return ok;
}

void
bench_print_machine(const char *cuda_element)
{
  bench_print_host(cuda_element, gst_version_string());
}
