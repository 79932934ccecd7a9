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
