/* features_kernels.h: the features engine's kind of work on the shared executor (executor.h) and
 * its job: one step of features_step.h, whose five batched kernels each serve every job of a
 * batch:
 *   1. append: the interleaved input (the job's, staged or in device memory) scaled into the
 *      channels' circular history rows;
 *   2. frames: the fused frame kernel, one block FFT group per frame and channel (mixed_fft.cuh,
 *      launched once per transform size in the batch): the frame from the history through the
 *      padding's map, dither, DC removal, pre-emphasis, window, zero padding, the real FFT, the
 *      spectrum value, the sparse mel bank, the log and the energy; into the ring, or (direct
 *      objects: frames out, no range, no deltas) through the DCT and lifter straight to the
 *      output;
 *   3. floors: each unit's range floor, a reduction over its frames' log-mel values;
 *   4. base: each frame's base vector (range clamp, affine, DCT with lifter, energy) into the
 *      object's base rows;
 *   5. out: deltas, padding, layout and precision into the output.
 * Their bodies: features_kernel_math.cuh. Internal to the library; for .cu files only. */
#ifndef CUDAFFT_FEATURES_KERNELS_H
#define CUDAFFT_FEATURES_KERNELS_H

#include "batch_units.cuh"
#include "features_kernel_math.cuh"
#include "features_step.h"

#include <cuda_runtime.h>

#include <cstdint>

typedef struct {
  CudafftJob job; /* first: the kind casts the CudafftJob pointers back */
  CudafftFeaturesObject o;
  CudafftFeaturesStep step; /* its input and output are the job's device_in and device_out */
} CudafftFeaturesStepJob;

extern const CudafftWorkKind cudafft_features_step_kind;
/* CudafftSegmentJob: an object's tables uploaded into its state. */
extern const CudafftWorkKind cudafft_features_tables_kind;

/* A batch's auxiliary data as the kernels read it: each job's descriptor, each stage's prefix
 * sums of work items over the jobs (count + 1 each; the frames' over `order`, the jobs sorted by
 * fft size, which the frame kernel's launches follow). tests/test_features_kernels.cu walks it on
 * the host. */
typedef struct {
  const CudafftFeaturesDesc *descs;
  const uint64_t *append, *frames, *floors, *base, *out;
  const uint32_t *order;
} CudafftFeaturesAuxView;

CudafftFeaturesAuxView cudafft_features_aux_view(const void *aux, size_t count);

/* Threads per transform group, transforms per block and dynamic shared memory per block of the
 * frame kernel for an fft size with n_mels bands. */
void cudafft_features_frame_shape(uint32_t fft_size, uint32_t n_mels, int *threads, int *per_block,
                                  size_t *smem);

/* Lets the frame kernels use the current device's most dynamic shared memory. */
cudaError_t cudafft_features_kernels_prepare(void);

#endif
