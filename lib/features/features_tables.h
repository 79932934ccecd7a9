/* features_tables.h: the tables a features object computes with, made once by the front end in
 * double precision from the configuration (cudafft/features.h steps 2, 5, 8 and 10) and copied
 * by both backends: the window, the mel bank as each filter's first bin and weights, the DCT rows
 * with the lifter, and the Savitzky-Golay coefficients. Internal to the library. */
#ifndef CUDAFFT_FEATURES_TABLES_H
#define CUDAFFT_FEATURES_TABLES_H

#include <cudafft/features.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One mel filter: its nonzero weights, bins first .. first + count - 1 (count 0: empty). */
typedef struct {
  unsigned first, count;
  unsigned offset; /* of its first weight in the weights array */
} CudafftMelFilter;

typedef struct {
  float *window; /* L values */
  size_t window_length;
  CudafftMelFilter *filters; /* n_mels */
  float *weights;            /* every filter's weights, one after another */
  size_t weight_count;
  float *dct;    /* MFCC: n_mfcc rows of n_mels (the lifter folded in separately) */
  float *lifter; /* MFCC: n_mfcc factors (1 without a lifter) */
  /* SAVGOL deltas: for order 1 and 2, width rows of width coefficients; NULL otherwise */
  float *savgol[2];
  float regression_norm; /* 1 / (2 sum_n=1..N n^2) */
  float bin_scale;       /* s of step 4: 1, 1 / n or 1 / sum w^2 */
} CudafftFeaturesTables;

/* w[i] of step 2, in double. */
double cudafft_features_window_value(CudafftFeaturesWindow window, int symmetric, size_t length,
                                     size_t i);

/* sum w[i]^2 over the window of `config` (win_length, or fft_size where 0): what normalized 2
 * divides by. */
double cudafft_features_window_energy(const CudafftFeaturesConfig *config);

/* mel(f) and its inverse for `scale`. */
double cudafft_features_hz_to_mel(CudafftMelScale scale, double hz);
double cudafft_features_mel_to_hz(CudafftMelScale scale, double mel);

/* The upper mel band edge f_hi of a configuration (f_max <= 0: Nyquist + f_max). */
double cudafft_features_f_high(const CudafftFeaturesConfig *config);

/* W[j][k] for every bin k = 0 .. n / 2 of filter j, in double (step 5): `row` holds n / 2 + 1
 * values. */
void cudafft_features_filter_row(const CudafftFeaturesConfig *config, unsigned j, double *row);

/* Makes the tables of a valid configuration; HOST_OUT_OF_MEMORY with a message where there is
 * no memory (what was made is freed). */
CudafftStatus cudafft_features_tables_make(const CudafftFeaturesConfig *config,
                                           CudafftFeaturesTables *tables);
void cudafft_features_tables_free(CudafftFeaturesTables *tables);

#ifdef __cplusplus
}
#endif

#endif
