/* gstcudafftfanout.c: see gstcudafftfanout.h.
 *
 * The jobs of a run are claimed in order from one counter, by the workers and by the calling
 * thread alike, so the job to deliver next is always among the first in work; the calling thread
 * delivers before it builds, so that a delivered job's resources go early. A worker that starts
 * late (after its run) finds nothing to claim, or joins the run then in progress, which is just as
 * good: it only ever reads the fanout itself, never a finished run's jobs. */
#include "gstcudafftfanout.h"

#include <gst/gst.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC(gst_cudafft_fanout_debug);
#define GST_CAT_DEFAULT gst_cudafft_fanout_debug

struct _GstCudafftFanout {
  GThreadPool *pool;
  guint workers;

  GMutex lock;
  GCond cond;       /* a job done, for the calling thread while it has nothing else to do */
  gboolean waiting; /* the calling thread waits on cond: saves a wake-up per job otherwise */
  guint queued;     /* tasks pushed to the pool that have not started yet */
  gboolean *done;   /* per job of the run */
  guint capacity;   /* of done */

  /* the run in progress; n == 0 between runs */
  guint8 *jobs;
  gsize job_size;
  guint n, next; /* jobs, and the first one no thread has claimed yet */
  GstCudafftFanoutFunc build;
  gpointer user_data;
};

/* A pool task: builds jobs until none is left to claim. */
static void
work(gpointer data, gpointer user_data)
{
  GstCudafftFanout *f = user_data;
  (void)data;
  g_mutex_lock(&f->lock);
  f->queued--;
  while (f->next < f->n) {
    const guint i = f->next++;
    gpointer job = f->jobs + i * f->job_size;
    const GstCudafftFanoutFunc build = f->build;
    gpointer build_data = f->user_data;
    g_mutex_unlock(&f->lock);
    build(job, build_data);
    g_mutex_lock(&f->lock);
    f->done[i] = TRUE;
    if (f->waiting)
      g_cond_signal(&f->cond);
  }
  g_mutex_unlock(&f->lock);
}

GstCudafftFanout *
gst_cudafft_fanout_new(guint workers, GError **error)
{
  static gsize category = 0;
  if (g_once_init_enter(&category)) {
    GST_DEBUG_CATEGORY_INIT(gst_cudafft_fanout_debug, "cudafftfanout", 0,
                            "worker threads that build in parallel, delivered in order");
    g_once_init_leave(&category, 1);
  }
  g_return_val_if_fail(workers >= 1, NULL);

  GstCudafftFanout *f = g_new0(GstCudafftFanout, 1);
  /* Not exclusive: idle threads go back to GLib's shared ones instead of waiting per element. */
  f->pool = g_thread_pool_new(work, f, (gint)MIN(workers, (guint)G_MAXINT), FALSE, error);
  if (!f->pool) {
    g_free(f);
    return NULL;
  }
  f->workers = workers;
  g_mutex_init(&f->lock);
  g_cond_init(&f->cond);
  GST_DEBUG("%u worker threads", workers);
  return f;
}

void
gst_cudafft_fanout_free(GstCudafftFanout *f)
{
  if (!f)
    return;
  /* Tasks still queued from the last run have nothing left to do: drop them, and wait for any
   * that has started, since it uses f. (Letting them run instead would wait for ever where no
   * worker thread could be started.) */
  g_thread_pool_free(f->pool, TRUE, TRUE);
  g_mutex_clear(&f->lock);
  g_cond_clear(&f->cond);
  g_free(f->done);
  g_free(f);
}

void
gst_cudafft_fanout_run(GstCudafftFanout *f, gpointer jobs, gsize job_size, guint n, guint helpers,
                       GstCudafftFanoutFunc build, GstCudafftFanoutFunc deliver, gpointer user_data)
{
  guint8 *const base = jobs;
  if (!f || helpers == 0 || n < 2) {
    for (guint i = 0; i < n; i++) {
      build(base + i * job_size, user_data);
      deliver(base + i * job_size, user_data);
    }
    return;
  }

  g_mutex_lock(&f->lock);
  if (n > f->capacity) {
    g_free(f->done);
    f->done = g_new(gboolean, n);
    f->capacity = n;
  }
  memset(f->done, 0, n * sizeof *f->done);
  f->jobs = base;
  f->job_size = job_size;
  f->build = build;
  f->user_data = user_data;
  f->next = 0;
  f->n = n;
  /* Tasks still queued from an earlier run take part in this one: only the rest are pushed, so
   * that the queue never grows beyond the workers. */
  const guint want = MIN(MIN(n - 1, helpers), f->workers);
  const guint push = want > f->queued ? want - f->queued : 0;
  f->queued += push;
  g_mutex_unlock(&f->lock);
  for (guint k = 0; k < push; k++) {
    GError *error = NULL;
    if (!g_thread_pool_push(f->pool, f, &error)) {
      /* The task stays queued for a thread there is or will be; until then the calling thread
       * builds what no worker takes. */
      GST_WARNING("cannot start a worker thread: %s", error ? error->message : "unknown error");
      g_clear_error(&error);
    }
  }

  guint delivered = 0;
  g_mutex_lock(&f->lock);
  while (delivered < n) {
    if (f->done[delivered]) {
      g_mutex_unlock(&f->lock);
      deliver(base + delivered * job_size, user_data);
      delivered++;
      g_mutex_lock(&f->lock);
    } else if (f->next < n) {
      const guint i = f->next++;
      g_mutex_unlock(&f->lock);
      build(base + i * job_size, user_data);
      g_mutex_lock(&f->lock);
      f->done[i] = TRUE;
    } else {
      f->waiting = TRUE;
      g_cond_wait(&f->cond, &f->lock);
      f->waiting = FALSE;
    }
  }
  /* Every job is built and delivered, so no worker holds one: late tasks find the run over. */
  f->n = f->next = 0;
  f->jobs = NULL;
  f->build = NULL;
  f->user_data = NULL;
  g_mutex_unlock(&f->lock);
}
