/* fft.c: the plan API's front end. It validates every argument once, here, so that the backends
 * can trust what they are given. */
#include "fft_backend.h"

#include "api_getter.h"
#include "backend_choice.h"
#include "host_memory.h"
#include "sizes.h"

#include <stdint.h>
#include <stdlib.h>

size_t
cudafft_input_floats(CudafftKind kind, size_t n)
{
  switch (kind) {
  case CUDAFFT_C2C:
    return 2 * n;
  case CUDAFFT_R2C:
    return n;
  case CUDAFFT_C2R:
    return 2 * (n / 2 + 1);
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
    return 2 * (n / 2 + 1);
  case CUDAFFT_C2R:
    return n;
  }
  return 0;
}

CUDAFFT_DEFINE_TRY_BACKEND(try_backend, CudafftPlan, CudafftFftSpec, cudafft_fft_cpu_backend,
                           cudafft_fft_cuda_backend)

static CudafftStatus
check_spec(const void *args)
{
  const CudafftFftSpec *spec = args;
  const CudafftStatus status = cudafft_check_size(spec->n, "transform size");
  const int known =
      spec->kind == CUDAFFT_C2C || spec->kind == CUDAFFT_R2C || spec->kind == CUDAFFT_C2R;
  if (status == CUDAFFT_STATUS_OK && !known)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "unknown transform kind %d", (int)spec->kind);
  return status;
}

CudafftStatus
cudafft_plan_create_spec(CudafftPlan **plan_out, CudafftBackend backend, const CudafftFftSpec *spec)
{
  CudafftStatus status =
      cudafft_check_create((void **)plan_out, "cudafft_plan_create: plan", spec, "transform spec",
                           check_spec, backend, spec->device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CudafftPlan *plan = malloc(sizeof *plan);
  if (!plan)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a plan");
  *plan = (CudafftPlan){
      .kind = spec->kind,
      .n = spec->n,
  };
  status = cudafft_create_on_backend(backend, spec->device_id, try_backend, plan, spec,
                                     &plan->backend, &plan->device);
  return cudafft_publish((void **)plan_out, plan, status, free);
}

CudafftStatus
cudafft_plan_create(CudafftPlan **plan_out, CudafftBackend backend, int device_id, CudafftKind kind,
                    size_t n)
{
  const CudafftFftSpec spec = {.kind = kind, .n = n, .device_id = device_id};
  return cudafft_plan_create_spec(plan_out, backend, &spec);
}

void
cudafft_plan_destroy(CudafftPlan *plan)
{
  if (!plan)
    return;
  plan->ops->destroy(plan->impl);
  free(plan);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_plan_get_backend, CudafftPlan, object->backend,
                      CUDAFFT_BACKEND_AUTO)
CUDAFFT_DEFINE_GETTER(int, cudafft_plan_get_device, CudafftPlan, object->device, -1)
CUDAFFT_DEFINE_GETTER(CudafftKind, cudafft_plan_get_kind, CudafftPlan, object->kind, CUDAFFT_C2C)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_plan_get_size, CudafftPlan, object->n, 0)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_plan_input_floats, CudafftPlan,
                      cudafft_input_floats(object->kind, object->n), 0)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_plan_output_floats, CudafftPlan,
                      cudafft_output_floats(object->kind, object->n), 0)

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
  const CudafftFftJob job = {direction, in, out, batch, scale, 0};
  return plan->ops->run(plan->impl, &job);
}

CudafftStatus
cudafft_execute_device(CudafftPlan *plan, CudafftDirection direction, const void *d_in, void *d_out,
                       size_t batch, float scale)
{
  CudafftStatus status = check_execute_args(plan, direction, d_in, d_out, batch);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (plan->backend != CUDAFFT_BACKEND_CUDA)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "execute_device: the CPU backend has no device memory");
  if (((uintptr_t)d_in | (uintptr_t)d_out) % 16 != 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "execute_device: device buffers must be 16-byte aligned");
  const size_t in_bytes = batch * cudafft_input_floats(plan->kind, plan->n) * sizeof(float);
  const size_t out_bytes = batch * cudafft_output_floats(plan->kind, plan->n) * sizeof(float);
  status = cudafft_device_pointer_check(&plan->checked, plan->device, d_in, in_bytes,
                                        "cudafft_execute_device", "input");
  if (status == CUDAFFT_STATUS_OK)
    status = cudafft_device_pointer_check(&plan->checked, plan->device, d_out, out_bytes,
                                          "cudafft_execute_device", "output");
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const CudafftFftJob job = {direction, d_in, d_out, batch, scale, 1};
  return plan->ops->run(plan->impl, &job);
}

CudafftStatus
cudafft_plan_synchronize(CudafftPlan *plan)
{
  if (!plan)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "synchronize: plan is NULL");
  cudafft_checked_memory_forget(&plan->checked);
  return plan->ops->reset(plan->impl);
}

CUDAFFT_DEFINE_GETTER(void *, cudafft_plan_get_cuda_stream, CudafftPlan,
                      object->ops->stream(object->impl), NULL)

CudafftStatus
cudafft_host_alloc(CudafftPlan *plan, size_t bytes, void **ptr)
{
  if (!plan || !ptr)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "host_alloc: %s is NULL",
                        !plan ? "plan" : "ptr");
  *ptr = NULL;
  if (bytes == 0)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "host_alloc: size is 0");
  return cudafft_host_memory_alloc(plan->backend, plan->device, bytes, ptr);
}

void
cudafft_host_free(CudafftPlan *plan, void *ptr)
{
  if (plan && ptr)
    cudafft_host_memory_free(plan->backend, ptr);
}
