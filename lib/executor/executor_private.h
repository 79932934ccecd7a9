/* executor_private.h: the executor's own state, shared by its files: executor.c (submission,
 * collection and fences; making and stopping), executor_launch.c (placement, the queue, the
 * launcher), executor_completion.c (the completion thread, waiters, eviction) and
 * executor_registry.c (one executor per device table and device, their numbers and fences, the
 * state memory they hand out): the batch slots, the executor, the small helpers all of them use,
 * and the calls between them. Internal to the executor: engines use executor.h. */
#ifndef CUDAFFT_EXECUTOR_PRIVATE_H
#define CUDAFFT_EXECUTOR_PRIVATE_H

#include "executor_device.h"

#include "errors.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

/* A batch slot (executor.c's top comment says its life). */
typedef struct Slot Slot;

/* The engines' state from cudafft_executor_alloc, with its size. */
typedef struct {
  void *ptr;
  size_t bytes;
} StateBlock;

/* Failure messages of batches whose slots were reused before every job was collected. */
#define KEPT_FAILURES 8

typedef struct {
  uint64_t serial;
  char message[512];
} FailureRecord;

struct CudafftExecutor {
  const CudafftExecutorDevice *table;
  int device;
  uint64_t id; /* cudafft_executor_id(): unique in the process, never reused */
  void *ctx;
  CudafftExecutorLimits limits;
  size_t in_capacity, out_capacity; /* of each slot's staging */

  /* Under the registry's lock (executor_registry.c). */
  unsigned refs;
  CudafftExecutor *next;
  /* The engines' state from cudafft_executor_alloc, with its size: the device's load
   * (devices.h) counts it, and a free must take back what its alloc added. */
  StateBlock *states;
  size_t state_count, state_capacity;

  pthread_mutex_t lock;
  pthread_cond_t launcher_wake, completer_wake;
  pthread_cond_t placed; /* broadcast when the launcher places queued jobs */
  Slot *slots;
  unsigned slots_made; /* slots whose mutex, condition and memory exist: the first slots_made */
  int growth_failed;   /* a slot could not be made: the executor stays at slots_made */
  uint64_t last_serial;
  /* the latest batch done (batches are done in serial order): written under the lock, read
   * without it (atomically) by a fence that is already reached */
  uint64_t done_serial;
  unsigned in_flight; /* slots LAUNCHING or IN_FLIGHT */
  CudafftJob *queue_head, *queue_tail;
  uint64_t scan; /* the launcher's passes over the queue */
  FailureRecord failures[KEPT_FAILURES];
  unsigned next_failure;
  int launcher_idle, completer_idle;
  int launching;  /* a thread launches a batch (launch_locked) */
  int completing; /* a thread waits for the oldest batch in flight (complete_locked) */
  int closing, launcher_done;
  int sync_made, threads_made;
  pthread_t launcher, completer;
};

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
  /* Collection (executor.c's top comment). */
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

static inline size_t
round_up(size_t bytes)
{
  return (bytes + (CUDAFFT_EXECUTOR_ALIGN - 1)) / CUDAFFT_EXECUTOR_ALIGN * CUDAFFT_EXECUTOR_ALIGN;
}

/* Bytes of a job's input and output that pass through the batch's staging: none for a side
 * the engine put on the device (in_device, out_device), which the kind reads or writes in place. */
static inline size_t
staged_in(const CudafftJob *job)
{
  return job->in_device ? 0 : job->in_bytes;
}

static inline size_t
staged_out(const CudafftJob *job)
{
  return job->out_device ? 0 : job->out_bytes;
}

static inline void *
byte_offset(void *base, size_t offset)
{
  return (unsigned char *)base + offset;
}

/* The launcher thread's last message is about to explain a failure: clear what an earlier one
 * left, so that a callback that fails without cudafft_fail() is not blamed with stale words. */
static inline void
clear_message(void)
{
  cudafft_fail(CUDAFFT_STATUS_OK, "%s", "");
}

/* Records the batch's first failure: `what` (the call) and the failing thread's message. */
static inline void
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

static inline void
wake_launcher_locked(CudafftExecutor *ex)
{
  if (ex->launcher_idle) {
    ex->launcher_idle = 0;
    pthread_cond_signal(&ex->launcher_wake);
  }
}

static inline void
wake_completer_locked(CudafftExecutor *ex)
{
  if (ex->completer_idle) {
    ex->completer_idle = 0;
    pthread_cond_signal(&ex->completer_wake);
  }
}

/* Between the executor's files: placement and the launcher (executor_launch.c). */
int executor_find_room_locked(CudafftExecutor *ex, const CudafftJob *job, int may_open);
void executor_place_locked(CudafftExecutor *ex, int i, CudafftJob *job);
void executor_copy_input(const CudafftExecutor *ex, const CudafftJob *job, const void *in);
int executor_input_copied_locked(CudafftExecutor *ex, const CudafftJob *job, int may_launch);
void executor_queue_push_locked(CudafftExecutor *ex, CudafftJob *job, const void *in);
CudafftStatus executor_make_slot(CudafftExecutor *ex, Slot *s);
Slot *executor_next_to_launch_locked(CudafftExecutor *ex);
void *executor_launcher_main(void *arg);

/* Completion and collection (executor_completion.c). */
void executor_copy_output(const Slot *s, const CudafftJob *job);
int executor_outputs_out(Slot *s, size_t count);
void executor_slot_emptied_locked(CudafftExecutor *ex, Slot *s);
int executor_claim(Slot *s, size_t index, uint64_t serial);
int executor_evict_oldest_done_locked(CudafftExecutor *ex);
void executor_wait_for_batch(Slot *s, uint64_t serial);
void executor_complete_own_batch(CudafftExecutor *ex, const CudafftJob *job);
void *executor_completer_main(void *arg);

/* Makes an executor of (table, device), threads running, not yet in the registry (executor.c):
 * the registry's id, refs and next are for the caller to set. Leaves nothing behind on failure. */
CudafftStatus cudafft_executor_make(const CudafftExecutorDevice *table, int device,
                                    CudafftExecutor **out);

/* Stops and frees an executor (executor.c): its jobs still outstanding run first. */
void cudafft_executor_stop(CudafftExecutor *ex);

#endif
