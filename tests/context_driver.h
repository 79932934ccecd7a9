/* context_driver.h: the CUDA driver calls test_cuda_context needs (a context of its own, memory in
 * it, the thread's current context), found through the runtime (driver_entry.cuh) as the library
 * finds its own, so that the test starts on machines without libcuda. Each returns 1, or 0 with
 * the failed call and the driver's code in why. Plain C interface; context_driver.cu. */
#ifndef CUDAFFT_CONTEXT_DRIVER_H
#define CUDAFFT_CONTEXT_DRIVER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A new context on device (cuCtxCreate as the CUDA 13 header maps it), not left current. */
int ctxdrv_create(int device, void **context, char *why, size_t size);
int ctxdrv_destroy(void *context, char *why, size_t size);
/* The device's primary context (the runtime's), made first where it is not yet. */
int ctxdrv_primary(int device, void **context, char *why, size_t size);
int ctxdrv_get_current(void **context, char *why, size_t size);
int ctxdrv_set_current(void *context, char *why, size_t size);

/* Memory of context (each call makes it current for its moment and restores the thread's). */
int ctxdrv_alloc(void *context, size_t bytes, void **ptr, char *why, size_t size);
int ctxdrv_alloc_pitch(void *context, size_t row_bytes, size_t rows, void **ptr, size_t *pitch,
                       char *why, size_t size);
int ctxdrv_free(void *context, void *ptr, char *why, size_t size);
int ctxdrv_upload(void *context, void *dst, const void *src, size_t bytes, char *why, size_t size);
int ctxdrv_download(void *context, void *dst, const void *src, size_t bytes, char *why,
                    size_t size);
int ctxdrv_fill(void *context, void *dst, unsigned char value, size_t bytes, char *why,
                size_t size);
/* The context a device pointer belongs to (CU_POINTER_ATTRIBUTE_CONTEXT). */
int ctxdrv_pointer_context(const void *ptr, void **context, char *why, size_t size);

#ifdef __cplusplus
}
#endif

#endif
