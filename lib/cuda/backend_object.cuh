/* backend_object.cuh: the members of a CUDA backend table (backend_table.h) that are the same for
 * every engine's objects, as templates over the object type T. Internal to the library; for .cu
 * files only.
 *
 * A CUDA backend object is a C++ struct T with its device (`int device`) and the stream it queues
 * its work on (`cudaStream_t stream`), made ready by the engine's setup(T *, const Spec *) and
 * released by its release(T *): a table names
 * cudafft_cuda_create<T, Spec, setup, release>, cudafft_cuda_destroy<T, release> and
 * cudafft_cuda_stream<T> for create, destroy and stream, and cudafft_cuda_wait<T> for reset where
 * an object holds nothing that reset would clear. */
#ifndef CUDAFFT_BACKEND_OBJECT_CUH
#define CUDAFFT_BACKEND_OBJECT_CUH

#include "caller_context.cuh"
#include "cuda_check.cuh"
#include "devices.h"
#include "errors.h"

#include <cuda_runtime.h>

#include <new>

/* Releases an object that was made ready or failed on the way: makes its device's (or attached
 * context's) context current and lets
 * release() free what it holds, best effort throughout (an object must be releasable after any
 * failure, sticky ones included, and release() waits for the object's streams first), then clears
 * any error so that the caller's next CUDA call is not blamed for it. */
template <typename T, void (*Release)(T *)>
void
cudafft_cuda_release(T *object)
{
  cudafft_use_device(object->device);
  Release(object);
  cudaGetLastError();
  delete object;
}

/* destroy: takes the object out of its device's load (devices.h, which counts a context id's
 * objects on the context's device) and releases it. NULL allowed. */
template <typename T, void (*Release)(T *)>
void
cudafft_cuda_destroy(void *impl)
{
  T *object = static_cast<T *>(impl);
  if (!object)
    return;
  cudafft_device_load_change(object->device, -1, 0);
  cudafft_cuda_release<T, Release>(object);
}

/* create: a new, value-initialised T made ready by Setup(object, spec), counted as one object on
 * its device (devices.h) until it is destroyed; where Setup fails, what it made is released
 * and *impl stays NULL. */
template <typename T, typename Spec, CudafftStatus (*Setup)(T *, const Spec *),
          void (*Release)(T *)>
CudafftStatus
cudafft_cuda_create(const Spec *spec, void **impl)
{
  *impl = nullptr;
  T *object = new (std::nothrow) T;
  if (!object)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes for a CUDA backend object", sizeof(T));
  const CudafftStatus status = Setup(object, spec);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_cuda_release<T, Release>(object);
    return status;
  }
  cudafft_device_load_change(object->device, 1, 0);
  *impl = object;
  return CUDAFFT_STATUS_OK;
}

/* reset, for objects that keep nothing from one job to the next that reset would clear: waits for
 * the work queued on the object's stream. */
template <typename T>
CudafftStatus
cudafft_cuda_wait(void *impl)
{
  const T *object = static_cast<const T *>(impl);
  CUDAFFT_CHECK(cudafft_use_device(object->device));
  CUDAFFT_CHECK(cudaStreamSynchronize(object->stream));
  return CUDAFFT_STATUS_OK;
}

/* stream: the stream the object queues its work on. */
template <typename T>
void *
cudafft_cuda_stream(const void *impl)
{
  return static_cast<const T *>(impl)->stream;
}

#endif
