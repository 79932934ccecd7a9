/* fft_cpu.c: the CPU backend, on FFTW single precision. One FFTW plan per direction does one
 * transform; execute walks the batch with FFTW's new-array execute functions, so a plan serves any
 * caller buffer and the planning cost is paid once, in init. */
#include "fft_backend.h"

#include "cpu_backend.h"
#include "errors.h"
#include "fftw_planner.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  CudafftCpuObject base; /* owns the plans and the arrays */
  CudafftKind kind;
  size_t n;
  fftwf_plan forward; /* C2C forward or R2C; NULL for C2R */
  fftwf_plan inverse; /* C2C inverse or C2R; NULL for R2C */
  float *in_copy;     /* one transform's input, where FFTW cannot read the caller's directly */
  float *out_copy;    /* one transform's output, for callers' buffers that are not float aligned */
} CpuImpl;

static CudafftStatus
cpu_create(const CudafftFftSpec *spec, void **out)
{
  *out = NULL;
  int n = (int)spec->n; /* at most CUDAFFT_MAX_SIZE, checked by the front end */
  CpuImpl *impl = cudafft_cpu_object_new(sizeof *impl, "a plan");
  if (!impl)
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  impl->kind = spec->kind;
  impl->n = spec->n;
  impl->in_copy =
      cudafft_cpu_array(&impl->base, cudafft_input_floats(spec->kind, spec->n) * sizeof(float));
  impl->out_copy =
      cudafft_cpu_array(&impl->base, cudafft_output_floats(spec->kind, spec->n) * sizeof(float));
  if (!impl->in_copy || !impl->out_copy) {
    cudafft_cpu_destroy(impl);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate the %d-point scratch buffers", n);
  }

  /* The plans are made on the scratch buffers but executed on the caller's, which may have any
   * alignment: FFTW_UNALIGNED keeps FFTW from choosing SIMD code that needs the 16-byte alignment
   * of the planning arrays. FFTW_ESTIMATE plans at once and leaves the arrays alone; measuring
   * would make every plan_create slow, timing candidate algorithms on the arrays. */
  const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
  fftwf_complex *cin = (fftwf_complex *)impl->in_copy;
  fftwf_complex *cout = (fftwf_complex *)impl->out_copy;
  cudafft_fftw_planner_lock();
  switch (spec->kind) {
  case CUDAFFT_C2C:
    impl->forward = fftwf_plan_dft_1d(n, cin, cout, FFTW_FORWARD, flags);
    impl->inverse = fftwf_plan_dft_1d(n, cin, cout, FFTW_BACKWARD, flags);
    break;
  case CUDAFFT_R2C:
    impl->forward = fftwf_plan_dft_r2c_1d(n, impl->in_copy, cout, flags);
    break;
  case CUDAFFT_C2R:
    impl->inverse = fftwf_plan_dft_c2r_1d(n, cin, impl->out_copy, flags);
    break;
  }
  cudafft_fftw_planner_unlock();
  cudafft_cpu_own_plan(&impl->base, impl->forward);
  cudafft_cpu_own_plan(&impl->base, impl->inverse);
  int need_forward = spec->kind != CUDAFFT_C2R, need_inverse = spec->kind != CUDAFFT_R2C;
  if ((need_forward && !impl->forward) || (need_inverse && !impl->inverse)) {
    cudafft_cpu_destroy(impl);
    /* With FFTW_ESTIMATE a valid size only fails for want of memory. */
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: FFTW could not plan a %d-point transform", n);
  }
  *out = impl;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_run(void *p, const CudafftFftJob *job)
{
  CpuImpl *impl = p;
  const size_t n = impl->n, batch = job->batch;
  const void *in = job->in;
  void *out = job->out;
  const float scale = job->scale;
  const size_t in_floats = cudafft_input_floats(impl->kind, n);
  const size_t out_floats = cudafft_output_floats(impl->kind, n);
  const size_t in_bytes = in_floats * sizeof(float), out_bytes = out_floats * sizeof(float);
  /* "Any alignment" includes buffers that are not even float aligned: FFTW cannot address those,
   * so they go through the scratch buffers on both sides. */
  const int misaligned = ((uintptr_t)in | (uintptr_t)out) % _Alignof(float) != 0;
  /* FFTW's c2r overwrites its input, which is ours to keep; an out-of-place plan must not be run
   * in place. Both copy each transform's input first. */
  const int copy_in = impl->kind == CUDAFFT_C2R || in == out || misaligned;
  fftwf_plan fftw = job->direction == CUDAFFT_FORWARD ? impl->forward : impl->inverse;

  for (size_t b = 0; b < batch; b++) {
    /* FFTW's prototypes are not const-qualified; the r2c and out-of-place c2c plans run on the
     * caller's input do not write it. */
    float *src = copy_in ? impl->in_copy : (float *)in + b * in_floats;
    float *dst = misaligned ? impl->out_copy : (float *)out + b * out_floats;
    if (copy_in)
      memcpy(src, (const char *)in + b * in_bytes, in_bytes);
    switch (impl->kind) {
    case CUDAFFT_C2C:
      fftwf_execute_dft(fftw, (fftwf_complex *)src, (fftwf_complex *)dst);
      break;
    case CUDAFFT_R2C:
      fftwf_execute_dft_r2c(fftw, src, (fftwf_complex *)dst);
      break;
    case CUDAFFT_C2R:
      /* The header promises these are ignored; FFTW leaves the result undefined otherwise. */
      src[1] = 0.0f;
      if (n % 2 == 0)
        src[n + 1] = 0.0f;
      fftwf_execute_dft_c2r(fftw, (fftwf_complex *)src, dst);
      break;
    }
    if (scale != 1.0f)
      for (size_t i = 0; i < out_floats; i++)
        dst[i] *= scale;
    if (misaligned)
      memcpy((char *)out + b * out_bytes, dst, out_bytes);
  }
  return CUDAFFT_STATUS_OK;
}

const CudafftFftBackend cudafft_fft_cpu_backend = {cpu_create, cudafft_cpu_destroy, cpu_run,
                                                   cudafft_cpu_reset_nothing, cudafft_cpu_stream};
