/* fft_backend.h: what the plan front end (fft_plan.c) needs from a backend. Internal. */
#ifndef CUDAFFT_FFT_BACKEND_H
#define CUDAFFT_FFT_BACKEND_H

#include "cudafft.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudafftBackendOps CudafftBackendOps;

struct CudafftPlan {
  CudafftBackend backend;
  CudafftKind kind;
  size_t n;
  const CudafftBackendOps *ops;
  void *impl; /* the backend's own state */
};

/* The front end has validated every argument before calling these. init either succeeds or
 * releases whatever it made and leaves plan->impl NULL: the front end frees a plan whose init
 * failed without calling fini, and AUTO may call another backend's init on the same plan. */
struct CudafftBackendOps {
  CudafftStatus (*init)(CudafftPlan *plan, int device_id);
  void (*fini)(CudafftPlan *plan);
  CudafftStatus (*execute)(CudafftPlan *plan, CudafftDirection direction, const void *in, void *out,
                           size_t batch, float scale);
  /* NULL where the backend has no device memory */
  CudafftStatus (*execute_device)(CudafftPlan *plan, CudafftDirection direction, const void *in,
                                  void *out, size_t batch, float scale);
  CudafftStatus (*synchronize)(CudafftPlan *plan);
  void *(*get_stream)(const CudafftPlan *plan);
  CudafftStatus (*host_alloc)(CudafftPlan *plan, size_t bytes, void **ptr);
  void (*host_free)(CudafftPlan *plan, void *ptr);
};

extern const CudafftBackendOps cudafft_cpu_backend;
/* NULL when the library is built without CUDA */
extern const CudafftBackendOps *const cudafft_cuda_backend;
int cudafft_cuda_backend_device_count(void);
/* Page-locked host memory from the CUDA runtime; NULL where there is none (or no CUDA build). */
void *cudafft_cuda_backend_pinned_alloc(size_t bytes);
void cudafft_cuda_backend_pinned_free(void *ptr);

/* FFTW's planner (every fftwf_plan_* and fftwf_destroy_plan call) is not thread-safe, and every CPU
 * backend (plans, STFTs, spectra) plans through the same FFTW: one process-wide lock, taken around
 * plan creation and destruction. Executing a plan needs no lock. */
void cudafft_fftw_planner_lock(void);
void cudafft_fftw_planner_unlock(void);

/* Records a detailed message for cudafft_last_error_message() and returns status, so that a
 * failure reads: return cudafft_fail (CUDAFFT_STATUS_X, "what failed: %s", why); */
CudafftStatus cudafft_fail(CudafftStatus status, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The argument checks and the backend choice that the plan and STFT front ends share. */
/* INVALID_SIZE with a message naming `what` (e.g. "fft size") unless n is a valid size. */
CudafftStatus cudafft_check_size(size_t n, const char *what);
/* INVALID_VALUE for an unknown backend or a device id below -1. */
CudafftStatus cudafft_check_backend(CudafftBackend backend, int device_id);
/* BACKEND_UNAVAILABLE, with the message, for builds without CUDA. */
CudafftStatus cudafft_no_cuda_backend(void);
/* Whether AUTO goes on to the CPU after the CUDA backend's init returned status: no usable
 * device, or no CUDA in this build. */
int cudafft_auto_falls_back(CudafftStatus status);

/* Floats per transform on each side, for a kind and size. */
size_t cudafft_input_floats(CudafftKind kind, size_t n);
size_t cudafft_output_floats(CudafftKind kind, size_t n);

#ifdef __cplusplus
}
#endif

#endif
