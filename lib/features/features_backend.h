/* features_backend.h: what the features front end (features.c) asks of a backend. Internal to the
 * library.
 *
 * The front end validates the configuration, makes the tables (features_tables.h) and keeps the
 * stream's counts; a backend runs each call through the shared driver (features_driver.h), whose
 * operations it supplies, and keeps the utterance's samples and per-frame values. */
#ifndef CUDAFFT_FEATURES_BACKEND_H
#define CUDAFFT_FEATURES_BACKEND_H

#include "backend_table.h"
#include "features_tables.h"

#include <cudafft/features.h>

#include <stdint.h>

/* What an object is made for; the front end has validated it. */
typedef struct {
  CudafftFeaturesConfig config; /* win_length resolved (never 0) */
  CudafftFeaturesShape shape;
  const CudafftFeaturesTables *tables; /* the backend copies what it keeps */
  int device_id;                       /* CUDA backend: the device (as chosen: backend_choice.h) */
} CudafftFeaturesSpec;

/* One push (samples appended from in, or zeros where in is NULL) and, with finish, the end of
 * the stream; the `outputs` outputs it completes written to out, one after another. pushed and
 * outputs_done are the front end's counts before the call (samples and outputs since
 * create/reset/finish), which the backend's own follow: where they differ (the front end forgot
 * the stream after a failure, or was reset) the backend forgets its utterance too. run returns
 * when out is written, or (CUDA, done) once its work is queued; a failure leaves nothing queued
 * and the stream forgotten. */
typedef struct {
  const void *in;
  size_t samples;
  int finish;
  void *out;
  size_t outputs;
  uint64_t pushed;
  uint64_t outputs_done;
  int in_on_device, out_on_device; /* CUDA only */
  CudafftFence after;              /* CUDA only: as CudafftStftJob's */
  CudafftFence *done;
} CudafftFeaturesJob;

typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftFeaturesSpec, CudafftFeaturesJob) CudafftFeaturesBackend;

/* The CPU table; the CUDA table in CUDA builds only. */
CUDAFFT_BACKEND_TABLE_DECL const CudafftFeaturesBackend cudafft_features_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftFeaturesBackend cudafft_features_cuda_backend;

#endif
