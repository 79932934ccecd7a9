/* cudafft/fft.h: batched block FFTs on NVIDIA GPUs, with a CPU (FFTW) backend behind the same API.
 *
 * This header is plain C and knows nothing of CUDA, GLib or GStreamer. Statuses, backends, errors
 * and threads: cudafft/common.h.
 *
 * Sizes: n is any size from CUDAFFT_MIN_SIZE (16) to CUDAFFT_MAX_SIZE (16384) whose only prime
 * factors are 2, 3, 5 and 7 (400, 480, 1000, 1536, 3000, ...: cudafft_fft_size_supported());
 * any other is refused with INVALID_SIZE, the message naming the nearest sizes below and above
 * (cudafft_fft_size_nearest()). On the CUDA backend the powers of two from CUDAFFT_FUSED_MIN_SIZE
 * (256) run on kernels of their own (4096 is the tuned path), every other size on one mixed-radix
 * kernel per kind, and the real transforms of odd sizes as complex ones; where a GPU's shared
 * memory cannot hold a transform the plan runs on cuFFT (docs/library.md says where). Both are
 * checked against FFTW in double precision to the same tolerance.
 *
 * Layouts (batch transforms stored back to back, no gaps; n/2 is rounded down):
 *   CUDAFFT_C2C  in and out: batch x n complex values, interleaved (re, im) float pairs.
 *   CUDAFFT_R2C  in: batch x n floats; out: batch x (n/2 + 1) complex values (bins 0..n/2).
 *   CUDAFFT_C2R  in: batch x (n/2 + 1) complex values; out: batch x n floats. The imaginary parts
 *                of bin 0 and, for even n, bin n/2 are ignored, as FFTW does.
 *   C2C may run in place (in == out); otherwise in and out must not overlap. Inputs are never
 *   written (unlike FFTW's and cuFFT's complex-to-real transforms).
 *
 * Scaling: every execute call multiplies its output by `scale`. Both directions are otherwise
 * unnormalised: X[k] = sum_j x[j] e^(-2 pi i jk/n) forward, x[j] = sum_k X[k] e^(+2 pi i jk/n)
 * inverse, so a forward transform with scale 1 followed by an inverse with scale 1/n is the
 * identity.
 *
 * Streams: each CUDA plan owns one CUDA stream. cudafft_execute_device() queues the work on it and
 * returns without waiting; cudafft_execute() returns when the output is in host memory. A plan
 * queues its kernels through CUDA graphs that it keeps for the buffers, batch and scale of its
 * last few calls (the cheapest launch for the host), so that repeated calls on the same buffers
 * cost least; the plan's stream may also be captured into a graph of the caller's
 * (cudaStreamBeginCapture), which then records the transform's kernel.
 *
 * Threads: one plan must not be used by two threads at once (cudafft/common.h).
 */
#ifndef CUDAFFT_FFT_H
#define CUDAFFT_FFT_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CUDAFFT_C2C = 0,
  CUDAFFT_R2C, /* forward only */
  CUDAFFT_C2R, /* inverse only */
} CudafftKind;

typedef enum {
  CUDAFFT_FORWARD = -1, /* e^(-2 pi i jk/n) */
  CUDAFFT_INVERSE = 1,  /* e^(+2 pi i jk/n) */
} CudafftDirection;

typedef struct CudafftPlan CudafftPlan;

/* Creates a plan for transforms of length n. device_id selects the CUDA device (-1: the library
 * chooses, device 0 on a host with one GPU: cudafft/common.h, Devices) and is ignored by the CPU
 * backend. On failure *plan is set to NULL. */
CUDAFFT_API CudafftStatus cudafft_plan_create(CudafftPlan **plan, CudafftBackend backend,
                                              int device_id, CudafftKind kind, size_t n);

/* Releases everything the plan holds; NULL is allowed. Waits for the plan's queued work. */
CUDAFFT_API void cudafft_plan_destroy(CudafftPlan *plan);

/* The backend the plan runs on (never CUDAFFT_BACKEND_AUTO; AUTO only for a NULL plan). */
CUDAFFT_API CudafftBackend cudafft_plan_get_backend(const CudafftPlan *plan);
/* The CUDA device the plan runs on (the one asked for, or for -1 the one the library chose:
 * cudafft/common.h, Devices); -1 for the CPU backend and a NULL plan. */
CUDAFFT_API int cudafft_plan_get_device(const CudafftPlan *plan);
CUDAFFT_API CudafftKind cudafft_plan_get_kind(const CudafftPlan *plan);
CUDAFFT_API size_t cudafft_plan_get_size(const CudafftPlan *plan);

/* Number of floats one transform reads and writes, for this plan's kind (2n for complex data,
 * n for real data, 2 (n/2 + 1) for the bins of a real transform: n + 2 for even n, n + 1 for odd
 * n). */
CUDAFFT_API size_t cudafft_plan_input_floats(const CudafftPlan *plan);
CUDAFFT_API size_t cudafft_plan_output_floats(const CudafftPlan *plan);

/* Runs batch transforms over host memory and returns when out holds the result. The CUDA backend
 * copies through pinned staging buffers of its own, in chunks, overlapping the copies of one chunk
 * with the transforms of another; host buffers allocated with cudafft_host_alloc() are copied
 * directly. Any byte alignment is accepted. */
CUDAFFT_API CudafftStatus cudafft_execute(CudafftPlan *plan, CudafftDirection direction,
                                          const void *in, void *out, size_t batch, float scale);

/* CUDA backend only: runs batch transforms over device memory, queued on the plan's stream, and
 * returns at once. in and out must be 16-byte aligned (cudaMalloc's pointers are), on the plan's
 * device: make a plan for device memory with that memory's device id (with -1, a host of several
 * GPUs may place it on another; cudafft_plan_get_device() says where it went). Memory the plan's
 * kernels cannot reach (another device's or context's: cudafft/common.h, Device memory) fails with
 * WRONG_DEVICE_MEMORY before anything is queued. */
CUDAFFT_API CudafftStatus cudafft_execute_device(CudafftPlan *plan, CudafftDirection direction,
                                                 const void *d_in, void *d_out, size_t batch,
                                                 float scale);

/* Waits until the plan's queued work is done (CPU backend: returns at once). */
CUDAFFT_API CudafftStatus cudafft_plan_synchronize(CudafftPlan *plan);

/* CUDA backend only: the plan's cudaStream_t, as a pointer; NULL for the CPU backend. */
CUDAFFT_API void *cudafft_plan_get_cuda_stream(const CudafftPlan *plan);

/* Host memory for fast copies: page-locked on the CUDA backend (then cudafft_execute copies it
 * directly), plain 64-byte aligned memory on the CPU backend. It may outlive the plan that
 * made it: free it with cudafft_host_free() on any plan of the same backend. */
CUDAFFT_API CudafftStatus cudafft_host_alloc(CudafftPlan *plan, size_t bytes, void **ptr);
CUDAFFT_API void cudafft_host_free(CudafftPlan *plan, void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_FFT_H */
