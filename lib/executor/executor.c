/* executor.c: the executor's host logic (executor.h), against a device table
 * (executor_device.h): the batch slots, submission, the launcher and completion threads,
 * collection, fences, making and stopping one. The registry that shares one executor per device,
 * and the state memory it hands out: executor_registry.c; their common state:
 * executor_private.h.
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
#include "thread_name.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
  SLOT_FREE = 0,
  SLOT_OPEN,
  SLOT_LAUNCHING,
  SLOT_IN_FLIGHT,
  SLOT_DONE,
} SlotState;

/* A thread's means of sleeping until the completion thread wakes it: one per waiting thread, made
 * at its first wait, freed when the thread exits. Only that thread and the completion thread
 * touch it, so waking it wakes nobody else. */
typedef struct Waiter {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int woken;           /* under lock */
  struct Waiter *next; /* on a slot's list of sleepers (under the slot's collect_lock) */
} Waiter;

/* The jobs of one kind in a batch: order[first .. first + count). */
typedef struct {
  const CudafftWorkKind *kind;
  size_t first, count, filled;
  size_t aux_offset; /* in the slot's input staging */
} KindGroup;

struct Slot {
  SlotState state;
  int accepting; /* OPEN and not yet too full for a job that came */
  uint64_t serial;
  /* In placement order; limits.max_jobs entries. Once the slot is DONE, a job's entry is read
   * only by whoever claimed it (claims): its owner may free it once its output is out. */
  CudafftJob **jobs;
  /* Per entry: the serial of the last batch whose output there was claimed (by its waiter or the
   * launcher, whoever came first). A serial and not a flag, so that a waiter coming after the
   * launcher delivered its output and the slot took a new batch still finds it claimed. */
  _Atomic uint64_t *claims;
  size_t count;
  size_t in_used, out_used; /* staging reserved so far, multiples of CUDAFFT_EXECUTOR_ALIGN */
  size_t aux_reserved;      /* the jobs' reservations for their kinds' auxiliary data */
  unsigned copying;         /* placed jobs whose input is still being copied in */
  CudafftStatus status;     /* of the batch: its first failure; fixed once it is DONE */
  char message[512];
  /* Collection (see the top). */
  atomic_size_t uncollected; /* DONE: jobs whose output is not out yet */
  pthread_mutex_t collect_lock;
  /* Under collect_lock: */
  pthread_cond_t done;  /* broadcast when the slot becomes DONE, and when outputs are delivered */
  uint64_t done_serial; /* the serial of the last batch of this slot that is done */
  Waiter *sleepers;     /* the waiters of its batch that sleep until it is done */
  CudafftSlotMemory mem;
  /* The launcher's scratch: the jobs grouped by kind. */
  CudafftJob **order;
  KindGroup *groups;
};

static size_t
round_up(size_t bytes)
{
  return (bytes + (CUDAFFT_EXECUTOR_ALIGN - 1)) / CUDAFFT_EXECUTOR_ALIGN * CUDAFFT_EXECUTOR_ALIGN;
}

/* Bytes of a job's input and output that pass through the batch's staging: none for a side
 * the engine put on the device (in_device, out_device), which the kind reads or writes in place. */
static size_t
staged_in(const CudafftJob *job)
{
  return job->in_device ? 0 : job->in_bytes;
}

static size_t
staged_out(const CudafftJob *job)
{
  return job->out_device ? 0 : job->out_bytes;
}

static void *
byte_offset(void *base, size_t offset)
{
  return (unsigned char *)base + offset;
}

/* The launcher thread's last message is about to explain a failure: clear what an earlier one
 * left, so that a callback that fails without cudafft_fail() is not blamed with stale words. */
static void
clear_message(void)
{
  cudafft_fail(CUDAFFT_STATUS_OK, "%s", "");
}

