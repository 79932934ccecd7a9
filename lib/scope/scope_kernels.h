/* scope_kernels.h: the spectrum scope's kernels, one per step of a frame (cudafft/scope.h): new
 * samples into the history ring, the windowed FFTs to bin powers, the bands (power, smoothing,
 * level, peak), the spectrogram's new column, and the drawing of a frame. Each applies the
 * formulas of scope_values.h; launches are queued on `stream` and report launch errors only.
 * Internal to the library.
 *
 * Layouts: the history is `channels` rows of `history` samples (a power of two), a ring whose
 * newest sample is at (newest - 1) mod history; powers are rows of `bins` floats, row c ffts + j
 * for FFT j of channel c; band state is lanes x bands cells, lane-major; the spectrogram's columns
 * are rows x width levels, row-major; a frame is height rows of `stride` bytes. */
#ifndef CUDAFFT_SCOPE_KERNELS_H
#define CUDAFFT_SCOPE_KERNELS_H

#include "scope_backend.h"

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shared memory the FFT kernel of fft_size needs, and the twiddle table it reads (complex
 * values; cudafft_scope_twiddles fills 2 floats a value). 0 for a size that is not supported
 * (lib/common/sizes.h). */
size_t cudafft_scope_fft_smem(size_t fft_size);
size_t cudafft_scope_twiddle_count(size_t fft_size);
void cudafft_scope_twiddles(size_t fft_size, float *table);

/* Raises the FFT kernel's shared-memory limit for fft_size on the current device (the mixed-radix
 * kernel, which serves every size that has no fused kernel, to the device's most:
 * block_kernels.h). */
cudaError_t cudafft_scope_fft_prepare(size_t fft_size);

/* frames interleaved frames at raw (device memory) into the history after position newest. */
cudaError_t cudafft_scope_append_launch(CudafftSampleFormat format, const void *raw, size_t frames,
                                        unsigned channels, float *history, size_t history_size,
                                        size_t newest, cudaStream_t stream);

/* ffts FFTs of each channel (cudafft_scope_fft_start) to rows of bin powers. */
cudaError_t cudafft_scope_fft_launch(size_t fft_size, const float *history, size_t history_size,
                                     unsigned channels, size_t newest, size_t frames, unsigned ffts,
                                     const float *window, float norm, const float2 *twiddles,
                                     float *power, cudaStream_t stream);

/* Every cell's power, smoothed power and level, and with bars its peak (window: hold rows of
 * cells, slot the oldest; decayed and peak: cells). band_bins, gains: device copies of the
 * layout's. */
typedef struct {
  unsigned lanes, bands, per_lane, ffts;
  size_t bins;
  const CudafftBandBins *band_bins;
  const float *gains;
  float inv_count, alpha;
  int bars;
  unsigned hold, slot;
  float decay;
} CudafftScopeBandArgs;

cudaError_t cudafft_scope_bands_launch(const CudafftScopeBandArgs *args, const float *power,
                                       float *smoothed, float *level, float *window, float *decayed,
                                       float *peak, cudaStream_t stream);

/* Fills n floats with v. */
cudaError_t cudafft_scope_fill_launch(float *p, size_t n, float v, cudaStream_t stream);

/* What drawing a frame needs. */
typedef struct {
  unsigned width, height, lanes, lane_height, bands;
  size_t stride;
  CudafftPixelFormat pixels;
  const int *map; /* device copy of the layout's */
  float marker, db_min, db_max;
  const float *colormap; /* device table of 768 floats, or NULL for grey */
} CudafftScopeDrawArgs;

/* The spectrogram: the levels of the newest column (at `column` of the width columns) from level
 * into columns, then the frame, the column after `column` at the left. */
cudaError_t cudafft_scope_spectrogram_launch(const CudafftScopeDrawArgs *args, const float *level,
                                             float *columns, unsigned column, uint8_t *frame,
                                             cudaStream_t stream);

/* The bars with their peak markers. */
cudaError_t cudafft_scope_bars_launch(const CudafftScopeDrawArgs *args, const float *level,
                                      const float *peak, uint8_t *frame, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
