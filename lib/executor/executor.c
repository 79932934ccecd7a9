/* executor.c: the executor's host logic (executor.h), against a device table
 * (executor_device.h), in three files by job: here submission, collection and fences (the calls
 * engines make), and making and stopping an executor; executor_launch.c forms the batches and
 * launches them (placement, the queue, the launcher thread: where the batching is changed);
 * executor_completion.c completes them and hands their outputs out (the completion thread,
 * waiters, eviction). The registry that shares one executor per device, and the state memory it
 * hands out: executor_registry.c; the state they share: executor_private.h. This comment is the
 * design of all of them.
 *
 * A slot is one batch: page-locked staging and device buffers for inputs (then the kinds'
 * auxiliary data) and outputs, and the jobs placed in it. Its life:
 *   FREE -> OPEN (submissions reserve room in it and copy their inputs in, outside the lock)
 *        -> LAUNCHING (the launcher closed it: upload, the kinds' launches, download, marker,
 *           the kinds' work ahead)
 *        -> IN_FLIGHT (the completion thread waits for the device)
 *        -> DONE (waiters copy their outputs out) -> FREE once every job's output is out.
 * A job with nothing to copy out (its output in place in device memory, or none) is delivered by
 * whoever completes its batch, so a batch of only such jobs goes from IN_FLIGHT to FREE at once:
 * its owners may wait for them late (a push that did not wait, see Fences below).
 * Slots get increasing serial numbers when they open and run in that order, so an owner's job
 * goes in an open slot of a later serial than its previous job (one job per owner per batch, in
 * order), and the device runs a later batch's kernels after an earlier one's (one stream).
 *
 * Group commit: the launcher closes the oldest open slot as soon as it has jobs whose copies are
 * done and fewer than max_in_flight batches are on the device; so a lone submission goes out at
 * once, and while batches run, submissions collect in the open slot and go out together.
 *
 * No room: a job that finds no open slot it may join (every slot in flight or done, or holding its
 * owner's earlier jobs, or full) waits in a queue with its input pointer, and so do its owner's
 * later jobs. The launcher places queued jobs as slots open up, oldest first but skipping an owner
 * whose earlier job still waits (so one owner's long push does not hold up everyone else), and
 * copies their inputs itself. While jobs are queued, submitters only join open slots: the free
 * ones go to the queue first, so that a large queued job is not starved by small new ones.
 *
 * Collection never holds the executor up: when the launcher needs a slot and none is free, it makes
 * another, up to the device's max_slots (under load, a done batch's waiters may wait for a
 * processor for milliseconds), and past that delivers the outputs of the oldest done batch to
 * their jobs' `out` itself (eviction), and their waiters find them delivered. So the executor
 * needs nothing of its users' waiting order, and no user can wedge it by waiting late.
 *
 * Threads and waking: the executor's mutex guards placement, the queue and the slots' states,
 * held for a few instructions at a time (copies and device calls happen outside it). The launcher
 * and the completion thread sleep on condition variables of their own and are signalled only
 * while they sleep (the *_idle flags).
 *
 * A job alone: a submission whose job is alone in the next batch to go out, with nothing on the
 * device and nobody launching, launches that batch on its own thread, and its wait (the oldest
 * batch in flight, nobody completing) waits for the device and completes the batch on that thread
 * too. A lone stream's round trip then wakes no other thread; through the launcher and the
 * completion thread it took four wake-ups, each a sleeping processor's on an idle host. Launching
 * and completing stay one thread at a time each (the launching and completing flags), in serial
 * order. The launcher hands such batches to the completion thread where work waits for the device
 * (its waiter may come late), and a waiter that cannot complete its own batch wakes it.
 *
 * Work ahead: a kind's launch_ahead queues work for its owners' next jobs on the compute stream
 * after the batch's marker, so that no output of the batch waits for it, and every later batch
 * runs after it.
 *
 * Fences (cudafft_executor_batch_of, _sync, cudafft_fence_wait): a job's `after` keeps it out of
 * every batch up to that one, so the device runs it after the batch that writes its input. A host
 * that must wait for a batch sleeps as a waiter of its slot, and wakes the completion thread,
 * which may be the only one to complete it. A fence already reached (the common case) is seen
 * from done_serial without the executor's lock, and cudafft_fence_wait() finds the executor by
 * its number under the registry's lock taken for reading: with hundreds of streams passing
 * buffers between elements, a mutex there cost more host time than the waits it spared.
 *
 * Collection takes none of that mutex: a batch's hundred waiters waking together would queue up
 * on it (each handing it to the next through the kernel) ahead of the submissions and the launch
 * of the next batch. A waiter whose batch is not done yet puts its thread's own waiter (a mutex,
 * a condition and a flag that only it and the completion thread touch) on its slot's list under
 * the slot's collect_lock and sleeps on it; the completion thread wakes each one. A woken waiter
 * claims its job with one atomic exchange on the slot's claim array (the launcher's eviction
 * claims the same way, so each output is copied out once), copies its output and counts it out
 * atomically; the last one out frees the slot under the executor's mutex. A waiter whose job the
 * launcher claimed sleeps on the slot's condition until it is delivered. Where both mutexes are
 * held, the executor's is taken first. */
