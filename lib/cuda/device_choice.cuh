/* device_choice.cuh: the device a CUDA backend object is made on, and what every backend asks of
 * it first. Internal to the library; for .cu files only.
 *
 * Which device an object made with device id -1 runs on is decided before a backend object is
 * made, in one place for every engine: cudafft_create_on_backend() (lib/common/backend_choice.c)
 * by the rule of lib/common/devices.h. On a host with two devices or more a new object goes to
 * the device whose objects hold the fewest bytes of state (the executor's allocations), then the
 * one with the fewest objects, then the one with the most free memory, then the lowest id; where
 * it does not fit (or the device fails), the next one by the same rule, and the failure names
 * every device tried. An explicit id pins; with one device -1 is device 0, as it always was. The
 * backends here then see a real id, except where a caller inside the library passes -1 itself
 * (cudafft_executor_acquire(-1) in the tests), which is device 0.
 *
 * An id may also be an attached context's (cudafft/common.h, Contexts; contexts.h): it pins like a
 * device id. An object keeps the id it was made with; cudafft_use_device() makes the id's context
 * current, and whatever needs the physical device (its attributes, memory locations, the load
 * table) takes cudafft_context_ordinal(id). */
#ifndef CUDAFFT_DEVICE_CHOICE_CUH
#define CUDAFFT_DEVICE_CHOICE_CUH

#include "contexts.h"
#include "cuda_check.cuh"

/* The device id a backend object runs on: device_id (as cudafft_create_on_backend() chose it,
 * a context id included), or device 0 for -1; NO_DEVICE with a message when there is none, no such
 * one, or the context id is not attached. */
static inline CudafftStatus
cudafft_cuda_pick_device(int device_id, int *device)
{
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    cudaGetLastError();
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE, "no CUDA device found (cudaGetDeviceCount: %s)",
                        error != cudaSuccess ? cudaGetErrorString(error) : "0 devices");
  }
  *device = device_id < 0 ? 0 : device_id;
  const int ordinal = cudafft_context_ordinal(*device);
  if (*device >= CUDAFFT_CONTEXT_ID_BASE && ordinal < 0)
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE,
                        "CUDA context id %d is not attached (cudafft_cuda_context_attach)",
                        *device);
  if (ordinal >= count)
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE,
                        "CUDA device %d does not exist: this machine has %d (0 to %d)", ordinal,
                        count, count - 1);
  return CUDAFFT_STATUS_OK;
}

/* Picks the device id for device_id (cudafft_cuda_pick_device) into *device and makes its context
 * current; then, unless smem_optin is NULL, reads the most dynamic shared memory a block of it may
 * opt in to, which decides whether a block FFT kernel fits. One attribute, not
 * cudaGetDeviceProperties(), which gathers all of them and is slow. */
static inline CudafftStatus
cudafft_cuda_open_device(int device_id, int *device, int *smem_optin)
{
  const CudafftStatus picked = cudafft_cuda_pick_device(device_id, device);
  if (picked != CUDAFFT_STATUS_OK)
    return picked;
  CUDAFFT_CHECK(cudafft_use_device(*device));
  if (smem_optin)
    CUDAFFT_CHECK(cudaDeviceGetAttribute(smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                         cudafft_context_ordinal(*device)));
  return CUDAFFT_STATUS_OK;
}

#endif
