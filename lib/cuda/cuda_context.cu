/* cuda_context.cu: making a device id's context current (cudafft_use_device(), cuda_check.cuh) and
 * what attaching a context asks of the driver (cudafft_cuda_host_context_device(), cuda_host.h).
 *
 * The runtime API cannot make a context current that it did not make (cudaSetDevice binds the
 * device's primary context), so the driver's context calls are used, found through the runtime
 * (driver_entry.cuh) rather than linked: the library must load on machines without the driver
 * (CI), where libcuda is absent. Once a context is current, the runtime's calls
 * (kernels, streams, events, cudaMallocAsync) use it (the CUDA Programming Guide, "Interoperability
 * between Runtime and Driver APIs"). */
#include "caller_context.cuh"
#include "contexts.h"
#include "cuda_check.cuh"
#include "cuda_host.h"
#include "devices.h"
#include "driver_entry.cuh"
#include "driver_errors.cuh"
#include "thread_name.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <pthread.h>
#include <stdint.h>

namespace {

struct Driver {
  PFN_cuCtxGetCurrent_v4000 get_current = nullptr;
  PFN_cuCtxSetCurrent_v4000 set_current = nullptr;
  PFN_cuCtxPushCurrent_v4000 push_current = nullptr;
  PFN_cuCtxPopCurrent_v4000 pop_current = nullptr;
  PFN_cuCtxGetDevice_v2000 get_device = nullptr;
  PFN_cuDevicePrimaryCtxGetState_v7000 primary_state = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 primary_release = nullptr;
  PFN_cuPointerGetAttributes_v7000 pointer_attributes = nullptr;
  cudaError_t error = cudaSuccess; /* the lookup's failure: none of the above is usable then */
  const char *missing = nullptr;   /* the function it failed on */
};

Driver driver_table;
pthread_once_t driver_once = PTHREAD_ONCE_INIT;

template <typename F>
bool
find(const char *symbol, unsigned version, F *fn)
{
  if (driver_table.error != cudaSuccess)
    return false;
  void *entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t error = cudafft_driver_entry(symbol, version, &entry, &found);
  if (error == cudaSuccess && (found != cudaDriverEntryPointSuccess || !entry))
    error = cudaErrorSymbolNotFound;
  if (error != cudaSuccess) {
    cudaGetLastError();
    driver_table.error = error;
    driver_table.missing = symbol;
    return false;
  }
  *fn = reinterpret_cast<F>(entry);
  return true;
}

/* Once per process: a lookup that fails (no driver) fails every call that needs one, as the
 * runtime's own calls would. */
void
resolve_driver(void)
{
  Driver &d = driver_table;
  find("cuCtxGetCurrent", 4000, &d.get_current);
  find("cuCtxSetCurrent", 4000, &d.set_current);
  find("cuCtxPushCurrent", 4000, &d.push_current);
  find("cuCtxPopCurrent", 4000, &d.pop_current);
  find("cuCtxGetDevice", 2000, &d.get_device);
  find("cuDevicePrimaryCtxGetState", 7000, &d.primary_state);
  find("cuDevicePrimaryCtxRetain", 7000, &d.primary_retain);
  find("cuDevicePrimaryCtxRelease", 11000, &d.primary_release);
  find("cuPointerGetAttributes", 7000, &d.pointer_attributes);
}

const Driver &
driver(void)
{
  pthread_once(&driver_once, resolve_driver);
  return driver_table;
}

/* The runtime error a failed context call stands for (driver_errors.cuh). */
cudaError_t
runtime_error_of(CUresult result)
{
  return cudafft_runtime_error_of(result, cudaErrorUnknown);
}

/* Each device's primary context as last seen current right after cudaSetDevice: the fast path's
 * comparison. Written again at every slow path, so that a primary context made anew (after a
 * reset) is picked up by the next call that finds it not current. */
std::atomic<CUcontext> primaries[CUDAFFT_LOAD_DEVICES];

/* The primary context of device id, as cudaSetDevice makes it current. */
cudaError_t
use_primary(const Driver &d, int device)
{
  const bool cached = device >= 0 && device < CUDAFFT_LOAD_DEVICES;
  CUcontext current = nullptr;
  if (cached) {
    const CUcontext primary = primaries[device].load(std::memory_order_relaxed);
    if (primary && d.get_current(&current) == CUDA_SUCCESS && current == primary)
      return cudaSuccess;
  }
  const cudaError_t error = cudaSetDevice(device);
  if (error != cudaSuccess || !cached)
    return error;
  if (d.get_current(&current) == CUDA_SUCCESS && current)
    primaries[device].store(current, std::memory_order_relaxed);
  return cudaSuccess;
}

} // namespace