#define _POSIX_C_SOURCE 200809L

#include "executor_private.h"

#include "errors.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- submission and collection ---- */

CudafftStatus
cudafft_executor_submit(CudafftExecutor *ex, CudafftJob *job, const void *in, void *out)
{
  if (!ex || !job || !job->kind || !job->kind->launch || !job->owner)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_executor_submit: NULL executor, job, kind, launch or owner");
  const size_t max = ex->limits.max_job_bytes;
  const size_t aux = job->kind->aux_bytes ? job->kind->aux_bytes(&job, 1) : 0;
  if (staged_in(job) > max || aux > max - staged_in(job) || staged_out(job) > max)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "executor job of kind '%s' too large: %zu input bytes + %zu auxiliary "
                        "bytes and %zu output bytes; a job holds at most %zu of each",
                        job->kind->name, job->in_bytes, aux, job->out_bytes, max);
  if (job->priv.outstanding)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "executor job of kind '%s' submitted again before it was waited for",
                        job->kind->name);
  pthread_mutex_lock(&ex->lock);
  if (job->after > ex->last_serial) {
    pthread_mutex_unlock(&ex->lock);
    return cudafft_fail(
        CUDAFFT_STATUS_INVALID_VALUE,
        "executor job of kind '%s' to follow batch %llu, which device %d's executor "
        "has not made (its latest is %llu)",
        job->kind->name, (unsigned long long)job->after, ex->device,
        (unsigned long long)ex->last_serial);
  }
  job->priv.outstanding = 1;
  job->priv.aux_reserved = round_up(aux);
  job->priv.out = out;
  job->priv.status = CUDAFFT_STATUS_OK;
  job->device_in = job->device_out = NULL;
  job->batch = 0;
  job->priv.launched_alone = 0;
  /* Behind the owner's queued jobs; free slots go to the queue first. */
  const int i = job->owner->queued ? -1 : executor_find_room_locked(ex, job, !ex->queue_head);
  job->priv.queued = job->priv.unplaced = i < 0;
  if (i < 0) {
    executor_queue_push_locked(ex, job, in);
    wake_launcher_locked(ex);
    pthread_mutex_unlock(&ex->lock);
    return CUDAFFT_STATUS_OK;
  }
  executor_place_locked(ex, i, job);
  pthread_mutex_unlock(&ex->lock);
  executor_copy_input(ex, job, in);
  pthread_mutex_lock(&ex->lock);
  job->priv.launched_alone = executor_input_copied_locked(ex, job, 1);
  pthread_mutex_unlock(&ex->lock);
  return CUDAFFT_STATUS_OK;
}

/* A delivered job's failure message: its batch's, if still kept. */
static CudafftStatus
delivered_failure_locked(const CudafftExecutor *ex, const CudafftJob *job)
{
  for (unsigned i = 0; i < KEPT_FAILURES; i++)
    if (ex->failures[i].serial == job->batch)
      return cudafft_fail(job->priv.status, "%s", ex->failures[i].message);
  return cudafft_fail(job->priv.status,
                      "batch %llu on device %d failed: %s (the details gave way to later failures)",
                      (unsigned long long)job->batch, ex->device,
                      cudafft_status_name(job->priv.status));
}

