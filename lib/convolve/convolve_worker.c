/* convolve_worker.c: see convolve_worker.h. One mutex and one condition variable: the thread waits
 * on it for a job or the end, callers wait on it for jobs done; every change is broadcast (at most
 * two threads ever wait). */
#define _GNU_SOURCE /* SCHED_IDLE */

#include "convolve_worker.h"

#include "errors.h"
#include "thread_name.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CudafftConvolveWorker {
  const CudafftConvolveBackend *ops;
  void *impl;
  uint8_t *input; /* the job's input, copied at submit */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  CudafftConvolveJob job; /* the job submitted last (its in: `input`) */
  size_t submitted, done; /* jobs since create or forget */
  int quit;
  CudafftStatus failure; /* the first failure since create or forget, and its message */
  char message[512];
};

static void *
worker_main(void *arg)
{
  CudafftConvolveWorker *w = arg;
  cudafft_name_this_thread("cudafft-far");
#ifdef SCHED_IDLE
  /* Background work with a deadline a block away: woken by its caller, a thread of the normal
   * policy would often be put on the caller's core and preempt it for its whole job, which is the
   * spike this thread exists to avoid. At the idle policy it runs on cores nothing else wants, and
   * if there are none the caller, blocked waiting for its output, leaves it its own. A hint: where
   * the policy cannot be set the thread runs at the normal one. */
  const struct sched_param idle = {0};
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
#endif
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->quit && w->done == w->submitted)
      pthread_cond_wait(&w->changed, &w->lock);
    if (w->done == w->submitted)
      break; /* quit, and nothing left to run */
    const CudafftConvolveJob job = w->job;
    pthread_mutex_unlock(&w->lock);
    const CudafftStatus status = w->ops->run(w->impl, &job);
    pthread_mutex_lock(&w->lock);
    if (status != CUDAFFT_STATUS_OK && w->failure == CUDAFFT_STATUS_OK) {
      w->failure = status;
      /* the message is this thread's; the caller's thread gets it restated at its next wait */
      snprintf(w->message, sizeof w->message, "%s", cudafft_last_error_message());
    }
    w->done++;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

CudafftStatus
cudafft_convolve_worker_create(const CudafftConvolveBackend *ops, void *impl,
                               size_t max_input_bytes, CudafftConvolveWorker **worker)
{
  *worker = NULL;
  CudafftConvolveWorker *w = calloc(1, sizeof *w);
  uint8_t *input = malloc(max_input_bytes ? max_input_bytes : 1);
  if (!w || !input) {
    free(w);
    free(input);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate a convolution worker's %zu-byte input", max_input_bytes);
  }
  w->ops = ops;
  w->impl = impl;
  w->input = input;
  int error = pthread_mutex_init(&w->lock, NULL);
  if (error != 0) {
    free(input);
    free(w);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot make a convolution worker's mutex: %s", strerror(error));
  }
  error = pthread_cond_init(&w->changed, NULL);
  if (error == 0) {
    error = pthread_create(&w->thread, NULL, worker_main, w);
    if (error != 0)
      pthread_cond_destroy(&w->changed);
  }
  if (error != 0) {
    pthread_mutex_destroy(&w->lock);
    free(input);
    free(w);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot start a convolution worker thread: %s", strerror(error));
  }
  *worker = w;
  return CUDAFFT_STATUS_OK;
}

void
cudafft_convolve_worker_destroy(CudafftConvolveWorker *worker)
{
  if (!worker)
    return;
  pthread_mutex_lock(&worker->lock);
  worker->quit = 1;
  pthread_cond_broadcast(&worker->changed);
  pthread_mutex_unlock(&worker->lock);
  pthread_join(worker->thread, NULL);
  pthread_cond_destroy(&worker->changed);
  pthread_mutex_destroy(&worker->lock);
  free(worker->input);
  free(worker);
}

/* With the lock held: the kept failure, restated in this thread's message. */
static CudafftStatus
kept_failure(const CudafftConvolveWorker *w)
{
  if (w->failure == CUDAFFT_STATUS_OK)
    return CUDAFFT_STATUS_OK;
  return cudafft_fail(w->failure, "%s", w->message);
}

CudafftStatus
cudafft_convolve_worker_submit(CudafftConvolveWorker *worker, const CudafftConvolveJob *job,
                               size_t input_bytes)
{
  CudafftConvolveWorker *w = worker;
  pthread_mutex_lock(&w->lock);
  while (w->done < w->submitted)
    pthread_cond_wait(&w->changed, &w->lock);
  const CudafftStatus status = kept_failure(w);
  if (status == CUDAFFT_STATUS_OK) {
    /* idle: the thread reads nothing of `input` until the count below changes */
    if (job->in)
      memcpy(w->input, job->in, input_bytes);
    else
      memset(w->input, 0, input_bytes);
    w->job = *job;
    w->job.in = w->input;
    w->submitted++;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return status;
}

CudafftStatus
cudafft_convolve_worker_wait(CudafftConvolveWorker *worker, size_t count)
{
  CudafftConvolveWorker *w = worker;
  pthread_mutex_lock(&w->lock);
  while (w->done < count && w->done < w->submitted)
    pthread_cond_wait(&w->changed, &w->lock);
  const CudafftStatus status = kept_failure(w);
  pthread_mutex_unlock(&w->lock);
  return status;
}

void
cudafft_convolve_worker_forget(CudafftConvolveWorker *worker)
{
  CudafftConvolveWorker *w = worker;
  pthread_mutex_lock(&w->lock);
  while (w->done < w->submitted)
    pthread_cond_wait(&w->changed, &w->lock);
  w->submitted = w->done = 0;
  w->failure = CUDAFFT_STATUS_OK;
  w->message[0] = '\0';
  pthread_mutex_unlock(&w->lock);
}