/* Compares contexts, not devices: with an application's context current on this thread,
 * cudaGetDevice() reports that context's device, and a comparison of devices would never make the
 * primary context current again. The fast path is one cuCtxGetCurrent (a read of the thread's
 * state), since this runs on every call into a backend object. */
extern "C" cudaError_t
cudafft_use_device(int device)
{
  const Driver &d = driver();
  if (device < CUDAFFT_CONTEXT_ID_BASE) {
    if (d.error == cudaSuccess)
      return use_primary(d, device);
    /* No driver calls (an old driver without one of them): the device ids work as they always
     * did. */
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == device)
      return cudaSuccess;
    return cudaSetDevice(device);
  }
  const CUcontext context = static_cast<CUcontext>(cudafft_context_handle(device));
  if (!context)
    return cudaErrorInvalidDevice; /* an id that is not attached */
  if (d.error != cudaSuccess)
    return d.error;
  CUcontext current = nullptr;
  if (d.get_current(&current) == CUDA_SUCCESS && current == context)
    return cudaSuccess;
  return runtime_error_of(d.set_current(context));
}

extern "C" cudaError_t
cudafft_cuda_current_context(void **context)
{
  *context = nullptr;
  const Driver &d = driver();
  if (d.error != cudaSuccess)
    return d.error;
  CUcontext current = nullptr;
  const cudaError_t error = runtime_error_of(d.get_current(&current));
  *context = current;
  return error;
}

extern "C" cudaError_t
cudafft_cuda_set_context(void *context)
{
  const Driver &d = driver();
  if (d.error != cudaSuccess)
    return d.error;
  return runtime_error_of(d.set_current(static_cast<CUcontext>(context)));
}

namespace {

/* A driver call's failure in attach, as a status with the call named. */
CudafftStatus
attach_failure(CUresult result, const char *call)
{
  return cudafft_cuda_failure(runtime_error_of(result), call, __FILE__, __LINE__);
}

/* Whether context is device's primary context: only an active primary context can be it, and
 * one that is not active is not retained here (retaining it would make it, with its memory, for
 * nothing). */
CudafftStatus
is_primary(const Driver &d, CUcontext context, CUdevice device, int *primary)
{
  unsigned flags = 0;
  int active = 0;
  CUresult result = d.primary_state(device, &flags, &active);
  if (result != CUDA_SUCCESS)
    return attach_failure(result, "cuDevicePrimaryCtxGetState");
  *primary = 0;
  if (!active)
    return CUDAFFT_STATUS_OK;
  CUcontext found = nullptr;
  result = d.primary_retain(&found, device);
  if (result != CUDA_SUCCESS)
    return attach_failure(result, "cuDevicePrimaryCtxRetain");
  *primary = found == context;
  d.primary_release(device);
  return CUDAFFT_STATUS_OK;
}

} // namespace

extern "C" CudafftStatus
cudafft_cuda_host_context_device(void *context, int *device, int *primary)
{
  *device = -1;
  *primary = 0;
  const Driver &d = driver();
  if (d.error != cudaSuccess) {
    cudaGetLastError();
    return cudafft_fail(d.error == cudaErrorInsufficientDriver || d.error == cudaErrorNoDevice
                            ? CUDAFFT_STATUS_NO_DEVICE
                            : CUDAFFT_STATUS_CUDA_ERROR,
                        "cudafft_cuda_context_attach: the CUDA driver's %s cannot be had: %s (%s)",
                        d.missing, cudaGetErrorString(d.error), cudaGetErrorName(d.error));
  }
  /* The context's device, read with it current for a moment: the caller's context back after. */
  CUresult result = d.push_current(static_cast<CUcontext>(context));
  if (result != CUDA_SUCCESS)
    return attach_failure(result, "cuCtxPushCurrent (the context to attach)");
  CUdevice found = -1;
  result = d.get_device(&found);
  CUcontext popped = nullptr;
  const CUresult restored = d.pop_current(&popped);
  if (result != CUDA_SUCCESS)
    return attach_failure(result, "cuCtxGetDevice");
  if (restored != CUDA_SUCCESS)
    return attach_failure(restored, "cuCtxPopCurrent");
  /* CUdevice handles are the driver's ordinals, which the runtime's device ids are (both count
   * the same visible devices in the same order). */
  const int count = cudafft_cuda_host_device_count();
  if (found < 0 || found >= count || found >= CUDAFFT_LOAD_DEVICES)
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE,
                        "cudafft_cuda_context_attach: the context's device %d is not one of the "
                        "%d the runtime sees",
                        (int)found, count);
  const CudafftStatus status = is_primary(d, static_cast<CUcontext>(context), found, primary);
  if (status == CUDAFFT_STATUS_OK)
    *device = found;
  return status;
}

