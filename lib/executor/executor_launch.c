/* executor_launch.c: how the executor forms batches and launches them: placement (a job into
 * the oldest open slot it may join, or the queue when none has room), the queue's jobs placed as
 * slots free up, grouping a batch's jobs by kind, and the launcher thread, which closes a slot and
 * queues its copies and the kinds' launches on the device (or a submitter that does so for a job
 * alone). executor.c's top comment says why it works so. */
#define _POSIX_C_SOURCE 200809L

#include "executor_private.h"

#include "errors.h"
#include "thread_name.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- placement ---- */

static int
fits(const CudafftExecutor *ex, const Slot *s, const CudafftJob *job)
{
  return s->count < ex->limits.max_jobs &&
         s->in_used + round_up(staged_in(job)) + s->aux_reserved + job->priv.aux_reserved <=
             ex->in_capacity &&
         s->out_used + round_up(staged_out(job)) <= ex->out_capacity;
}

/* The slot job can go in now: the oldest open slot after its owner's previous job (and after
 * the batch it must follow, job->after) with room for it, or (may_open) a free slot opened for it;
 * -1 if none. An open slot without room for it stops taking jobs (it goes out as it is, and later
 * jobs go after this one). */
int
executor_find_room_locked(CudafftExecutor *ex, const CudafftJob *job, int may_open)
{
  const uint64_t after = job->after > job->owner->last_batch ? job->after : job->owner->last_batch;
  for (;;) {
    int best = -1;
    for (unsigned i = 0; i < ex->slots_made; i++) {
      const Slot *s = &ex->slots[i];
      if (s->state == SLOT_OPEN && s->accepting && s->serial > after &&
          (best < 0 || s->serial < ex->slots[best].serial))
        best = (int)i;
    }
    if (best < 0)
      break;
    if (fits(ex, &ex->slots[best], job))
      return best;
    ex->slots[best].accepting = 0;
  }
  for (unsigned i = 0; may_open && i < ex->slots_made; i++) {
    Slot *s = &ex->slots[i];
    if (s->state != SLOT_FREE)
      continue;
    s->state = SLOT_OPEN;
    s->accepting = 1;
    s->serial = ++ex->last_serial;
    s->count = 0;
    s->in_used = s->out_used = s->aux_reserved = 0;
    s->copying = 0;
    s->status = CUDAFFT_STATUS_OK;
    s->message[0] = '\0';
    return (int)i; /* a validated job fits in an empty slot */
  }
  return -1;
}

/* Whether any job could be placed now: a free slot, or an open one taking jobs. */
static int
room_anywhere_locked(const CudafftExecutor *ex)
{
  for (unsigned i = 0; i < ex->slots_made; i++) {
    const Slot *s = &ex->slots[i];
    if (s->state == SLOT_FREE || (s->state == SLOT_OPEN && s->accepting))
      return 1;
  }
  return 0;
}

/* Reserves the job's room in slot i; its input copy is then owed (copying). */
void
executor_place_locked(CudafftExecutor *ex, int i, CudafftJob *job)
{
  Slot *s = &ex->slots[i];
  job->priv.slot = i;
  job->priv.in_offset = s->in_used;
  job->priv.out_offset = s->out_used;
  s->in_used += round_up(staged_in(job));
  s->out_used += round_up(staged_out(job));
  s->aux_reserved += job->priv.aux_reserved;
  job->priv.index = s->count;
  s->jobs[s->count++] = job;
  s->copying++;
  job->device_in = job->in_device  ? (void *)job->in_device
                   : job->in_bytes ? byte_offset(s->mem.device_in, job->priv.in_offset)
                                   : NULL;
  job->device_out = job->out_device  ? job->out_device
                    : job->out_bytes ? byte_offset(s->mem.device_out, job->priv.out_offset)
                                     : NULL;
  job->batch = s->serial;
  job->owner->last_batch = s->serial;
  job->priv.unplaced = 0;
}

/* Outside the lock: the slot is OPEN and owes this copy, so it cannot be launched meanwhile. */
void
executor_copy_input(const CudafftExecutor *ex, const CudafftJob *job, const void *in)
{
  if (staged_in(job) == 0)
    return;
  void *dst = byte_offset(ex->slots[job->priv.slot].mem.host_in, job->priv.in_offset);
  if (in)
    memcpy(dst, in, job->in_bytes);
  else
    memset(dst, 0, job->in_bytes);
}

static int launch_alone_locked(CudafftExecutor *ex, Slot *s);

/* A placed job's input is in. Once its slot owes no copy, a submitter (may_launch) whose job is
 * alone in it launches it itself where it may (launch_alone_locked); else the launcher is woken.
 * Returns whether this thread launched the batch. */
