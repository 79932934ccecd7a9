/* features_step.h: how the CUDA backend cuts a features call into jobs, in plain C so that the
 * host test (tests/test_features_kernels.cu) runs the same code: the driver's operations
 * (features_driver.h) become steps, each an append of samples to the object's history and the
 * frames and output units that follow it, handed to `submit` (the executor's job, or the test's
 * host run of the kernels' bodies). A step's units of windows go in several jobs where a window of
 * every channel exceeds a job (channel groups), or where windows whose range clamps differ would
 * share frames' base rows in one job. Internal to the library.
 *
 * The object's device state (CudafftFeaturesObject): the history is channels rows of
 * history_capacity samples, utterance sample p at row[p mod capacity]; the ring and the base rows
 * hold frame f at slot f mod ring_frames (ring: ring_values floats a slot, the mel or log-mel
 * values then the energy; base: base_features floats); floors: one float per channel and slot. */
#ifndef CUDAFFT_FEATURES_STEP_H
#define CUDAFFT_FEATURES_STEP_H

#include "features_driver.h"
#include "features_tables.h"

#include <cudafft/features.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An object's state and settings as its kernels read them, the same for each of its steps. */
typedef struct {
  /* tables */
  const float *window;
  const uint32_t *filters; /* first, count, offset per mel band */
  const float *weights, *dct, *lifter, *savgol[2];
  const void *twiddles; /* mixed_fft.cuh's table of the transform's plan (float2 values) */
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
} CudafftFeaturesObject;

/* One step. append: `append_count` samples per channel at utterance sample append_at (from the
 * step's input, or zeros). frames: f0 .. f1 - 1 of an utterance of `length` samples (positions at
 * or past it padded when it has ended). units: FRAMES: frames first .. first + count - 1 (their
 * deltas reading the frames made so far, `made`, and the utterance's kept frames `kept` once
 * known, else CUDAFFT_FEATURES_UNKNOWN); WINDOWS and CHUNKS: windows first .. first + count - 1 of
 * channels c0 .. c0 + group - 1 (a step of several units holds every channel), written to the
 * step's output (units x group x frames x features values). A direct object's units are the
 * step's frames, written by the frame kernel. */
typedef struct {
  uint64_t append_at;
  uint32_t append_count;
  int has_input;
  uint64_t f0, f1, length;
  int ended;
  uint64_t first, count, kept, made;
  uint32_t c0, group;
} CudafftFeaturesStep;

/* A step with its input (the append's samples: host or device memory as the call says, NULL for
 * zeros; in_bytes of them) and its output (out_bytes at out, NULL for none). */
typedef struct {
  CudafftFeaturesStep step;
  const void *in;
  size_t in_bytes;
  unsigned char *out;
  size_t out_bytes;
} CudafftFeaturesWork;

/* Whether a configuration's frames go straight from the frame kernel to the output (frames out,
 * no range clamp, no deltas): no ring, no later kernels. */
int cudafft_features_direct_output(const CudafftFeaturesConfig *c);

/* The settings of a configuration's objects (every member but the tables' and state's pointers,
 * which the caller sets). */
void cudafft_features_object_describe(CudafftFeaturesObject *o, const CudafftFeaturesConfig *c,
                                      const CudafftFeaturesShape *shape,
                                      const CudafftFeaturesTables *tables, size_t history_capacity,
                                      size_t ring_frames);

typedef struct {
  CudafftFeaturesConfig config;
  CudafftFeaturesShape shape;
  CudafftFeaturesDriver driver;
  size_t history_capacity, ring_frames; /* what the state must hold */
  size_t in_frame_bytes;
  unsigned group;        /* channels of a window step */
  size_t units_per_step; /* window units of a step of every channel */
  /* where steps go: submit(ctx, work) queues one; its failure ends the call */
  CudafftStatus (*submit)(void *ctx, const CudafftFeaturesWork *work);
  void *ctx;
  /* the call */
  unsigned char *out;
  int in_on_device;
  /* the step being built: its append waits for the frames and units that follow it */
  int pending;
  CudafftFeaturesStep step;
  const void *step_in;
} CudafftFeaturesStepper;

/* Sizes a stepper for a configuration whose steps' input and output each hold at most `budget`
 * bytes (aux_reserve of the input side kept for the job's own data): the pieces, the history and
 * the ring, the channel groups. UNSUPPORTED, with a message, where a hop of samples or one frame
 * (frames out) or one channel's window exceeds them. */
CudafftStatus cudafft_features_stepper_init(CudafftFeaturesStepper *s,
                                            const CudafftFeaturesConfig *config,
                                            const CudafftFeaturesShape *shape, size_t budget,
                                            size_t aux_reserve);

/* One call (cudafft_features_drive's arguments): its steps submitted in order; out receives the
 * outputs (host or device memory: the submit's business). */
CudafftStatus cudafft_features_stepper_run(CudafftFeaturesStepper *s, const void *in,
                                           size_t samples, int in_on_device, int finish, void *out,
                                           size_t *outputs);

/* Forgets the utterance (reset, a failure). */
void cudafft_features_stepper_reset(CudafftFeaturesStepper *s);

#ifdef __cplusplus
}
#endif

#endif
