/* backend_table.h: the shape of every engine's backend table, written once. Internal to the
 * library.
 *
 * An engine's front end validates every argument, then hands the work to a backend object made by
 * the table of the backend it runs on: the CPU table always exists, the CUDA table only in builds
 * with the CUDA backend (backend_choice.h says how a front end picks one). An engine defines a spec
 * (what an object is made for) and a job (one call's work) of its own, and its table type as
 *
 *   typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftFftSpec, CudafftFftJob) CudafftFftBackend;
 *
 * whose members are:
 * - create(spec, &impl): makes the backend's object for spec; on failure releases what it made and
 *   leaves impl NULL.
 * - destroy(impl): waits for the object's queued work and releases it; NULL allowed.
 * - run(impl, job): does one job (the engine's job type says when it returns).
 * - reset(impl): back to the state after create, waiting for queued work first.
 * - stream(impl): the CUDA stream the object queues its work on; NULL for the CPU backend. */
#ifndef CUDAFFT_BACKEND_TABLE_H
#define CUDAFFT_BACKEND_TABLE_H

#include <cudafft/common.h>

/* Declares a backend table, defined in C (the CPU's) or in CUDA C++ (the GPU's, with extern "C"),
 * with C linkage from either language:
 *
 *   CUDAFFT_BACKEND_TABLE_DECL const CudafftFftBackend cudafft_fft_cpu_backend; */
#ifdef __cplusplus
#define CUDAFFT_BACKEND_TABLE_DECL extern "C"
#else
#define CUDAFFT_BACKEND_TABLE_DECL extern
#endif

#define CUDAFFT_BACKEND_TABLE_TYPE(Spec, Job)                                                      \
  struct {                                                                                         \
    CudafftStatus (*create)(const Spec *spec, void **impl);                                        \
    void (*destroy)(void *impl);                                                                   \
    CudafftStatus (*run)(void *impl, const Job *job);                                              \
    CudafftStatus (*reset)(void *impl);                                                            \
    void *(*stream)(const void *impl);                                                             \
  }

#endif
