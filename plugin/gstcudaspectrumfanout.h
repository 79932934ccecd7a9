/* gstcudaspectrumfanout.h: cudaspectrum's message builders: builds a batch of independent jobs on
 * a few worker threads and hands each back to the calling thread, in order, as soon as it and all
 * before it are built, for work that must end on the streaming thread in order (posting the
 * messages) but is costly to prepare (a GValue per band). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _GstCudaSpectrumFanout GstCudaSpectrumFanout;

typedef void (*GstCudaSpectrumFanoutFunc)(gpointer job, gpointer user_data);

/* Up to `workers` threads besides the calling thread, which builds too (>= 1), from one pool of
 * threads that the process keeps (made with the first caller's `workers`). NULL, with `error`
 * set, when that pool cannot be made. */
GstCudaSpectrumFanout *gst_cuda_spectrum_fanout_new(guint workers, GError **error);

/* Only between runs; the tasks still queued for it let go of it when they run. NULL is allowed. */
void gst_cuda_spectrum_fanout_free(GstCudaSpectrumFanout *fanout);

/* Calls build(job) for each of the `n` jobs of `job_size` bytes at `jobs`, on up to `helpers`
 * workers and on the calling thread, and deliver(job) on the calling thread in job order; returns
 * when all are delivered, so nothing of the run outlives the call. With fanout NULL or helpers 0,
 * all on the calling thread: build and deliver each job in turn. */
void gst_cuda_spectrum_fanout_run(GstCudaSpectrumFanout *fanout, gpointer jobs, gsize job_size,
                                  guint n, guint helpers, GstCudaSpectrumFanoutFunc build,
                                  GstCudaSpectrumFanoutFunc deliver, gpointer user_data);

/* Gives the memory that freed messages left in the C library's per-thread heaps back to the
 * system (glibc's malloc_trim; nothing elsewhere), at most one call at a time in the process; for
 * an element at stop whose run built large messages. Why: messages built on the workers and on
 * the streaming threads, and freed on the application's thread, leave their freed memory in the
 * heaps (arenas) of the threads that built them, which keep it: the resident memory of a process
 * that runs such pipelines again and again would grow by steps while the memory in use stays
 * flat. */
void gst_cuda_spectrum_fanout_trim(void);

G_END_DECLS
