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

/* Pushes `zeros` frames of silence (frame_bytes each) through `push` in pieces of at most `piece`
 * frames (a tail's: the responses to a run's last samples), until done or a flow that is not OK;
 * where the silence cannot be allocated, an ERROR from `element` naming `what`. */
typedef GstFlowReturn (*GstCudafftRunPushFunc)(gpointer owner, const void *data, gsize frames);
GstFlowReturn gst_cudafft_run_push_silence(GstElement *element, const gchar *what, guint64 zeros,
                                           gsize piece, gsize frame_bytes,
                                           GstCudafftRunPushFunc push, gpointer owner);

/* An element's latency as last announced (frames at a rate, read from any thread). */
typedef struct {
  gint frames; /* atomic */
  gint rate;   /* atomic */
} GstCudafftLatency;

void gst_cudafft_latency_reset(GstCudafftLatency *latency);
/* Records `frames` at `rate` and, where either changed, posts a LATENCY message from `element`
 * so that the pipeline asks again (and returns TRUE). */
gboolean gst_cudafft_latency_update(GstCudafftLatency *latency, GstElement *element, gint frames,
                                    gint rate);
/* As a time; 0 where no rate is known. */
GstClockTime gst_cudafft_latency_get(const GstCudafftLatency *latency);

G_END_DECLS

#endif
