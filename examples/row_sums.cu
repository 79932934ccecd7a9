/* row_sums.cu: see the header. One block a row; each thread sums a strided share of the row's
 * bytes, then the block adds the shares. */
#include "row_sums.h"

#include <cuda_runtime.h>

#include <stdio.h>

namespace {

constexpr int kThreads = 256;

__global__ void
row_sums_kernel(const unsigned char *frame, size_t pitch, size_t row_bytes,
                unsigned long long *sums)
{
  const unsigned char *row = frame + (size_t)blockIdx.x * pitch;
  unsigned long long sum = 0;
  for (size_t i = threadIdx.x; i < row_bytes; i += kThreads)
    sum += row[i];
  __shared__ unsigned long long shares[kThreads];
  shares[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half)
      shares[threadIdx.x] += shares[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    sums[blockIdx.x] = shares[0];
}

int
failed(cudaError_t error, const char *call, char *text, size_t size)
{
  snprintf(text, size, "%s: %s", call, cudaGetErrorString(error));
  return -1;
}

} // namespace

extern "C" int
row_sums_on_device(const void *frame, size_t pitch, size_t row_bytes, size_t rows, uint64_t *sums,
                   char *error, size_t error_size)
{
  unsigned long long *device_sums = nullptr;
  cudaError_t status = cudaMalloc(&device_sums, rows * sizeof *device_sums);
  if (status != cudaSuccess)
    return failed(status, "cudaMalloc", error, error_size);
  row_sums_kernel<<<(unsigned)rows, kThreads>>>(static_cast<const unsigned char *>(frame), pitch,
                                                row_bytes, device_sums);
  status = cudaGetLastError();
  if (status == cudaSuccess)
    status = cudaMemcpy(sums, device_sums, rows * sizeof *device_sums, cudaMemcpyDeviceToHost);
  cudaFree(device_sums);
  return status == cudaSuccess ? 0 : failed(status, "row_sums_kernel", error, error_size);
}
