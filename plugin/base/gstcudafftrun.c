/* gstcudafftrun.c: see the header. */
#include "gstcudafftrun.h"

#include <string.h>

void
gst_cudafft_run_reset(GstCudafftRun *run)
{
  const gint rate = run->rate;
  memset(run, 0, sizeof *run);
  run->rate = rate;
  run->start = GST_CLOCK_TIME_NONE;
}

void
gst_cudafft_run_start(GstCudafftRun *run, GstBuffer *first, GstClockTime fallback, gint rate)
{
  gst_cudafft_run_reset(run);
  run->active = TRUE;
  run->rate = rate;
  run->start = first && GST_BUFFER_PTS_IS_VALID(first) ? GST_BUFFER_PTS(first) : fallback;
  if (!GST_CLOCK_TIME_IS_VALID(run->start))
    run->start = 0;
}

GstClockTime
gst_cudafft_run_time(const GstCudafftRun *run, guint64 index)
{
  return run->start + gst_util_uint64_scale_int_round(index, GST_SECOND, run->rate);
}

gboolean
gst_cudafft_run_continues(const GstCudafftRun *run, GstBuffer *buffer, guint64 tolerance)
{
  if (GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DISCONT))
    return FALSE;
  if (!GST_BUFFER_PTS_IS_VALID(buffer))
    return TRUE;
  const GstClockTime expected = gst_cudafft_run_time(run, run->samples);
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  const GstClockTime gap = pts > expected ? pts - expected : expected - pts;
  return gap <= gst_util_uint64_scale_int_round(tolerance, GST_SECOND, run->rate);
}

void
gst_cudafft_run_stamp(const GstCudafftRun *run, GstBuffer *buffer, guint64 first, guint64 count)
{
  const GstClockTime begin = gst_cudafft_run_time(run, first);
  GST_BUFFER_PTS(buffer) = begin;
  GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION(buffer) = gst_cudafft_run_time(run, first + count) - begin;
}

GstFlowReturn
gst_cudafft_run_push_silence(GstElement *element, const gchar *what, guint64 zeros, gsize piece,
                             gsize frame_bytes, GstCudafftRunPushFunc push, gpointer owner)
{
  if (zeros == 0)
    return GST_FLOW_OK;
  piece = (gsize)MIN(zeros, (guint64)MAX(piece, 1));
  void *silence = g_try_malloc0(piece * frame_bytes);
  if (!silence) {
    GST_ELEMENT_ERROR(
        element, RESOURCE, NO_SPACE_LEFT,
        ("Out of memory for %s (%" G_GSIZE_FORMAT " bytes).", what, piece * frame_bytes), (NULL));
    return GST_FLOW_ERROR;
  }
  GstFlowReturn ret = GST_FLOW_OK;
  while (zeros > 0 && ret == GST_FLOW_OK) {
    const gsize n = (gsize)MIN(zeros, (guint64)piece);
    ret = push(owner, silence, n);
    zeros -= n;
  }
  g_free(silence);
  return ret;
}

void
gst_cudafft_latency_reset(GstCudafftLatency *latency)
{
  g_atomic_int_set(&latency->frames, 0);
  g_atomic_int_set(&latency->rate, 0);
}

gboolean
gst_cudafft_latency_update(GstCudafftLatency *latency, GstElement *element, gint frames, gint rate)
{
  const gint old_frames = g_atomic_int_get(&latency->frames);
  const gint old_rate = g_atomic_int_get(&latency->rate);
  g_atomic_int_set(&latency->frames, frames);
  g_atomic_int_set(&latency->rate, rate);
  if (frames == old_frames && rate == old_rate)
    return FALSE;
  gst_element_post_message(element, gst_message_new_latency(GST_OBJECT(element)));
  return TRUE;
}

GstClockTime
gst_cudafft_latency_get(const GstCudafftLatency *latency)
{
  const gint frames = g_atomic_int_get(&latency->frames);
  const gint rate = g_atomic_int_get(&latency->rate);
  return rate > 0 ? gst_util_uint64_scale_int_round(frames, GST_SECOND, rate) : 0;
}
