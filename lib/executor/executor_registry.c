/* executor_registry.c: one executor per device table and device, shared by every engine object
 * on it (acquire and release count references; the last release stops it); the numbers that name
 * executors in fences, cudafft_fence_wait() and the fence an engine's push goes after
 * (cudafft_fence_order); the state memory executors hand out to engine objects, counted in their
 * device's load (devices.h). The executor itself: executor.c. */
#define _POSIX_C_SOURCE 200809L

#include "executor_private.h"

#include "devices.h"
#include "errors.h"

#include <pthread.h>
#include <stdlib.h>

/* The registry's lock: over the registry, each executor's refs and next, and its list of state
 * blocks. A reader-writer lock: fences are looked up on every buffer that passes between
 * elements. */
static pthread_rwlock_t registry_lock = PTHREAD_RWLOCK_INITIALIZER;

static CudafftExecutor *registry; /* under registry_lock */
static uint64_t last_executor_id; /* under registry_lock */

CudafftStatus
cudafft_executor_acquire_on(const CudafftExecutorDevice *table, int device, CudafftExecutor **ex)
{
  if (!table || !ex)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_executor_acquire: NULL device table or result");
  *ex = NULL;
  pthread_rwlock_wrlock(&registry_lock);
  CudafftExecutor *found = registry;
  while (found && !(found->table == table && found->device == device))
    found = found->next;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if (found) {
    found->refs++;
  } else {
    /* Made under the lock, so that two first users of a device share one executor. */
    status = cudafft_executor_make(table, device, &found);
    if (status == CUDAFFT_STATUS_OK) {
      found->id = ++last_executor_id;
      found->refs = 1;
      found->next = registry;
      registry = found;
    }
  }
  pthread_rwlock_unlock(&registry_lock);
  if (status == CUDAFFT_STATUS_OK)
    *ex = found;
  return status;
}

void
cudafft_executor_release(CudafftExecutor *ex)
{
  if (!ex)
    return;
  pthread_rwlock_wrlock(&registry_lock);
  const int last = --ex->refs == 0;
  if (last) {
    CudafftExecutor **link = &registry;
    while (*link != ex)
      link = &(*link)->next;
    *link = ex->next;
  }
  pthread_rwlock_unlock(&registry_lock);
  /* Outside the lock: stopping waits for the device, and other devices' users need not. */
  if (last)
    cudafft_executor_stop(ex);
}

int
cudafft_executor_device(const CudafftExecutor *ex)
{
  return ex->device;
}

uint64_t
cudafft_executor_id(const CudafftExecutor *ex)
{
  return ex->id;
}

/* The executor numbered `id` with a reference taken, or NULL where it has stopped, or (with
 * `reached`) where it has batch `mark` done already: fences are waited for on every buffer that
 * passes between elements, so the common case takes the registry's lock for reading only. */
static CudafftExecutor *
find_executor(uint64_t id, uint64_t mark)
{
  pthread_rwlock_rdlock(&registry_lock);
  CudafftExecutor *ex = registry;
  while (ex && ex->id != id)
    ex = ex->next;
  const int reached = ex && __atomic_load_n(&ex->done_serial, __ATOMIC_ACQUIRE) >= mark;
  pthread_rwlock_unlock(&registry_lock);
  if (!ex || reached)
    return NULL;
  pthread_rwlock_wrlock(&registry_lock);
  ex = registry;
  while (ex && ex->id != id)
    ex = ex->next;
  if (ex)
    ex->refs++;
  pthread_rwlock_unlock(&registry_lock);
  return ex;
}

CudafftStatus
cudafft_fence_wait(CudafftFence fence)
{
  if (fence.queue == 0)
    return CUDAFFT_STATUS_OK;
  CudafftExecutor *ex = find_executor(fence.queue, fence.mark);
  if (!ex)
    return CUDAFFT_STATUS_OK; /* reached, or its executor has stopped (which ran every batch) */
  const CudafftStatus status = cudafft_executor_sync(ex, fence.mark);
  cudafft_executor_release(ex);
  return status;
}

CudafftStatus
cudafft_fence_order(const CudafftFence *after, int in_device, CudafftFence *order)
{
  *order = (CudafftFence){0, 0};
  if (!after)
    return CUDAFFT_STATUS_OK;
  if (in_device) {
    *order = *after;
    return CUDAFFT_STATUS_OK;
  }
  return cudafft_fence_wait(*after);
}

CudafftStatus
cudafft_executor_order_after(CudafftExecutor *ex, CudafftFence after, uint64_t *batch)
{
  *batch = 0;
  if (after.queue == ex->id) {
    *batch = after.mark;
    return CUDAFFT_STATUS_OK;
  }
  return cudafft_fence_wait(after);
}

size_t
cudafft_executor_max_job_bytes(const CudafftExecutor *ex)
{
  return ex->limits.max_job_bytes;
}

/* Keeps ptr's size for its free and counts it in the device's load; 0 where there is no room
 * to keep it. */
static int
state_keep(CudafftExecutor *ex, void *ptr, size_t bytes)
{
  pthread_rwlock_wrlock(&registry_lock);
  if (ex->state_count == ex->state_capacity) {
    const size_t capacity = ex->state_capacity ? 2 * ex->state_capacity : 16;
    StateBlock *grown = realloc(ex->states, capacity * sizeof *grown);
    if (!grown) {
      pthread_rwlock_unlock(&registry_lock);
      return 0;
    }
    ex->states = grown;
    ex->state_capacity = capacity;
  }
  ex->states[ex->state_count++] = (StateBlock){ptr, bytes};
  pthread_rwlock_unlock(&registry_lock);
  cudafft_device_load_change(ex->device, 0, (long long)bytes);
  return 1;
}

/* Forgets ptr and takes its size out of the device's load. */
static void
state_forget(CudafftExecutor *ex, void *ptr)
{
  size_t bytes = 0;
  pthread_rwlock_wrlock(&registry_lock);
  for (size_t i = 0; i < ex->state_count; i++)
    if (ex->states[i].ptr == ptr) {
      bytes = ex->states[i].bytes;
      ex->states[i] = ex->states[--ex->state_count];
      break;
    }
  pthread_rwlock_unlock(&registry_lock);
  cudafft_device_load_change(ex->device, 0, -(long long)bytes);
}

CudafftStatus
cudafft_executor_alloc(CudafftExecutor *ex, size_t bytes, const char *what, void **ptr)
{
  if (!ex || !ptr)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_executor_alloc: NULL argument");
  *ptr = NULL;
  if (bytes == 0)
    return CUDAFFT_STATUS_OK;
  const CudafftStatus status = ex->table->alloc(ex->ctx, bytes, what ? what : "engine state", ptr);
  if (status != CUDAFFT_STATUS_OK) {
    *ptr = NULL;
    return status;
  }
  if (!state_keep(ex, *ptr, bytes)) {
    ex->table->free(ex->ctx, *ptr);
    *ptr = NULL;
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "executor: no host memory to keep the size of an allocation");
  }
  return CUDAFFT_STATUS_OK;
}

void
cudafft_executor_free(CudafftExecutor *ex, void *ptr)
{
  if (!ex || !ptr)
    return;
  state_forget(ex, ptr);
  ex->table->free(ex->ctx, ptr);
}