/* Records the batch's first failure: `what` (the call) and the failing thread's message. */
static void
batch_failed(const CudafftExecutor *ex, Slot *s, CudafftStatus status, const char *what)
{
  if (s->status != CUDAFFT_STATUS_OK)
    return;
  const char *why = cudafft_last_error_message();
  s->status = status;
  snprintf(s->message, sizeof s->message, "batch %llu (%zu jobs) on device %d: %s failed: %s",
           (unsigned long long)s->serial, s->count, ex->device, what,
           why[0] ? why : cudafft_status_name(status));
}

static void
wake_launcher_locked(CudafftExecutor *ex)
{
  if (ex->launcher_idle) {
    ex->launcher_idle = 0;
    pthread_cond_signal(&ex->launcher_wake);
  }
}

static void
wake_completer_locked(CudafftExecutor *ex)
{
  if (ex->completer_idle) {
    ex->completer_idle = 0;
    pthread_cond_signal(&ex->completer_wake);
  }
}

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
static int
find_room_locked(CudafftExecutor *ex, const CudafftJob *job, int may_open)
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
static void
place_locked(CudafftExecutor *ex, int i, CudafftJob *job)
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
static void
copy_input(const CudafftExecutor *ex, const CudafftJob *job, const void *in)
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
static int
input_copied_locked(CudafftExecutor *ex, const CudafftJob *job, int may_launch)
{
  Slot *s = &ex->slots[job->priv.slot];
  if (--s->copying != 0)
    return 0;
  if (may_launch && launch_alone_locked(ex, s))
    return 1;
  wake_launcher_locked(ex);
  return 0;
}

static void
queue_push_locked(CudafftExecutor *ex, CudafftJob *job, const void *in)
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
    const int i = job->owner->scan == scan ? -1 : find_room_locked(ex, job, 1);
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
    place_locked(ex, i, job);
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
    copy_input(ex, job, job->priv.in);
  pthread_mutex_lock(&ex->lock);
  for (CudafftJob *job = placed; job;) {
    CudafftJob *next = job->priv.next;
    job->priv.next = NULL;
    job->priv.in = NULL;
    input_copied_locked(ex, job, 0);
    job = next;
  }
  /* cudafft_executor_batch_of() waits for the inputs to be in too */
  pthread_cond_broadcast(&ex->placed);
  return 1;
}

/* ---- collection ---- */

static void
copy_output(const Slot *s, const CudafftJob *job)
{
  if (job->priv.out && staged_out(job))
    memcpy(job->priv.out, byte_offset(s->mem.host_out, job->priv.out_offset), job->out_bytes);
}

/* Counts `count` outputs out of the done slot s; returns whether they were the last (the caller
 * then frees the slot with slot_emptied_locked()). */
static int
outputs_out(Slot *s, size_t count)
{
  return atomic_fetch_sub_explicit(&s->uncollected, count, memory_order_acq_rel) == count;
}

/* Under the executor's lock: every job of the done slot s is out. */
static void
slot_emptied_locked(CudafftExecutor *ex, Slot *s)
{
  s->state = SLOT_FREE;
  if (ex->queue_head)
    wake_launcher_locked(ex);
}

/* Claims the output of entry `index` of batch `serial` in the done slot s: whether the caller
 * was first (and so copies it out). */
static int
claim(Slot *s, size_t index, uint64_t serial)
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
static int
evict_oldest_done_locked(CudafftExecutor *ex)
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
      if (claim(s, j, s->serial))
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
      copy_output(s, s->order[j]);
  pthread_mutex_lock(&s->collect_lock);
  for (size_t j = 0; j < claimed; j++) {
    CudafftJob *job = s->order[j];
    job->priv.status = s->status;
    __atomic_store_n(&job->priv.delivered, 1, __ATOMIC_RELEASE);
  }
  pthread_cond_broadcast(&s->done);
  pthread_mutex_unlock(&s->collect_lock);
  const int last = outputs_out(s, claimed);
  pthread_mutex_lock(&ex->lock);
  if (last)
    slot_emptied_locked(ex, s);
  return 1;
}

/* ---- the launcher ---- */

/* Makes slot s (its lists, mutex, condition and memory); the caller counts it made. What a failure
 * leaves of its lists is freed with the executor. */
