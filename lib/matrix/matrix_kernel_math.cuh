/* matrix_kernel_math.cuh: what one thread of each matrix kernel computes (matrix_kernels.h says
 * what the kernels do), as host-and-device functions, so that tests/test_matrix_kernels.cu runs the
 * very same arithmetic and indexing on the host, every thread in turn, against the
 * double-precision model where no GPU is. Internal to the library; for .cu files only. */
#ifndef CUDAFFT_MATRIX_KERNEL_MATH_CUH
#define CUDAFFT_MATRIX_KERNEL_MATH_CUH

#include "matrix_kernels.h"

#include <cuda_runtime.h>
#include <type_traits>

template <typename R>
using MatrixComplex = std::conditional_t<std::is_same_v<R, float>, float2, double2>;

/* Input i's transform input, t of 0..L-1: time[i][t] = prev[i][t], time[i][L + t] = this block's
 * sample t (in NULL: zeros), and prev[i][t] becomes it. */
template <typename R>
__host__ __device__ inline void
matrix_frame_input_at(unsigned t, unsigned i, const R *in, R *prev, R *time, unsigned inputs,
                      unsigned L)
{
  const R v = in ? in[(size_t)t * inputs + i] : R(0);
  R *row = time + (size_t)i * 2 * L;
  row[t] = prev[(size_t)i * L + t];
  row[L + t] = v;
  prev[(size_t)i * L + t] = v;
}

/* Spectrum c's packed value k from its L + 1 bins: bin k, and at k = 0 bin L's real part where bin
 * 0's imaginary part (zero for a real signal) was. */
template <typename R>
__host__ __device__ inline void
matrix_pack_at(unsigned k, size_t c, const MatrixComplex<R> *bins, MatrixComplex<R> *packed,
               unsigned L)
{
  const MatrixComplex<R> *from = bins + c * (L + 1);
  MatrixComplex<R> v = from[k];
  if (k == 0)
    v.y = from[L].x;
  packed[c * L + k] = v;
}

/* The bins one thread of the multiply-accumulate takes: two for F32 at block sizes of 64 and more,
 * each spectrum's two values read as one 16-byte load (a warp's load then covers 512 contiguous
 * bytes of the response spectra, twice the bytes in flight of a bin a thread: the kernel streams
 * them from memory); one otherwise. */
template <typename R>
__host__ __device__ inline unsigned
matrix_bins_per_thread(unsigned L)
{
  return std::is_same_v<R, float> && L >= 64 ? 2 : 1;
}

/* v = the W packed values from p (W = 2: one 16-byte load; p 16-byte aligned). */
template <typename R, unsigned W>
__host__ __device__ inline void
matrix_load_bins(const MatrixComplex<R> *p, MatrixComplex<R> (&v)[W])
{
  if constexpr (W == 2) {
    static_assert(std::is_same_v<R, float>, "two bins a thread for float spectra only");
    const float4 q = *reinterpret_cast<const float4 *>(p);
    v[0] = make_float2(q.x, q.y);
    v[1] = make_float2(q.z, q.w);
  } else {
    v[0] = *p;
  }
}

/* Packed bins k0 .. k0 + W - 1 of row `row` (set row / outputs, output row % outputs) over the
 * partitions of split `split` of `splits`: the sum over the output's entries of X[slot - p] H[p], p
 * in the split's range, bin 0's two real bins multiplied apart. */
