/* gstcudafftresponsefile.h: the response-file reader of the convolution elements: the impulse
 * response file of cudaconvolve's and cudamatrixconvolve's ir-location (or the list of
 * cudamatrixconvolve's ir-locations), and the checks and problems of every file they are given
 * (sofa-location's too). The file is decoded
 * (filesrc ! decodebin ! audioconvert ! audioresample, to interleaved F64 at the stream's rate) on
 * a worker thread as soon as both its location and the stream's rate are known, again whenever
 * either changes, and handed to the streaming thread when done; the streaming thread waits for it
 * only where it cannot go on without it (the first buffer). Nothing here blocks a state change
 * without bound: a file that is not a regular file (a FIFO would block its reader) is refused
 * before it is opened, a decode has a time limit, and stopping cancels the decode in progress and
 * joins the worker.
 *
 * While a decode runs, the owner posts GST_MESSAGE_PROGRESS messages with the code
 * GST_CUDAFFT_RESPONSE_FILE_PROGRESS: START, then COMPLETE (the response is ready), ERROR (it
 * cannot be used) or CANCELED (stopped, or replaced by a newer location or rate). */
#ifndef GST_CUDAFFT_RESPONSE_FILE_H
#define GST_CUDAFFT_RESPONSE_FILE_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDAFFT_RESPONSE_FILE_PROGRESS "ir-location"

/* Why a file cannot be used: an error (or warning) for the owner to post; the text names the
 * file. */
typedef struct {
  GQuark domain;
  gint code;
  gchar *text;
  gchar *debug; /* may be NULL */
} GstCudafftResponseFileProblem;

void gst_cudafft_response_file_problem_clear(GstCudafftResponseFileProblem *problem);

/* Posts `problem` from `element`: an ERROR when `fatal`, else a WARNING through the one refusal
 * (gst_cudafft_refuse_value_full: the file is refused and what is in force stays). */
void gst_cudafft_response_file_problem_post(const GstCudafftResponseFileProblem *problem,
                                            GstElement *element, gboolean fatal);

/* Whether `location` is a regular file this process can read, without opening it in a way that
 * could block; if not, fills *problem (naming the file and `property`, the one that set it). */
gboolean gst_cudafft_response_file_check(const gchar *location, const gchar *property,
                                         GstCudafftResponseFileProblem *problem);

/* A finished decode, shared (reference counted) and never changed after it is made. */
typedef struct {
  gchar *location;
  gint rate;
  guint channels;
  gsize frames;
  gdouble *data;                         /* frames x channels, interleaved; NULL when it failed: */
  GstCudafftResponseFileProblem problem; /* why */
} GstCudafftResponseFileResult;

void gst_cudafft_response_file_result_unref(GstCudafftResponseFileResult *result);

/* The file of one element and its worker. */
typedef struct _GstCudafftResponseFile GstCudafftResponseFile;

/* `owner` (not referenced: it owns this and frees it first) posts the progress messages. */
GstCudafftResponseFile *gst_cudafft_response_file_new(GstElement *owner);

/* Stops (as below) and frees. */
void gst_cudafft_response_file_free(GstCudafftResponseFile *ir);

/* The location (NULL or "" for none), from any thread. Each call asks for a new decode, even of
 * the same location (the file may have changed). */
void gst_cudafft_response_file_set_location(GstCudafftResponseFile *ir, const gchar *location);
gchar *gst_cudafft_response_file_dup_location(GstCudafftResponseFile *ir);
/* A list of files instead (cudamatrixconvolve's ir-locations; NULL or empty for none), from any
 * thread: decoded in turn, their channels put side by side in order as one file's (the shorter
 * padded with zeros), an entry "" one empty channel. The location is then the files joined by
 * ", ". Replaces a location set before, as that replaces a list. */
void gst_cudafft_response_file_set_locations(GstCudafftResponseFile *ir, gchar **locations);

/* The stream's rate (0: not known), from the streaming thread; a new rate asks for a new decode. */
void gst_cudafft_response_file_set_rate(GstCudafftResponseFile *ir, gint rate);

/* Cancels the decode in progress, joins the worker, wakes any waiter and forgets the rate and the
 * last result (the location stays); a later set_rate starts afresh. May be called again. */
void gst_cudafft_response_file_stop(GstCudafftResponseFile *ir);

typedef enum {
  GST_CUDAFFT_RESPONSE_FILE_NONE,    /* no location: the kernel property is in force */
  GST_CUDAFFT_RESPONSE_FILE_PENDING, /* the decode for the current location and rate has not
                                   finished (with `wait`: it was stopped) */
  GST_CUDAFFT_RESPONSE_FILE_READY,   /* *result is the decode for the current location and rate */
} GstCudafftResponseFileState;

/* Where the response for the current location and rate stands. With `wait`, blocks (on a
 * condition variable) until its decode has finished or gst_cudafft_response_file_stop() is called:
 * as long as one decode at most, which has a time limit. With READY, *result holds a reference for
 * the caller and *request says which request it answers (it grows with every change of location
 * or rate, from 1). */
GstCudafftResponseFileState gst_cudafft_response_file_get(GstCudafftResponseFile *ir, gboolean wait,
                                                          GstCudafftResponseFileResult **result,
                                                          guint64 *request);

/* Where an element's responses came from: the file of request `ir_request`
 * (gst_cudafft_response_file_get), or where that is 0 the element's own settings at `serial` (a
 * counter it bumps at every change of them). */
typedef struct {
  guint64 ir_request;
  guint serial;
} GstCudafftResponseSource;

/* Whether two sources are the same: the same request, or both the settings at the same serial. */
gboolean gst_cudafft_response_source_equal(const GstCudafftResponseSource *a,
                                           const GstCudafftResponseSource *b);

G_END_DECLS

#endif
