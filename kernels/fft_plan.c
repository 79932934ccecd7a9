/* fft_plan.c: the public API's front end. It validates every argument once, here, so that the
 * backends can trust what they are given, and it owns the status names and the error text. */
#define _POSIX_C_SOURCE 200809L

#include "fft_backend.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char last_error[512];

CudafftStatus
cudafft_fail(CudafftStatus status, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  vsnprintf(last_error, sizeof last_error, format, args);
  va_end(args);
  return status;
}

const char *
cudafft_last_error_message(void)
{
  return last_error;
}

const char *
cudafft_status_name(CudafftStatus status)
{
  static const char *const names[CUDAFFT_STATUS_COUNT_] = {
      [CUDAFFT_STATUS_OK] = "ok",
      [CUDAFFT_STATUS_INVALID_SIZE] = "invalid transform size",
      [CUDAFFT_STATUS_INVALID_BATCH] = "invalid batch count",
      [CUDAFFT_STATUS_NULL_POINTER] = "NULL pointer",
      [CUDAFFT_STATUS_INVALID_VALUE] = "invalid argument",
      [CUDAFFT_STATUS_UNSUPPORTED] = "not supported by this backend",
      [CUDAFFT_STATUS_NO_DEVICE] = "no usable CUDA device",
      [CUDAFFT_STATUS_DEVICE_OUT_OF_MEMORY] = "out of GPU memory",
      [CUDAFFT_STATUS_HOST_OUT_OF_MEMORY] = "out of host memory",
      [CUDAFFT_STATUS_CUDA_ERROR] = "CUDA error",
      [CUDAFFT_STATUS_BACKEND_UNAVAILABLE] = "backend not built in",
  };
  if ((unsigned)status >= CUDAFFT_STATUS_COUNT_)
    return "unknown status";
  return names[status];
}

int
cudafft_has_cuda_backend(void)
{
  return cudafft_cuda_backend != NULL;
}

int
cudafft_cuda_device_count(void)
{
  return cudafft_cuda_backend ? cudafft_cuda_backend_device_count() : 0;
}

void *
cudafft_pinned_alloc(size_t bytes, int want_pinned, int *pinned)
{
  void *ptr = NULL;
  if (pinned)
    *pinned = 0;
  if (bytes == 0)
    bytes = 1;
  if (want_pinned && cudafft_cuda_device_count() > 0)
    ptr = cudafft_cuda_backend_pinned_alloc(bytes);
  if (ptr) {
    if (pinned)
      *pinned = 1;
    return ptr;
  }
  return posix_memalign(&ptr, 64, bytes) == 0 ? ptr : NULL;
}

void
cudafft_pinned_free(void *ptr, int pinned)
{
  if (pinned)
    cudafft_cuda_backend_pinned_free(ptr);
  else
    free(ptr);
}

size_t
cudafft_input_floats(CudafftKind kind, size_t n)
{
  switch (kind) {
  case CUDAFFT_C2C:
    return 2 * n;
  case CUDAFFT_R2C:
    return n;
  case CUDAFFT_C2R:
    return n + 2;
  }
  return 0;
}

size_t
cudafft_output_floats(CudafftKind kind, size_t n)
{
  switch (kind) {
  case CUDAFFT_C2C:
    return 2 * n;
  case CUDAFFT_R2C:
    return n + 2;
  case CUDAFFT_C2R:
    return n;
  }
  return 0;
}

static int
is_valid_size(size_t n)
{
  return n >= CUDAFFT_MIN_SIZE && n <= CUDAFFT_MAX_SIZE && (n & (n - 1)) == 0;
}

CudafftStatus
cudafft_check_size(size_t n, const char *what)
{
  if (is_valid_size(n))
    return CUDAFFT_STATUS_OK;
  return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "%s %zu is not a power of two from %d to %d",
                      what, n, CUDAFFT_MIN_SIZE, CUDAFFT_MAX_SIZE);
}

CudafftStatus
cudafft_check_backend(CudafftBackend backend, int device_id)
{
  if (backend != CUDAFFT_BACKEND_AUTO && backend != CUDAFFT_BACKEND_CUDA &&
      backend != CUDAFFT_BACKEND_CPU)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown backend %d", (int)backend);
  if (device_id < -1)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "CUDA device id %d is negative (use -1 for automatic)", device_id);
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_no_cuda_backend(void)
{
  return cudafft_fail(CUDAFFT_STATUS_BACKEND_UNAVAILABLE,
                      "this build of cudafft has no CUDA backend (built without nvcc)");
}

int
cudafft_auto_falls_back(CudafftStatus status)
{
  return status == CUDAFFT_STATUS_NO_DEVICE || status == CUDAFFT_STATUS_BACKEND_UNAVAILABLE;
}

static CudafftStatus
plan_init(CudafftPlan *plan, CudafftBackend backend, int device_id)
{
  const CudafftBackendOps *ops =
      backend == CUDAFFT_BACKEND_CPU ? &cudafft_cpu_backend : cudafft_cuda_backend;
  if (!ops)
    return cudafft_no_cuda_backend();
  plan->backend = backend;
  plan->ops = ops;
  return ops->init(plan, device_id);
}

