/* contexts.c: the attached contexts' table (contexts.h) and the public calls over it
 * (cudafft/common.h, Contexts: attach and detach). The device an id stands for and a device's
 * primary context are in devices.c, with the device count. */
#include "contexts.h"

#include "cuda_host.h"
#include "cudafft_config.h"
#include "errors.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct {
  /* NULL for a free slot; stored last on attach (release) and loaded first by readers (acquire),
   * so that a reader that finds the context finds its device too */
  _Atomic(void *) context;
  atomic_int device;
  unsigned refs; /* under table_lock */
} Slot;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static Slot slots[CUDAFFT_CONTEXT_SLOTS];

/* The slot of a context id; NULL for any other id. */
static Slot *
slot_of(int id)
{
  if (id < CUDAFFT_CONTEXT_ID_BASE || id >= CUDAFFT_CONTEXT_ID_BASE + CUDAFFT_CONTEXT_SLOTS)
    return NULL;
  return &slots[id - CUDAFFT_CONTEXT_ID_BASE];
}

int
cudafft_context_ordinal(int id)
{
  if (id < CUDAFFT_CONTEXT_ID_BASE)
    return id;
  Slot *slot = slot_of(id);
  if (!slot || !atomic_load_explicit(&slot->context, memory_order_acquire))
    return -1;
  return atomic_load_explicit(&slot->device, memory_order_relaxed);
}

void *
cudafft_context_handle(int id)
{
  Slot *slot = slot_of(id);
  return slot ? atomic_load_explicit(&slot->context, memory_order_acquire) : NULL;
}

CudafftStatus
cudafft_context_table_add(void *context, int device, int *id)
{
  pthread_mutex_lock(&table_lock);
  int free_slot = -1, found = -1;
  for (int i = 0; i < CUDAFFT_CONTEXT_SLOTS && found < 0; i++) {
    void *held = atomic_load_explicit(&slots[i].context, memory_order_relaxed);
    if (held == context)
      found = i;
    else if (!held && free_slot < 0)
      free_slot = i;
  }
  if (found < 0 && free_slot >= 0) {
    found = free_slot;
    atomic_store_explicit(&slots[found].device, device, memory_order_relaxed);
    atomic_store_explicit(&slots[found].context, context, memory_order_release);
  }
  if (found >= 0)
    slots[found].refs++;
  pthread_mutex_unlock(&table_lock);
  if (found < 0)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "cudafft_cuda_context_attach: %d contexts are attached already, the most "
                        "the library holds at once; detach one first",
                        CUDAFFT_CONTEXT_SLOTS);
  *id = CUDAFFT_CONTEXT_ID_BASE + found;
  return CUDAFFT_STATUS_OK;
}

void
cudafft_context_table_remove(int id)
{
  Slot *slot = slot_of(id);
  if (!slot)
    return;
  pthread_mutex_lock(&table_lock);
  if (atomic_load_explicit(&slot->context, memory_order_relaxed) && --slot->refs == 0)
    atomic_store_explicit(&slot->context, NULL, memory_order_release);
  pthread_mutex_unlock(&table_lock);
}

CudafftStatus
cudafft_cuda_context_attach(void *cu_context, int *device_id)
{
  if (!cu_context || !device_id)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_cuda_context_attach: %s is NULL",
                        !cu_context ? "cu_context" : "device_id");
  *device_id = -1;
#if CUDAFFT_HAVE_CUDA
  int device = -1, primary = 0;
  const CudafftStatus status = cudafft_cuda_host_context_device(cu_context, &device, &primary);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  /* A primary context is what the device's own id stands for already: objects made with it behave
   * as they always did, and share the device's executor. */
  if (primary) {
    *device_id = device;
    return CUDAFFT_STATUS_OK;
  }
  return cudafft_context_table_add(cu_context, device, device_id);
#else
  return cudafft_fail(CUDAFFT_STATUS_BACKEND_UNAVAILABLE,
                      "cudafft_cuda_context_attach: this build of cudafft has no CUDA backend "
                      "(built without nvcc)");
#endif
}

void
cudafft_cuda_context_detach(int device_id)
{
  cudafft_context_table_remove(device_id);
}
