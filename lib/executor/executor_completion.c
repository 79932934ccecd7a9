/* executor_completion.c: how the executor completes batches and hands their outputs out: the
 * completion thread (or the waiter of a batch launched alone) waits for the device, marks the
 * batch done and wakes its waiters; waiters claim and copy their outputs; the launcher's eviction
 * delivers a done batch's outputs when it needs the slot. executor.c's top comment ("Collection")
 * says why it works so. */
#define _POSIX_C_SOURCE 200809L

#include "executor_private.h"

#include "errors.h"
#include "thread_name.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- collection ---- */

void
executor_copy_output(const Slot *s, const CudafftJob *job)
{
  if (job->priv.out && staged_out(job))
    memcpy(job->priv.out, byte_offset(s->mem.host_out, job->priv.out_offset), job->out_bytes);
}

/* Counts `count` outputs out of the done slot s; returns whether they were the last (the caller
 * then frees the slot with executor_slot_emptied_locked()). */
int
executor_outputs_out(Slot *s, size_t count)
{
  return atomic_fetch_sub_explicit(&s->uncollected, count, memory_order_acq_rel) == count;
}

/* Under the executor's lock: every job of the done slot s is out. */
void
executor_slot_emptied_locked(CudafftExecutor *ex, Slot *s)
{
  s->state = SLOT_FREE;
  if (ex->queue_head)
    wake_launcher_locked(ex);
}

/* Claims the output of entry `index` of batch `serial` in the done slot s: whether the caller
 * was first (and so copies it out). */
int
executor_claim(Slot *s, size_t index, uint64_t serial)
{
  uint64_t seen = atomic_load_explicit(&s->claims[index], memory_order_acquire);
  while (seen < serial)
    if (atomic_compare_exchange_weak_explicit(&s->claims[index], &seen, serial,
                                              memory_order_acq_rel, memory_order_acquire))
      return 1;
  return 0;
}

/* Keeps the failure message of the done batch in s for the waiters of its jobs delivered before
 * they came (delivered_failure_locked), since the slot may take another batch first. */
static void
keep_failure_locked(CudafftExecutor *ex, const Slot *s)
{
  FailureRecord *record = &ex->failures[ex->next_failure++ % KEPT_FAILURES];
  record->serial = s->serial;
  memcpy(record->message, s->message, sizeof record->message);
}

/* The launcher needs a slot and none is free: delivers the uncollected outputs of the oldest done
 * batch that has any (its slot is free once its waiters that are copying already are done too).
 * Returns whether it delivered any (the lock was then released for a while). */
int
executor_evict_oldest_done_locked(CudafftExecutor *ex)
{
  Slot *s;
  size_t claimed = 0;
  /* Oldest first, passing over those whose waiters have claimed every job. The claimed jobs go in
   * the launcher's scratch list (the slot is done launching). */
  for (uint64_t after = 0;; after = s->serial) {
    s = NULL;
    for (unsigned i = 0; i < ex->slots_made; i++) {
      Slot *candidate = &ex->slots[i];
      if (candidate->state == SLOT_DONE && candidate->serial > after &&
          (!s || candidate->serial < s->serial))
        s = candidate;
    }
    if (!s)
      return 0;
    for (size_t j = 0; j < s->count; j++)
      if (executor_claim(s, j, s->serial))
        s->order[claimed++] = s->jobs[j];
    if (claimed > 0)
      break;
  }
  if (s->status != CUDAFFT_STATUS_OK)
    keep_failure_locked(ex, s);
  pthread_mutex_unlock(&ex->lock);
  /* The claimed jobs are this thread's until delivered; the slot stays DONE meanwhile. */
  if (s->status == CUDAFFT_STATUS_OK)
    for (size_t j = 0; j < claimed; j++)
      executor_copy_output(s, s->order[j]);
  pthread_mutex_lock(&s->collect_lock);
  for (size_t j = 0; j < claimed; j++) {
    CudafftJob *job = s->order[j];
    job->priv.status = s->status;
    __atomic_store_n(&job->priv.delivered, 1, __ATOMIC_RELEASE);
  }
  pthread_cond_broadcast(&s->done);
  pthread_mutex_unlock(&s->collect_lock);
  const int last = executor_outputs_out(s, claimed);
  pthread_mutex_lock(&ex->lock);
  if (last)
    executor_slot_emptied_locked(ex, s);
  return 1;
}

/* ---- completion ---- */

static pthread_once_t waiter_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t waiter_key;
static int waiter_key_made;