extern "C" CudafftStatus
cudafft_cuda_host_primary_context(int device, void **context)
{
  *context = nullptr;
  const Driver &d = driver();
  if (d.error != cudaSuccess) {
    cudaGetLastError();
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE,
                        "cudafft_cuda_primary_context: the CUDA driver's %s cannot be had: %s (%s)",
                        d.missing, cudaGetErrorString(d.error), cudaGetErrorName(d.error));
  }
  /* Read as cudaSetDevice makes it current (which makes it, where it is not yet, and keeps it
   * for the runtime), the caller's context back after. */
  CUcontext caller = nullptr;
  CUresult result = d.get_current(&caller);
  if (result != CUDA_SUCCESS)
    return attach_failure(result, "cuCtxGetCurrent");
  cudaError_t error = cudaSetDevice(device);
  CUcontext primary = nullptr;
  if (error == cudaSuccess)
    error = runtime_error_of(d.get_current(&primary));
  const cudaError_t restored = runtime_error_of(d.set_current(caller));
  CUDAFFT_CHECK(error);
  CUDAFFT_CHECK(restored);
  *context = primary;
  return CUDAFFT_STATUS_OK;
}

/* Caller's context ---------------------------------------------------------------------------- */

extern "C" void
cudafft_cuda_caller_save(CudafftCallerContext *saved)
{
  saved->context = nullptr;
  saved->device = -1;
  saved->own = cudafft_on_own_thread();
  if (saved->own)
    return;
  const Driver &d = driver();
  if (d.error != cudaSuccess) {
    if (cudaGetDevice(&saved->device) != cudaSuccess)
      saved->device = -1;
    cudaGetLastError();
    return;
  }
  CUcontext current = nullptr;
  if (d.get_current(&current) != CUDA_SUCCESS)
    return;
  saved->context = current;
  /* none current: what the runtime would use is the thread's runtime device (0 unless set) */
  if (!current && cudaGetDevice(&saved->device) != cudaSuccess) {
    saved->device = -1;
    cudaGetLastError();
  }
}

namespace {

/* Whether `device`'s primary context exists: making one current that does not would create it,
 * with its memory, on a device the caller never used. */
bool
primary_active(const Driver &d, int device)
{
  unsigned flags = 0;
  int active = 0;
  return d.primary_state(device, &flags, &active) == CUDA_SUCCESS && active;
}

} // namespace

extern "C" void
cudafft_cuda_caller_restore(const CudafftCallerContext *saved)
{
  if (saved->own)
    return;
  const Driver &d = driver();
  if (d.error != cudaSuccess) {
    int current = -1;
    if (saved->device >= 0 && cudaGetDevice(&current) == cudaSuccess && current != saved->device)
      cudaSetDevice(saved->device);
    cudaGetLastError();
    return;
  }
  CUcontext current = nullptr;
  if (d.get_current(&current) != CUDA_SUCCESS || current == saved->context)
    return;
  if (saved->context) {
    d.set_current(static_cast<CUcontext>(saved->context));
    return;
  }
  /* None was current: the runtime would have bound the primary context of the thread's runtime
   * device at its next call. Where that is the one current now, nothing differs for the caller. */
  const int device = saved->device;
  const bool cached = device >= 0 && device < CUDAFFT_LOAD_DEVICES;
  if (cached && current && primaries[device].load(std::memory_order_relaxed) == current)
    return;
  if (device >= 0 && primary_active(d, device)) {
    use_primary(d, device);
    cudaGetLastError();
    return;
  }
  /* Its primary context was never made: making it now would cost that device a context's memory
   * for nothing. None current, as found (the thread's runtime device is the one last set here,
   * which matters only to a caller whose first CUDA call comes after ours). */
  d.set_current(nullptr);
}

