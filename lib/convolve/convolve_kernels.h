/* convolve_kernels.h: the convolution's kernels, built from the block FFT's device functions (the
 * N = 4096 point real FFT is the 2048-point complex block_fft with its real pre/post steps), and
 * launched in batches: one launch per stage serves the jobs of every convolution object in an
 * executor batch (lib/common/executor.h), whatever their channel counts, formats, kernel lengths
 * or sizes. Internal to the library (it speaks CUDA types); the kernel benchmark calls these
 * launches and the planar fused launch.
 *
 * A batched launch takes device arrays of per-job descriptors (one struct per job, below) and a
 * map from work unit to job (CudafftConvolveUnit): thread block u of a launch does unit
 * units[u].unit of job units[u].job, so that jobs of any size share a launch without a search.
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
 *   job's blocks; frame q of channel c (blocks q - 1 and q) is row c + [q B, q B + N). Two sets
 *   of rows alternate between jobs: the deinterleave writes the job's last block to the front of
 *   the other set as well, which saves a copy (a launch) per job.
 * - interleaved samples: frame-major, F32 or F64 (CudafftSampleFormat). */
#ifndef CUDAFFT_CONVOLVE_KERNELS_H
#define CUDAFFT_CONVOLVE_KERNELS_H

#include "twiddles.h"

#include <cudafft/convolve.h>

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAFFT_CONVOLVE_BINS (CUDAFFT_CONVOLVE_BLOCK + 1)
#define CUDAFFT_CONVOLVE_BIN_PITCH (CUDAFFT_CONVOLVE_BLOCK + 16)
/* Samples of one unit of the direct path's launches (one thread each). */
#define CUDAFFT_CONVOLVE_DIRECT_UNIT 256
/* Ranges of one job of the fill launch. */
#define CUDAFFT_CONVOLVE_FILL_RANGES 3

/* Thread block u of a batched launch does unit `unit` of job `job` (an index into the launch's
 * descriptors). */
typedef struct {
  uint32_t job;
  uint32_t unit;
} CudafftConvolveUnit;

/* One job of the partitioned path: `blocks` blocks of B frames. Its units are the blocks x
 * channels transforms, unit q channels + c for frame q of channel c (for the deinterleave: the
 * job's interleaved samples [unit B, unit B + B)). */
typedef struct {
  const void *in;           /* blocks B x channels interleaved samples in `format` */
  void *out;                /* the same, the output */
  float *signal;            /* the job's set of signal rows */
  float *next;              /* the other set, whose front the job's last block goes to */
  float2 *ring;             /* the delay line (partitions > 1) */
  const float2 *spectra;    /* the kernel's, kernel_rows x partitions */
  size_t pitch;             /* of the signal rows, in floats */
  float wet_gain, dry_gain; /* mix, 1 - mix */
  int format;               /* CudafftSampleFormat: F32 or F64 */
  int channels;
  int kernel_rows; /* 1: one row for every channel */
  int partitions;  /* P */
  int slots;       /* of the delay line (partitions > 1) */
  int first_slot;  /* the slot of the job's first block (partitions > 1) */
  int blocks;
} CudafftConvolveBlocksJob;

/* One job of the kernel spectra: taps [p B, p B + B) of `taps` (count doubles; zeros from count
 * on), zero-padded to N points, transformed, scaled by 1/N, to spectrum row p of `spectra`; unit p
 * for p = 0..ceil(count / B) - 1. The taps are rounded to float as the kernel reads them. */
typedef struct {
  const double *taps;
  float2 *spectra;
  size_t count;
} CudafftConvolveSpectraJob;

/* One job of the direct path: out = mix sum_k h[k] x[n - k] + (1 - mix) x[n] over `frames`
 * interleaved frames, the sum in float with fused multiply-adds, k ascending, the taps_count - 1
 * frames before the job's first from `history` (interleaved floats, oldest first); then the last
 * taps_count - 1 frames of (history, the job's input) to next_history (taps_count > 1; the two
 * differ). Direct units: output samples [unit U, unit U + U) (U = CUDAFFT_CONVOLVE_DIRECT_UNIT);
 * history units: next_history's samples [unit U, unit U + U). */
typedef struct {
  const void *in;
  void *out;
  const float *history;
  float *next_history;
  const float *taps; /* kernel_rows x taps_count */
  size_t frames;
  float wet_gain, dry_gain;
  int format;
  int channels;
  int taps_count;
  int kernel_rows;
} CudafftConvolveDirectJob;

typedef enum {
  CUDAFFT_CONVOLVE_FILL_ZERO = 0, /* count zero words to dst */
  CUDAFFT_CONVOLVE_FILL_COPY,     /* count 4-byte words from src to dst */
  CUDAFFT_CONVOLVE_FILL_NARROW    /* count doubles from src rounded to floats at dst */
} CudafftConvolveFillOp;