int
executor_input_copied_locked(CudafftExecutor *ex, const CudafftJob *job, int may_launch)
{
  Slot *s = &ex->slots[job->priv.slot];
  if (--s->copying != 0)
    return 0;
  if (may_launch && launch_alone_locked(ex, s))
    return 1;
  wake_launcher_locked(ex);
  return 0;
}

void
executor_queue_push_locked(CudafftExecutor *ex, CudafftJob *job, const void *in)
{
  job->priv.in = in;
  job->priv.next = NULL;
  if (ex->queue_tail)
    ex->queue_tail->priv.next = job;
  else
    ex->queue_head = job;
  ex->queue_tail = job;
  job->owner->queued++;
}

/* The launcher's part for queued jobs: places them, oldest first, while there is room, skipping
 * the owners one of whose jobs stays queued (their later jobs must not overtake it); then copies
 * their inputs with the lock released. Returns whether it placed any (the lock was then released
 * for a while). */
static int
place_queued_locked(CudafftExecutor *ex)
{
  CudafftJob *placed = NULL, **tail = &placed;
  const uint64_t scan = ++ex->scan;
  CudafftJob **link = &ex->queue_head, *previous = NULL;
  while (*link && room_anywhere_locked(ex)) {
    CudafftJob *job = *link;
    const int i = job->owner->scan == scan ? -1 : executor_find_room_locked(ex, job, 1);
    if (i < 0) {
      job->owner->scan = scan;
      previous = job;
      link = &job->priv.next;
      continue;
    }
    *link = job->priv.next;
    if (ex->queue_tail == job)
      ex->queue_tail = previous;
    job->owner->queued--;
    executor_place_locked(ex, i, job);
    job->priv.next = NULL;
    *tail = job;
    tail = &job->priv.next;
  }
  if (!placed)
    return 0;
  pthread_cond_broadcast(&ex->placed);
  pthread_mutex_unlock(&ex->lock);
  /* Nobody else touches these jobs until their slots are done, which needs this thread. */
  for (CudafftJob *job = placed; job; job = job->priv.next)
    executor_copy_input(ex, job, job->priv.in);
  pthread_mutex_lock(&ex->lock);
  for (CudafftJob *job = placed; job;) {
    CudafftJob *next = job->priv.next;
    job->priv.next = NULL;
    job->priv.in = NULL;
    executor_input_copied_locked(ex, job, 0);
    job = next;
  }
  /* cudafft_executor_batch_of() waits for the inputs to be in too */
  pthread_cond_broadcast(&ex->placed);
  return 1;
}

/* ---- the launcher ---- */

/* Makes slot s (its lists, mutex, condition and memory); the caller counts it made. What a failure
 * leaves of its lists is freed with the executor. */
CudafftStatus
executor_make_slot(CudafftExecutor *ex, Slot *s)
{
  const size_t max_jobs = ex->limits.max_jobs;
  s->jobs = calloc(max_jobs, sizeof *s->jobs);
  s->claims = calloc(max_jobs, sizeof *s->claims);
  s->order = calloc(max_jobs, sizeof *s->order);
  s->groups = calloc(max_jobs, sizeof *s->groups);
  if (!s->jobs || !s->claims || !s->order || !s->groups)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "executor: no memory for the job lists of %zu jobs a batch", max_jobs);
  if (pthread_mutex_init(&s->collect_lock, NULL) != 0)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "executor: cannot make a mutex");
  if (pthread_cond_init(&s->done, NULL) != 0) {
    pthread_mutex_destroy(&s->collect_lock);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "executor: cannot make a condition variable");
  }
  const CudafftStatus status =
      ex->table->slot_alloc(ex->ctx, ex->in_capacity, ex->out_capacity, &s->mem);
  if (status != CUDAFFT_STATUS_OK) {
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->collect_lock);
  }
  return status;
}

/* Jobs wait for room and no slot is free: makes one more slot, if the limits allow and no slot
 * failed to be made before. Under load the waiters of done batches may not run for a while (their
 * threads wait for a processor), and a batch's outputs would otherwise go out through eviction on
 * this thread; an executor that never sees such load keeps its first few slots' memory only.
 * Returns whether it made one (the lock was then released for a while). */
static int
grow_locked(CudafftExecutor *ex)
{
  if (ex->growth_failed || ex->slots_made >= ex->limits.max_slots)
    return 0;
  Slot *s = &ex->slots[ex->slots_made]; /* nobody looks past slots_made */
  pthread_mutex_unlock(&ex->lock);
  const CudafftStatus status = executor_make_slot(ex, s);
  pthread_mutex_lock(&ex->lock);
  if (status != CUDAFFT_STATUS_OK) {
    /* Eviction serves instead; the queued jobs' owners never see this failure. */
    clear_message();
    ex->growth_failed = 1;
    return 0;
  }
  ex->slots_made++;
  return 1;
}

