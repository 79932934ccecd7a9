/* devices.c: see the header. */
#include "devices.h"

#include "contexts.h"
#include "cuda_host.h"
#include "cudafft_config.h"
#include "errors.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- counting ---- */

int
cudafft_cuda_device_count(void)
{
#if CUDAFFT_HAVE_CUDA
  return cudafft_cuda_host_device_count();
#else
  return 0;
#endif
}

size_t
cudafft_cuda_unavailable_reason(char *text, size_t size)
{
  if (!text || size == 0)
    return 0;
#if CUDAFFT_HAVE_CUDA
  cudafft_cuda_host_unavailable_reason(text, size);
#else
  snprintf(text, size, "this build has no CUDA backend (it was built without the CUDA toolkit)");
#endif
  return strlen(text);
}

int
cudafft_cuda_context_device(int device_id)
{
  if (device_id >= CUDAFFT_CONTEXT_ID_BASE)
    return cudafft_context_ordinal(device_id);
  return device_id >= 0 && device_id < cudafft_cuda_device_count() ? device_id : -1;
}

/* Here and not in contexts.c, as cudafft_cuda_context_device() above: both check a device against
 * the count, and contexts.c, which this file calls, calls nothing here. */
CudafftStatus
cudafft_cuda_primary_context(int device, void **cu_context)
{
  if (!cu_context)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_cuda_primary_context: NULL result");
  *cu_context = NULL;
#if CUDAFFT_HAVE_CUDA
  const int count = cudafft_cuda_device_count();
  if (device < 0 || device >= count)
    return cudafft_fail(count ? CUDAFFT_STATUS_INVALID_VALUE : CUDAFFT_STATUS_NO_DEVICE,
                        "cudafft_cuda_primary_context: CUDA device %d does not exist: this machine "
                        "has %d",
                        device, count);
  return cudafft_cuda_host_primary_context(device, cu_context);
#else
  (void)device;
  return cudafft_fail(CUDAFFT_STATUS_BACKEND_UNAVAILABLE,
                      "cudafft_cuda_primary_context: this build of cudafft has no CUDA backend "
                      "(built without nvcc)");
#endif
}

/* ---- the load ---- */

typedef struct {
  unsigned objects;
  size_t state_bytes;
  CudafftStatus failed; /* the failure that set it aside; OK: none */
} Load;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static Load table[CUDAFFT_LOAD_DEVICES]; /* under load_lock */

/* Whether device a goes before device b. */
static int
lighter(const CudafftDeviceLoad *a, int a_id, const CudafftDeviceLoad *b, int b_id)
{
  if (!a->set_aside != !b->set_aside)
    return !a->set_aside;
  if (a->state_bytes != b->state_bytes)
    return a->state_bytes < b->state_bytes;
  if (a->objects != b->objects)
    return a->objects < b->objects;
  if (a->free_bytes != b->free_bytes)
    return a->free_bytes > b->free_bytes;
  return a_id < b_id;
}

int
cudafft_device_pick(const CudafftDeviceLoad *loads, int count)
{
  int best = -1;
  for (int i = 0; i < count; i++)
    if (!loads[i].tried && (best < 0 || lighter(&loads[i], i, &loads[best], best)))
      best = i;
  return best;
}

void
cudafft_device_load_change(int device, int objects, long long state_bytes)
{
  device = cudafft_context_ordinal(device);
  if (device < 0 || device >= CUDAFFT_LOAD_DEVICES)
    return;
  pthread_mutex_lock(&load_lock);
  Load *load = &table[device];
  load->objects += (unsigned)objects; /* modular: a removal undoes its addition exactly */
  load->state_bytes += (size_t)state_bytes;
  /* an object made there: it works; state freed there: an out-of-memory device has room again */
  if (objects > 0 || (state_bytes < 0 && load->failed == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY))
    load->failed = CUDAFFT_STATUS_OK;
  pthread_mutex_unlock(&load_lock);
}

void
cudafft_device_load_failed(int device, CudafftStatus status)
{
  device = cudafft_context_ordinal(device);
  if (device < 0 || device >= CUDAFFT_LOAD_DEVICES ||
      (status != CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY && status != CUDAFFT_STATUS_CUDA_ERROR &&
       status != CUDAFFT_STATUS_NO_DEVICE))
    return;
  pthread_mutex_lock(&load_lock);
  table[device].failed = status;
  pthread_mutex_unlock(&load_lock);
}

void
cudafft_device_load_get(int device, unsigned *objects, size_t *state_bytes)
{
  Load load = {0, 0, CUDAFFT_STATUS_OK};
  if (device >= 0 && device < CUDAFFT_LOAD_DEVICES) {
    pthread_mutex_lock(&load_lock);
    load = table[device];
    pthread_mutex_unlock(&load_lock);
  }
  if (objects)
    *objects = load.objects;
  if (state_bytes)
    *state_bytes = load.state_bytes;
}

