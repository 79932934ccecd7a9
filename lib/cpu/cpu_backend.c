/* cpu_backend.c: see the header. */
#include "cpu_backend.h"

#include "errors.h"
#include "fftw_planner.h"

#include <stdlib.h>
#include <string.h>

void *
cudafft_cpu_object_new(size_t bytes, const char *what)
{
  void *object = calloc(1, bytes);
  if (!object)
    cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "CPU backend: cannot allocate %s", what);
  return object;
}

void *
cudafft_cpu_array(CudafftCpuObject *object, size_t bytes)
{
  for (int i = 0; i < CUDAFFT_CPU_ARRAYS; i++) {
    if (object->arrays[i])
      continue;
    void *array = fftwf_malloc(bytes > 0 ? bytes : 1);
    if (array)
      memset(array, 0, bytes);
    object->arrays[i] = array;
    return array;
  }
  return NULL; /* more arrays than a head holds: a programming error, reported as no memory */
}

void
cudafft_cpu_array_free(CudafftCpuObject *object, void *array)
{
  for (int i = 0; i < CUDAFFT_CPU_ARRAYS && array; i++)
    if (object->arrays[i] == array) {
      fftwf_free(array);
      object->arrays[i] = NULL;
      return;
    }
}

void
cudafft_cpu_own_plan(CudafftCpuObject *object, fftwf_plan plan)
{
  for (int i = 0; i < CUDAFFT_CPU_PLANS && plan; i++)
    if (!object->plans[i]) {
      object->plans[i] = plan;
      return;
    }
}

void
cudafft_cpu_own_double_plan(CudafftCpuObject *object, fftw_plan plan)
{
  for (int i = 0; i < CUDAFFT_CPU_DOUBLE_PLANS && plan; i++)
    if (!object->double_plans[i]) {
      object->double_plans[i] = plan;
      return;
    }
}

void
cudafft_cpu_destroy(void *p)
{
  CudafftCpuObject *object = p;
  if (!object)
    return;
  for (int i = 0; i < CUDAFFT_CPU_PLANS; i++)
    cudafft_fftw_destroy(object->plans[i]);
  for (int i = 0; i < CUDAFFT_CPU_DOUBLE_PLANS; i++)
    cudafft_fftw_destroy_double(object->double_plans[i]);
  for (int i = 0; i < CUDAFFT_CPU_ARRAYS; i++)
    fftwf_free(object->arrays[i]);
  free(object);
}

void *
cudafft_cpu_stream(const void *impl)
{
  (void)impl;
  return NULL;
}

CudafftStatus
cudafft_cpu_reset_nothing(void *impl)
{
  (void)impl;
  return CUDAFFT_STATUS_OK;
}
