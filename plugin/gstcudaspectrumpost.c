/* gstcudaspectrumpost.c: see gstcudaspectrumpost.h.
 *
 * One poster at a time per top-level pipeline, from a fixed set of stripes picked by the
 * pipeline's address: every bus on the way (an element's bin's, that bin's parent's, up to the
 * pipeline's, whose queue is where writers spin) belongs to one top-level pipeline, so its posts
 * are serialised, while separate pipelines (a server's streams) post without waiting for each
 * other, save the rare two that share a stripe (whose messages one poster then posts).
 *
 * A stripe holds the messages left to post (a stack that threads push on with one
 * compare-and-swap, newest first) and a flag: whoever sets it is the poster, takes the whole stack
 * at once, posts it oldest first, and goes on until the stack is empty. A thread that finds the
 * flag set pushes and returns. The poster clears the flag and then looks at the stack again: a
 * message pushed after its last look was pushed while the flag was set (its thread saw the flag
 * and left it to the poster), so the poster starts over where the stack is not empty, or where
 * another thread has become the poster meanwhile leaves it to that one.
 *
 * Neither a thread of its own posting for every element (two wake-ups for each push), nor one
 * mutex for the process (separate pipelines would wait for each other), nor a mutex per pipeline
 * held through the post (the streaming threads of one pipeline of hundreds of analysers would
 * queue behind each other, each hand-over a sleep and a wake-up, each holder preempted by the
 * scheduler a stall for all): bench/HISTORY.md has what each cost. */
#include "gstcudaspectrumpost.h"

#define STRIPES 128

typedef struct _Pending Pending;

/* A message to post, or a flush's marker (message NULL): the poster sets its done under the
 * stripe's lock and wakes the flushing thread. */
struct _Pending {
  Pending *next; /* older, in the stack; newer, once taken and put in order */
  GstElement *element;
  GstMessage *message;
  gboolean done;
};

typedef struct {
  Pending *stack; /* atomic: left to the poster, newest first */
  gint posting;   /* atomic: a thread is the poster */
  GMutex lock;    /* for markers' done, and cond */
  GCond cond;     /* a marker done */
} Stripe;

static Stripe stripes[STRIPES]; /* zero-initialised GMutex and GCond need no init */

/* The stripe this thread is posting for, while it is (a sync handler runs inside the post): a
 * flush there returns at once, since the messages it would wait for are this thread's to post. */
static _Thread_local Stripe *posting_here;

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

static Stripe *
stripe_of(GstElement *element)
{
  GstObject *top = top_level(element);
  Stripe *stripe = &stripes[((guintptr)top / sizeof(gpointer)) % STRIPES];
  gst_object_unref(top); /* its address is only a key */
  return stripe;
}

static void
push(Stripe *stripe, Pending *p)
{
  Pending *head;
  do {
    head = g_atomic_pointer_get(&stripe->stack);
    p->next = head;
  } while (!g_atomic_pointer_compare_and_exchange(&stripe->stack, head, p));
}

/* Posts what was pushed, oldest first, until the stack is empty. Only the poster. */
static void
post_all(Stripe *stripe)
{
  Pending *taken;
  while ((taken = g_atomic_pointer_exchange(&stripe->stack, NULL)) != NULL) {
    Pending *ordered = NULL;
    while (taken) {
      Pending *next = taken->next;
      taken->next = ordered;
      ordered = taken;
      taken = next;
    }
    while (ordered) {
      Pending *p = ordered;
      ordered = p->next; /* read first: a marker's thread may go as soon as it is done */
      if (p->message) {
        gst_element_post_message(p->element, p->message);
        gst_object_unref(p->element);
        g_free(p);
      } else {
        g_mutex_lock(&stripe->lock);
        p->done = TRUE;
        g_cond_broadcast(&stripe->cond);
        g_mutex_unlock(&stripe->lock);
      }
    }
  }
}

/* Becomes the poster and posts until nothing is left, unless another thread is the poster. */
static void
post_pending(Stripe *stripe)
{
  while (g_atomic_pointer_get(&stripe->stack) != NULL &&
         g_atomic_int_compare_and_exchange(&stripe->posting, 0, 1)) {
    Stripe *const outer = posting_here;
    posting_here = stripe;
    post_all(stripe);
    posting_here = outer;
    g_atomic_int_set(&stripe->posting, 0);
  }
}

void
gst_cuda_spectrum_post(GstElement *element, GstMessage *message)
{
  g_return_if_fail(GST_IS_ELEMENT(element) && message != NULL);
  Stripe *stripe = stripe_of(element);
  Pending *p = g_new(Pending, 1);
  p->element = gst_object_ref(element);
  p->message = message;
  p->done = FALSE;
  push(stripe, p);
  post_pending(stripe);
}

void
gst_cuda_spectrum_post_flush(GstElement *element)
{
  g_return_if_fail(GST_IS_ELEMENT(element));
  Stripe *stripe = stripe_of(element);
  if (posting_here == stripe)
    return;
  if (g_atomic_pointer_get(&stripe->stack) == NULL && !g_atomic_int_get(&stripe->posting))
    return; /* this thread's messages were all posted: nothing left, no poster holding any */
  Pending marker = {.element = NULL, .message = NULL, .done = FALSE};
  push(stripe, &marker);
  post_pending(stripe);
  g_mutex_lock(&stripe->lock);
  while (!marker.done)
    g_cond_wait(&stripe->cond, &stripe->lock);
  g_mutex_unlock(&stripe->lock);
}