CudafftStatus
cudafft_executor_wait(CudafftExecutor *ex, CudafftJob *job)
{
  if (!ex || !job)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_executor_wait: NULL executor or job");
  if (!job->priv.outstanding)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "cudafft_executor_wait: the job is not outstanding (never submitted, or "
                        "already waited for)");
  job->priv.outstanding = 0;
  if (job->priv.queued) {
    /* The launcher places it (slot, batch) under the executor's lock. */
    pthread_mutex_lock(&ex->lock);
    while (job->priv.unplaced)
      pthread_cond_wait(&ex->placed, &ex->lock);
    pthread_mutex_unlock(&ex->lock);
  }
  if (job->priv.launched_alone)
    executor_complete_own_batch(ex, job);
  Slot *s = &ex->slots[job->priv.slot];
  executor_wait_for_batch(s, job->batch);
  if (executor_claim(s, job->priv.index, job->batch)) {
    /* The slot stays DONE until this job is out, so its staging, status and message hold still. */
    const CudafftStatus status = s->status;
    if (status == CUDAFFT_STATUS_OK)
      executor_copy_output(s, job);
    else
      cudafft_fail(status, "%s", s->message);
    if (executor_outputs_out(s, 1)) {
      pthread_mutex_lock(&ex->lock);
      executor_slot_emptied_locked(ex, s);
      pthread_mutex_unlock(&ex->lock);
    }
    return status;
  }
  /* The completion thread delivered it (nothing to copy out), or the launcher needed the slot and
   * claimed it: it delivers the output. The first is seen without the slot's lock (which a
   * batch's waiters would queue on). */
  if (!__atomic_load_n(&job->priv.delivered, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&s->collect_lock);
    while (!__atomic_load_n(&job->priv.delivered, __ATOMIC_ACQUIRE))
      pthread_cond_wait(&s->done, &s->collect_lock);
    pthread_mutex_unlock(&s->collect_lock);
  }
  const CudafftStatus status = job->priv.status;
  __atomic_store_n(&job->priv.delivered, 0, __ATOMIC_RELAXED);
  if (status != CUDAFFT_STATUS_OK) {
    pthread_mutex_lock(&ex->lock);
    delivered_failure_locked(ex, job);
    pthread_mutex_unlock(&ex->lock);
  }
  return status;
}

CudafftStatus
cudafft_executor_batch_of(CudafftExecutor *ex, CudafftJob *job, uint64_t *batch)
{
  if (!ex || !job || !batch)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_executor_batch_of: NULL argument");
  if (!job->priv.outstanding)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "cudafft_executor_batch_of: the job is not outstanding");
  if (job->priv.queued) {
    /* The launcher places it (slot, batch) and copies its input in (then forgets `in`) under the
     * executor's lock: the caller's input may go once it is in. */
    pthread_mutex_lock(&ex->lock);
    while (job->priv.unplaced || job->priv.in)
      pthread_cond_wait(&ex->placed, &ex->lock);
    pthread_mutex_unlock(&ex->lock);
  }
  *batch = job->batch;
  return CUDAFFT_STATUS_OK;
}

/* Batches are done in serial order, by the completion thread or by the waiter of a batch launched
 * alone. The caller sleeps as a waiter of the batch's slot (woken by whoever completes it, alone);
 * the completion thread is woken for it, since a batch whose owners wait late (a push that did not
 * wait) may have nobody else to complete it. */
CudafftStatus
cudafft_executor_sync(CudafftExecutor *ex, uint64_t batch)
{
  if (!ex)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_executor_sync: NULL executor");
  if (__atomic_load_n(&ex->done_serial, __ATOMIC_ACQUIRE) >= batch)
    return CUDAFFT_STATUS_OK; /* the common case: without the executor's lock */
  pthread_mutex_lock(&ex->lock);
  if (batch > ex->last_serial) {
    pthread_mutex_unlock(&ex->lock);
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "cudafft_executor_sync: batch %llu was never made on device %d (the "
                        "latest is %llu)",
                        (unsigned long long)batch, ex->device, (unsigned long long)ex->last_serial);
  }
  /* not done: its slot holds it (open, launching or in flight) */
  Slot *s = NULL;
  for (unsigned i = 0; ex->done_serial < batch && i < ex->slots_made && !s; i++)
    if (ex->slots[i].serial == batch && ex->slots[i].state != SLOT_FREE)
      s = &ex->slots[i];
  if (s)
    wake_completer_locked(ex);
  pthread_mutex_unlock(&ex->lock);
  if (s)
    executor_wait_for_batch(s, batch); /* the slot's later batches count as done too */
  return CUDAFFT_STATUS_OK;
}

/* ---- making and stopping an executor ---- */

