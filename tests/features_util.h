/* features_util.h: what the features tests share: the reader of the reference files that
 * tests/make_feature_refs.py writes (the .cfr files of tests/features_data, the format in its
 * docstring), and a run of a features object over a whole signal in pushes of random sizes with
 * every count, stamp and unwritten byte checked on the way. Plain C; public headers only. */
#ifndef CUDAFFT_FEATURES_UTIL_H
#define CUDAFFT_FEATURES_UTIL_H

#include "test_util.h"

#include <cudafft/features.h>

#include <stddef.h>
#include <stdint.h>

/* One array of a .cfr file, floats (int16 files are read as their integer values). dims[ndim - 1]
 * columns are stored; columns up to `full` hold `tail`. */
typedef struct {
  unsigned ndim;
  size_t dims[4];
  size_t full; /* the last dimension's length with the tail */
  float tail;
  size_t count; /* stored values */
  float *values;
  int16_t *samples; /* int16 files: the raw samples too */
} FeaturesRef;

/* Reads <dir>/<name>.cfr; ends the run (test_abort) where it is missing or damaged. */
void features_ref_load(FeaturesRef *ref, const char *dir, const char *name);
void features_ref_clear(FeaturesRef *ref);
/* Value [i][j] of a 2-D reference (the tail past the stored columns). */
float features_ref_at2(const FeaturesRef *ref, size_t i, size_t j);

/* The outputs of one run. */
typedef struct {
  size_t outputs;
  size_t output_bytes;
  unsigned char *data;          /* outputs x output_bytes */
  CudafftFeaturesStamp *stamps; /* one per output */
  int ok;                       /* every count and stamp held (failures were reported) */
} FeaturesRun;

/* Runs config over `samples` samples per channel of interleaved `in` (config->format) on
 * backend: pushes of sizes drawn from rng between 1 and max_piece (0: one push of everything),
 * then finish. Each push's output buffer is poisoned beforehand and must be written exactly as
 * far as cudafft_features_outputs_for() said; finish as cudafft_features_finish_outputs() said;
 * the stamps are read after each call. label names the run in failures. */
void features_run(FeaturesRun *run, CudafftBackend backend, const CudafftFeaturesConfig *config,
                  const void *in, size_t samples, TestRng *rng, size_t max_piece,
                  const char *label);
void features_run_clear(FeaturesRun *run);

/* Value v of output o of a run in F32 or F16 (converted exactly to float). */
float features_run_value(const FeaturesRun *run, CudafftFeaturesPrecision precision, size_t o,
                         size_t v);

/* Kaldi's edges with a hop far past the span (2 channels, 50-sample windows every 1600 samples):
 * frame f starts at f hop + hop/2 - L/2 (frame 0 at sample 775), with no padding before the first
 * sample; the last one reflected at the end. The model test and the host kernel test both run it.
 */
void features_config_kaldi_long_hop(CudafftFeaturesConfig *c);

/* float of an IEEE half (exact). */
float features_half_to_float(uint16_t h);

#endif
