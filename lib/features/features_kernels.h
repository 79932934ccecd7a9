/* features_kernels.h: the features engine's kind of work on the shared executor (executor.h) and
 * its job: one step of the driver (features_driver.h), which appends samples to an object's
 * history, makes frames into its ring and writes output units, in up to five kernels that each
 * serve every job of a batch:
 *   1. append: the interleaved input (the job's, staged or in device memory) scaled into the
 *      channels' circular history rows;
 *   2. frames: the fused frame kernel, one block FFT group per frame and channel (mixed_fft.cuh,
 *      launched once per transform size in the batch): the frame from the history through the
 *      padding's map, dither, DC removal, pre-emphasis, window, zero padding, the real FFT, the
 *      spectrum value, the sparse mel bank, the log and the energy; into the ring, or (direct
 *      jobs: frames out, no range, no deltas) through the DCT and lifter straight to the output;
 *   3. floors: each unit's range floor, a reduction over its frames' log-mel values;
 *   4. base: each frame's base vector (range clamp, affine, DCT with lifter, energy) into the
 *      object's base rows;
 *   5. out: deltas, padding, layout and precision into the output.
 * Internal to the library; for .cu files only (CUDA types). */
#ifndef CUDAFFT_FEATURES_KERNELS_H
#define CUDAFFT_FEATURES_KERNELS_H

#include "batch_units.cuh"

#include <cudafft/features.h>

#include <cuda_runtime.h>

#include <cstdint>

/* An object's device state and settings, the same for each of its jobs. The history is channels
 * rows of history_capacity samples, utterance sample p at row[p mod capacity]; the ring and the
 * base rows hold frame f at slot f mod ring_frames (ring: ring_values floats a slot, the mel or
 * log-mel values then the energy; base: base_features); floors: one float per channel and slot. */
struct CudafftFeaturesObject {
  /* tables */
  const float *window;
  const uint32_t *filters; /* first, count, offset per mel band */
  const float *weights, *dct, *lifter, *savgol[2];
  const float2 *twiddles;
  /* state */
  float *history, *ring, *base, *floors;
  uint32_t channels, history_capacity, ring_frames, ring_values;
  uint32_t n_mels, n_mfcc, base_features, features;
  uint32_t length, fft_size, hop;
  int32_t start_offset; /* frame f's window starts at f hop - start_offset */
  int32_t pad, zero_end, kind, log, energy, power, remove_dc, preemphasis;
  int32_t delta_order, delta_style, delta_reach, precision, layout, output, direct, format;
  float log_floor, db_offset, log_energy_floor, bin_scale, preemph_coeff, dither, sample_scale;
  float range, shift, scale, regression_norm, pad_value;
  uint64_t dither_seed;
  uint32_t window_frames, window_stride;
};

/* One step. append: `append_count` samples per channel at utterance sample append_at (from the
 * job's input, or zeros). frames: f0 .. f1 - 1 of an utterance of `length` samples (positions at
 * or past it padded when it has ended: `ended`). units: FRAMES: frames first .. first + count - 1
 * (their deltas reading the frames made so far, `made`, and the utterance's kept frames `kept`
 * once known, else CUDAFFT_FEATURES_UNKNOWN); WINDOWS and CHUNKS: windows first .. first + count
 * - 1 of channels c0 .. c0 + group - 1 (a job of several units holds every channel), written to
 * the job's output (units x group x frames x features values). A direct job's units are its
 * frames. */
typedef struct {
  uint64_t append_at;
  uint32_t append_count;
  int has_input;
  uint64_t f0, f1, length;
  int ended;
  uint64_t first, count, kept, made;
  uint32_t c0, group;
} CudafftFeaturesStep;

typedef struct {
  CudafftJob job; /* first: the kind casts the CudafftJob pointers back */
  CudafftFeaturesObject o;
  CudafftFeaturesStep step;
} CudafftFeaturesStepJob;

extern const CudafftWorkKind cudafft_features_step_kind;
/* CudafftSegmentJob: an object's tables uploaded into its state. */
extern const CudafftWorkKind cudafft_features_tables_kind;

/* Threads per transform group and dynamic shared memory per block of the frame kernel for an
 * fft size with n_mels bands; per_block transforms a block. smem_optin: the device's most. */
void cudafft_features_frame_shape(uint32_t fft_size, uint32_t n_mels, int *threads, int *per_block,
                                  size_t *smem);

/* The most dynamic shared memory the frame kernels may use, set once per device. */
cudaError_t cudafft_features_kernels_prepare(void);

/* The auxiliary bytes of one job alone. */
size_t cudafft_features_step_aux_bytes(const CudafftFeaturesStepJob *job);

#endif
