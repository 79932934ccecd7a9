/* stft_backend.h: what the STFT front end (stft.c) needs from a backend. Internal to kernels/. */
#ifndef CUDAFFT_STFT_BACKEND_H
#define CUDAFFT_STFT_BACKEND_H

#include <cudafft/stft.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudafftStftOps CudafftStftOps;

struct CudafftStft {
  CudafftStftConfig config;
  CudafftBackend backend;
  const CudafftStftOps *ops;
  size_t held;   /* samples per channel kept for frames not yet complete */
  float *window; /* the fft_size analysis window values */
  void *impl;
};

struct CudafftIstft {
  CudafftStftConfig config;
  CudafftBackend backend;
  const CudafftStftOps *ops;
  float *synthesis; /* the fft_size values of g, the synthesis window with the 1/n and 1/S */
  void *impl;
};

/* The front end validates every argument first. An init either succeeds or releases what it made
 * and leaves impl NULL (the front end then frees the object without calling fini). */
struct CudafftStftOps {
  CudafftStatus (*analysis_init)(CudafftStft *stft, int device_id);
  void (*analysis_fini)(CudafftStft *stft);
  /* Appends samples (in == NULL: zeros) to the stft->held held ones and writes the `frames`
   * frames that completes (computed by the front end, which updates held on success and resets
   * it to 0 on failure). */
  CudafftStatus (*analysis_push)(CudafftStft *stft, const void *in, size_t samples, float *out,
                                 size_t frames);
  CudafftStatus (*synthesis_init)(CudafftIstft *istft, int device_id);
  void (*synthesis_fini)(CudafftIstft *istft);
  CudafftStatus (*synthesis_push)(CudafftIstft *istft, const float *in, size_t frames, float *out);
  CudafftStatus (*synthesis_drain)(CudafftIstft *istft, float *out); /* then resets */
  void (*synthesis_reset)(CudafftIstft *istft);
};

extern const CudafftStftOps cudafft_stft_cpu_ops;
extern const CudafftStftOps cudafft_stft_cuda_ops; /* CUDA builds only */

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

#ifdef __cplusplus
}
#endif

#endif
