/* stft_kernels.h: the STFT's kernels (analysis: window, FFT and representation fused; synthesis:
 * inverse FFT and synthesis window fused, then overlap-add). Internal to kernels/. */
#ifndef CUDAFFT_STFT_LAUNCH_H
#define CUDAFFT_STFT_LAUNCH_H

#include <cudafft/stft.h>
#include <cuda_runtime.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dynamic shared memory the fused kernels of size n need (0: no kernel for n). */
size_t cudafft_stft_kernel_smem(size_t n);

/* Raises the fused kernels' shared-memory limit for size n on the current device. */
cudaError_t cudafft_stft_kernel_prepare(size_t n);

/* The twiddle table the fused kernels of size n read: that of the engine's wide real kernels. */
size_t cudafft_stft_twiddle_count(size_t n);
void cudafft_stft_twiddles(size_t n, float *table);

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
