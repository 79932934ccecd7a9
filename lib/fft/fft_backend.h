/* fft_backend.h: what the plan front end (fft.c) asks of a backend. Internal to the library.
 *
 * Every engine's backend table has this shape (create, destroy, run, reset, stream), with a spec
 * (what an object is made for) and a job (one call's work) of its own; lib/common/backend_choice.h
 * says how the front ends pick a table. */
#ifndef CUDAFFT_FFT_BACKEND_H
#define CUDAFFT_FFT_BACKEND_H

#include <cudafft/fft.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a plan is made for; the front end has validated it. */
typedef struct {
  CudafftKind kind;
  size_t n;
  int device_id; /* CUDA backend: the device (-1: device 0) */
  /* CUDA backend: run on cuFFT, as it does by itself where our kernels do not fit the GPU's
   * shared memory; set only by tests, so that this path runs on every GPU. */
  int force_cufft;
} CudafftFftSpec;

/* One call: batch transforms of in to out, in the layouts of cudafft/fft.h, times scale. The front
 * end has validated it. */
typedef struct {
  CudafftDirection direction;
  const void *in;
  void *out;
  size_t batch;
  float scale;
  int on_device; /* in and out are device memory: queue the work and return (CUDA backend only) */
} CudafftFftJob;

typedef struct {
  /* Makes the backend's object; on failure releases what it made (*impl NULL). */
  CudafftStatus (*create)(const CudafftFftSpec *spec, void **impl);
  void (*destroy)(void *impl); /* waits for queued work; NULL allowed */
  /* A host job returns when out is written; a device job once it is queued. */
  CudafftStatus (*run)(void *impl, const CudafftFftJob *job);
  /* Back to the state after create: waits for queued work. */
  CudafftStatus (*reset)(void *impl);
  /* The CUDA stream the object queues its work on; NULL for the CPU backend. */
  void *(*stream)(const void *impl);
} CudafftFftBackend;

extern const CudafftFftBackend cudafft_fft_cpu_backend;
extern const CudafftFftBackend cudafft_fft_cuda_backend; /* CUDA builds only */

struct CudafftPlan {
  CudafftBackend backend;
  CudafftKind kind;
  size_t n;
  int device; /* CUDA backend: the device its memory belongs to */
  const CudafftFftBackend *ops;
  void *impl;
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
