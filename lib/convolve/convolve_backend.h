/* convolve_backend.h: what the convolution front end (convolve.c) asks of a backend. Internal to
 * the library.
 *
 * The backend table has the shape every engine's has (lib/common/backend_table.h). A backend filter
 * holds one kernel on one path and runs it over the frames it is given: output frame i of a call is
 * y[i] for input frame i of the same call (the header's formula, with the history of every earlier
 * call), so a backend itself never lags. The front end stages partial blocks (hence the public
 * lag), runs two filters side by side during a kernel crossover and blends them, pads with zeros to
 * drain, and picks the path. */
#ifndef CUDAFFT_CONVOLVE_BACKEND_H
#define CUDAFFT_CONVOLVE_BACKEND_H

#include "backend_table.h"

#include <cudafft/convolve.h>

typedef enum {
  CUDAFFT_CONVOLVE_DIRECT = 0,  /* process() takes any number of frames */
  CUDAFFT_CONVOLVE_PARTITIONED, /* process() takes whole blocks of CUDAFFT_CONVOLVE_BLOCK frames */
  /* The split path of convolve_split.h run by the backend itself, for a backend that can do it in
   * fewer steps than the split module's composition of its two paths: process() takes whole blocks
   * of block_size frames. A backend without one (the CPU's; the CUDA one for F64 streams, block
   * size 0, or blocks larger than its jobs) refuses it at create with CUDAFFT_STATUS_UNSUPPORTED,
   * and the split module composes the path instead. */
  CUDAFFT_CONVOLVE_SPLIT
} CudafftConvolvePath;

/* What a backend filter is made for. kernel.rows is 1 or channels; the front end has validated
 * everything. */
typedef struct {
  unsigned channels;
  CudafftSampleFormat format;
  CudafftConvolveKernel kernel;
  CudafftConvolvePath path;
  size_t block_size; /* the split path's L (0 or a power of two below CUDAFFT_CONVOLVE_BLOCK) */
  int device_id;     /* CUDA backend: the device (as chosen: backend_choice.h) */
} CudafftConvolveSpec;

/* One call: out[i] = mix * (h * x)[i] + (1 - mix) * in[i] for `frames` interleaved frames (a
 * multiple of CUDAFFT_CONVOLVE_BLOCK on the partitioned path; may be 0), in and out in the spec's
 * format, not overlapping. in NULL means zeros (draining). in and out are host memory, but where
 * on_device (CudafftMemory flags) says they are device memory of the filter's device:
 * only the CUDA backend's own paths are given such a job (the front end passes the samples of the
 * others through host copies). */
typedef struct {
  const void *in;
  void *out;
  size_t frames;
  double mix;
  unsigned on_device;
  /* Device input that queued device work still writes: the run's device work goes after it
   * (zeroed: the input is complete). The CUDA backend's own paths only. */
  CudafftFence after;
  /* NULL: run returns once out is written. Otherwise (device output, the CUDA backend's own
   * paths) it returns once its work is queued, and *done receives the fence where out is
   * complete; the object waits for that work at its next call at the latest. */
  CudafftFence *done;
} CudafftConvolveJob;

/* create makes a filter with zero history, allocating everything run will need (out-of-memory
 * statuses with the sizes in the message). run returns when out is written; a failure leaves a
 * state that reset (history to zeros) recovers from. reset returns whether the clearing was done:
 * on the GPU it is device work, which a failed batch takes with it (convolve.c then clears again
 * before the next run). */
typedef CUDAFFT_BACKEND_TABLE_TYPE(CudafftConvolveSpec, CudafftConvolveJob) CudafftConvolveBackend;

/* The CPU table; the CUDA table in CUDA builds only. */
CUDAFFT_BACKEND_TABLE_DECL const CudafftConvolveBackend cudafft_convolve_cpu_backend;
CUDAFFT_BACKEND_TABLE_DECL const CudafftConvolveBackend cudafft_convolve_cuda_backend;

#endif /* CUDAFFT_CONVOLVE_BACKEND_H */
