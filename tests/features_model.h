/* features_model.h: cudafft/features.h restated in double precision, independently of the
 * library (its own windows, mel banks, padding, DFTs through FFTW double, deltas): the features a
 * configuration gives for a whole signal, output by output, as the engine must write them after
 * every push and the finish. Plain C. */
#ifndef CUDAFFT_FEATURES_MODEL_H
#define CUDAFFT_FEATURES_MODEL_H

#include <cudafft/features.h>

#include <stddef.h>

typedef struct {
  size_t outputs;
  size_t values;  /* per output: channels x frames x features */
  double *data;   /* outputs x values, in the output's layout */
  size_t *frames; /* per output: its real frames (a padded window has fewer) */
} FeaturesModel;

/* The outputs of config for `samples` samples per channel of interleaved raw input in
 * config->format. */
void features_model(FeaturesModel *model, const CudafftFeaturesConfig *config, const void *raw,
                    size_t samples);
void features_model_clear(FeaturesModel *model);

#endif