/* Pointers ------------------------------------------------------------------------------------ */

namespace {

/* Whether device `ordinal` reaches pageable host memory (HMM, ATS): asked once per device. */
std::atomic<int> pageable_known[CUDAFFT_LOAD_DEVICES];

int
reaches_pageable(int ordinal)
{
  if (ordinal < 0 || ordinal >= CUDAFFT_LOAD_DEVICES)
    return 0;
  int known = pageable_known[ordinal].load(std::memory_order_relaxed);
  if (known == 0) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, cudaDevAttrPageableMemoryAccess, ordinal) != cudaSuccess) {
      cudaGetLastError();
      value = 0;
    }
    known = value ? 2 : 1;
    pageable_known[ordinal].store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

CudafftStatus
pointer_failure(CUresult result, const char *call)
{
  return cudafft_cuda_failure(runtime_error_of(result), call, __FILE__, __LINE__);
}

} // namespace

extern "C" CudafftStatus
cudafft_cuda_host_pointer_place(int device, const void *ptr, CudafftPointerPlace *place)
{
  *place = CudafftPointerPlace{};
  place->device = -1;
  const Driver &d = driver();
  if (d.error != cudaSuccess) {
    cudaGetLastError();
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE,
                        "cannot tell where memory is: the CUDA driver's %s cannot be had: %s",
                        d.missing, cudaGetErrorString(d.error));
  }
  CudafftKeepCaller keep;
  CUDAFFT_CHECK(cudafft_use_device(device));
  CUcontext object_context = nullptr;
  CUresult result = d.get_current(&object_context);
  if (result != CUDA_SUCCESS)
    return pointer_failure(result, "cuCtxGetCurrent");
  place->object_device = cudafft_context_ordinal(device);
  place->object_context = object_context;
  place->pageable = reaches_pageable(place->object_device);

  /* One driver call for all of it; an address CUDA does not know gives default values, not an
   * error (cuPointerGetAttributes). With the object's context current, the device pointer is the
   * address its kernels reach the memory at (none where they cannot). */
  unsigned memory_type = 0;
  CUcontext context = nullptr;
  unsigned managed = 0; /* the driver writes a bool: zeroed first */
  int ordinal = -1;
  CUdeviceptr start = 0;
  size_t size = 0;
  CUdeviceptr device_pointer = 0;
  void *pool = nullptr;
  CUpointer_attribute attributes[] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_CONTEXT,
      CU_POINTER_ATTRIBUTE_IS_MANAGED,       CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
      CU_POINTER_ATTRIBUTE_DEVICE_POINTER,   CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
  };
  void *data[] = {&memory_type, &context, &managed,        &ordinal,
                  &start,       &size,    &device_pointer, &pool};
  result = d.pointer_attributes(sizeof attributes / sizeof attributes[0], attributes, data,
                                (CUdeviceptr)(uintptr_t)ptr);
  if (result != CUDA_SUCCESS)
    return pointer_failure(result, "cuPointerGetAttributes");
  place->context = context;
  place->device = ordinal;
  place->start = (uintptr_t)start;
  place->size = size;
  if (managed) {
    place->kind = CUDAFFT_PLACE_MANAGED;
  } else if (memory_type == CU_MEMORYTYPE_DEVICE) {
    place->kind = CUDAFFT_PLACE_DEVICE;
    /* pool and virtual memory belong to the device, not to the context that allocated it; the
     * device's contexts reach it where the driver gives an address for the object's */
    place->pooled = pool != nullptr || (!context && device_pointer == (CUdeviceptr)(uintptr_t)ptr);
  } else if (memory_type == CU_MEMORYTYPE_HOST) {
    place->kind = CUDAFFT_PLACE_HOST;
    place->mapped = device_pointer == (CUdeviceptr)(uintptr_t)ptr;
  } else {
    place->kind = CUDAFFT_PLACE_UNKNOWN;
    place->size = 0; /* nothing known to keep */
  }
  return CUDAFFT_STATUS_OK;
}
