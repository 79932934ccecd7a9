/* gstcudafftbus.c: see gstcudafftbus.h. A recursive mutex: a sync handler runs inside the post,
 * and may post again on the same thread. One thread posting per process also bounds the writers in
 * any bus's queue from these elements to one, whichever pipelines they are in. A thread of its own
 * that posted for every element was tried first: each push then cost two wake-ups (the poster's
 * and the streaming thread's), 1.5 to 2 ms of host CPU per audio second of a 60-message-a-second
 * stream (bench/HISTORY.md, 2026-11-27). */
#include "gstcudafftbus.h"

static GRecMutex post_lock;

gboolean
gst_cudafft_bus_post(GstElement *element, GstMessage *message)
{
  g_rec_mutex_lock(&post_lock);
  const gboolean posted = gst_element_post_message(element, message);
  g_rec_mutex_unlock(&post_lock);
  return posted;
}
