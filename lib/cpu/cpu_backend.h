/* cpu_backend.h: what every CPU backend shares: the head its objects start with, which owns their
 * FFTW plans and arrays, and the table members that are the same for every engine (destroy,
 * stream, and reset where there is nothing to reset). Internal to the library. */
#ifndef CUDAFFT_CPU_BACKEND_H
#define CUDAFFT_CPU_BACKEND_H

#include <cudafft/common.h>

#include <fftw3.h>

#define CUDAFFT_CPU_ARRAYS 16
#define CUDAFFT_CPU_PLANS 4
#define CUDAFFT_CPU_DOUBLE_PLANS 2

/* The first member of every CPU backend object: what it owns, released by cudafft_cpu_destroy. */
typedef struct {
  void *arrays[CUDAFFT_CPU_ARRAYS]; /* NULL: a free slot */
  fftwf_plan plans[CUDAFFT_CPU_PLANS];
  fftw_plan double_plans[CUDAFFT_CPU_DOUBLE_PLANS]; /* FFTW double: F64 convolutions */
} CudafftCpuObject;

/* A new object of `bytes` (of a type that starts with a CudafftCpuObject), zeroed; NULL with
 * HOST_OUT_OF_MEMORY recorded ("CPU backend: cannot allocate <what>") where there is no memory. */
void *cudafft_cpu_object_new(size_t bytes, const char *what);

/* An array of `bytes`, zeroed and aligned for SIMD (fftwf_malloc, whose alignment FFTW's double
 * plans take too), that object owns from now on; NULL where there is no memory. */
void *cudafft_cpu_array(CudafftCpuObject *object, size_t bytes);

/* Frees one of object's arrays before the object goes (NULL allowed). */
void cudafft_cpu_array_free(CudafftCpuObject *object, void *array);

/* plan (NULL allowed) is object's from now on. */
void cudafft_cpu_own_plan(CudafftCpuObject *object, fftwf_plan plan);
void cudafft_cpu_own_double_plan(CudafftCpuObject *object, fftw_plan plan);

/* The destroy member of every CPU backend table: the object's plans (under FFTW's planner lock),
 * its arrays, then the object. NULL allowed. */
void cudafft_cpu_destroy(void *object);

/* The stream member of every CPU backend table: a CPU object queues nothing on a CUDA stream
 * (NULL). */
void *cudafft_cpu_stream(const void *impl);

/* The reset member of a CPU backend whose objects keep nothing from one run to the next that
 * reset would clear (run has finished its work when it returns): nothing to do. */
CudafftStatus cudafft_cpu_reset_nothing(void *impl);

#endif