void
cudafft_executor_stop(CudafftExecutor *ex)
{
  if (ex->threads_made) {
    pthread_mutex_lock(&ex->lock);
    ex->closing = 1;
    wake_launcher_locked(ex);
    pthread_mutex_unlock(&ex->lock);
    pthread_join(ex->launcher, NULL);
    if (ex->threads_made > 1)
      pthread_join(ex->completer, NULL);
  }
  for (unsigned i = 0; i < ex->slots_made; i++) {
    Slot *s = &ex->slots[i];
    ex->table->slot_free(ex->ctx, &s->mem);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->collect_lock);
  }
  if (ex->slots) {
    for (unsigned i = 0; i < ex->limits.max_slots; i++) {
      free(ex->slots[i].jobs);
      free((void *)ex->slots[i].claims);
      free(ex->slots[i].order);
      free(ex->slots[i].groups);
    }
    free(ex->slots);
  }
  if (ex->sync_made) {
    pthread_cond_destroy(&ex->placed);
    pthread_cond_destroy(&ex->completer_wake);
    pthread_cond_destroy(&ex->launcher_wake);
    pthread_mutex_destroy(&ex->lock);
  }
  if (ex->ctx)
    ex->table->close(ex->ctx);
  free(ex->states); /* empty: every state block was freed before the last release */
  free(ex);
}

static CudafftStatus
check_limits(const CudafftExecutorLimits *limits)
{
  if (limits->max_in_flight < 1 || limits->slots < limits->max_in_flight + 1 ||
      limits->max_slots < limits->slots || limits->max_jobs < 1 || limits->max_job_bytes < 1 ||
      limits->max_job_bytes > SIZE_MAX / 2 - 2 * CUDAFFT_EXECUTOR_ALIGN)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "executor: the device's limits do not work (%u slots growing to %u, %u "
                        "in flight, %zu jobs, %zu bytes a job)",
                        limits->slots, limits->max_slots, limits->max_in_flight, limits->max_jobs,
                        limits->max_job_bytes);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
make_slots(CudafftExecutor *ex)
{
  ex->slots = calloc(ex->limits.max_slots, sizeof *ex->slots);
  if (!ex->slots)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: no memory for its slots");
  while (ex->slots_made < ex->limits.slots) {
    const CudafftStatus status = executor_make_slot(ex, &ex->slots[ex->slots_made]);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    ex->slots_made++;
  }
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
make_sync(CudafftExecutor *ex)
{
  if (pthread_mutex_init(&ex->lock, NULL) != 0)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: cannot make its mutex");
  pthread_cond_t *conds[] = {&ex->launcher_wake, &ex->completer_wake, &ex->placed};
  for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++) {
    if (pthread_cond_init(conds[i], NULL) != 0) {
      while (i-- > 0)
        pthread_cond_destroy(conds[i]);
      pthread_mutex_destroy(&ex->lock);
      return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                          "executor: cannot make a condition variable");
    }
  }
  ex->sync_made = 1;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
start_threads(CudafftExecutor *ex)
{
  int error = pthread_create(&ex->launcher, NULL, executor_launcher_main, ex);
  if (error == 0) {
    ex->threads_made = 1;
    error = pthread_create(&ex->completer, NULL, executor_completer_main, ex);
    if (error == 0)
      ex->threads_made = 2;
  }
  if (error != 0)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: cannot start a thread: %s",
                        strerror(error));
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_executor_make(const CudafftExecutorDevice *table, int device, CudafftExecutor **out)
{
  CudafftExecutor *ex = calloc(1, sizeof *ex);
  if (!ex)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: no memory");
  ex->table = table;
  ex->device = device;
  CudafftStatus status = table->open(device, &ex->ctx, &ex->limits);
  if (status != CUDAFFT_STATUS_OK) {
    ex->ctx = NULL;
    free(ex);
    return status;
  }
  status = check_limits(&ex->limits);
  if (status == CUDAFFT_STATUS_OK) {
    /* Room for a largest job alone after rounding its parts up (executor.h). */
    ex->in_capacity = ex->limits.max_job_bytes + 2 * CUDAFFT_EXECUTOR_ALIGN;
    ex->out_capacity = ex->limits.max_job_bytes + CUDAFFT_EXECUTOR_ALIGN;
    status = make_sync(ex);
  }
  if (status == CUDAFFT_STATUS_OK)
    status = make_slots(ex);
  if (status == CUDAFFT_STATUS_OK)
    status = start_threads(ex);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_executor_stop(ex);
    return status;
  }
  *out = ex;
  return CUDAFFT_STATUS_OK;
}