static KindGroup *
group_of(Slot *s, size_t groups, const CudafftWorkKind *kind)
{
  for (size_t g = 0; g < groups; g++)
    if (s->groups[g].kind == kind)
      return &s->groups[g];
  return NULL;
}

/* Sorts the slot's jobs into s->order by kind (kinds in order of first appearance, each kind's
 * jobs in submission order); returns the number of kinds. */
static size_t
group_by_kind(Slot *s)
{
  size_t groups = 0;
  KindGroup *last = NULL;
  for (size_t i = 0; i < s->count; i++) {
    const CudafftWorkKind *kind = s->jobs[i]->kind;
    if (!last || last->kind != kind)
      last = group_of(s, groups, kind);
    if (!last) {
      last = &s->groups[groups++];
      *last = (KindGroup){.kind = kind};
    }
    last->count++;
  }
  size_t first = 0;
  for (size_t g = 0; g < groups; g++) {
    s->groups[g].first = first;
    first += s->groups[g].count;
  }
  last = NULL;
  for (size_t i = 0; i < s->count; i++) {
    const CudafftWorkKind *kind = s->jobs[i]->kind;
    if (!last || last->kind != kind)
      last = group_of(s, groups, kind);
    s->order[last->first + last->filled++] = s->jobs[i];
  }
  return groups;
}

/* Queues each kind's launches (ahead 0) or work ahead (ahead 1) for its jobs of the batch, until
 * one fails (the batch's failure, naming the kind). Returns whether any kind had something to
 * queue. */
static int
queue_kinds(CudafftExecutor *ex, Slot *s, size_t groups, int ahead)
{
  char what[160];
  int queued = 0;
  void *stream = ex->table->stream(ex->ctx);
  for (size_t g = 0; g < groups && s->status == CUDAFFT_STATUS_OK; g++) {
    const KindGroup *group = &s->groups[g];
    CudafftStatus (*queue)(CudafftJob *const *, size_t, void *, void *) =
        ahead ? group->kind->launch_ahead : group->kind->launch;
    if (!queue)
      continue;
    clear_message();
    queued = 1;
    const CudafftStatus status = queue(s->order + group->first, group->count,
                                       byte_offset(s->mem.device_in, group->aux_offset), stream);
    if (status != CUDAFFT_STATUS_OK) {
      snprintf(what, sizeof what, "launching %s%zu jobs of kind '%s'",
               ahead ? "the work ahead of " : "", group->count, group->kind->name);
      batch_failed(ex, s, status, what);
    }
  }
  return queued;
}

/* The kinds' work ahead for the owners' next jobs, after the batch's completion marker (the slot
 * is LAUNCHING: its state becomes IN_FLIGHT only after this, so the work is queued before anyone
 * can see the batch done and free what it reads). Only for a batch queued whole. */
static void
launch_ahead(CudafftExecutor *ex, Slot *s, size_t groups)
{
  if (queue_kinds(ex, s, groups, 1) && ex->table->ahead_queued) {
    clear_message();
    const CudafftStatus status = ex->table->ahead_queued(ex->ctx, &s->mem);
    if (status != CUDAFFT_STATUS_OK)
      batch_failed(ex, s, status, "marking the end of the work ahead");
  }
}

/* Queues the batch on the device (the slot is LAUNCHING: only this thread touches it). Every
 * failure becomes the batch's status; finish is queued whatever happened, so that the completion
 * thread's wait covers what was queued. */
static void
launch_batch(CudafftExecutor *ex, Slot *s)
{
  const size_t groups = group_by_kind(s);
  size_t aux_end = s->in_used;
  char what[160];
  for (size_t g = 0; g < groups && s->status == CUDAFFT_STATUS_OK; g++) {
    KindGroup *group = &s->groups[g];
    group->aux_offset = aux_end;
    if (group->kind->aux_bytes)
      aux_end += round_up(group->kind->aux_bytes(s->order + group->first, group->count));
    if (aux_end - s->in_used > s->aux_reserved) {
      clear_message();
      snprintf(what, sizeof what,
               "kind '%s' auxiliary data (%zu bytes for the batch, %zu reserved)",
               group->kind->name, aux_end - s->in_used, s->aux_reserved);
      batch_failed(ex, s, CUDAFFT_STATUS_INVALID_VALUE, what);
    }
  }
  for (size_t g = 0; g < groups && s->status == CUDAFFT_STATUS_OK; g++) {
    const KindGroup *group = &s->groups[g];
    if (group->kind->prepare)
      group->kind->prepare(s->order + group->first, group->count,
                           byte_offset(s->mem.host_in, group->aux_offset),
                           byte_offset(s->mem.device_in, group->aux_offset));
  }
  if (s->status == CUDAFFT_STATUS_OK) {
    clear_message();
    const CudafftStatus status = ex->table->upload(ex->ctx, &s->mem, aux_end);
    if (status != CUDAFFT_STATUS_OK) {
      snprintf(what, sizeof what, "uploading %zu bytes of inputs and auxiliary data", aux_end);
      batch_failed(ex, s, status, what);
    }
  }
  queue_kinds(ex, s, groups, 0);
  const size_t download = s->status == CUDAFFT_STATUS_OK ? s->out_used : 0;
  clear_message();
  const CudafftStatus status = ex->table->finish(ex->ctx, &s->mem, download);
  if (status != CUDAFFT_STATUS_OK) {
    snprintf(what, sizeof what, "downloading %zu bytes of outputs", download);
    batch_failed(ex, s, status, what);
  }
  launch_ahead(ex, s, groups);
}

