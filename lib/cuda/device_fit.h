/* device_fit.h: whether what a CUDA backend object is about to allocate fits the device's free
 * memory, checked before anything is allocated so that a configuration too large for the GPU is
 * refused with its size instead of failing at some allocation on the way. Internal to the library.
 */
#ifndef CUDAFFT_DEVICE_FIT_H
#define CUDAFFT_DEVICE_FIT_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OK where need bytes fit the current device's free memory; else DEVICE_OUT_OF_MEMORY with
 * "<what> needs N MB of GPU memory<detail>; GPU d has F MB free of T MB" (detail: "" or a
 * breakdown such as " (buffers 3 MB)"). need SIZE_MAX (a saturated estimate) stands for more than
 * can be addressed. */
CudafftStatus cudafft_device_fits(size_t need, const char *what, const char *detail);

#ifdef __cplusplus
}
#endif

#endif
