/* device_fault.h: breaks a CUDA device on purpose with a sticky error, for
 * tests/test_device_errors.c's last part (what the library promises after a sticky error).
 *
 * How: a kernel that executes __trap() is launched on the device's legacy default stream, in its
 * primary context, the context the runtime API gives every thread that makes the device current,
 * and so the one the library's objects and executor use (it makes devices current with
 * cudaSetDevice and never creates a context of its own: lib/cuda/cuda_check.cuh,
 * lib/cuda/device_choice.cuh). The trap is a sticky error (cudaErrorLaunchFailure or a kin, by
 * driver), and CUDA's rule for it (the runtime API's error types) is that "any further CUDA work
 * will return the same error. To continue using CUDA, the process must be terminated and
 * relaunched": the other devices' work in the process fails too (on two H200s with CUDA 13, a
 * cudaMemGetInfo with device 0 current returns cudaErrorLaunchFailure after the trap on device 1).
 *
 * Besides breaking the device, it reports how this runtime behaves around the broken context,
 * for the test to print: what a thread whose current device is the broken one gets from
 * cudaGetLastError (twice: whether the error can be read off), cudaGetDevice and
 * cudaGetDeviceCount, and what it gets once another device is current again (cudaGetLastError
 * twice, and a call on that device). The library's own calls meet the same runtime.
 *
 * Plain C interface to CUDA code (device_fault.cu). */
#ifndef CUDAFFT_DEVICE_FAULT_H
#define CUDAFFT_DEVICE_FAULT_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  cudaError_t launch; /* cudaSetDevice, then cudaGetLastError right after the launch */
  cudaError_t fault;  /* cudaDeviceSynchronize after it: the trap, once the kernel ran */
  cudaError_t again;  /* a second cudaDeviceSynchronize: the same error where it stays */
  /* With the broken device current: */
  cudaError_t last_first, last_second; /* cudaGetLastError twice */
  cudaError_t get_device;              /* cudaGetDevice */
  cudaError_t count_error;             /* cudaGetDeviceCount, and the count it gave (-1: none) */
  int count;
  /* Once `elsewhere` is current again: */
  cudaError_t set_elsewhere;                               /* cudaSetDevice(elsewhere) */
  cudaError_t elsewhere_last_first, elsewhere_last_second; /* cudaGetLastError twice */
  cudaError_t elsewhere_call; /* cudaMemGetInfo there: whether that device still works */
} DeviceFault;

/* Breaks `device` (see the top) and leaves `elsewhere` current on the calling thread, every
 * outcome in *report. Returns whether the device is broken: the trap's wait failed and a second
 * wait failed again (an error that stays). */
int device_fault_break(int device, int elsewhere, DeviceFault *report);

#ifdef __cplusplus
}
#endif

#endif