CudafftStatus
cudafft_plan_create(CudafftPlan **plan_out, CudafftBackend backend, int device_id, CudafftKind kind,
                    size_t n)
{
  if (!plan_out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_plan_create: plan is NULL");
  *plan_out = NULL;
  CudafftStatus status = cudafft_check_size(n, "transform size");
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (kind != CUDAFFT_C2C && kind != CUDAFFT_R2C && kind != CUDAFFT_C2R)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown transform kind %d", (int)kind);
  status = cudafft_check_backend(backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CudafftPlan *plan = calloc(1, sizeof *plan);
  if (!plan)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a plan");
  plan->kind = kind;
  plan->n = n;

  if (backend == CUDAFFT_BACKEND_AUTO) {
    status = plan_init(plan, CUDAFFT_BACKEND_CUDA, device_id);
    if (cudafft_auto_falls_back(status))
      status = plan_init(plan, CUDAFFT_BACKEND_CPU, device_id);
  } else {
    status = plan_init(plan, backend, device_id);
  }
  if (status != CUDAFFT_STATUS_OK) {
    free(plan);
    return status;
  }
  *plan_out = plan;
  return CUDAFFT_STATUS_OK;
}

void
cudafft_plan_destroy(CudafftPlan *plan)
{
  if (!plan)
    return;
  plan->ops->fini(plan);
  free(plan);
}

CudafftBackend
cudafft_plan_get_backend(const CudafftPlan *plan)
{
  return plan ? plan->backend : CUDAFFT_BACKEND_AUTO;
}

CudafftKind
cudafft_plan_get_kind(const CudafftPlan *plan)
{
  return plan ? plan->kind : CUDAFFT_C2C;
}

size_t
cudafft_plan_get_size(const CudafftPlan *plan)
{
  return plan ? plan->n : 0;
}

size_t
cudafft_plan_input_floats(const CudafftPlan *plan)
{
  return plan ? cudafft_input_floats(plan->kind, plan->n) : 0;
}

size_t
cudafft_plan_output_floats(const CudafftPlan *plan)
{
  return plan ? cudafft_output_floats(plan->kind, plan->n) : 0;
}

static CudafftStatus
check_execute_args(const CudafftPlan *plan, CudafftDirection direction, const void *in,
                   const void *out, size_t batch)
{
  if (!plan || !in || !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "execute: %s is NULL",
                        !plan ? "plan"
                        : !in ? "input"
                              : "output");
  if (batch == 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_BATCH, "execute: batch is 0");
  if (direction != CUDAFFT_FORWARD && direction != CUDAFFT_INVERSE)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "execute: unknown direction %d",
                        (int)direction);
  if (plan->kind == CUDAFFT_R2C && direction != CUDAFFT_FORWARD)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "execute: a real-to-complex plan only runs forward");
  if (plan->kind == CUDAFFT_C2R && direction != CUDAFFT_INVERSE)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "execute: a complex-to-real plan only runs inverse");
  /* Guards the byte counts the backends compute from batch. */
  if (batch > SIZE_MAX / sizeof(float) / (CUDAFFT_MAX_SIZE + 2))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_BATCH, "execute: batch %zu is too large", batch);
  /* Only an exact in-place C2C is defined; any other overlap would read overwritten data. */
  const int in_place = plan->kind == CUDAFFT_C2C && in == out;
  const uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
  const size_t in_bytes = batch * cudafft_input_floats(plan->kind, plan->n) * sizeof(float);
  const size_t out_bytes = batch * cudafft_output_floats(plan->kind, plan->n) * sizeof(float);
  if (!in_place && a < b + out_bytes && b < a + in_bytes)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "execute: input and output overlap (only C2C may run exactly in place)");
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_execute(CudafftPlan *plan, CudafftDirection direction, const void *in, void *out,
                size_t batch, float scale)
{
  CudafftStatus status = check_execute_args(plan, direction, in, out, batch);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  return plan->ops->execute(plan, direction, in, out, batch, scale);
}

CudafftStatus
cudafft_execute_device(CudafftPlan *plan, CudafftDirection direction, const void *d_in, void *d_out,
                       size_t batch, float scale)
{
  CudafftStatus status = check_execute_args(plan, direction, d_in, d_out, batch);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (!plan->ops->execute_device)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "execute_device: the CPU backend has no device memory");
  if (((uintptr_t)d_in | (uintptr_t)d_out) % 16 != 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "execute_device: device buffers must be 16-byte aligned");
  return plan->ops->execute_device(plan, direction, d_in, d_out, batch, scale);
}

CudafftStatus
cudafft_plan_synchronize(CudafftPlan *plan)
{
  if (!plan)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "synchronize: plan is NULL");
  return plan->ops->synchronize(plan);
}

void *
cudafft_plan_get_cuda_stream(const CudafftPlan *plan)
{
  return plan && plan->ops->get_stream ? plan->ops->get_stream(plan) : NULL;
}

CudafftStatus
cudafft_host_alloc(CudafftPlan *plan, size_t bytes, void **ptr)
{
  if (!plan || !ptr)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "host_alloc: %s is NULL",
                        !plan ? "plan" : "ptr");
  *ptr = NULL;
  if (bytes == 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "host_alloc: size is 0");
  return plan->ops->host_alloc(plan, bytes, ptr);
}

void
cudafft_host_free(CudafftPlan *plan, void *ptr)
{
  if (plan && ptr)
    plan->ops->host_free(plan, ptr);
}