/* The open slot that goes out next (the oldest), or NULL. */
Slot *
executor_next_to_launch_locked(CudafftExecutor *ex)
{
  Slot *next = NULL;
  for (unsigned i = 0; i < ex->slots_made; i++) {
    Slot *s = &ex->slots[i];
    if (s->state == SLOT_OPEN && (!next || s->serial < next->serial))
      next = s;
  }
  return next;
}

/* Whether s, the next slot to go out (or NULL), may go out now. */
static int
may_launch_locked(const CudafftExecutor *ex, const Slot *s)
{
  return s && s->copying == 0 && ex->in_flight < ex->limits.max_in_flight && !ex->launching;
}

/* Launches s (may_launch_locked) on the calling thread, the lock released meanwhile. One thread
 * launches at a time, always the oldest open slot, so batches reach the device in serial order. */
static void
launch_locked(CudafftExecutor *ex, Slot *s)
{
  s->state = SLOT_LAUNCHING;
  s->accepting = 0;
  ex->in_flight++;
  ex->launching = 1;
  pthread_mutex_unlock(&ex->lock);
  launch_batch(ex, s);
  pthread_mutex_lock(&ex->lock);
  s->state = SLOT_IN_FLIGHT;
  ex->launching = 0;
}

/* A submitter whose job is alone in slot s, the next to go out, with nothing on the device,
 * launches it on its own thread rather than wake the launcher; its wait then completes the batch
 * too (executor_complete_own_batch), so that a lone stream's round trip needs no other thread to
 * wake: on an idle host each wake-up can cost a sleeping processor's wake. While batches run,
 * submissions go through the launcher as before, and collect there. Returns whether it launched. */
static int
launch_alone_locked(CudafftExecutor *ex, Slot *s)
{
  if (s->count != 1 || ex->in_flight > 0 || ex->queue_head ||
      executor_next_to_launch_locked(ex) != s || !may_launch_locked(ex, s))
    return 0;
  launch_locked(ex, s);
  /* The launcher passes over what became ready while this thread launched. */
  if (executor_next_to_launch_locked(ex) || ex->queue_head)
    wake_launcher_locked(ex);
  return 1;
}

/* Shutting down: nobody will collect the jobs of done batches (their owners are gone). */
static void
abandon_done_slots_locked(CudafftExecutor *ex)
{
  for (unsigned i = 0; i < ex->slots_made; i++) {
    Slot *s = &ex->slots[i];
    if (s->state != SLOT_DONE)
      continue;
    atomic_store(&s->uncollected, 0);
    s->state = SLOT_FREE;
  }
}

void *
executor_launcher_main(void *arg)
{
  CudafftExecutor *ex = arg;
  cudafft_name_this_thread("cudafft-launch");
  pthread_mutex_lock(&ex->lock);
  for (;;) {
    if (ex->closing)
      abandon_done_slots_locked(ex);
    if (ex->queue_head) {
      if (place_queued_locked(ex))
        continue;
      if (!room_anywhere_locked(ex) && (grow_locked(ex) || executor_evict_oldest_done_locked(ex)))
        continue;
    }
    Slot *s = executor_next_to_launch_locked(ex);
    if (may_launch_locked(ex, s)) {
      launch_locked(ex, s);
      wake_completer_locked(ex);
      continue;
    }
    if (ex->closing && !s && !ex->queue_head && ex->in_flight == 0)
      break;
    /* A batch launched alone is left to its waiter (executor_complete_own_batch), who may come
     * late: where work waits for the device to make room (an open slot, the queue, the stop), the
     * completion thread takes the batches in flight. */
    if (ex->in_flight > 0 && (s || ex->queue_head || ex->closing))
      wake_completer_locked(ex);
    ex->launcher_idle = 1;
    pthread_cond_wait(&ex->launcher_wake, &ex->lock);
    ex->launcher_idle = 0;
  }
  ex->launcher_done = 1;
  wake_completer_locked(ex);
  pthread_mutex_unlock(&ex->lock);
  return NULL;
}
