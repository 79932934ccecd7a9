/* matrix_kernels.cu: the matrix convolution's kernels (matrix_kernels.h says what each does; each
 * thread's work is in matrix_kernel_math.cuh, which the tests also run on the host). The fused
 * multiply-accumulate reads every response spectrum once per block, which is its floor: a thread
 * per (output, bin, split of the partitions), its loads along the bins coalesced, each split's sums
 * written apart and added in a second small kernel, so that the sum's order (and so its rounding)
 * is the same on every run. */
#include "matrix_kernels.h"
#include "matrix_kernel_math.cuh"

#include "cuda_check.cuh"
#include "device_memory.h"
#include "errors.h"

#include <new>
#include <type_traits>

namespace {

template <typename R> using Complex = MatrixComplex<R>;

constexpr unsigned kThreads = 128;

/* The multiply-accumulate's thread blocks: a warp per output, 32 threads along the bins (each one
 * or two bins: matrix_bins_per_thread), kRowsPerBlock outputs a block. Outputs fed by the same
 * inputs (a dense matrix) walk the same delay-line spectra in the same order, so a block's warps
 * share their loads of them through L1: the delay line is read from L2 about once per block of
 * outputs instead of once per output, and the response spectra, read once each, keep the memory
 * busy. */
constexpr unsigned kRowsPerBlock = 4;

/* Threads a launch should give the GPU to keep its memory busy (a large GPU holds about 2^18
 * resident threads); more splits past that only add partial sums. */
constexpr size_t kTargetThreads = size_t(1) << 19;

unsigned
grid_for(size_t count)
{
  return (unsigned)((count + kThreads - 1) / kThreads);
}

template <typename R>
__global__ void
frame_inputs_kernel(const R *__restrict__ in, R *__restrict__ prev, R *__restrict__ time,
                    unsigned inputs, unsigned L)
{
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < L)
    matrix_frame_input_at<R>(t, blockIdx.y, in, prev, time, inputs, L);
}

template <typename R>
__global__ void
pack_kernel(const Complex<R> *__restrict__ bins, Complex<R> *__restrict__ packed, unsigned L)
{
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < L)
    matrix_pack_at<R>(k, blockIdx.y, bins, packed, L);
}

template <typename R>
__global__ void
accumulate_kernel(const Complex<R> *__restrict__ fdl, size_t cap, size_t slot, unsigned inputs,
                  unsigned outputs, unsigned rows, unsigned L, MatrixDeviceSet set0,
                  MatrixDeviceSet set1, unsigned splits, Complex<R> *__restrict__ partial)
{
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
  if (t < L / matrix_bins_per_thread<R>(L) && row < rows)
    matrix_accumulate_at<R>(t, row, blockIdx.z, fdl, cap, slot, inputs, outputs, rows, L, set0,
                            set1, splits, partial);
}

template <typename R>
__global__ void
sum_splits_kernel(const Complex<R> *__restrict__ partial, unsigned splits, unsigned rows,
                  unsigned L, Complex<R> *__restrict__ bins)
{
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < L)
    matrix_sum_splits_at<R>(k, blockIdx.y, partial, splits, rows, L, bins);
}

template <typename R>
__global__ void
emit_kernel(const R *__restrict__ time, R *__restrict__ out, unsigned outputs, unsigned L, int fade)
{
  const size_t n = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (n < (size_t)L * outputs)
    matrix_emit_at<R>(n, time, out, outputs, L, fade);
}

} // namespace

unsigned
cudafft_matrix_splits(unsigned outputs, size_t L, unsigned parts)
{
  size_t splits = (kTargetThreads + (size_t)outputs * L - 1) / ((size_t)outputs * L);
  if (splits > parts)
    splits = parts;
  if (splits > 1024)
    splits = 1024;
  return splits ? (unsigned)splits : 1;
}

template <typename R>
cudaError_t
MatrixKernels<R>::frame_inputs(const R *in, R *prev, R *time, unsigned inputs, size_t L,
                               cudaStream_t stream)
{
  frame_inputs_kernel<R>
      <<<dim3(grid_for(L), inputs), kThreads, 0, stream>>>(in, prev, time, inputs, (unsigned)L);
  return cudaGetLastError();
}

template <typename R>
cudaError_t
MatrixKernels<R>::pack(const void *bins, void *packed, size_t count, size_t L, cudaStream_t stream)
{
  for (size_t done = 0; done < count; done += 65535) { /* gridDim.y's limit */
    const size_t now = count - done < 65535 ? count - done : 65535;
    pack_kernel<R><<<dim3(grid_for(L), (unsigned)now), kThreads, 0, stream>>>(
        static_cast<const Complex<R> *>(bins) + done * (L + 1),
        static_cast<Complex<R> *>(packed) + done * L, (unsigned)L);
  }
  return cudaGetLastError();
}

template <typename R>
cudaError_t
MatrixKernels<R>::accumulate(const void *fdl, size_t cap, size_t slot, unsigned inputs,
                             unsigned outputs, size_t L, const MatrixDeviceSet *sets,
                             unsigned set_count, unsigned splits, void *partial, void *bins,
                             cudaStream_t stream)
{
  const unsigned rows = outputs * set_count;
  const dim3 block(32, kRowsPerBlock);
  const size_t threads = L / matrix_bins_per_thread<R>((unsigned)L); /* along the bins: >= 32 */
  const dim3 grid((unsigned)(threads / 32), (rows + kRowsPerBlock - 1) / kRowsPerBlock, splits);
  accumulate_kernel<R><<<grid, block, 0, stream>>>(
      static_cast<const Complex<R> *>(fdl), cap, slot, inputs, outputs, rows, (unsigned)L, sets[0],
      sets[set_count > 1 ? 1 : 0], splits, static_cast<Complex<R> *>(partial));
  sum_splits_kernel<R><<<dim3(grid_for(L), rows), kThreads, 0, stream>>>(
      static_cast<const Complex<R> *>(partial), splits, rows, (unsigned)L,
      static_cast<Complex<R> *>(bins));
  return cudaGetLastError();
}

