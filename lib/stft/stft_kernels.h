/* stft_kernels.h: the STFT's kinds of work on the shared executor (executor.h) and their jobs.
 * Analysis: the input converted into signal rows behind the held samples, then window, FFT and
 * representation fused over the complete frames. Synthesis: inverse FFT and synthesis window fused,
 * then overlap-add (a drain is an overlap-add of no frames). Each kind's launches serve every job
 * of a batch, whatever its object's size, channels, format or representation (the fused kernels
 * launch once per FFT size present). Internal to the library; for .cu files only (CUDA types). */
#ifndef CUDAFFT_STFT_KERNELS_H
#define CUDAFFT_STFT_KERNELS_H

#include "batch_units.cuh"
#include "block_kernels.h"

#include <cudafft/stft.h>

#include <cuda_runtime.h>

/* The kernels of size n (analysis, synthesis): the fused power-of-two ones, or the mixed-radix ones
 * (twiddles.plan_kind kPlanMixed, the block FFT of n / 2 points for even n and of n for odd n);
 * NULL where n is not a supported size. */
const CudafftBlockKernels *cudafft_stft_kernels(size_t n);

/* One analysis job of an object: `samples` samples per channel appended (interleaved `format`
 * samples of `channels` channels from the job's input, or zeros), then frames x group transforms.
 *
 * Appending: channel c's samples go to append + c pitch, after `move` (the held samples moved to
 * the start of the object's other signal buffer, or an empty segment) has taken them out of the
 * way; both write different memory, so they run in one launch. Frames: frame f of channel
 * c0 + g reads the n samples at signal + (c0 + g) pitch + f hop, windowed, and writes its bins in
 * `representation` as output row f group + g. */
typedef struct {
  CudafftJob job; /* first: the kinds cast the CudafftJob pointers back */
  CudafftSampleFormat format;
  unsigned channels;
  size_t samples;
  int zeros; /* the samples are zeros: the job has no input */
  float *append;
  size_t pitch; /* floats per signal row */
  CudafftSegment move;
  size_t n, hop, frames;
  unsigned c0, group;
  const float *signal;
  const float *window;
  const float2 *twiddles;
  CudafftRepresentation representation;
} CudafftStftAnalysisJob;

/* One synthesis job: `frames` frames of `group` channels of complex bins (the job's input: frame f
 * channel g at row f group + g of n/2 + 1 bins) inverse-transformed and multiplied by the synthesis
 * window g into `rows` (row f group + g of n floats, the object's state), then overlap-added:
 * channel g's sums of frames x hop + n - hop samples start from its carried sums (tail_in, group
 * rows of n - hop; NULL: zeros); the first out_samples go to the job's output (interleaved over the
 * group) and the rest, unless tail_out is NULL, to tail_out. A drain is a job of no frames whose
 * out_samples is n - hop. */
typedef struct {
  CudafftJob job;
  size_t n, hop, frames;
  unsigned group;
  float *rows;
  const float *window;
  const float2 *twiddles;
  const float *tail_in;
  float *tail_out;
  size_t out_samples;
} CudafftStftSynthesisJob;

extern const CudafftWorkKind cudafft_stft_analysis_kind;
extern const CudafftWorkKind cudafft_stft_synthesis_kind;
/* CudafftSegmentJob: an object's window and twiddles uploaded into its state. */
extern const CudafftWorkKind cudafft_stft_tables_kind;

/* The auxiliary bytes of one job alone (what cudafft_executor_max_job_bytes() must also hold
 * beside its input). */
size_t cudafft_stft_analysis_aux_bytes(const CudafftStftAnalysisJob *job);
size_t cudafft_stft_synthesis_aux_bytes(const CudafftStftSynthesisJob *job);

#endif
