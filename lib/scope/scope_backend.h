/* scope_backend.h: what the spectrum scope's front end (scope.c) asks of a backend. Internal to the
 * library. The table has the shape every engine's has (lib/fft/fft_backend.h): create, destroy,
 * run, reset, stream.
 *
 * The front end validates the configuration, computes the window and every layout table (which
 * bins make each band, which band each pixel row or column shows) and the per-frame constants; a
 * backend keeps the audio history and the display state, runs the analysis and draws, by the
 * formulas of scope_values.h. */
#ifndef CUDAFFT_SCOPE_BACKEND_H
#define CUDAFFT_SCOPE_BACKEND_H

#include "backend_table.h"

#include <cudafft/scope.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a backend object is made for; the front end has validated it. */
typedef struct {
  unsigned channels;
  CudafftSampleFormat format;
  size_t frame_bytes; /* channels x sample size */
  size_t fft_size;
  size_t bins;       /* fft_size / 2 + 1 */
  size_t history;    /* samples per channel in the history ring: a power of two >= fft_size +
                        max_frames */
  size_t max_frames; /* most frames one run appends */
  unsigned max_ffts; /* most FFTs per channel in one run */
  unsigned width, height;
  CudafftPixelFormat pixels;
  size_t stride;
  const float *window; /* fft_size values, valid as long as the object */
  float norm;          /* 4 / (fft_size sum w^2) */
  int device_id;       /* CUDA backend: the device (as chosen: backend_choice.h) */
} CudafftScopeSpec;

/* A layout: what the options make of the frame, the same for every lane. */
typedef struct {
  CudafftScopeStyle style;
  unsigned lanes;                   /* channels, or 1 for the channels' mean */
  unsigned lane_height;             /* rows per lane: height / lanes */
  unsigned bands;                   /* per lane */
  unsigned per_lane;                /* channels each lane averages: 1, or channels */
  const CudafftBandBins *band_bins; /* bands */
  const float *gains;               /* spec bins: the weighting's */
  /* SPECTROGRAM: lane_height entries, the band of each row of a lane from the top; BARS: width
   * entries, the band of each column, or -1 for a gap. */
  const int *map;
  unsigned hold; /* peak window, frames (>= 1) */
  float marker;  /* the peak marker's height, pixels */
} CudafftScopeLayout;

/* One frame. */
typedef struct {
  const void *in; /* frames interleaved frames (NULL when frames is 0) */
  size_t frames;
  unsigned ffts; /* per channel: cudafft_scope_fft_count(frames, fft_size) */
  const CudafftScopeLayout *layout;
  /* The layout is new (the first run, or after options or a reset changed it): the display state
   * starts afresh (levels and smoothing at 0 power, peaks and the spectrogram's columns at the
   * floor level) before this frame. */
  int new_layout;
  uint64_t frame;  /* frames drawn with this layout before this one */
  float inv_count; /* 1 / (per_lane x ffts) */
  float alpha;     /* smoothing factor */
  float decay;     /* peak decay per frame, dB */
  float db_min, db_max;
  const float *colormap; /* the table (768 floats), NULL for grey */
  int recolour;          /* db range or colormap changed since the last run */
  void *pixels;          /* height rows of stride bytes in host memory; see device_pitch */
  /* 0: pixels is host memory. Otherwise pixels is device memory of the object's context (CUDA
   * backend only) whose rows are device_pitch bytes apart (>= width x pixel bytes). */
  size_t device_pitch;
} CudafftScopeJob;

/* run returns when the pixels are written; a failure leaves a state that reset recovers from.
 * reset puts the history back to zeros (the display state is reset by the next job's
 * new_layout). */
typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftScopeSpec, CudafftScopeJob) CudafftScopeBackend;

CUDAFFT_BACKEND_TABLE_DECL const CudafftScopeBackend cudafft_scope_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftScopeBackend cudafft_scope_cuda_backend; /* CUDA builds */

#ifdef __cplusplus
}
#endif

#endif
