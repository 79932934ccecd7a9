/* context_driver.cu: see the header. */
#include "context_driver.h"

#include "driver_entry.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

/* The function symbol at the ABI of `version`, or NULL with why written. */
void *
entry(const char *symbol, unsigned version, char *why, size_t size)
{
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error = cudafft_driver_entry(symbol, version, &fn, &found);
  if (error != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn) {
    snprintf(why, size, "the driver's %s (version %u) cannot be had: %s, query result %d", symbol,
             version, cudaGetErrorString(error), (int)found);
    cudaGetLastError();
    return nullptr;
  }
  return fn;
}

#define ENTRY(type, name, symbol, version)                                                         \
  type name = reinterpret_cast<type>(entry(symbol, version, why, size));                           \
  if (!name)                                                                                       \
  return 0

int
ok(CUresult result, const char *call, char *why, size_t size)
{
  if (result == CUDA_SUCCESS)
    return 1;
  snprintf(why, size, "%s failed: CUresult %d", call, (int)result);
  return 0;
}

CUdeviceptr
dptr(const void *p)
{
  return (CUdeviceptr)(uintptr_t)p;
}

/* Runs work with context current, the thread's own context back after. */
template <typename Work>
int
within(void *context, char *why, size_t size, Work work)
{
  ENTRY(PFN_cuCtxPushCurrent_v4000, push, "cuCtxPushCurrent", 4000);
  ENTRY(PFN_cuCtxPopCurrent_v4000, pop, "cuCtxPopCurrent", 4000);
  if (!ok(push(static_cast<CUcontext>(context)), "cuCtxPushCurrent", why, size))
    return 0;
  const int done = work();
  CUcontext popped = nullptr;
  return ok(pop(&popped), "cuCtxPopCurrent", why, size) && done;
}

} // namespace

extern "C" int
ctxdrv_create(int device, void **context, char *why, size_t size)
{
  *context = nullptr;
  ENTRY(PFN_cuInit_v2000, init, "cuInit", 2000);
  ENTRY(PFN_cuDeviceGet_v2000, device_get, "cuDeviceGet", 2000);
  ENTRY(PFN_cuCtxPopCurrent_v4000, pop, "cuCtxPopCurrent", 4000);
  CUdevice dev = 0;
  if (!ok(init(0), "cuInit", why, size) || !ok(device_get(&dev, device), "cuDeviceGet", why, size))
    return 0;
  /* cuCtxCreate is cuCtxCreate_v4 in CUDA 13's header (12.5's ABI: a parameters struct, here
   * empty: no affinity, no CIG); before 12.5 the newest is cuCtxCreate_v3 (11.4's: affinity
   * parameters, here none), which is what driver_entry.cuh finds there. */
  CUcontext made = nullptr;
#if CUDART_VERSION >= 12050
  ENTRY(PFN_cuCtxCreate_v12050, create, "cuCtxCreate", 12050);
  CUctxCreateParams params;
  memset(&params, 0, sizeof params);
  if (!ok(create(&made, &params, CU_CTX_SCHED_BLOCKING_SYNC, dev), "cuCtxCreate", why, size))
    return 0;
#else
  ENTRY(PFN_cuCtxCreate_v11040, create, "cuCtxCreate", 11040);
  if (!ok(create(&made, nullptr, 0, CU_CTX_SCHED_BLOCKING_SYNC, dev), "cuCtxCreate", why, size))
    return 0;
#endif
  /* cuCtxCreate leaves the new context current: the test makes it current where it means to */
  CUcontext popped = nullptr;
  if (!ok(pop(&popped), "cuCtxPopCurrent", why, size))
    return 0;
  *context = made;
  return 1;
}

extern "C" int
ctxdrv_destroy(void *context, char *why, size_t size)
{
  ENTRY(PFN_cuCtxDestroy_v4000, destroy, "cuCtxDestroy", 4000);
  return ok(destroy(static_cast<CUcontext>(context)), "cuCtxDestroy", why, size);
}

