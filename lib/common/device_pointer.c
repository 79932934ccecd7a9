/* device_pointer.c: see the header. */
#include "device_pointer.h"

#include "cudafft_config.h"
#include "cuda_host.h"
#include "errors.h"

#include <stdio.h>

/* Where the memory is, in words, for the message. */
static void
describe(const CudafftPointerPlace *place, char *text, size_t size)
{
  switch (place->kind) {
  case CUDAFFT_PLACE_DEVICE:
    if (place->device != place->object_device)
      snprintf(text, size, "device memory of CUDA device %d", place->device);
    else
      snprintf(text, size, "device memory of another CUDA context (%p) on CUDA device %d",
               place->context, place->device);
    break;
  case CUDAFFT_PLACE_HOST:
    snprintf(text, size, "page-locked host memory that the object's context cannot reach");
    break;
  default:
    snprintf(text, size, "not memory that CUDA knows (plain host memory?)");
    break;
  }
}

CudafftStatus
cudafft_device_pointer_judge(const CudafftPointerPlace *place, const void *ptr, size_t bytes,
                             const char *call, const char *what)
{
  int reachable = 0;
  switch (place->kind) {
  case CUDAFFT_PLACE_MANAGED:
    reachable = 1;
    break;
  case CUDAFFT_PLACE_HOST:
    reachable = place->mapped;
    break;
  case CUDAFFT_PLACE_DEVICE:
    reachable = place->device == place->object_device &&
                (place->pooled || !place->context || place->context == place->object_context);
    break;
  default:
    reachable = place->pageable;
    break;
  }
  if (!reachable) {
    char where[160];
    describe(place, where, sizeof where);
    return cudafft_fail(CUDAFFT_STATUS_WRONG_DEVICE_MEMORY,
                        "%s: the %s (%p) is %s, but the object runs on CUDA device %d (context "
                        "%p): pass memory of that device and context, or make the object where "
                        "the memory is (its device id, or the id cudafft_cuda_context_attach() "
                        "gives for its context)",
                        call, what, ptr, where, place->object_device, place->object_context);
  }
  /* an allocation that ends before the bytes do: a kernel would read past it */
  const uintptr_t from = (uintptr_t)ptr;
  if (place->size > 0 && bytes > 0 &&
      (from < place->start || from - place->start > place->size ||
       bytes > place->size - (from - place->start)))
    return cudafft_fail(CUDAFFT_STATUS_WRONG_DEVICE_MEMORY,
                        "%s: the %s (%p) needs %zu bytes, but its allocation holds %zu bytes "
                        "from %p",
                        call, what, ptr, bytes, place->size, (const void *)place->start);
  return CUDAFFT_STATUS_OK;
}

int
cudafft_checked_memory_has(const CudafftCheckedMemory *checked, const void *ptr, size_t bytes)
{
  const uintptr_t from = (uintptr_t)ptr;
  for (unsigned i = 0; i < CUDAFFT_CHECKED_RANGES; i++)
    if (checked->size[i] > 0 && from >= checked->start[i] &&
        from - checked->start[i] <= checked->size[i] &&
        bytes <= checked->size[i] - (from - checked->start[i]))
      return 1;
  return 0;
}

void
cudafft_checked_memory_keep(CudafftCheckedMemory *checked, uintptr_t start, size_t size)
{
  if (size == 0)
    return;
  checked->start[checked->next] = start;
  checked->size[checked->next] = size;
  checked->next = (checked->next + 1) % CUDAFFT_CHECKED_RANGES;
}

void
cudafft_checked_memory_forget(CudafftCheckedMemory *checked)
{
  *checked = (CudafftCheckedMemory){{0}, {0}, 0};
}

CudafftStatus
cudafft_device_pointer_check(CudafftCheckedMemory *checked, int device, const void *ptr,
                             size_t bytes, const char *call, const char *what)
{
  if (cudafft_checked_memory_has(checked, ptr, bytes))
    return CUDAFFT_STATUS_OK;
#if CUDAFFT_HAVE_CUDA
  CudafftPointerPlace place;
  CudafftStatus status = cudafft_cuda_host_pointer_place(device, ptr, &place);
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_device_pointer_judge(&place, ptr, bytes, call, what);
  /* only whole known allocations are kept: an unknown range is asked about every time */
  if (status == CUDAFFT_STATUS_OK)
    cudafft_checked_memory_keep(checked, place.start, place.size);
  return status;
#else
  (void)device;
  (void)bytes;
  return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                      "%s: the %s (%p) is meant to be device memory, but this build has no CUDA "
                      "backend",
                      call, what, ptr);
#endif
}

CudafftStatus
cudafft_device_pointers_check(CudafftCheckedMemory *checked, int device, unsigned on_device,
                              const void *in, size_t in_bytes, const void *out, size_t out_bytes,
                              const char *call)
{
  CudafftStatus status = CUDAFFT_STATUS_OK;
  if ((on_device & CUDAFFT_IN_DEVICE) && in && in_bytes > 0)
    status = cudafft_device_pointer_check(checked, device, in, in_bytes, call, "input");
  if (status == CUDAFFT_STATUS_OK && (on_device & CUDAFFT_OUT_DEVICE) && out && out_bytes > 0)
    status = cudafft_device_pointer_check(checked, device, out, out_bytes, call, "output");
  return status;
}