template <typename R, unsigned W>
__host__ __device__ inline void
matrix_accumulate_bins_at(unsigned k0, unsigned row, unsigned split, const MatrixComplex<R> *fdl,
                          size_t cap, size_t slot, unsigned inputs, unsigned outputs, unsigned rows,
                          unsigned L, const MatrixDeviceSet &set0, const MatrixDeviceSet &set1,
                          unsigned splits, MatrixComplex<R> *partial)
{
  const unsigned j = row % outputs;
  const MatrixDeviceSet &set = row < outputs ? set0 : set1;
  const unsigned p0 = (unsigned)((unsigned long long)set.parts * split / splits);
  const unsigned p1 = (unsigned)((unsigned long long)set.parts * (split + 1) / splits);
  const MatrixComplex<R> *spectra = static_cast<const MatrixComplex<R> *>(set.spectra);
  const size_t slot_stride = (size_t)inputs * L;
  const bool packed_dc = k0 == 0;
  R re[W] = {}, im[W] = {};
  for (unsigned e = set.first[j]; e < set.first[j + 1]; e++) {
    const MatrixDeviceEntry entry = set.entry[e];
    const unsigned end = p1 < entry.parts ? p1 : entry.parts;
    if (p0 >= end)
      continue;
    const MatrixComplex<R> *h = spectra + (entry.offset + p0) * L + k0;
    const MatrixComplex<R> *x = fdl + (size_t)entry.input * L + k0;
    size_t q = (slot + cap - p0) % cap;
#ifdef __CUDA_ARCH__
#pragma unroll 4
#endif
    for (unsigned p = p0; p < end; p++) {
      MatrixComplex<R> a[W], b[W];
      matrix_load_bins<R, W>(x + q * slot_stride, a);
      matrix_load_bins<R, W>(h, b);
      h += L;
      q = q ? q - 1 : cap - 1;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
      for (unsigned w = 0; w < W; w++) {
        if (packed_dc && w == 0) {
          re[w] += a[w].x * b[w].x;
          im[w] += a[w].y * b[w].y;
        } else {
          re[w] += a[w].x * b[w].x - a[w].y * b[w].y;
          im[w] += a[w].x * b[w].y + a[w].y * b[w].x;
        }
      }
    }
  }
  MatrixComplex<R> *to = partial + ((size_t)split * rows + row) * L + k0;
  if constexpr (W == 2) {
    *reinterpret_cast<float4 *>(to) = make_float4(re[0], im[0], re[1], im[1]);
  } else {
    to->x = re[0];
    to->y = im[0];
  }
}

/* What thread t along the bins of the multiply-accumulate computes (L / matrix_bins_per_thread
 * threads a row). */
template <typename R>
__host__ __device__ inline void
matrix_accumulate_at(unsigned t, unsigned row, unsigned split, const MatrixComplex<R> *fdl,
                     size_t cap, size_t slot, unsigned inputs, unsigned outputs, unsigned rows,
                     unsigned L, const MatrixDeviceSet &set0, const MatrixDeviceSet &set1,
                     unsigned splits, MatrixComplex<R> *partial)
{
  if constexpr (std::is_same_v<R, float>) {
    if (matrix_bins_per_thread<R>(L) == 2) {
      matrix_accumulate_bins_at<R, 2>(2 * t, row, split, fdl, cap, slot, inputs, outputs, rows, L,
                                      set0, set1, splits, partial);
      return;
    }
  }
  matrix_accumulate_bins_at<R, 1>(t, row, split, fdl, cap, slot, inputs, outputs, rows, L, set0,
                                  set1, splits, partial);
}

/* Bin k of row `row`'s spectrum (L + 1 bins: the inverse transform's input): the sum of the splits
 * in split order, bin 0's packed value unpacked to bins 0 and L. */
template <typename R>
__host__ __device__ inline void
matrix_sum_splits_at(unsigned k, unsigned row, const MatrixComplex<R> *partial, unsigned splits,
                     unsigned rows, unsigned L, MatrixComplex<R> *bins)
{
  R re = 0, im = 0;
  for (unsigned s = 0; s < splits; s++) {
    const MatrixComplex<R> v = partial[((size_t)s * rows + row) * L + k];
    re += v.x;
    im += v.y;
  }
  MatrixComplex<R> *to = bins + (size_t)row * (L + 1);
  if (k == 0) {
    to[0].x = re;
    to[0].y = 0;
    to[L].x = im;
    to[L].y = 0;
  } else {
    to[k].x = re;
    to[k].y = im;
  }
}

/* Interleaved output value n (frame n / outputs, output n % outputs): the second half of the
 * output's inverse transform, crossed over from set 0's to set 1's where fade. */
template <typename R>
__host__ __device__ inline void
matrix_emit_at(size_t n, const R *time, R *out, unsigned outputs, unsigned L, int fade)
{
  const unsigned t = (unsigned)(n / outputs), j = (unsigned)(n % outputs);
  const R a = time[(size_t)j * 2 * L + L + t];
  if (fade) {
    const R b = time[((size_t)outputs + j) * 2 * L + L + t];
    out[n] = matrix_blend<R>(a, b, t, L);
  } else {
    out[n] = a;
  }
}

#endif
