/* stft_kernels.h: the STFT's kernels (analysis: window, FFT and representation fused; synthesis:
 * inverse FFT and synthesis window fused, then overlap-add). Internal to the library (it speaks
 * CUDA types). */
#ifndef CUDAFFT_STFT_KERNELS_H
#define CUDAFFT_STFT_KERNELS_H

#include "block_kernels.h"

#include <cudafft/stft.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The fused kernels of size n (analysis, synthesis); NULL where n is not a listed size. */
const CudafftBlockKernels *cudafft_stft_kernels(size_t n);

/* samples x channels interleaved `format` samples at raw -> rows of planar floats: channel c's
 * sample i goes to signal[c * pitch + i]. */
cudaError_t cudafft_deinterleave_launch(CudafftSampleFormat format, const void *raw, size_t samples,
                                        unsigned channels, float *signal, size_t pitch,
                                        cudaStream_t stream);

/* Frames x channels windowed real FFTs: frame f of channel c reads signal[c * pitch + f * hop + i]
 * times window[i] and writes its bins in `representation` to out (frame-major, channel-major). */
cudaError_t cudafft_analysis_launch(size_t n, const float *signal, size_t pitch, unsigned channels,
                                    size_t frames, size_t hop, const float *window,
                                    CudafftRepresentation representation, float *out,
                                    const float2 *twiddles, cudaStream_t stream);

/* Frames x channels inverse real FFTs of complex bins (imaginary parts of bins 0 and n/2 ignored),
 * each multiplied by synthesis[i], to `frames` rows of n floats (frame-major, channel-major). */
cudaError_t cudafft_synthesis_launch(size_t n, const float *bins, unsigned channels, size_t frames,
                                     const float *synthesis, float *frames_out,
                                     const float2 *twiddles, cudaStream_t stream);

/* Overlap-adds `frames` rows of n samples per channel (row f c at (f channels + c) n), frame f at
 * f hop, onto tail_in (channels rows of n - hop sums carried over); writes the frames x hop
 * finished samples per channel interleaved to out and the next n - hop sums to tail_out. */
cudaError_t cudafft_overlap_add_launch(size_t n, size_t hop, unsigned channels, size_t frames,
                                       const float *frames_in, const float *tail_in,
                                       float *tail_out, float *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
