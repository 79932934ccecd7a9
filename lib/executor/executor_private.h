/* executor_private.h: the executor's own state, shared by its two files: executor.c (slots,
 * placement, the launcher and completion threads, submission and collection) and
 * executor_registry.c (one executor per device table and device, their numbers and fences, the
 * state memory they hand out). Internal to the executor: engines use executor.h. */
#ifndef CUDAFFT_EXECUTOR_PRIVATE_H
#define CUDAFFT_EXECUTOR_PRIVATE_H

#include "executor_device.h"

#include <pthread.h>
#include <stdint.h>

/* A batch slot (executor.c). */
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

/* Makes an executor of (table, device), threads running, not yet in the registry (executor.c):
 * the registry's id, refs and next are for the caller to set. Leaves nothing behind on failure. */
CudafftStatus cudafft_executor_make(const CudafftExecutorDevice *table, int device,
                                    CudafftExecutor **out);

/* Stops and frees an executor (executor.c): its jobs still outstanding run first. */
void cudafft_executor_stop(CudafftExecutor *ex);

#endif
