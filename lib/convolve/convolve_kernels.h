/* convolve_kernels.h: the convolution's kernels, built from the block FFT's device functions (the
 * N = 4096 point real FFT is the 2048-point complex block_fft with its real pre/post steps).
 * Internal to the library (it speaks CUDA types); the kernel benchmark calls the planar fused
 * launch.
 *
 * Layouts the kernels share (B = CUDAFFT_CONVOLVE_BLOCK, N = 2 B):
 * - spectrum row: CUDAFFT_CONVOLVE_BINS bins (0..B) of a real N-point FFT, in a row of
 *   CUDAFFT_CONVOLVE_BIN_PITCH float2, so that every row starts 128-byte aligned and the MAC reads
 *   two bins per thread with 16-byte loads.
 * - kernel spectra: rows x partitions spectrum rows, (row, p) at (row partitions + p), scaled by
 *   1/N (the inverse transforms are unnormalised).
 * - delay line (ring): channels x slots spectrum rows, (c, s) at (c slots + s): the spectrum of
 *   input block j of channel c sits in slot j mod slots. Bins are contiguous, so the threads of a
 *   MAC (one bin pair each) read adjacent memory; channel-major keeps a channel's history in one
 *   range (no layout is faster than another for the MAC, whose loads are coalesced either way).
 * - signal: channels rows of `pitch` planar floats: the previous block (B samples), then the
 *   chunk's blocks; frame q of channel c (blocks q - 1 and q) is row c + [q B, q B + N). Two sets
 *   of rows alternate between chunks: the deinterleave writes the chunk's last block to the front
 *   of the other set as well, which saves a copy (a launch) per chunk.
 * - interleaved samples: frame-major, F32 or F64 (CudafftSampleFormat). */
#ifndef CUDAFFT_CONVOLVE_KERNELS_H
#define CUDAFFT_CONVOLVE_KERNELS_H

#include "twiddles.h"

#include <cudafft/convolve.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAFFT_CONVOLVE_BINS (CUDAFFT_CONVOLVE_BLOCK + 1)
#define CUDAFFT_CONVOLVE_BIN_PITCH (CUDAFFT_CONVOLVE_BLOCK + 16)

/* The block FFTs whose twiddle tables every convolution launch takes, in the order of its table
 * (cudafft_twiddles_upload()): the wide plan of the N-point real transforms, then the narrow one
 * (the MAC's inverse FFT); *count receives how many. */
const CudafftTwiddlePlan *cudafft_convolve_twiddle_plans(int *count);

/* Kernel partition spectra: taps is rows x taps_count floats (device, row-major); partition p of
 * row r (taps p B .. p B + B - 1, zeros past the end) zero-padded to N points, transformed, scaled
 * by 1/N, to spectra (rows x partitions spectrum rows). */
cudaError_t cudafft_convolve_spectra_launch(const float *taps, size_t taps_count, unsigned rows,
                                            size_t partitions, float2 *spectra,
                                            const float2 *twiddles, cudaStream_t stream);

/* frames x channels interleaved samples at raw -> signal rows: channel c's frame i to
 * signal[c pitch + i]; the last B frames (frames >= B) also to next[c pitch + i - (frames - B)],
 * the front of the next chunk's rows (next nullptr: not). */
cudaError_t cudafft_convolve_deinterleave_launch(CudafftSampleFormat format, const void *raw,
                                                 size_t frames, unsigned channels, float *signal,
                                                 size_t pitch, float *next, cudaStream_t stream);

/* Forward FFTs of frames q = 0..blocks-1 of every channel's signal row into the ring: frame q of
 * channel c to slot (first_slot + q) mod slots. blocks <= slots, first_slot < slots. */
cudaError_t cudafft_convolve_forward_launch(const float *signal, size_t pitch, unsigned channels,
                                            size_t blocks, float2 *ring, size_t slots,
                                            size_t first_slot, const float2 *twiddles,
                                            cudaStream_t stream);

/* Output blocks q = 0..blocks-1 of every channel (block q's spectrum in slot (first_slot + q) mod
 * slots, the P - 1 before it in the slots before): sum_p X[q - p] H[row][p], inverse FFT, second
 * half, mix * that + (1 - mix) * the block's input (signal row + B + q B), written interleaved in
 * `format` to out (blocks B frames). row is c when kernel_rows > 1, else 0. partitions <= slots. */
cudaError_t cudafft_convolve_mac_launch(CudafftSampleFormat format, const float2 *ring,
                                        size_t slots, size_t first_slot, unsigned channels,
                                        size_t blocks, const float2 *spectra, unsigned kernel_rows,
                                        size_t partitions, const float *signal, size_t pitch,
                                        float mix, void *out, const float2 *twiddles,
                                        cudaStream_t stream);

/* One partition (P = 1): forward FFT of frame q, times H[row][0], inverse FFT, second half, mixed
 * and written as cudafft_convolve_mac_launch() does, all in one kernel: each input block is read
 * (twice: as the new and as the old half of a frame) and each output sample written once. */
cudaError_t cudafft_convolve_fused_launch(CudafftSampleFormat format, const float *signal,
                                          size_t pitch, unsigned channels, size_t blocks,
                                          const float2 *spectra, unsigned kernel_rows, float mix,
                                          void *out, const float2 *twiddles, cudaStream_t stream);

/* The fused kernel on planar floats, for the kernel benchmark: block b reads N samples at
 * in + b in_hop (16-byte aligned), multiplies its spectrum by the one spectrum row H, and writes
 * samples keep_from..N-1 of the circular convolution to out + b out_hop (keep_from 0: all N, as
 * for independent blocks; B: the valid half of overlap-save; out_hop even). */
cudaError_t cudafft_convolve_fused_planar_launch(const float *in, size_t in_hop, size_t blocks,
                                                 const float2 *spectrum, float *out, size_t out_hop,
                                                 size_t keep_from, const float2 *twiddles,
                                                 cudaStream_t stream);

/* The direct path: frames x channels interleaved outputs of `format` at out from the interleaved
 * input at raw, history_frames = taps_count - 1 earlier frames at history (interleaved floats,
 * oldest first) and taps (kernel_rows x taps_count floats): out = mix sum_k h[k] x[n - k] +
 * (1 - mix) x[n], the sum in float with fused multiply-adds, k ascending. */
cudaError_t cudafft_convolve_direct_launch(CudafftSampleFormat format, const void *raw,
                                           size_t frames, unsigned channels, const float *history,
                                           const float *taps, size_t taps_count,
                                           unsigned kernel_rows, float mix, void *out,
                                           cudaStream_t stream);

/* The direct path's next history: the last history_frames frames of (history_in, then the frames
 * at raw) to history_out (interleaved floats). history_frames > 0; in and out must differ. */
cudaError_t cudafft_convolve_history_launch(CudafftSampleFormat format, const void *raw,
                                            size_t frames, unsigned channels,
                                            const float *history_in, float *history_out,
                                            size_t history_frames, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
