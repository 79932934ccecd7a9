/* multigpu_streams.h: what the two programs on several GPUs (test_multigpu.c: where objects made
 * with device id -1 go; test_device_errors.c: device errors on one device seen from the others)
 * share: a convolution and its stream (the Stream), its calls, and every output sample checked
 * against its double-precision convolution (convolve_reference.h, test_convolve_streams.c's measure
 * and tolerance); and what a device's load says (cudafft_cuda_device_load). Failures are noted with
 * worker_fail (worker_util.h), so any thread may stream. CUDA backend only. */
#ifndef CUDAFFT_MULTIGPU_STREAMS_H
#define CUDAFFT_MULTIGPU_STREAMS_H

#include "test_util.h"

#include <cudafft/convolve.h>

#include <stddef.h>

/* One convolution and its stream: stereo F32, one kernel row, input pushed in random pieces. */
typedef struct {
  CudafftConvolve *cv;
  int device;
  unsigned channels;
  size_t taps, frames, pushed, produced;
  double *h, *x;
  float *in, *out;
  TestRng rng;
  char label[96];
  unsigned failures; /* failed calls and wrong streams, noted with worker_fail */
} Stream;

/* Makes the stream's convolution on `device_id` (-1: the library's choice) with a random kernel of
 * `taps` taps: returns whether it was made (a failure noted; s->device is then -2). */
int stream_make(Stream *s, int device_id, unsigned channels, size_t taps, size_t frames,
                const char *label);

/* The input and the poisoned output, made when the stream starts (the 64 objects' buffers are
 * not held all at once before). */
void stream_start(Stream *s);

/* One push of 1 to 4096 frames, or the drain at the end, without noting a failure: its status;
 * *what says which call it was, *ended whether the stream has ended (the drain ran, or the call
 * failed). Only a call that succeeded adds its frames. */
CudafftStatus stream_call(Stream *s, const char **what, int *ended);

/* One call of the stream (stream_call), a failure noted; returns whether the stream has ended. */
int stream_step(Stream *s);

/* The first `frames` output samples (frames <= s->frames; the convolution is causal) against the
 * double-precision convolution: finite (the output was poisoned with NaN), and each window of
 * WINDOW (1024) frames within TOLERANCE (1e-5) relative L2 error of its level or the channel's mean
 * level, whichever is higher (test_convolve_streams.c's measure). Failures noted. The references
 * are made under a lock of the helpers' own (FFTW's planner), so any thread may call it. */
int stream_compare(Stream *s, size_t frames);

/* Frees the stream's input and output (stream_start made them). */
void stream_discard(Stream *s);

/* A whole stream: every frame out, every sample against its reference (stream_compare). */
int stream_check(Stream *s);

/* Destroys the convolution and frees everything; the Stream is zeroed. */
void stream_destroy(Stream *s);

/* Streams objects[0 .. count) round and round, one push of each in turn, and checks each. */
void stream_all(Stream *objects, size_t count);

/* Whether `device`'s load is `objects` objects (and its state bytes in *bytes, when not NULL). */
int device_load_is(int device, unsigned objects, size_t *bytes);

#endif
