/* sizes.h: the transform sizes the FFT engine and the STFT take, checked in one place. Internal
 * to the library; the sizes themselves are stated in cudafft/common.h (CUDAFFT_MIN_SIZE..
 * CUDAFFT_MAX_SIZE, no prime factor above 7; the fused power-of-two kernels from
 * CUDAFFT_FUSED_MIN_SIZE). */
#ifndef CUDAFFT_SIZES_H
#define CUDAFFT_SIZES_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether n is a supported size (cudafft_fft_size_supported()). */
int cudafft_is_fft_size(size_t n);

/* Whether n is a power of two from CUDAFFT_FUSED_MIN_SIZE to CUDAFFT_MAX_SIZE: a size with a fused
 * kernel of its own in every engine. */
int cudafft_is_fused_size(size_t n);

/* INVALID_SIZE with a message naming `what` (e.g. "fft size"), the supported sizes and the nearest
 * ones, unless n is a supported size. */
CudafftStatus cudafft_check_size(size_t n, const char *what);

#ifdef __cplusplus
}
#endif

#endif
