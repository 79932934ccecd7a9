/* gstcudaspectrummessages.h: cudaspectrum's `spectrum` messages: their fields, built from what the
 * streaming thread computed for each interval, in parallel where a push's messages are many and
 * large (gstcudaspectrumfanout.h), and posted from the streaming thread in the order of their
 * intervals, one post at a time per pipeline (gstcudaspectrumpost.h). A change to what a message
 * holds starts here; the times and the band layout of each interval are the element's. */
#ifndef GST_CUDA_SPECTRUM_MESSAGES_H
#define GST_CUDA_SPECTRUM_MESSAGES_H

#include "gstcudaspectrumfanout.h"

#include <cudafft/spectrum.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* One message to build: all it needs is computed by the streaming thread beforehand, so that a
 * builder on another thread reads nothing that may change meanwhile (the result's values stay
 * valid until the next push, which waits for every message of this one). */
typedef struct {
  CudafftSpectrumResult result;
  size_t bands;
  GstClockTime timestamp, stream_time, running_time, duration;
  GstClockTime endtime; /* stream_time + duration, saturated; NONE without a stream time */
  gboolean with_magnitude;
  gboolean with_lists;   /* spectrum's GValue fields besides the float32 ones */
  gfloat *mapped;        /* a band layout's values (result points into them), owned; or NULL */
  const gfloat *centres; /* and its band centres: the frequencies field */
  GstMessage *message;   /* built */
} GstCudaSpectrumMessage;

/* An element's builders, between its start and its stop (zero-initialised). */
typedef struct {
  GstCudaSpectrumFanout *fanout; /* made at first need, freed at close */
  gboolean fanout_failed;        /* it could not be made: build on the streaming thread only */
  gboolean built_lists;          /* messages with GValue lists since the last stop: trim then */
} GstCudaSpectrumMessages;

/* The field names, interned once (class_init): a message is built for every interval, up to a
 * thousand a second. */
void gst_cuda_spectrum_messages_init_names(void);

/* Builds the `n` messages of one push, of `spectra` rows each (spectrum's shapes: a list, or with
 * multi_channel an array of arrays), from `element`, and posts them in order; returns when all
 * are handed to gst_cuda_spectrum_post(). */
void gst_cuda_spectrum_messages_post(GstCudaSpectrumMessages *messages, GstElement *element,
                                     GstCudaSpectrumMessage *batch, guint n, gsize spectra,
                                     gboolean multi_channel);

/* Lets go of the builders (at close and finalize); may be called again. */
void gst_cuda_spectrum_messages_close(GstCudaSpectrumMessages *messages);

/* At stop, after the engine is closed: every message of element's pipeline is on the bus (none
 * left for another thread to post after this), and the freed memory of a run that built GValue
 * lists goes back to the system (gst_cuda_spectrum_fanout_trim). */
void gst_cuda_spectrum_messages_stop(GstCudaSpectrumMessages *messages, GstElement *element);

G_END_DECLS

#endif
