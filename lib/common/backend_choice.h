/* backend_choice.h: how every engine's front end picks its backend: the argument checks, the
 * backend tables a build has, and AUTO's fallback from CUDA to the CPU. Internal to the library.
 *
 * Each engine folder has one backend table type of the same shape (see lib/fft/fft_backend.h for
 * the pattern): create, destroy, run, reset, stream. The CPU table always exists; the CUDA table
 * only in builds with the CUDA backend, which is why front ends name it through
 * CUDAFFT_BACKEND_TABLE(), the one place that knows. */
#ifndef CUDAFFT_BACKEND_CHOICE_H
#define CUDAFFT_BACKEND_CHOICE_H

#include "cudafft_config.h"
#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The table for backend (CUDA or CPU): &cpu, &cuda, or NULL for CUDA in a build without it. */
#if CUDAFFT_HAVE_CUDA
#define CUDAFFT_BACKEND_TABLE(backend, cpu, cuda)                                                  \
  ((backend) == CUDAFFT_BACKEND_CPU ? &(cpu) : &(cuda))
#else
#define CUDAFFT_BACKEND_TABLE(backend, cpu, cuda) ((backend) == CUDAFFT_BACKEND_CPU ? &(cpu) : NULL)
#endif

/* INVALID_VALUE for an unknown backend or a device id below -1. */
CudafftStatus cudafft_check_backend(CudafftBackend backend, int device_id);

/* BACKEND_UNAVAILABLE, with the message, for builds without CUDA. */
CudafftStatus cudafft_no_cuda_backend(void);

/* Makes an engine's backend object on `requested`: CUDA or CPU as asked, or for AUTO the CUDA
 * backend and, where that has no usable device or is not built in, the CPU backend.
 * try_backend(context, backend) makes the object on one backend (never AUTO) and returns its
 * status; on failure it must leave nothing behind, since AUTO may call it again. *actual (may be
 * NULL) receives the backend that succeeded. */
typedef CudafftStatus (*CudafftTryBackend)(void *context, CudafftBackend backend);
CudafftStatus cudafft_create_on_backend(CudafftBackend requested, CudafftTryBackend try_backend,
                                        void *context, CudafftBackend *actual);

#ifdef __cplusplus
}
#endif

#endif