/* dst and src (4-byte aligned) of `count` elements; count 0: nothing. */
typedef struct {
  void *dst;
  const void *src;
  size_t count;
  int op; /* CudafftConvolveFillOp */
} CudafftConvolveFillRange;

/* One job of the fill launch: its ranges, one after another (they must not overlap). */
typedef struct {
  CudafftConvolveFillRange ranges[CUDAFFT_CONVOLVE_FILL_RANGES];
} CudafftConvolveFillJob;

/* The block FFTs whose twiddle tables every FFT launch takes, in the order of its table (the
 * tables one after another): the wide plan of the N-point real transforms, then the narrow one
 * (the MAC's inverse FFT); *count receives how many. Every launch reads one table. */
const CudafftTwiddlePlan *cudafft_convolve_twiddle_plans(int *count);

/* The launches: `count` units (count <= INT_MAX; 0 launches nothing), jobs and units on the
 * device. Each returns the launch's error. */

/* Kernel spectra (CudafftConvolveSpectraJob). */
cudaError_t cudafft_convolve_spectra_launch(const CudafftConvolveSpectraJob *jobs,
                                            const CudafftConvolveUnit *units, size_t count,
                                            const float2 *twiddles, cudaStream_t stream);

/* Partitioned jobs, first stage: each job's interleaved input to its signal rows (channel c's
 * frame i to signal[c pitch + B + i]), and its last block to the front of `next` (next[c pitch +
 * i]). Units as in CudafftConvolveBlocksJob: every job's. */
cudaError_t cudafft_convolve_deinterleave_launch(const CudafftConvolveBlocksJob *jobs,
                                                 const CudafftConvolveUnit *units, size_t count,
                                                 cudaStream_t stream);

/* Jobs with partitions > 1, after the deinterleave: forward FFTs of frame q of every channel's
 * signal row into the ring: frame q of channel c to slot (first_slot + q) mod slots (blocks <=
 * slots, first_slot < slots). */
cudaError_t cudafft_convolve_forward_launch(const CudafftConvolveBlocksJob *jobs,
                                            const CudafftConvolveUnit *units, size_t count,
                                            const float2 *twiddles, cudaStream_t stream);

/* The same jobs, after the forward FFTs: output block q of channel c (block q's spectrum in slot
 * (first_slot + q) mod slots, the P - 1 before it in the slots before; partitions <= slots):
 * sum_p X[q - p] H[row][p], inverse FFT, second half, wet_gain that + dry_gain the block's input
 * (signal row + B + q B), written interleaved in `format` to out. row is c when kernel_rows > 1,
 * else 0. */
cudaError_t cudafft_convolve_mac_launch(const CudafftConvolveBlocksJob *jobs,
                                        const CudafftConvolveUnit *units, size_t count,
                                        const float2 *twiddles, cudaStream_t stream);

/* Jobs with one partition (P = 1), after the deinterleave: forward FFT of frame q, times H[row][0],
 * inverse FFT, second half, mixed and written as the MAC does, all in one kernel: each input block
 * is read (twice: as the new and as the old half of a frame) and each output sample written once.
 */
cudaError_t cudafft_convolve_fused_launch(const CudafftConvolveBlocksJob *jobs,
                                          const CudafftConvolveUnit *units, size_t count,
                                          const float2 *twiddles, cudaStream_t stream);

/* The fused kernel on planar floats, for the kernel benchmark: block b reads N samples at
 * in + b in_hop (16-byte aligned), multiplies its spectrum by the one spectrum row H, and writes
 * samples keep_from..N-1 of the circular convolution to out + b out_hop (keep_from 0: all N, as
 * for independent blocks; B: the valid half of overlap-save; out_hop even). */
cudaError_t cudafft_convolve_fused_planar_launch(const float *in, size_t in_hop, size_t blocks,
                                                 const float2 *spectrum, float *out, size_t out_hop,
                                                 size_t keep_from, const float2 *twiddles,
                                                 cudaStream_t stream);

/* The direct path's outputs, then its next histories (CudafftConvolveDirectJob; `count` direct
 * units, `history_count` history units of the jobs with taps_count > 1). */
cudaError_t cudafft_convolve_direct_launch(const CudafftConvolveDirectJob *jobs,
                                           const CudafftConvolveUnit *units, size_t count,
                                           const CudafftConvolveUnit *history_units,
                                           size_t history_count, cudaStream_t stream);

/* The ranges of `count` fill jobs (one row of thread blocks per job; count <= 65535), the longest
 * range `longest` elements. */
cudaError_t cudafft_convolve_fill_launch(const CudafftConvolveFillJob *jobs, size_t count,
                                         size_t longest, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
