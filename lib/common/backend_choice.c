/* backend_choice.c: see the header. */
#include "backend_choice.h"

#include "contexts.h"
#include "devices.h"

CudafftStatus
cudafft_check_backend(CudafftBackend backend, int device_id)
{
  if (backend != CUDAFFT_BACKEND_AUTO && backend != CUDAFFT_BACKEND_CUDA &&
      backend != CUDAFFT_BACKEND_CPU)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown backend %d", (int)backend);
  if (device_id < -1)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "CUDA device id %d is negative (use -1 for automatic)", device_id);
  /* Checked here, before AUTO could take an id that names no context for a missing device and
   * fall back to the CPU: the application meant its own context. The CPU backend ignores ids. */
  if (backend != CUDAFFT_BACKEND_CPU && device_id >= CUDAFFT_CONTEXT_ID_BASE &&
      cudafft_context_ordinal(device_id) < 0)
    return cudafft_fail(CUDAFFT_STATUS_NO_DEVICE,
                        "CUDA device id %d is a context id (%d and up) that is not attached "
                        "(cudafft_cuda_context_attach)",
                        device_id, CUDAFFT_CONTEXT_ID_BASE);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_check_create(void **out, const char *out_name, const void *args, const char *args_name,
                     CudafftCheckArgs check_args, CudafftBackend backend, int device_id)
{
  if (!out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s is NULL", out_name);
  *out = NULL;
  if (!args)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s is NULL", args_name);
  const CudafftStatus status = check_args(args);
  return status != CUDAFFT_STATUS_OK ? status : cudafft_check_backend(backend, device_id);
}

CudafftStatus
cudafft_publish(void **out, void *object, CudafftStatus status, void (*release)(void *object))
{
  if (status == CUDAFFT_STATUS_OK)
    *out = object;
  else
    release(object);
  return status;
}

CudafftStatus
cudafft_no_cuda_backend(void)
{
  return cudafft_fail(CUDAFFT_STATUS_BACKEND_UNAVAILABLE,
                      "this build of cudafft has no CUDA backend (built without nvcc)");
}

CudafftStatus
cudafft_create_on_backend(CudafftBackend requested, int device_id, CudafftTryBackend try_backend,
                          void *object, const void *spec, CudafftBackend *actual, int *device)
{
  CudafftBackend backend = requested == CUDAFFT_BACKEND_AUTO ? CUDAFFT_BACKEND_CUDA : requested;
  int made_on = -1;
  CudafftStatus status =
      backend == CUDAFFT_BACKEND_CUDA
          ? cudafft_try_cuda_device(try_backend, object, spec, device_id, &made_on)
          : try_backend(object, spec, backend, device_id);
  /* AUTO goes on to the CPU where the GPU is missing or not built in, and only then: a GPU that
   * fails otherwise (out of memory, say) is an error the caller must see. */
  if (requested == CUDAFFT_BACKEND_AUTO &&
      (status == CUDAFFT_STATUS_NO_DEVICE || status == CUDAFFT_STATUS_BACKEND_UNAVAILABLE)) {
    backend = CUDAFFT_BACKEND_CPU;
    status = try_backend(object, spec, backend, device_id);
  }
  if (status == CUDAFFT_STATUS_OK && actual)
    *actual = backend;
  if (status == CUDAFFT_STATUS_OK && device)
    *device = backend == CUDAFFT_BACKEND_CUDA ? made_on : -1;
  return status;
}

int
cudafft_has_cuda_backend(void)
{
  return CUDAFFT_HAVE_CUDA;
}
