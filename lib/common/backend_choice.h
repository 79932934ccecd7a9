/* backend_choice.h: how every engine's front end makes its backend object: the checks every create
 * function opens with, the backend tables a build has, and AUTO's fallback from CUDA to the CPU.
 * Internal to the library.
 *
 * Each engine has backend tables of the one shape (backend_table.h). The CPU table always exists;
 * the CUDA table only in builds with the CUDA backend, which is why front ends name it through
 * CUDAFFT_BACKEND_TABLE(), the one place that knows. */
#ifndef CUDAFFT_BACKEND_CHOICE_H
#define CUDAFFT_BACKEND_CHOICE_H

#include "cudafft_config.h"
#include "devices.h"
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

/* The checks a create function opens with, in this order: out, where it puts the new object's
 * pointer (NULL_POINTER, "<out_name> is NULL", where out is NULL; else *out becomes NULL, which it
 * stays on failure), args (NULL_POINTER, "<args_name> is NULL"), the engine's own
 * check_args(args), then the backend and device id. The names are the caller's:
 * "cudafft_stft_create: stft", "STFT config". */
typedef CudafftStatus (*CudafftCheckArgs)(const void *args);
CudafftStatus cudafft_check_create(void **out, const char *out_name, const void *args,
                                   const char *args_name, CudafftCheckArgs check_args,
                                   CudafftBackend backend, int device_id);

/* How a create function ends: with status OK, *out receives object; else release(object) frees
 * what was made (*out stays NULL). Returns status. */
CudafftStatus cudafft_publish(void **out, void *object, CudafftStatus status,
                              void (*release)(void *object));

/* BACKEND_UNAVAILABLE, with the message, for builds without CUDA. */
CudafftStatus cudafft_no_cuda_backend(void);

/* Makes an engine object's backend object on `requested`: CUDA or CPU as asked, or for AUTO the
 * CUDA backend and, where that has no usable device or is not built in, the CPU backend.
 * try_backend (devices.h: CudafftTryBackend) makes it on one backend.
 *
 * The device for CUDA: cudafft_try_cuda_device() (devices.h): an explicit device_id pins (a
 * GstCudaContext that the pipeline shares passes its id), -1 goes to the device the load rule
 * picks, and on to the next where the object fails there for the device's own reasons.
 *
 * *actual (may be NULL) receives the backend that succeeded, *device (may be NULL) the CUDA
 * device the object was made on, or -1 for the CPU backend. */
CudafftStatus cudafft_create_on_backend(CudafftBackend requested, int device_id,
                                        CudafftTryBackend try_backend, void *object,
                                        const void *spec, CudafftBackend *actual, int *device);

/* Defines `static CudafftStatus name(void *object, const void *spec, CudafftBackend backend, int
 * device_id)`, the try_backend of an engine whose objects are Object with the members ops (its
 * backend table) and impl (its backend object), made from a copy of spec (a Spec, with a member
 * device_id) on device_id by the engine's table for backend, cpu or cuda (the latter named
 * through CUDAFFT_BACKEND_TABLE, so that CPU-only builds need no such table). */
#define CUDAFFT_DEFINE_TRY_BACKEND(name, Object, Spec, cpu, cuda)                                  \
  static CudafftStatus name(void *object, const void *spec, CudafftBackend backend, int device_id) \
  {                                                                                                \
    Object *made = object;                                                                         \
    Spec copy = *(const Spec *)spec;                                                               \
    copy.device_id = device_id;                                                                    \
    made->ops = CUDAFFT_BACKEND_TABLE(backend, cpu, cuda);                                         \
    return made->ops ? made->ops->create(&copy, &made->impl) : cudafft_no_cuda_backend();          \
  }

#ifdef __cplusplus
}
#endif

#endif
