/* gstcudafftposter.c: see gstcudafftposter.h.
 *
 * One queue and one thread for the process, under one mutex: the thread takes the whole queue at
 * once and posts it in order, so that a burst of messages costs it one lock. Each element's share
 * counts its messages not yet posted and has a condition of its own, so that the thread wakes only
 * the element whose last message it posted, never every waiting streaming thread. A queued message
 * holds a reference on its element (GstMessage's source), so an element cannot be finalized with
 * messages queued; its share is freed only after its messages are posted. */
#include "gstcudafftposter.h"

GST_DEBUG_CATEGORY_STATIC(gst_cudafft_poster_debug);
#define GST_CAT_DEFAULT gst_cudafft_poster_debug

struct _GstCudafftPoster {
  GstElement *element; /* not a reference: the element owns its share */
  GCond posted;        /* its last queued message was posted (under `lock`) */
  guint queued;        /* its messages given and not yet posted (under `lock`) */
};

typedef struct {
  GstCudafftPoster *poster;
  GstMessage *message;
} Item;

static GMutex lock;
static GCond work;                  /* something was queued, for the thread */
static GQueue queue = G_QUEUE_INIT; /* of Item */
static GThread *thread;             /* made at first need, never joined: it serves the process */

static gpointer
post_queued(gpointer unused)
{
  (void)unused;
  g_mutex_lock(&lock);
  for (;;) {
    while (g_queue_is_empty(&queue))
      g_cond_wait(&work, &lock);
    GQueue batch = queue;
    g_queue_init(&queue);
    g_mutex_unlock(&lock);
    for (GList *l = batch.head; l; l = l->next) {
      Item *item = l->data;
      gst_element_post_message(item->poster->element, item->message);
    }
    g_mutex_lock(&lock);
    for (GList *l = batch.head; l; l = l->next) {
      Item *item = l->data;
      if (--item->poster->queued == 0)
        g_cond_signal(&item->poster->posted);
      g_free(item);
    }
    g_list_free(batch.head);
  }
  return NULL;
}

GstCudafftPoster *
gst_cudafft_poster_new(GstElement *element, GError **error)
{
  static gsize category = 0;
  if (g_once_init_enter(&category)) {
    GST_DEBUG_CATEGORY_INIT(gst_cudafft_poster_debug, "cudafftposter", 0,
                            "the thread that posts the elements' messages");
    g_once_init_leave(&category, 1);
  }
  g_mutex_lock(&lock);
  if (!thread) {
    thread = g_thread_try_new("cudafftposter", post_queued, NULL, error);
    if (thread)
      GST_DEBUG("the poster thread is running");
  }
  const gboolean running = thread != NULL;
  g_mutex_unlock(&lock);
  if (!running)
    return NULL;
  GstCudafftPoster *poster = g_new0(GstCudafftPoster, 1);
  poster->element = element;
  g_cond_init(&poster->posted);
  return poster;
}

void
gst_cudafft_poster_post(GstCudafftPoster *poster, GstMessage *message)
{
  Item *item = g_new(Item, 1);
  item->poster = poster;
  item->message = message;
  g_mutex_lock(&lock);
  poster->queued++;
  g_queue_push_tail(&queue, item);
  g_cond_signal(&work);
  g_mutex_unlock(&lock);
}

void
gst_cudafft_poster_wait(GstCudafftPoster *poster)
{
  g_mutex_lock(&lock);
  while (poster->queued > 0)
    g_cond_wait(&poster->posted, &lock);
  g_mutex_unlock(&lock);
}

void
gst_cudafft_poster_free(GstCudafftPoster *poster)
{
  if (!poster)
    return;
  gst_cudafft_poster_wait(poster);
  g_cond_clear(&poster->posted);
  g_free(poster);
}
