/* features_driver.h: the order of a features object's work, shared by both backends: a push or a
 * finish becomes appends of samples, frames made (into the backend's ring of per-frame values)
 * and output units written, cut at chunk boundaries and into pieces the backend's buffers hold,
 * by the counts of features_timeline.h. A backend supplies the four operations; the driver calls
 * them in order and keeps the utterance's counts. Host code (C and the CUDA backend's host
 * side). Internal to the library.
 *
 * The backend's state the operations maintain: the utterance's samples (scaled and, with SIGNAL
 * pre-emphasis, filtered) from cudafft_features_history_start() on, and the ring: the per-frame
 * values (the mel or log-mel values and the energy) of the last cudafft_features_ring_frames()
 * frames made, frame f in slot f mod that count. */
#ifndef CUDAFFT_FEATURES_DRIVER_H
#define CUDAFFT_FEATURES_DRIVER_H

#include "features_timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* No right edge known yet (the utterance has not ended). */
#define CUDAFFT_FEATURES_UNKNOWN UINT64_MAX

/* Output units to write: FRAMES: frames first .. first + count - 1 of the utterance, one output
 * each; WINDOWS: windows first .. first + count - 1 of the utterance; CHUNKS: its one window
 * (first 0, count 1). */
typedef struct {
  uint64_t first, count;
  uint64_t kept;    /* the utterance's kept frames once it has ended; else UNKNOWN */
  uint64_t made;    /* frames made so far (in the ring) */
  size_t out_index; /* the first unit's output number within the call (its place in out) */
} CudafftFeaturesUnits;

typedef struct {
  void *ctx;
  /* Appends count samples per channel (interleaved; in NULL: zeros; in_on_device: device
   * memory) to the utterance, which held `at` samples. */
  CudafftStatus (*append)(void *ctx, const void *in, size_t count, int in_on_device, uint64_t at);
  /* Makes frames f0 .. f1 - 1 into the ring from the utterance's `length` samples; `ended`:
   * the utterance ends there (positions past it come from the padding). */
  CudafftStatus (*make_frames)(void *ctx, uint64_t f0, uint64_t f1, uint64_t length, int ended);
  CudafftStatus (*write_units)(void *ctx, const CudafftFeaturesUnits *units);
  /* The utterance has ended: the next append starts a new one (a chunk, or after finish). */
  void (*end_utterance)(void *ctx);
} CudafftFeaturesOps;

typedef struct {
  CudafftFeaturesTimeline t;
  size_t piece;        /* samples per append at most */
  uint64_t utterance;  /* samples of the current utterance */
  uint64_t made;       /* its frames made */
  uint64_t written;    /* its units written */
  size_t call_outputs; /* outputs written by the current call */
} CudafftFeaturesDriver;

/* A driver for a configuration whose backend appends at most `piece_frames` x hop samples at
 * once (at least one sample). */
void cudafft_features_driver_init(CudafftFeaturesDriver *d, const CudafftFeaturesConfig *config,
                                  size_t piece_frames);
/* Forgets the utterance (reset, a failure). */
void cudafft_features_driver_reset(CudafftFeaturesDriver *d);

/* One push (samples, in as the append operation takes it; in_frame_bytes per sample of every
 * channel) and, with `finish`, the end of the stream: every operation in order, the first
 * failure returned (the driver is reset then). *outputs: the outputs written. */
CudafftStatus cudafft_features_drive(CudafftFeaturesDriver *d, const CudafftFeaturesOps *ops,
                                     const void *in, size_t samples, size_t in_frame_bytes,
                                     int in_on_device, int finish, size_t *outputs);

/* Ring slots a backend needs for pieces of piece_frames frames. */
uint64_t cudafft_features_ring_frames(const CudafftFeaturesConfig *config, size_t piece_frames);

/* The first sample of the utterance a backend must still keep once `made` frames are made from
 * `length` samples: what later frames read, and the end's reflection. */
uint64_t cudafft_features_history_start(const CudafftFeaturesTimeline *t, uint64_t made,
                                        uint64_t length);

#ifdef __cplusplus
}
#endif

#endif
