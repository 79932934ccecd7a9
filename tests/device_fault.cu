/* device_fault.cu: see device_fault.h. */
#include "device_fault.h"

#include <cuda_runtime.h>

namespace {

/* Stops the kernel with a trap: the device reports it as a launch failure, sticky for the
 * context. */
__global__ void
trap_kernel(void)
{
  __trap();
}

} // namespace

extern "C" int
device_fault_break(int device, int elsewhere, DeviceFault *report)
{
  *report = DeviceFault{};
  report->count = -1;
  report->launch = cudaSetDevice(device);
  if (report->launch == cudaSuccess) {
    trap_kernel<<<1, 1>>>();
    report->launch = cudaGetLastError();
  }
  /* Only a kernel that started can trap: a refused launch (no image for this device, say) leaves
   * the device as it was, and the waits then say so by succeeding. */
  report->fault = cudaDeviceSynchronize();
  report->again = cudaDeviceSynchronize();

  report->last_first = cudaGetLastError();
  report->last_second = cudaGetLastError();
  int current = -1;
  report->get_device = cudaGetDevice(&current);
  int count = 0;
  report->count_error = cudaGetDeviceCount(&count);
  if (report->count_error == cudaSuccess)
    report->count = count;

  report->set_elsewhere = cudaSetDevice(elsewhere);
  report->elsewhere_last_first = cudaGetLastError();
  report->elsewhere_last_second = cudaGetLastError();
  size_t free_bytes = 0, total = 0;
  report->elsewhere_call = cudaMemGetInfo(&free_bytes, &total);
  /* The library's calls start from a thread whose last error is read off, as far as this runtime
   * lets it be (reported above). */
  cudaGetLastError();
  return report->fault != cudaSuccess && report->again != cudaSuccess;
}