template <typename R>
cudaError_t
MatrixKernels<R>::emit(const R *time, R *out, unsigned outputs, size_t L, int fade,
                       cudaStream_t stream)
{
  emit_kernel<R>
      <<<grid_for(L * outputs), kThreads, 0, stream>>>(time, out, outputs, (unsigned)L, fade);
  return cudaGetLastError();
}

template struct MatrixKernels<float>;
template struct MatrixKernels<double>;

namespace {

template <typename R>
CudafftStatus
time_accumulate(unsigned inputs, unsigned outputs, size_t L, unsigned parts, unsigned iterations,
                double *seconds, double *bytes)
{
  const size_t entries = (size_t)inputs * outputs, spectra_count = entries * parts;
  const size_t value = sizeof(Complex<R>);
  const unsigned splits = cudafft_matrix_splits(outputs, L, parts);
  void *spectra = nullptr, *fdl = nullptr, *partial = nullptr, *bins = nullptr;
  void *entry = nullptr, *first = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  MatrixDeviceEntry *host_entry = new (std::nothrow) MatrixDeviceEntry[entries];
  unsigned *host_first = new (std::nothrow) unsigned[outputs + 1];
  if (!host_entry || !host_first) {
    delete[] host_entry;
    delete[] host_first;
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot list a benchmark matrix");
  }
  for (unsigned j = 0; j <= outputs; j++)
    host_first[j] = j * inputs;
  for (size_t e = 0; e < entries; e++)
    host_entry[e] = MatrixDeviceEntry{(unsigned)(e % inputs), parts, e * parts};
  do {
    if ((status = cudafft_device_alloc(&spectra, spectra_count * L * value, "benchmark spectra")) ||
        (status = cudafft_device_alloc(&fdl, (size_t)parts * inputs * L * value, "delay line")) ||
        (status = cudafft_device_alloc(&partial, (size_t)splits * outputs * L * value, "sums")) ||
        (status = cudafft_device_alloc(&bins, (size_t)outputs * (L + 1) * value, "bins")) ||
        (status = cudafft_device_alloc(&entry, entries * sizeof *host_entry, "entries")) ||
        (status = cudafft_device_alloc(&first, (outputs + 1) * sizeof *host_first, "entries")))
      break;
    auto check = [&](cudaError_t error) {
      if (error != cudaSuccess && status == CUDAFFT_STATUS_OK)
        status = cudafft_fail(CUDAFFT_STATUS_CUDA_ERROR, "matrix kernel benchmark: %s",
                              cudaGetErrorString(error));
      return status == CUDAFFT_STATUS_OK;
    };
    if (!check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) ||
        !check(cudaEventCreate(&start)) || !check(cudaEventCreate(&stop)) ||
        !check(cudaMemset(spectra, 0x3c, spectra_count * L * value)) ||
        !check(cudaMemset(fdl, 0x3c, (size_t)parts * inputs * L * value)) ||
        !check(
            cudaMemcpy(entry, host_entry, entries * sizeof *host_entry, cudaMemcpyHostToDevice)) ||
        !check(cudaMemcpy(first, host_first, (outputs + 1) * sizeof *host_first,
                          cudaMemcpyHostToDevice)))
      break;
    const MatrixDeviceSet set = {spectra, static_cast<const MatrixDeviceEntry *>(entry),
                                 static_cast<const unsigned *>(first), parts};
    /* warm-up, then the timed runs, the slot moving as it does from block to block */
    if (!check(MatrixKernels<R>::accumulate(fdl, parts, 0, inputs, outputs, L, &set, 1, splits,
                                            partial, bins, stream)) ||
        !check(cudaEventRecord(start, stream)))
      break;
    for (unsigned n = 0; n < iterations && status == CUDAFFT_STATUS_OK; n++)
      check(MatrixKernels<R>::accumulate(fdl, parts, n % parts, inputs, outputs, L, &set, 1, splits,
                                         partial, bins, stream));
    float ms = 0;
    if (!check(cudaEventRecord(stop, stream)) || !check(cudaEventSynchronize(stop)) ||
        !check(cudaEventElapsedTime(&ms, start, stop)))
      break;
    *seconds = ms * 1e-3 / (iterations ? iterations : 1);
    *bytes = (double)spectra_count * (double)L * (double)value;
  } while (0);
  if (start)
    cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  if (stream)
    cudaStreamDestroy(stream);
  cudafft_device_free({spectra, fdl, partial, bins, entry, first});
  delete[] host_entry;
  delete[] host_first;
  return status;
}

} // namespace

extern "C" CudafftStatus
cudafft_matrix_kernel_time(int device, unsigned inputs, unsigned outputs, size_t L, unsigned parts,
                           CudafftSampleFormat format, unsigned iterations, double *seconds,
                           double *bytes)
{
  CUDAFFT_CHECK(cudaSetDevice(device));
  return format == CUDAFFT_SAMPLE_F64
             ? time_accumulate<double>(inputs, outputs, L, parts, iterations, seconds, bytes)
             : time_accumulate<float>(inputs, outputs, L, parts, iterations, seconds, bytes);
}
