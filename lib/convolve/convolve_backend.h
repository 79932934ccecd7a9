/* convolve_backend.h: what the convolution front end (convolve.c) needs from a backend. Internal
 * to kernels/.
 *
 * A backend filter holds one kernel on one path and runs it over the frames it is given: output
 * frame i of a call is y[i] for input frame i of the same call (the header's formula, with the
 * history of every earlier call), so a backend itself never lags. The front end stages partial
 * blocks (hence the public lag), runs two filters side by side during a kernel crossover and
 * blends them, pads with zeros to drain, and picks the path. */
#ifndef CUDAFFT_CONVOLVE_BACKEND_H
#define CUDAFFT_CONVOLVE_BACKEND_H

#include <cudafft/convolve.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CUDAFFT_CONVOLVE_DIRECT = 0, /* process() takes any number of frames */
  CUDAFFT_CONVOLVE_PARTITIONED /* process() takes whole blocks of CUDAFFT_CONVOLVE_BLOCK frames */
} CudafftConvolvePath;

/* What a backend filter is made for. kernel.rows is 1 or channels; the front end has validated
 * everything. */
typedef struct {
  unsigned channels;
  CudafftSampleFormat format;
  CudafftConvolveKernel kernel;
  CudafftConvolvePath path;
  int device_id; /* CUDA backend: the device (-1: device 0) */
} CudafftConvolveFilterSpec;

typedef struct CudafftConvolveOps {
  /* Makes a filter with zero history, allocating everything process() will need (out-of-memory
   * statuses with the sizes in the message); on failure releases what it made, *impl NULL. */
  CudafftStatus (*create)(const CudafftConvolveFilterSpec *spec, void **impl);
  void (*destroy)(void *impl); /* NULL allowed */
  /* out[i] = mix * (h * x)[i] + (1 - mix) * in[i] for `frames` interleaved frames (a multiple of
   * CUDAFFT_CONVOLVE_BLOCK on the partitioned path; may be 0), in and out host memory in the
   * spec's format, not overlapping; returns when out is written. in NULL means zeros (draining).
   * A failure leaves a state that reset() recovers from. */
  CudafftStatus (*process)(void *impl, const void *in, void *out, size_t frames, float mix);
  void (*reset)(void *impl); /* history to zeros */
} CudafftConvolveOps;

extern const CudafftConvolveOps cudafft_convolve_cpu_ops;
extern const CudafftConvolveOps cudafft_convolve_cuda_ops; /* CUDA builds only */

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_CONVOLVE_BACKEND_H */
