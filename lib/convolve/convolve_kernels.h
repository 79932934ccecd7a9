/* convolve_kernels.h: the convolution's kernels, built from the block FFT's device functions (the
 * N = 4096 point real FFT is the 2048-point complex block_fft with its real pre/post steps), and
 * launched in batches: one launch per stage serves the jobs of every convolution object in an
 * executor batch (lib/executor/executor.h), whatever their channel counts, formats, kernel lengths
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
/* Samples of one append unit of the direct path (one thread each). */
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
 * interleaved frames, k ascending with fused multiply-adds, in float for F32 (as the partitioned
 * path's single precision) and in double for F64 (so that a delta kernel returns the input's
 * bits); the taps, the history and the sum are in the format's type. The history is a ring of
 * the taps_count - 1 frames before the job's first (interleaved, frame j - (taps_count - 1) at
 * ring frame (history_head + j) mod (taps_count - 1)), so that a job adds only its own last
 * frames to it (the append units) instead of copying the whole window; the next job's head is
 * (history_head + frames) mod (taps_count - 1).
 * Direct units: tiles of CUDAFFT_CONVOLVE_DIRECT_TILE_CHANNELS(channels) channels by
 * CUDAFFT_CONVOLVE_DIRECT_TILE_FRAMES(channels) frames, unit = frame tile x channel tiles + channel
 * tile (the taps and the tile's input window are staged in shared memory, a chunk of taps at a
 * time). Append units: the last min(frames, taps_count - 1) frames' samples in runs of
 * CUDAFFT_CONVOLVE_DIRECT_UNIT (taps_count > 1). */
typedef struct {
  const void *in;
  void *out;
  void *history;    /* the ring (taps_count > 1) */
  const void *taps; /* kernel_rows x taps_count */
  size_t frames;
  double wet_gain, dry_gain; /* F32 jobs: the float gains, exactly */
  int format;
  int channels;
  int taps_count;
  int kernel_rows;
  int history_head;
} CudafftConvolveDirectJob;

/* The direct path's tiles: up to 32 channels (a warp's stores and shared-memory reads are then
 * adjacent) by 4 frames a thread over the rest of the 256 threads. */
#define CUDAFFT_CONVOLVE_DIRECT_TILE_CHANNELS(channels) ((channels) < 32 ? (channels) : 32)
#define CUDAFFT_CONVOLVE_DIRECT_TILE_FRAMES(channels)                                              \
  (4 * (256 / CUDAFFT_CONVOLVE_DIRECT_TILE_CHANNELS(channels)))

/* One job of the partitioned path for F64, in double end to end (cuFFT's D2Z and Z2D of N points
 * between the kernels below): `blocks` blocks of B frames of doubles. Transform b = q channels + c
 * is frame q of channel c (blocks q - 1 and q). Units of the deinterleave and output launches: the
 * job's interleaved samples [unit B, unit B + B); of the MAC launch: the transforms. */
typedef struct {
  const double *in;       /* blocks B x channels interleaved samples */
  double *out;            /* the same, the output */
  double *frames;         /* blocks x channels frames of N samples, frame b at b N */
  const double *previous; /* channels blocks: the block before the job's first */
  double *next_previous;  /* channels blocks: the job's last block goes here */
  const double2 *ring;    /* the delay line: slots x channels spectrum rows, (s, c) at s ch + c */
  const double2 *spectra; /* the kernel's: kernel_rows x partitions spectrum rows, scaled 1/N */
  double2 *sums;          /* blocks x channels spectrum rows: the MAC's sums, row b */
  const double *time;     /* blocks x channels frames: the sums' inverse transforms, frame b */
  double wet_gain, dry_gain;
  int channels;
  int kernel_rows;
  int partitions;
  int slots;
  int first_slot; /* the slot of the job's first block */
  int blocks;
} CudafftConvolveBlocks64Job;