static CudafftStatus
make_slot(CudafftExecutor *ex, Slot *s)
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
  const CudafftStatus status = make_slot(ex, s);
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
static Slot *
next_to_launch_locked(CudafftExecutor *ex)
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
 * too (complete_own_batch), so that a lone stream's round trip needs no other thread to wake: on
 * an idle host each wake-up can cost a sleeping processor's wake (issue 16's paced figures).
 * While batches run, submissions go through the launcher as before, and collect there. Returns
 * whether it launched. */
static int
launch_alone_locked(CudafftExecutor *ex, Slot *s)
{
  if (s->count != 1 || ex->in_flight > 0 || ex->queue_head || next_to_launch_locked(ex) != s ||
      !may_launch_locked(ex, s))
    return 0;
  launch_locked(ex, s);
  /* The launcher passes over what became ready while this thread launched. */
  if (next_to_launch_locked(ex) || ex->queue_head)
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

static void *
launcher_main(void *arg)
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
      if (!room_anywhere_locked(ex) && (grow_locked(ex) || evict_oldest_done_locked(ex)))
        continue;
    }
    Slot *s = next_to_launch_locked(ex);
    if (may_launch_locked(ex, s)) {
      launch_locked(ex, s);
      wake_completer_locked(ex);
      continue;
    }
    if (ex->closing && !s && !ex->queue_head && ex->in_flight == 0)
      break;
    /* A batch launched alone is left to its waiter (complete_own_batch), who may come late: where
     * work waits for the device to make room (an open slot, the queue, the stop), the completion
     * thread takes the batches in flight. */
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
static void
wait_for_batch(Slot *s, uint64_t serial)
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
    if (staged_out(job) == 0 && claim(s, j, s->serial)) {
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
    s->state = SLOT_FREE; /* every job is out (slot_emptied_locked, below) */
  if (next_to_launch_locked(ex) || ex->queue_head || ex->closing)
    wake_launcher_locked(ex);
  pthread_mutex_unlock(&ex->lock);
  wake_sleepers(sleepers);
  pthread_mutex_lock(&ex->lock);
}

/* The wait of a job whose submit launched its batch (launch_alone_locked): where that batch is the
 * oldest in flight and nobody completes one, this thread waits for the device and completes it
 * itself. Otherwise the completion thread does, in order (woken here where nobody is at it). */
static void
complete_own_batch(CudafftExecutor *ex, const CudafftJob *job)
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

static void *
completer_main(void *arg)
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
  const int i = job->owner->queued ? -1 : find_room_locked(ex, job, !ex->queue_head);
  job->priv.queued = job->priv.unplaced = i < 0;
  if (i < 0) {
    queue_push_locked(ex, job, in);
    wake_launcher_locked(ex);
    pthread_mutex_unlock(&ex->lock);
    return CUDAFFT_STATUS_OK;
  }
  place_locked(ex, i, job);
  pthread_mutex_unlock(&ex->lock);
  copy_input(ex, job, in);
  pthread_mutex_lock(&ex->lock);
  job->priv.launched_alone = input_copied_locked(ex, job, 1);
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
    complete_own_batch(ex, job);
  Slot *s = &ex->slots[job->priv.slot];
  wait_for_batch(s, job->batch);
  if (claim(s, job->priv.index, job->batch)) {
    /* The slot stays DONE until this job is out, so its staging, status and message hold still. */
    const CudafftStatus status = s->status;
    if (status == CUDAFFT_STATUS_OK)
      copy_output(s, job);
    else
      cudafft_fail(status, "%s", s->message);
    if (outputs_out(s, 1)) {
      pthread_mutex_lock(&ex->lock);
      slot_emptied_locked(ex, s);
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
    wait_for_batch(s, batch); /* the slot's later batches count as done too */
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
    const CudafftStatus status = make_slot(ex, &ex->slots[ex->slots_made]);
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
  int error = pthread_create(&ex->launcher, NULL, launcher_main, ex);
  if (error == 0) {
    ex->threads_made = 1;
    error = pthread_create(&ex->completer, NULL, completer_main, ex);
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
