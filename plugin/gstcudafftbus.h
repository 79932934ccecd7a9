/* gstcudafftbus.h: posts the elements' frequent messages (cudaspectrum's, up to a thousand a second
 * per instance) one at a time per pipeline.
 *
 * Why: GstBus queues a message in a GstAtomicQueue, whose writers spin until every writer that
 * reserved a place before them has finished writing. With hundreds of streaming threads posting on
 * fewer cores, one writer preempted in the middle holds all the others spinning, each burning the
 * processor the preempted one needs: one gst-launch-1.0 process of 256 `spectrum` chains stalled
 * for minutes. Posted one at a time per pipeline under a mutex, our messages never spin against
 * each other: a streaming thread that finds its pipeline's bus taken sleeps until it is free. The
 * message is posted from the calling thread (a bus sync handler runs there, as for any message), in
 * its order, before the call returns. */
#ifndef GST_CUDAFFT_BUS_H
#define GST_CUDAFFT_BUS_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* gst_element_post_message(element, message) (message taken), one such call at a time for the
 * top-level pipeline (bin) that holds element. A bus sync handler that posts through it again on
 * the same thread does not block. */
gboolean gst_cudafft_bus_post(GstElement *element, GstMessage *message);

G_END_DECLS

#endif