/* One job of the double kernel spectra, before cuFFT's D2Z of its frames: unit p writes frame p
 * (N doubles at frames + p N): the taps [p B, p B + B) of `taps` (count doubles; zeros from count
 * on, so that units past the taps write zero frames and a whole batch of the plan is defined),
 * scaled by 1/N (exact: N is a power of two), zero-padded to N. */
typedef struct {
  const double *taps;
  double *frames;
  size_t count;
} CudafftConvolveSpectra64Job;

/* The split path (block size L below B, F32; convolve_split.h's schedule, run on the device): a
 * job is `frames` frames (whole blocks of L within one block of B: the j-th block of the stream,
 * from its frame `within` on; q = within + frames). The head (taps [0, a), a = B - L) and the
 * tail (taps a on, a uniformly partitioned filter of `partitions` blocks whose output z is added a
 * frames late) are filtered by these launches, in this order:
 * - gather: the job's input to the signal rows: frame within + i of channel c to
 *   signal[c 3B + 2B + within + i], next[c 3B + B + within + i] and after[c 3B + within + i] (the
 *   rows of blocks j, j + 1 and j + 2 each hold their block and the two before it);
 * - head: per channel, the forward FFT of the N input frames that end at q (signal row c from
 *   within + frames on), times the head's spectrum, the inverse FFT, and its last `frames` samples,
 *   the head's output for the job's frames (an N-point circular convolution with a kernel of a <=
 *   B taps is exact for its last N - a + 1 >= B + 1 samples), mixed with the input and written to
 *   out: one FFT convolution per push, where a direct sum costs a multiply-adds per sample;
 * - MAC: for the partitions [mac_first, mac_end) of 1..partitions - 1, acc[c] += X[j - p] H[row][p]
 *   (X[j - p] in ring slot (slot - p) mod partitions; the share from partition 1 on, the block's
 *   first, sets acc[c] instead): the sum of block j's earlier partitions is spread over the jobs
 *   of block j, mac_first and mac_end being the share of the job's pushes of L (none for the last,
 *   which has the transforms), so that no push carries a long tail's whole sum. A share needs no
 *   input of its push (only blocks before j), so the backend runs each one ahead, as the work
 *   ahead of the job before it (cudafft_convolve_split_mac_launch, after that job's batch is
 *   done): a live source's push then finds it done and its round trip has no MAC in it;
 * - transforms (the job completes block j only): the forward FFT of blocks j - 1 and j (signal row
 *   c from B on) to ring slot `slot` (= j mod partitions, whose X[j - partitions] the MAC no longer
 *   reads), then acc[c] + X[j] H[row][0] (X[j] H[row][0] alone for one partition), the inverse
 *   FFT, and the kept half to block tail_block (= j mod 2) of the tail ring: z[j B + i] at
 *   tail[c 2B + tail_block B + i];
 * - add: out[i] += wet_gain z[m] for the job's samples, m = n - a for output frame n, at tail ring
 *   frame m mod 2B (tail_from for its first frame; z before frame 0 is the ring's zeros).
 * Units: runs (gather, add): the job's frames x channels samples in runs of
 * CUDAFFT_CONVOLVE_SPLIT_RUN; head: the channels; MAC (where mac_first < mac_end): channels x
 * CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS, unit c chunks + k for bins [k B / chunks, (k + 1) B /
 * chunks) of channel c (and bin B in chunk 0); transforms (the job that completes block j): the
 * channels. */
#define CUDAFFT_CONVOLVE_SPLIT_RUN 1024
#define CUDAFFT_CONVOLVE_SPLIT_MAC_CHUNKS 4

typedef struct {
  const float *in;            /* frames x channels interleaved */
  float *out;                 /* the same */
  float *signal;              /* block j's rows: channels rows of 3B, blocks j - 2, j - 1 and j */
  float *next;                /* block j + 1's rows */
  float *after;               /* block j + 2's rows */
  const float2 *head_spectra; /* the head's: kernel_rows spectrum rows, scaled by 1/N */
  float2 *ring;               /* channels x partitions spectrum rows, (c, s) at c partitions + s */
  const float2 *spectra;      /* the tail's: kernel_rows x partitions, scaled by 1/N */
  float2 *acc;                /* channels spectrum rows */
  float *tail;                /* channels rows of 2B */
  size_t within;              /* the job's first frame in block j */
  size_t frames;
  size_t tail_from; /* the tail ring frame of the job's first output frame's z */
  float wet_gain, dry_gain;
  int channels;
  int kernel_rows; /* 1: one row for every channel */
  int partitions;
  int mac_first, mac_end;
  int slot;
  int tail_block;
} CudafftConvolveSplitJob;

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

