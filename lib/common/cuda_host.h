/* cuda_host.h: what the library's C code may ask of the CUDA runtime, in plain C types: device
 * count, free memory, page-locked host memory and what attaching a context needs. Declared here,
 * with the C code that asks (lib/common), so that lib/common includes nothing of lib/cuda; defined
 * in lib/cuda's cuda_host.cu and cuda_context.cu, which only CUDA builds compile: callers check
 * CUDAFFT_HAVE_CUDA (cudafft_config.h) first. Internal to the library. */
#ifndef CUDAFFT_CUDA_HOST_H
#define CUDAFFT_CUDA_HOST_H

#include "device_pointer.h"

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Usable CUDA devices; 0 where there is none or no driver. */
int cudafft_cuda_host_device_count(void);

/* Where there is no usable device, why, in `size` bytes at text (cudafft_cuda_unavailable_reason's
 * words); "" where there is one. */
void cudafft_cuda_host_unavailable_reason(char *text, size_t size);

/* The free memory of `device`, read with it made current and the calling thread's current context
 * restored after; the failure (CUDA's, or no such device) as a status. */
CudafftStatus cudafft_cuda_host_free_memory(int device, size_t *free_bytes);

/* Page-locked host memory usable by every device (the elements' buffers may meet engines on any
 * device); NULL where it cannot be had. */
void *cudafft_cuda_host_pinned_alloc(size_t bytes);
void cudafft_cuda_host_pinned_free(void *ptr);

/* What cudafft_cuda_context_attach() asks of the driver (cuda_context.cu): the CUDA device of
 * `context` (a CUcontext) and whether it is that device's primary context; NO_DEVICE where the
 * driver's context calls cannot be had, CUDA's failure (an invalid context) as a status. */
CudafftStatus cudafft_cuda_host_context_device(void *context, int *device, int *primary);

/* cudafft_cuda_primary_context() for a device id in range (cuda_context.cu). */
CudafftStatus cudafft_cuda_host_primary_context(int device, void **context);

/* Page-locked host memory allocated with `device` (a device id or an attached context's)
 * current: HOST_OUT_OF_MEMORY (or the device's
 * failure) with the size in the message where it cannot be had. */
CudafftStatus cudafft_cuda_host_alloc(int device, size_t bytes, void **ptr);

/* Device memory of `device` (a device id or an attached context's), for what an engine's C front
 * end keeps on the device: DEVICE_OUT_OF_MEMORY (or the device's failure) with the size in the
 * message, *ptr NULL, where it cannot be had. free takes NULL. */
CudafftStatus cudafft_cuda_host_device_alloc(int device, size_t bytes, void **ptr);
void cudafft_cuda_host_device_free(int device, void *ptr);

/* Copies bytes from src to dst, either of them host or device memory of `device` (unified
 * addressing tells which), and returns once the copy is done on the device too (so that work on
 * any stream may read dst): the front ends' moves of samples that came in, or go out, in device
 * memory. */
CudafftStatus cudafft_cuda_host_copy(int device, void *dst, const void *src, size_t bytes);

/* What CUDA says of ptr (device_pointer.h) and of the object of device id `device` it is meant
 * for, read with that object's context current; the caller's context as it was after. NO_DEVICE
 * where the driver cannot be asked, CUDA's failure as a status. (cuda_context.cu) */
CudafftStatus cudafft_cuda_host_pointer_place(int device, const void *ptr,
                                              CudafftPointerPlace *place);

/* A caller's current CUDA context, kept across a call into the library (caller_context.cuh). */
typedef struct {
  void *context; /* the CUcontext current on entry (NULL: none) */
  int device;    /* with none current: the thread's runtime device (-1: unknown) */
  int own;       /* a thread of the library's own (thread_name.h): nothing kept */
} CudafftCallerContext;

#ifdef __cplusplus
}
#endif

#endif