int
cudafft_device_load_reserve(CudafftDeviceLoad *loads, int count)
{
  if (count > CUDAFFT_LOAD_DEVICES)
    count = CUDAFFT_LOAD_DEVICES;
  pthread_mutex_lock(&load_lock);
  for (int i = 0; i < count; i++) {
    loads[i].objects = table[i].objects;
    loads[i].state_bytes = table[i].state_bytes;
    loads[i].set_aside = table[i].failed != CUDAFFT_STATUS_OK;
  }
  const int device = cudafft_device_pick(loads, count);
  if (device >= 0) {
    table[device].objects++;
    loads[device].tried = 1;
  }
  pthread_mutex_unlock(&load_lock);
  return device;
}

int
cudafft_device_try_next(CudafftStatus status)
{
  return status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY || status == CUDAFFT_STATUS_CUDA_ERROR ||
         status == CUDAFFT_STATUS_UNSUPPORTED || status == CUDAFFT_STATUS_NO_DEVICE;
}

CudafftStatus
cudafft_device_tries_fail(const CudafftDeviceTry *tries, size_t count)
{
  CudafftStatus status = tries[0].status;
  int same = 1, out_of_memory = 0;
  for (size_t i = 0; i < count; i++) {
    same = same && tries[i].status == status;
    out_of_memory = out_of_memory || tries[i].status == CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY;
  }
  if (!same && out_of_memory)
    status = CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY;

  /* The recorded message holds 511 characters: the ids first, then each device's words cut to an
   * equal share, so that every device tried is named whatever the others said. */
  char ids[8 * CUDAFFT_LOAD_DEVICES] = "";
  size_t used = 0;
  for (size_t i = 0; i < count && used < sizeof ids; i++)
    used += (size_t)snprintf(ids + used, sizeof ids - used, "%s%d", i ? ", " : "", tries[i].device);
  char text[512];
  int length = snprintf(text, sizeof text, "no CUDA device could take it (tried %s)", ids);
  const size_t left = length > 0 && (size_t)length < sizeof text ? sizeof text - (size_t)length : 0;
  const int share = (int)(left / count) - 16; /* "; device NN: " and the end */
  for (size_t i = 0; i < count && length > 0 && (size_t)length < sizeof text; i++)
    length += snprintf(text + length, sizeof text - (size_t)length, "%s device %d: %.*s",
                       i ? ";" : ":", tries[i].device, share > 8 ? share : 8, tries[i].message);
  return cudafft_fail(status, "%s", text);
}

/* ---- the choice ---- */

CudafftStatus
cudafft_try_devices(int count, const size_t *free_bytes, CudafftTryBackend try_backend,
                    void *object, const void *spec, int *device)
{
  count = count < CUDAFFT_LOAD_DEVICES ? count : CUDAFFT_LOAD_DEVICES;
  CudafftDeviceLoad loads[CUDAFFT_LOAD_DEVICES];
  CudafftDeviceTry tries[CUDAFFT_LOAD_DEVICES];
  for (int i = 0; i < count; i++)
    loads[i] = (CudafftDeviceLoad){.free_bytes = free_bytes[i]};
  size_t tried = 0;
  for (;;) {
    const int chosen = cudafft_device_load_reserve(loads, count);
    if (chosen < 0)
      return tried ? cudafft_device_tries_fail(tries, tried)
                   : cudafft_fail(CUDAFFT_STATUS_NO_DEVICE, "no CUDA device to choose from");
    const CudafftStatus status = try_backend(object, spec, CUDAFFT_BACKEND_CUDA, chosen);
    cudafft_device_load_change(chosen, -1, 0); /* the object, if made, counts itself */
    if (status == CUDAFFT_STATUS_OK) {
      *device = chosen;
      return status;
    }
    if (!cudafft_device_try_next(status))
      return status;
    cudafft_device_load_failed(chosen, status);
    CudafftDeviceTry *t = &tries[tried++];
    t->device = chosen;
    t->status = status;
    snprintf(t->message, sizeof t->message, "%s", cudafft_last_error_message());
  }
}

CudafftStatus
cudafft_try_cuda_device(CudafftTryBackend try_backend, void *object, const void *spec,
                        int device_id, int *device)
{
  int count = cudafft_cuda_device_count();
  if (device_id >= 0 || count < 2) {
    *device = device_id >= 0 ? device_id : 0;
    return try_backend(object, spec, CUDAFFT_BACKEND_CUDA, device_id);
  }
  /* Free memory for the last tiebreak, read before the choice takes its lock: it asks every
   * device. 0 where it cannot be read: such a device then goes last among equals. */
  count = count < CUDAFFT_LOAD_DEVICES ? count : CUDAFFT_LOAD_DEVICES;
  size_t free_bytes[CUDAFFT_LOAD_DEVICES] = {0};
#if CUDAFFT_HAVE_CUDA
  for (int i = 0; i < count; i++)
    if (cudafft_cuda_host_free_memory(i, &free_bytes[i]) != CUDAFFT_STATUS_OK)
      free_bytes[i] = 0;
#endif
  return cudafft_try_devices(count, free_bytes, try_backend, object, spec, device);
}

CudafftStatus
cudafft_cuda_device_load(int device, unsigned *objects, size_t *state_bytes)
{
  const int count = cudafft_cuda_device_count();
  if (device < 0 || device >= count)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "CUDA device %d does not exist: this machine has %d", device, count);
  cudafft_device_load_get(device, objects, state_bytes);
  return CUDAFFT_STATUS_OK;
}
