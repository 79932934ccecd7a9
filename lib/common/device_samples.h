/* device_samples.h: samples an engine's C front end keeps in, or moves to and from, device memory
 * (the _push_device calls, whose callers' buffers are CUDA memory): allocation and copies in plain
 * C types. In a build without the CUDA backend no engine runs on a GPU to call them, and they
 * return UNSUPPORTED. Internal to the library. */
#ifndef CUDAFFT_DEVICE_SAMPLES_H
#define CUDAFFT_DEVICE_SAMPLES_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* bytes > 0 of device memory of `device` (an engine's device id: an ordinal or an attached
 * context's); DEVICE_OUT_OF_MEMORY with the size in the message, *ptr NULL, where there is none. */
CudafftStatus cudafft_device_samples_alloc(int device, size_t bytes, void **ptr);
void cudafft_device_samples_free(int device, void *ptr); /* NULL allowed */

/* Copies bytes from src to dst, each host memory or device memory of `device`, and returns when
 * the copy is done. */
CudafftStatus cudafft_device_samples_copy(int device, void *dst, const void *src, size_t bytes);

/* Checks a _push_device call's memory flags (CudafftMemory; `name` the call): INVALID_VALUE for
 * unknown flags, UNSUPPORTED for any flag on the CPU backend. */
CudafftStatus cudafft_device_samples_check_flags(unsigned on_device, CudafftBackend backend,
                                                 const char *name);

#ifdef __cplusplus
}
#endif

#endif
