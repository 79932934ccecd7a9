/* sizes.h: the transform sizes the FFT engine and the STFT take, checked in one place. Internal
 * to the library; the range itself is CUDAFFT_MIN_SIZE..CUDAFFT_MAX_SIZE (cudafft/common.h). */
#ifndef CUDAFFT_SIZES_H
#define CUDAFFT_SIZES_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether n is a power of two from CUDAFFT_MIN_SIZE to CUDAFFT_MAX_SIZE. */
int cudafft_is_fft_size(size_t n);

/* INVALID_SIZE with a message naming `what` (e.g. "fft size") unless n is a valid size. */
CudafftStatus cudafft_check_size(size_t n, const char *what);

#ifdef __cplusplus
}
#endif

#endif
