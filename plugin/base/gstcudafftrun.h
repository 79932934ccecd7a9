/* gstcudafftrun.h: the timeline of a "run", the stretch of a stream between resets (start, flush,
 * discontinuity, EOS). Times come from sample counts since the run's first sample, never from
 * summed durations, so they do not drift; the elements count their own units (frames, samples) in
 * the same way. */
#ifndef GST_CUDAFFT_RUN_H
#define GST_CUDAFFT_RUN_H

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct {
  gboolean active;    /* a run has started and not been drained or reset */
  GstClockTime start; /* time of the run's sample 0 */
  gint rate;
  guint64 samples;  /* input samples received in the run */
  guint64 produced; /* output units (frames or samples) pushed in the run */
} GstCudafftRun;

void gst_cudafft_run_reset(GstCudafftRun *run);

/* Starts a run at `first`'s timestamp, or at `fallback` (the segment start) when it has none. */
void gst_cudafft_run_start(GstCudafftRun *run, GstBuffer *first, GstClockTime fallback, gint rate);

/* The time of sample `index` of the run. */
GstClockTime gst_cudafft_run_time(const GstCudafftRun *run, guint64 index);

/* Whether `buffer` continues the run: not flagged DISCONT, and (when it has a timestamp) starting
 * within `tolerance` samples of where the samples received so far end. */
gboolean gst_cudafft_run_continues(const GstCudafftRun *run, GstBuffer *buffer, guint64 tolerance);

/* Stamps `buffer` as samples [first, first + count) of the run: PTS, exact duration. */
void gst_cudafft_run_stamp(const GstCudafftRun *run, GstBuffer *buffer, guint64 first,
                           guint64 count);

G_END_DECLS

#endif
