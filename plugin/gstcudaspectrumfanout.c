/* gstcudaspectrumfanout.c: see gstcudaspectrumfanout.h.
 *
 * The jobs of a run are claimed in order from one counter, by the workers and by the calling
 * thread alike, so the job to deliver next is always among the first in work; the calling thread
 * delivers before it builds, so that a delivered job's resources go early. A worker that starts
 * late (after its run) finds nothing to claim, or joins the run then in progress, which is just as
 * good: it only ever reads the fanout itself, never a finished run's jobs.
 *
 * The worker threads are one exclusive pool for the whole process, made at first need and kept
 * for its life (as GStreamer's own task pool is); every fanout queues its tasks there. Threads
 * that came and went with each element start would give every pipeline run new threads, each
 * with a malloc arena of its own keeping the freed memory of the messages it built: the resident
 * memory would grow with every run until the process ran out of arenas (8 per core). A queued
 * task holds a reference on its fanout, so that the fanout outlives it. */
#include "gstcudaspectrumfanout.h"

#include <gst/gst.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

GST_DEBUG_CATEGORY_STATIC(gst_cuda_spectrum_fanout_debug);
#define GST_CAT_DEFAULT gst_cuda_spectrum_fanout_debug

struct _GstCudaSpectrumFanout {
  gint refs; /* the owner's, and one per task queued in the shared pool */
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
  GstCudaSpectrumFanoutFunc build;
  gpointer user_data;
};

static GMutex shared_lock;
static GThreadPool *shared_pool; /* never freed: its threads serve the process */
static guint shared_workers;

static void
fanout_unref(GstCudaSpectrumFanout *f)
{
  if (!g_atomic_int_dec_and_test(&f->refs))
    return;
  g_mutex_clear(&f->lock);
  g_cond_clear(&f->cond);
  g_free(f->done);
  g_free(f);
}

/* A pool task: builds jobs of its fanout until none is left to claim. */
static void
work(gpointer data, gpointer user_data)
{
  GstCudaSpectrumFanout *f = data;
  (void)user_data;
  g_mutex_lock(&f->lock);
  f->queued--;
  while (f->next < f->n) {
    const guint i = f->next++;
    gpointer job = f->jobs + i * f->job_size;
    const GstCudaSpectrumFanoutFunc build = f->build;
    gpointer build_data = f->user_data;
    g_mutex_unlock(&f->lock);
    build(job, build_data);
    g_mutex_lock(&f->lock);
    f->done[i] = TRUE;
    if (f->waiting)
      g_cond_signal(&f->cond);
  }
  g_mutex_unlock(&f->lock);
  fanout_unref(f);
}

/* The process's worker pool, made with `workers` threads by the first caller. */
static GThreadPool *
shared_pool_get(guint workers, guint *threads, GError **error)
{
  g_mutex_lock(&shared_lock);
  if (!shared_pool) {
    /* Exclusive: its threads are made now and stay, instead of coming and going. */
    shared_pool = g_thread_pool_new(work, NULL, (gint)MIN(workers, (guint)G_MAXINT), TRUE, error);
    shared_workers = shared_pool ? workers : 0;
  }
  GThreadPool *pool = shared_pool;
  *threads = shared_workers;
  g_mutex_unlock(&shared_lock);
  return pool;
}

/* The debug category, made by whichever entry point logs first (trim may come before any new). */
static void
init_category(void)
{
  static gsize category = 0;
  if (g_once_init_enter(&category)) {
    GST_DEBUG_CATEGORY_INIT(gst_cuda_spectrum_fanout_debug, "cudaspectrumfanout", 0,
                            "worker threads that build in parallel, delivered in order");
    g_once_init_leave(&category, 1);
  }
}

GstCudaSpectrumFanout *
gst_cuda_spectrum_fanout_new(guint workers, GError **error)
{
  init_category();
  g_return_val_if_fail(workers >= 1, NULL);

  guint threads = 0;
  if (!shared_pool_get(workers, &threads, error))
    return NULL;
  GstCudaSpectrumFanout *f = g_new0(GstCudaSpectrumFanout, 1);
  f->refs = 1;
  f->workers = MIN(workers, threads);
  g_mutex_init(&f->lock);
  g_cond_init(&f->cond);
  GST_DEBUG("%u worker threads", f->workers);
  return f;
}

void
gst_cuda_spectrum_fanout_free(GstCudaSpectrumFanout *f)
{
  /* Tasks still queued from the last run have nothing left to do; each lets go of f when it has
   * found that out, and the last one frees it. */
  if (f)
    fanout_unref(f);
}

void
gst_cuda_spectrum_fanout_run(GstCudaSpectrumFanout *f, gpointer jobs, gsize job_size, guint n,
                             guint helpers, GstCudaSpectrumFanoutFunc build,
                             GstCudaSpectrumFanoutFunc deliver, gpointer user_data)
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
    g_atomic_int_inc(&f->refs); /* the task's, given back when it has run */
    if (!g_thread_pool_push(shared_pool, f, &error)) {
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

void
gst_cuda_spectrum_fanout_trim(void)
{
#ifdef __GLIBC__
  /* one at a time: hundreds of elements stop together, and each call walks every heap */
  static gint trimming;
  if (!g_atomic_int_compare_and_exchange(&trimming, 0, 1))
    return;
  init_category();
  const int released = malloc_trim(0);
  GST_DEBUG("freed heap memory given back to the system: %s", released ? "some" : "none");
  g_atomic_int_set(&trimming, 0);
#endif
}
