/* cudafft.h: batched block FFTs on NVIDIA GPUs, with a CPU (FFTW) backend behind the same API.
 *
 * This header is plain C and knows nothing of CUDA, GLib or GStreamer.
 *
 * Sizes: n is a power of two from CUDAFFT_MIN_SIZE (256) to CUDAFFT_MAX_SIZE (16384); 4096 is the
 * tuned path.
 *
 * Layouts (batch transforms stored back to back, no gaps):
 *   CUDAFFT_C2C  in and out: batch x n complex values, interleaved (re, im) float pairs.
 *   CUDAFFT_R2C  in: batch x n floats; out: batch x (n/2 + 1) complex values (bins 0..n/2).
 *   CUDAFFT_C2R  in: batch x (n/2 + 1) complex values; out: batch x n floats. The imaginary parts
 *                of bins 0 and n/2 are ignored, as FFTW does.
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
 * Threads: one plan must not be used by two threads at once; different plans may be used from
 * different threads concurrently. The functions that take no plan are thread-safe. The CPU
 * backend serialises its own calls into FFTW's planner; an application that also plans with
 * FFTW (single precision) on other threads must hold off while cudafft plans are created.
 *
 * Errors: every function returns a status; none prints, aborts or exits. The detail of the last
 * failure on the calling thread (which call failed, with CUDA's own words) is available from
 * cudafft_last_error_message(). Functions that take a plan require a non-NULL one unless they say
 * otherwise.
 */
#ifndef CUDAFFT_H
#define CUDAFFT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAFFT_MIN_SIZE 256
#define CUDAFFT_MAX_SIZE 16384

typedef enum {
  CUDAFFT_STATUS_OK = 0,
  CUDAFFT_STATUS_INVALID_SIZE,  /* n not a power of two in [MIN_SIZE, MAX_SIZE] */
  CUDAFFT_STATUS_INVALID_BATCH, /* batch is 0, or so large that byte counts overflow */
  CUDAFFT_STATUS_NULL_POINTER,  /* a required pointer is NULL */
  CUDAFFT_STATUS_INVALID_VALUE, /* an argument out of its range (direction, alignment...) */
  CUDAFFT_STATUS_UNSUPPORTED,   /* the call does not exist for this backend */
  CUDAFFT_STATUS_NO_DEVICE,     /* no usable CUDA device (none, no driver, bad device id) */
  CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY,
  CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
  CUDAFFT_STATUS_CUDA_ERROR,          /* any other CUDA failure; see cudafft_last_error_message() */
  CUDAFFT_STATUS_BACKEND_UNAVAILABLE, /* the backend was not built into this library */
  CUDAFFT_STATUS_COUNT_               /* not a status: the number of statuses */
} CudafftStatus;

typedef enum {
  CUDAFFT_BACKEND_AUTO = 0, /* CUDA when the device is usable, otherwise CPU (also when the
                               requested device id does not exist) */
  CUDAFFT_BACKEND_CUDA,
  CUDAFFT_BACKEND_CPU,
} CudafftBackend;

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

/* A short lower-case name for each status ("invalid size", "no CUDA device", ...); never NULL. */
const char *cudafft_status_name(CudafftStatus status);

/* What the last failed call on this thread said in detail; "" if none failed yet. Successful
 * calls leave it unchanged; the text stays valid until the next failing call on this thread. */
const char *cudafft_last_error_message(void);

/* Number of usable CUDA devices: 0 when there is none, no driver, or no CUDA backend built in. */
int cudafft_cuda_device_count(void);

/* Whether this library was built with the CUDA backend. */
int cudafft_has_cuda_backend(void);

/* Creates a plan for transforms of length n. device_id selects the CUDA device (-1: device 0) and
 * is ignored by the CPU backend. On failure *plan is set to NULL. */
CudafftStatus cudafft_plan_create(CudafftPlan **plan, CudafftBackend backend, int device_id,
                                  CudafftKind kind, size_t n);

/* Releases everything the plan holds; NULL is allowed. Waits for the plan's queued work. */
void cudafft_plan_destroy(CudafftPlan *plan);

/* The backend the plan runs on (never CUDAFFT_BACKEND_AUTO; AUTO only for a NULL plan). */
CudafftBackend cudafft_plan_get_backend(const CudafftPlan *plan);
CudafftKind cudafft_plan_get_kind(const CudafftPlan *plan);
size_t cudafft_plan_get_size(const CudafftPlan *plan);

/* Number of floats one transform reads and writes, for this plan's kind (2n for complex data,
 * n for real data, n + 2 for the n/2 + 1 bins of a real transform). */
size_t cudafft_plan_input_floats(const CudafftPlan *plan);
size_t cudafft_plan_output_floats(const CudafftPlan *plan);

/* Runs batch transforms over host memory and returns when out holds the result. The CUDA backend
 * copies through pinned staging buffers of its own, in chunks, overlapping the copies of one chunk
 * with the transforms of another; host buffers allocated with cudafft_host_alloc() are copied
 * directly. Any byte alignment is accepted. */
CudafftStatus cudafft_execute(CudafftPlan *plan, CudafftDirection direction, const void *in,
                              void *out, size_t batch, float scale);

/* CUDA backend only: runs batch transforms over device memory, queued on the plan's stream, and
 * returns at once. in and out must be 16-byte aligned (cudaMalloc's pointers are). */
CudafftStatus cudafft_execute_device(CudafftPlan *plan, CudafftDirection direction,
                                     const void *d_in, void *d_out, size_t batch, float scale);

/* Waits until the plan's queued work is done (CPU backend: returns at once). */
CudafftStatus cudafft_plan_synchronize(CudafftPlan *plan);

/* CUDA backend only: the plan's cudaStream_t, as a pointer; NULL for the CPU backend. */
void *cudafft_plan_get_cuda_stream(const CudafftPlan *plan);

/* Host memory for fast copies: page-locked on the CUDA backend (then cudafft_execute copies it
 * directly), plain 64-byte aligned memory on the CPU backend. It may outlive the plan that
 * made it: free it with cudafft_host_free() on any plan of the same backend. */
CudafftStatus cudafft_host_alloc(CudafftPlan *plan, size_t bytes, void **ptr);
void cudafft_host_free(CudafftPlan *plan, void *ptr);

/* Host memory that needs no plan, for buffers that outlive any one plan (the GStreamer elements'
 * buffer pools): page-locked when want_pinned is set and a CUDA device is usable (copies to and
 * from it run at full bus speed and asynchronously), otherwise plain 64-byte aligned memory.
 * *pinned (not NULL) says which it got; pass it back to cudafft_pinned_free(). NULL when out of
 * memory. */
void *cudafft_pinned_alloc(size_t bytes, int want_pinned, int *pinned);
void cudafft_pinned_free(void *ptr, int pinned);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_H */
