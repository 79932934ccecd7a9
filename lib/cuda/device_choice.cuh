/* device_choice.cuh: the device a CUDA backend object is made on, and what every backend asks of
 * it first. Internal to the library; for .cu files only. */
#ifndef CUDAFFT_DEVICE_CHOICE_CUH
#define CUDAFFT_DEVICE_CHOICE_CUH

#include "cuda_check.cuh"

/* The device a backend object runs on: device_id, or device 0 for -1; NO_DEVICE with a message
 * when there is none or no such one. */
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
  if (*device >= count)
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE,
                        "CUDA device %d does not exist: this machine has %d (0 to %d)", *device,
                        count, count - 1);
  return CUDAFFT_STATUS_OK;
}

/* Picks the device for device_id (cudafft_cuda_pick_device) into *device and makes it current;
 * then, unless smem_optin is NULL, reads the most dynamic shared memory a block of it may opt in
 * to, which decides whether a block FFT kernel fits. One attribute, not cudaGetDeviceProperties(),
 * which gathers all of them and is slow. */
static inline CudafftStatus
cudafft_cuda_open_device(int device_id, int *device, int *smem_optin)
{
  const CudafftStatus picked = cudafft_cuda_pick_device(device_id, device);
  if (picked != CUDAFFT_STATUS_OK)
    return picked;
  CUDAFFT_CHECK(cudaSetDevice(*device));
  if (smem_optin)
    CUDAFFT_CHECK(
        cudaDeviceGetAttribute(smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, *device));
  return CUDAFFT_STATUS_OK;
}

#endif
