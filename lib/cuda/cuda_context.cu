/* cuda_context.cu: making a device id's context current (cudafft_use_device(), cuda_check.cuh) and
 * what attaching a context asks of the driver (cudafft_cuda_host_context_device(), cuda_host.h).
 *
 * The runtime API cannot make a context current that it did not make (cudaSetDevice binds the
 * device's primary context), so the driver's context calls are used, found through
 * cudaGetDriverEntryPointByVersion rather than linked: the library must load on machines without
 * the driver (CI), where libcuda is absent. Once a context is current, the runtime's calls
 * (kernels, streams, events, cudaMallocAsync) use it (the CUDA Programming Guide, "Interoperability
 * between Runtime and Driver APIs"). */
#include "contexts.h"
#include "cuda_check.cuh"
#include "cuda_host.h"
#include "device_load.h"
#include "driver_errors.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <pthread.h>

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
  cudaError_t error =
      cudaGetDriverEntryPointByVersion(symbol, &entry, version, cudaEnableDefault, &found);
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