extern "C" int
ctxdrv_primary(int device, void **context, char *why, size_t size)
{
  *context = nullptr;
  ENTRY(PFN_cuDevicePrimaryCtxRetain_v7000, retain, "cuDevicePrimaryCtxRetain", 7000);
  ENTRY(PFN_cuDevicePrimaryCtxRelease_v11000, release, "cuDevicePrimaryCtxRelease", 11000);
  CUcontext primary = nullptr;
  /* made by cudaSetDevice first, so that the release below does not end it */
  if (cudaSetDevice(device) != cudaSuccess) {
    snprintf(why, size, "cudaSetDevice(%d) failed", device);
    return 0;
  }
  if (!ok(retain(&primary, device), "cuDevicePrimaryCtxRetain", why, size))
    return 0;
  *context = primary;
  return ok(release(device), "cuDevicePrimaryCtxRelease", why, size);
}

extern "C" int
ctxdrv_get_current(void **context, char *why, size_t size)
{
  ENTRY(PFN_cuCtxGetCurrent_v4000, get, "cuCtxGetCurrent", 4000);
  CUcontext current = nullptr;
  const int done = ok(get(&current), "cuCtxGetCurrent", why, size);
  *context = current;
  return done;
}

extern "C" int
ctxdrv_set_current(void *context, char *why, size_t size)
{
  ENTRY(PFN_cuCtxSetCurrent_v4000, set, "cuCtxSetCurrent", 4000);
  return ok(set(static_cast<CUcontext>(context)), "cuCtxSetCurrent", why, size);
}

extern "C" int
ctxdrv_alloc(void *context, size_t bytes, void **ptr, char *why, size_t size)
{
  *ptr = nullptr;
  ENTRY(PFN_cuMemAlloc_v3020, alloc, "cuMemAlloc", 3020);
  return within(context, why, size, [&] {
    CUdeviceptr p = 0;
    const int done = ok(alloc(&p, bytes), "cuMemAlloc", why, size);
    *ptr = (void *)(uintptr_t)p;
    return done;
  });
}

extern "C" int
ctxdrv_alloc_pitch(void *context, size_t row_bytes, size_t rows, void **ptr, size_t *pitch,
                   char *why, size_t size)
{
  *ptr = nullptr;
  ENTRY(PFN_cuMemAllocPitch_v3020, alloc, "cuMemAllocPitch", 3020);
  return within(context, why, size, [&] {
    CUdeviceptr p = 0;
    const int done = ok(alloc(&p, pitch, row_bytes, rows, 4), "cuMemAllocPitch", why, size);
    *ptr = (void *)(uintptr_t)p;
    return done;
  });
}

extern "C" int
ctxdrv_free(void *context, void *ptr, char *why, size_t size)
{
  ENTRY(PFN_cuMemFree_v3020, mem_free, "cuMemFree", 3020);
  return within(context, why, size,
                [&] { return ok(mem_free(dptr(ptr)), "cuMemFree", why, size); });
}

extern "C" int
ctxdrv_upload(void *context, void *dst, const void *src, size_t bytes, char *why, size_t size)
{
  ENTRY(PFN_cuMemcpyHtoD_v3020, copy, "cuMemcpyHtoD", 3020);
  return within(context, why, size,
                [&] { return ok(copy(dptr(dst), src, bytes), "cuMemcpyHtoD", why, size); });
}

extern "C" int
ctxdrv_download(void *context, void *dst, const void *src, size_t bytes, char *why, size_t size)
{
  ENTRY(PFN_cuMemcpyDtoH_v3020, copy, "cuMemcpyDtoH", 3020);
  return within(context, why, size,
                [&] { return ok(copy(dst, dptr(src), bytes), "cuMemcpyDtoH", why, size); });
}

extern "C" int
ctxdrv_fill(void *context, void *dst, unsigned char value, size_t bytes, char *why, size_t size)
{
  ENTRY(PFN_cuMemsetD8_v3020, fill, "cuMemsetD8", 3020);
  ENTRY(PFN_cuCtxSynchronize_v2000, sync, "cuCtxSynchronize", 2000);
  return within(context, why, size, [&] {
    return ok(fill(dptr(dst), value, bytes), "cuMemsetD8", why, size) &&
           ok(sync(), "cuCtxSynchronize", why, size);
  });
}

extern "C" int
ctxdrv_pointer_context(const void *ptr, void **context, char *why, size_t size)
{
  *context = nullptr;
  ENTRY(PFN_cuPointerGetAttribute_v4000, get, "cuPointerGetAttribute", 4000);
  CUcontext owner = nullptr;
  const int done = ok(get(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, dptr(ptr)),
                      "cuPointerGetAttribute(CONTEXT)", why, size);
  *context = owner;
  return done;
}
