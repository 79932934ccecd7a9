/* matrix_front.h: what the matrix convolution's front end shares between its two files: the object
 * (struct CudafftMatrix), and the calls of matrix_device.c (samples in device memory: the checks of
 * the _device calls, the partial block staged on the device, copies to and from host memory) that
 * matrix.c's pushes and drains use. Not a public header. */
#ifndef CUDAFFT_MATRIX_FRONT_H
#define CUDAFFT_MATRIX_FRONT_H

#include "device_pointer.h"
#include "matrix_backend.h"

#include <stddef.h>
#include <stdint.h>

/* The frames a run on samples in device memory carries through host memory at a time, where the
 * filter runs on the host (block size 0: its heads): the host copies stay within the stage's bound
 * (CUDAFFT_MATRIX_MAX_BLOCK frames of 1024 doubles, 16 MiB). */
#define MATRIX_BOUNCE_FRAMES ((size_t)CUDAFFT_MATRIX_MAX_BLOCK)

struct CudafftMatrix {
  const CudafftMatrixBackend *ops;
  void *impl;
  CudafftBackend backend;
  int device_id;
  unsigned inputs, outputs;
  CudafftSampleFormat format;
  size_t block_size; /* L; 0: zero latency (matrix_direct.c) */
  /* The frames a backend run takes in whole (L, or 1 at block size 0: the output of every frame
   * is ready as it comes), and the step of change points and length of crossovers (L, or
   * CUDAFFT_MATRIX_MIN_BLOCK at block size 0: the head's length, matrix_direct.c). */
  size_t unit, change_unit;
  size_t in_frame, out_frame; /* bytes */
  size_t taps;                /* of the responses in force */
  /* Changes loaded into the backend (`pending` of them: its next set, and a queued one where a
   * change was asked while the next one's crossover block was being staged): their taps and
   * change points (frame indices since create/reset/drain, multiples of the block size, the
   * queued one's later). */
  unsigned pending;
  size_t pending_taps[2], change[2];
  /* Frames since create/reset/drain: pushed in (zeros included while draining) and written out;
   * pushed - produced frames (fewer than a block) wait in the stage. */
  size_t pushed, produced;
  /* The backend's last reset failed (on the GPU, device work that failed): its history is not
   * known to be zero, and the next run clears it first. */
  int uncleared;
  uint8_t *stage; /* a block of input frames */
  uint8_t *tail;  /* a block of output frames of which only the start is wanted (draining) */

  /* Samples in device memory (push_device, drain_device), each made at its first use: the partial
   * block where its frames came in device memory (they are in `stage_device` while
   * stage_on_device is set, else in `stage`), and host copies of MATRIX_BOUNCE_FRAMES frames of
   * input and output for the zero-latency filter, which runs on the host. */
  void *stage_device;
  int stage_on_device;
  uint8_t *bounce_in, *bounce_out;
  CudafftCheckedMemory checked; /* device memory that passed (the _device calls) */
};

/* A _device call's checks (`name` the call), before anything is done: the memory flags (UNSUPPORTED
 * on the CPU backend), the memory where they say it is device memory (in_bytes from in, out_bytes
 * from out: WRONG_DEVICE_MEMORY), then the fence the input waits for (NULL: none), waited for on
 * the host: the filter's device work runs on a stream of its own (matrix_cuda.cu says why), which
 * the context's batches do not order. */
CudafftStatus matrix_device_check(CudafftMatrix *mx, unsigned on_device, const void *in,
                                  size_t in_bytes, const void *out, size_t out_bytes,
                                  const CudafftFence *after, const char *name);

/* Puts `count` input frames from src (device memory where in_device) after the `staged` frames
 * waiting in the stage, which moves to where src is first. */
CudafftStatus matrix_stage_frames(CudafftMatrix *mx, size_t staged, const uint8_t *src,
                                  size_t count, int in_device);

/* Moves the `staged` frames waiting in the stage to device memory (to_device) or to host memory,
 * making the device stage at its first use. */
CudafftStatus matrix_move_stage(CudafftMatrix *mx, size_t staged, int to_device);

/* The host copies of MATRIX_BOUNCE_FRAMES frames (bounce_in, bounce_out), made where they are
 * not yet. */
CudafftStatus matrix_bounce_buffers(CudafftMatrix *mx);

/* Copies bytes from src to dst, each in host memory, or in device memory of the filter's context
 * where `on_device` is nonzero; done when it returns. */
CudafftStatus matrix_copy_samples(const CudafftMatrix *mx, void *dst, const void *src, size_t bytes,
                                  unsigned on_device);

/* Frees what the object holds for samples in device memory. */
void matrix_device_free(CudafftMatrix *mx);

#endif /* CUDAFFT_MATRIX_FRONT_H */