static void
waiter_free(void *arg)
{
  Waiter *w = arg;
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

static void
make_waiter_key(void)
{
  waiter_key_made = pthread_key_create(&waiter_key, waiter_free) == 0;
}

/* The calling thread's waiter, made at its first call; NULL where it cannot be made (the caller
 * then sleeps on the slot's condition instead). */
static Waiter *
this_thread_waiter(void)
{
  pthread_once(&waiter_key_once, make_waiter_key);
  if (!waiter_key_made)
    return NULL;
  Waiter *w = pthread_getspecific(waiter_key);
  if (w)
    return w;
  w = calloc(1, sizeof *w);
  if (!w)
    return NULL;
  if (pthread_mutex_init(&w->lock, NULL) != 0) {
    free(w);
    return NULL;
  }
  if (pthread_cond_init(&w->wake, NULL) != 0) {
    pthread_mutex_destroy(&w->lock);
    free(w);
    return NULL;
  }
  if (pthread_setspecific(waiter_key, w) != 0) {
    waiter_free(w);
    return NULL;
  }
  return w;
}

/* Wakes each waiter of a list the completion thread took off a done slot. Once woken, a waiter may
 * go on and sleep on another slot's list: its next is read first. */
static void
wake_sleepers(Waiter *w)
{
  while (w) {
    Waiter *next = w->next;
    pthread_mutex_lock(&w->lock);
    w->woken = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    w = next;
  }
}

/* Returns once batch `serial` of slot s is done. */
void
executor_wait_for_batch(Slot *s, uint64_t serial)
{
  Waiter *w = this_thread_waiter();
  pthread_mutex_lock(&s->collect_lock);
  /* The slot is reused only after this job is out, so its later batches count as done too. */
  if (s->done_serial >= serial) {
    pthread_mutex_unlock(&s->collect_lock);
    return;
  }
  if (!w) {
    while (s->done_serial < serial)
      pthread_cond_wait(&s->done, &s->collect_lock);
    pthread_mutex_unlock(&s->collect_lock);
    return;
  }
  w->woken = 0; /* nobody else has it before it is on the list */
  w->next = s->sleepers;
  s->sleepers = w;
  pthread_mutex_unlock(&s->collect_lock);
  pthread_mutex_lock(&w->lock);
  while (!w->woken)
    pthread_cond_wait(&w->wake, &w->lock);
  pthread_mutex_unlock(&w->lock);
}

static Slot *
oldest_in_flight_locked(CudafftExecutor *ex)
{
  Slot *oldest = NULL;
  for (unsigned i = 0; i < ex->slots_made; i++) {
    Slot *s = &ex->slots[i];
    if (s->state == SLOT_IN_FLIGHT && (!oldest || s->serial < oldest->serial))
      oldest = s;
  }
  return oldest;
}

/* Waits on the calling thread for s, the oldest batch in flight (nobody else completing), and
 * makes it DONE: wakes its sleeping waiters, and the launcher where work waited for room on the
 * device or for a done slot. One thread completes at a time, oldest first, so batches are done in
 * serial order. The lock is released meanwhile. */
static void
complete_locked(CudafftExecutor *ex, Slot *s)
{
  ex->completing = 1;
  pthread_mutex_unlock(&ex->lock);
  clear_message();
  const CudafftStatus status = ex->table->wait(ex->ctx, &s->mem);
  pthread_mutex_lock(&ex->lock);
  if (status != CUDAFFT_STATUS_OK)
    batch_failed(ex, s, status, "the device's work");
  s->state = SLOT_DONE;
  ex->in_flight--;
  ex->completing = 0;
  __atomic_store_n(&ex->done_serial, s->serial, __ATOMIC_RELEASE);
  pthread_mutex_lock(&s->collect_lock);
  s->done_serial = s->serial;
  /* Jobs with nothing to copy out (no output, or output in place in device memory) are delivered
   * here, so that their slot does not wait for their waiters, who may come late: a push that did
   * not wait collects its jobs at its next call. Nobody can claim them before: waiters see the
   * batch done only under this lock. */
  size_t delivered = 0;
  for (size_t j = 0; j < s->count; j++) {
    CudafftJob *job = s->jobs[j];
    if (staged_out(job) == 0 && executor_claim(s, j, s->serial)) {
      job->priv.status = s->status;
      __atomic_store_n(&job->priv.delivered, 1, __ATOMIC_RELEASE);
      delivered++;
    }
  }
  atomic_store(&s->uncollected, s->count - delivered);
  Waiter *sleepers = s->sleepers;
  s->sleepers = NULL;
  pthread_cond_broadcast(&s->done);
  pthread_mutex_unlock(&s->collect_lock);
  if (delivered > 0 && s->status != CUDAFFT_STATUS_OK)
    keep_failure_locked(ex, s);
  if (delivered == s->count)
    s->state = SLOT_FREE; /* every job is out (executor_slot_emptied_locked, below) */
  if (executor_next_to_launch_locked(ex) || ex->queue_head || ex->closing)
    wake_launcher_locked(ex);
  pthread_mutex_unlock(&ex->lock);
  wake_sleepers(sleepers);
  pthread_mutex_lock(&ex->lock);
}

/* The wait of a job whose submit launched its batch (launch_alone_locked): where that batch is the
 * oldest in flight and nobody completes one, this thread waits for the device and completes it
 * itself. Otherwise the completion thread does, in order (woken here where nobody is at it). */
void
executor_complete_own_batch(CudafftExecutor *ex, const CudafftJob *job)
{
  Slot *s = &ex->slots[job->priv.slot];
  pthread_mutex_lock(&ex->lock);
  if (s->state == SLOT_IN_FLIGHT && s->serial == job->batch && !ex->completing) {
    if (oldest_in_flight_locked(ex) == s)
      complete_locked(ex, s);
    /* Older batches nobody waits for, or later ones whose waiters may sleep. */
    if (ex->in_flight > 0)
      wake_completer_locked(ex);
  }
  pthread_mutex_unlock(&ex->lock);
}

void *
executor_completer_main(void *arg)
{
  CudafftExecutor *ex = arg;
  cudafft_name_this_thread("cudafft-done");
  pthread_mutex_lock(&ex->lock);
  for (;;) {
    Slot *s = oldest_in_flight_locked(ex);
    if (s && !ex->completing) {
      complete_locked(ex, s);
      continue;
    }
    if (ex->launcher_done && !s)
      break;
    ex->completer_idle = 1;
    pthread_cond_wait(&ex->completer_wake, &ex->lock);
    ex->completer_idle = 0;
  }
  pthread_mutex_unlock(&ex->lock);
  return NULL;
}
