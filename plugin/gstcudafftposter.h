/* gstcudafftposter.h: posts an element's messages on the bus from one thread that the process
 * keeps for all of them, in the order they were given, so that streaming threads never post.
 *
 * Why: GstBus queues a message in a GstAtomicQueue, whose writers spin until every writer that
 * reserved a place before them has finished writing. With hundreds of streaming threads posting
 * on fewer cores, one writer preempted in the middle holds all the others spinning (each burning
 * the processor the preempted one needs): one gst-launch-1.0 process of 256 `spectrum` chains
 * stalled for minutes. Messages handed to the poster are posted by its one thread, which never
 * competes with itself; a streaming thread only takes a mutex and signals. */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _GstCudafftPoster GstCudafftPoster;

/* An element's share of the process's poster (whose thread is made at first need and kept for the
 * process's life, as GStreamer's own task pool is). NULL, with `error` set, when the thread cannot
 * be made: the element then posts from its own thread. */
GstCudafftPoster *gst_cudafft_poster_new(GstElement *element, GError **error);

/* Queues `message` (taken) to be posted by `element` after every message queued before it. */
void gst_cudafft_poster_post(GstCudafftPoster *poster, GstMessage *message);

/* Blocks until every message queued so far has been posted: before an event that must reach the
 * application after them (EOS), and to keep at most one push's messages queued. */
void gst_cudafft_poster_wait(GstCudafftPoster *poster);

/* Waits as gst_cudafft_poster_wait(), then frees. NULL is allowed. */
void gst_cudafft_poster_free(GstCudafftPoster *poster);

G_END_DECLS
