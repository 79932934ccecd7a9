/* fft_backend.h: what the plan front end (fft.c) asks of a backend: a table of the shape every
 * engine's has (lib/common/backend_table.h). Internal to the library. */
#ifndef CUDAFFT_FFT_BACKEND_H
#define CUDAFFT_FFT_BACKEND_H

#include "device_pointer.h"
#include "backend_table.h"

#include <cudafft/fft.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a plan is made for; the front end has validated it. */
typedef struct {
  CudafftKind kind;
  size_t n;
  int device_id; /* CUDA backend: the device (as chosen: backend_choice.h) */
  /* CUDA backend: run on cuFFT, as it does by itself where our kernels do not fit the GPU's
   * shared memory; set only by tests, so that this path runs on every GPU. */
  int force_cufft;
} CudafftFftSpec;

/* One call: batch transforms of in to out, in the layouts of cudafft/fft.h, times scale. The front
 * end has validated it. run returns from a host job when out is written, from a device job once
 * the work is queued. */
typedef struct {
  CudafftDirection direction;
  const void *in;
  void *out;
  size_t batch;
  float scale;
  int on_device; /* in and out are device memory: queue the work and return (CUDA backend only) */
} CudafftFftJob;

typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftFftSpec, CudafftFftJob) CudafftFftBackend;

/* The CPU table; the CUDA table in CUDA builds only. */
CUDAFFT_BACKEND_TABLE_DECL const CudafftFftBackend cudafft_fft_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftFftBackend cudafft_fft_cuda_backend;

struct CudafftPlan {
  CudafftBackend backend;
  CudafftKind kind;
  size_t n;
  int device; /* the CUDA device it runs on (its memory belongs to), -1 for the CPU backend */
  const CudafftFftBackend *ops;
  void *impl;
  CudafftCheckedMemory checked; /* device memory that passed (execute_device) */
};

/* Floats per transform on each side, for a kind and size. */
size_t cudafft_input_floats(CudafftKind kind, size_t n);
size_t cudafft_output_floats(CudafftKind kind, size_t n);

/* cudafft_plan_create() with a whole spec (the tests' way to the cuFFT path). */
CudafftStatus cudafft_plan_create_spec(CudafftPlan **plan, CudafftBackend backend,
                                       const CudafftFftSpec *spec);

#ifdef __cplusplus
}
#endif

#endif
