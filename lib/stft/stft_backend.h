/* stft_backend.h: what the STFT front end (stft.c) asks of a backend. Internal to the library.
 *
 * The engine has two objects, the analyser (CudafftStft) and the synthesiser (CudafftIstft), and a
 * backend table for each, of the shape every engine's tables have (lib/common/backend_table.h).
 * Both are made from the same spec; each has a job of its own. The front end keeps the frame
 * bookkeeping (how many samples the analyser holds, how many frames a push completes). */
#ifndef CUDAFFT_STFT_BACKEND_H
#define CUDAFFT_STFT_BACKEND_H

#include "backend_table.h"

#include <cudafft/stft.h>

/* What an analyser or a synthesiser is made for; the front end has validated it. */
typedef struct {
  CudafftStftConfig config;
  /* config.fft_size values, which the backend copies: the analysis window for an analyser; for a
   * synthesiser g, the synthesis window with the inverse DFT's 1/n and the overlap sums folded
   * in. */
  const float *window;
  int device_id; /* CUDA backend: the device (as chosen: backend_choice.h) */
} CudafftStftSpec;

/* One analyser push: appends `samples` samples per channel (interleaved in config.format; in NULL:
 * zeros) to the `held` ones earlier pushes left, and writes the `frames` frames that completes to
 * out. held and frames are the front end's count, which the backend's own follows; the samples
 * held are the front end's to forget (on reset and after a failure, it holds 0). run returns when
 * out is written, and leaves nothing queued when it fails. in_on_device, out_on_device: in, out is
 * device memory of the object's context (CUDA only; the front end refuses it for the CPU). */
typedef struct {
  const void *in;
  size_t samples;
  size_t held;
  float *out;
  size_t frames;
  int out_on_device;
  int in_on_device;
  /* CUDA only. after: device input that queued device work still writes (the push's jobs go
   * after it; zeroed: complete). done: NULL, or (device output) run returns once its jobs are
   * queued and *done receives where out is complete (cudafft_stft_push_device's). */
  CudafftFence after;
  CudafftFence *done;
} CudafftStftJob;

/* One synthesiser call: `frames` complex frames in, frames x hop samples per channel out
 * (interleaved); or, with drain, the fft_size - hop samples per channel still being summed out
 * (in and frames unused), after which the synthesiser is as after reset (its sums zero). run
 * returns when out is written, or (done, device output) once its jobs are queued. in_on_device,
 * out_on_device: in, out is device memory of the object's context (CUDA only, as above). */
typedef struct {
  const float *in;
  size_t frames;
  float *out;
  int drain;
  int in_on_device;
  int out_on_device;
  /* CUDA only: as CudafftStftJob's. done is honoured where a job takes every channel (a frame
   * within a job); a synthesiser of channel groups spreads its samples after each job, waits, and
   * gives *done zeroed. */
  CudafftFence after;
  CudafftFence *done;
} CudafftIstftJob;

typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftStftSpec, CudafftStftJob) CudafftStftBackend;
typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftStftSpec, CudafftIstftJob) CudafftIstftBackend;

/* The CPU table; the CUDA table in CUDA builds only. */
CUDAFFT_BACKEND_TABLE_DECL const CudafftStftBackend cudafft_stft_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftStftBackend cudafft_stft_cuda_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftIstftBackend cudafft_istft_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftIstftBackend cudafft_istft_cuda_backend;

/* Bins per channel of a frame, and floats per bin. */
static inline size_t
cudafft_stft_bins(const CudafftStftConfig *config)
{
  return config->fft_size / 2 + 1;
}

static inline size_t
cudafft_stft_bin_floats(CudafftRepresentation representation)
{
  return representation == CUDAFFT_REPRESENTATION_COMPLEX ? 2 : 1;
}

/* Floats of one frame: every channel's bins. */
static inline size_t
cudafft_stft_frame_floats_of(const CudafftStftConfig *config)
{
  return config->channels * cudafft_stft_bins(config) *
         cudafft_stft_bin_floats(config->representation);
}

#endif
