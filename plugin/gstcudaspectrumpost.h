/* gstcudaspectrumpost.h: posts cudaspectrum's messages (up to a thousand a second per instance)
 * one at a time per pipeline, without making the streaming threads wait for each other.
 *
 * Why one at a time: GstBus queues a message in a GstAtomicQueue, whose writers spin until every
 * writer that reserved a place before them has finished writing. With hundreds of streaming threads
 * posting on fewer cores, one writer preempted in the middle holds all the others spinning, each
 * burning the processor the preempted one needs: one gst-launch-1.0 process of 256 `spectrum`
 * chains stalled for minutes. Our messages never spin against each other: at most one thread posts
 * them for a pipeline at a time.
 *
 * Why without waiting: a mutex that every post of one pipeline takes would make the streaming
 * threads queue up behind each other, each handing the mutex to the next through a sleep and a
 * wake-up, and behind any holder the scheduler preempted: with hundreds of analysers in one
 * pipeline the throughput would fall as chains are added. Here a thread that finds its pipeline's
 * messages being posted by another leaves its message to that thread and goes on with its audio:
 * the poster takes every message left to it, in the order they came, before it stops. So a message
 * may be posted (and a bus sync handler run) on another element's streaming thread, shortly after
 * the call returns; gst_cuda_spectrum_post_flush() waits until the calling thread's messages are
 * all on the bus, for the points where their order against other messages matters (before EOS goes
 * downstream: an application reads every element message before the EOS). */
#ifndef GST_CUDA_SPECTRUM_POST_H
#define GST_CUDA_SPECTRUM_POST_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* gst_element_post_message(element, message) (message taken): on this thread now, or, while another
 * thread posts for the top-level pipeline (bin) that holds element, by that thread before it
 * stops, after every message handed to it before. A bus sync handler that posts through it again
 * does not block. The messages of one thread are posted in the order of its calls. */
void gst_cuda_spectrum_post(GstElement *element, GstMessage *message);

/* Returns when every message given to gst_cuda_spectrum_post() for element's top-level pipeline
 * before this call (by any thread) is posted: at once where none waits, else after posting them
 * itself or waiting (asleep) for the thread that posts them. Inside a post (a bus sync handler on
 * the posting thread) it returns at once. */
void gst_cuda_spectrum_post_flush(GstElement *element);

G_END_DECLS

#endif