/* The direct path's outputs, then the jobs' appends to their rings (CudafftConvolveDirectJob;
 * `count` direct units, `append_count` append units of the jobs with taps_count > 1). */
cudaError_t cudafft_convolve_direct_launch(const CudafftConvolveDirectJob *jobs,
                                           const CudafftConvolveUnit *units, size_t count,
                                           const CudafftConvolveUnit *append_units,
                                           size_t append_count, cudaStream_t stream);

/* The split path's launches (CudafftConvolveSplitJob): the gathers (`runs` units, run_units), the
 * heads (`heads`, head_units), the MACs (`macs`, mac_units), the forward FFTs and the finishing
 * sums and inverse FFTs (`transforms`, transform_units), then the adds (the run units again), in
 * that order on the stream. */
cudaError_t cudafft_convolve_split_launch(const CudafftConvolveSplitJob *jobs,
                                          const CudafftConvolveUnit *run_units, size_t runs,
                                          const CudafftConvolveUnit *head_units, size_t heads,
                                          const CudafftConvolveUnit *mac_units, size_t macs,
                                          const CudafftConvolveUnit *transform_units,
                                          size_t transforms, const float2 *twiddles,
                                          cudaStream_t stream);

/* The split path's MAC alone (`count` mac units, as in cudafft_convolve_split_launch): the work
 * ahead, the share of each job's next push (its mac_first, mac_end and slot say which). */
cudaError_t cudafft_convolve_split_mac_launch(const CudafftConvolveSplitJob *jobs,
                                              const CudafftConvolveUnit *units, size_t count,
                                              cudaStream_t stream);

/* F64 partitioned jobs, first stage: each job's interleaved input to its frames (every sample to
 * the second half of its block's frame and the first half of the next block's), the previous
 * block to the first halves of frame 0, and the job's last block to next_previous. `count` units:
 * every job's blocks x channels. */
cudaError_t cudafft_convolve_deinterleave64_launch(const CudafftConvolveBlocks64Job *jobs,
                                                   const CudafftConvolveUnit *units, size_t count,
                                                   cudaStream_t stream);

/* After the forward D2Z of each frame b into ring slot (first_slot + q) mod slots: the sums
 * sum_p X[q - p] H[row][p] (slot newest - p) in double to sums row b, for every unit b. */
cudaError_t cudafft_convolve_mac64_launch(const CudafftConvolveBlocks64Job *jobs,
                                          const CudafftConvolveUnit *units, size_t count,
                                          cudaStream_t stream);

/* After the inverse Z2D of each sums row into `time`: the second half of each frame, mixed with
 * the block's input (the frame's second half in `frames`), written interleaved to out. Units as
 * the deinterleave's. */
cudaError_t cudafft_convolve_output64_launch(const CudafftConvolveBlocks64Job *jobs,
                                             const CudafftConvolveUnit *units, size_t count,
                                             cudaStream_t stream);

/* The frames of the double kernel spectra (CudafftConvolveSpectra64Job), one unit per frame. */
cudaError_t cudafft_convolve_spectra64_frames_launch(const CudafftConvolveSpectra64Job *jobs,
                                                     const CudafftConvolveUnit *units, size_t count,
                                                     cudaStream_t stream);

/* The ranges of `count` fill jobs (one row of thread blocks per job; count <= 65535), the longest
 * range `longest` elements. */
cudaError_t cudafft_convolve_fill_launch(const CudafftConvolveFillJob *jobs, size_t count,
                                         size_t longest, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
