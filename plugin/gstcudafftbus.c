/* gstcudafftbus.c: see gstcudafftbus.h.
 *
 * One recursive mutex per top-level pipeline, from a fixed set of stripes picked by the
 * pipeline's address: every bus on the way (an element's bin's, that bin's parent's, up to the
 * pipeline's, whose queue is where writers spin) belongs to one top-level pipeline, so its posts
 * are serialised, while separate pipelines (a server's streams) post without waiting for each
 * other, save the rare two that share a stripe. Recursive: a sync handler runs inside the post and
 * may post again on the same thread.
 *
 * Tried first (bench/HISTORY.md, 2026-11-27): a thread of its own that posted for every element
 * cost each push two wake-ups (1.5 to 2 ms of host CPU per audio second of a 60-message-a-second
 * stream); one mutex for the whole process made 256 separate pipelines wait for each other, with
 * the freeing of each message dropped by a sync handler inside it (streams-bench's cudaspectrum
 * rows: p99 31 ms, 10.8 ms of host CPU per audio second at N = 256 on an H200). */
#include "gstcudafftbus.h"

#define STRIPES 128

static GRecMutex stripes[STRIPES];

/* The outermost bin above element (or element itself): a reference. */
static GstObject *
top_level(GstElement *element)
{
  GstObject *top = gst_object_ref(GST_OBJECT(element));
  GstObject *parent;
  while ((parent = gst_object_get_parent(top)) != NULL) {
    gst_object_unref(top);
    top = parent;
  }
  return top;
}

gboolean
gst_cudafft_bus_post(GstElement *element, GstMessage *message)
{
  GstObject *top = top_level(element);
  GRecMutex *lock = &stripes[((guintptr)top / sizeof(gpointer)) % STRIPES];
  g_rec_mutex_lock(lock);
  const gboolean posted = gst_element_post_message(element, message);
  g_rec_mutex_unlock(lock);
  gst_object_unref(top);
  return posted;
}
