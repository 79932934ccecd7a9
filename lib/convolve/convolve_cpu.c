/* convolve_cpu.c: the convolution's CPU backend: the direct path as the sum itself (in double),
 * the partitioned path as uniformly partitioned overlap-save on FFTW. F32 streams keep their
 * samples, history and spectra in single precision (FFTW single), F64 streams in double (FFTW
 * double), from one body of code (convolve_cpu_path.h). What the cudaconvolve element falls back
 * to without a GPU, what CI runs, and the benchmark's CPU figure. */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES */

#include "convolve_backend.h"

#include "cpu_backend.h"
#include "errors.h"
#include "fftw_planner.h"
#include "sample_values.h"
#include "size_math.h"

#include <fftw3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK ((size_t)CUDAFFT_CONVOLVE_BLOCK)
#define FFT_SIZE ((size_t)CUDAFFT_CONVOLVE_FFT_SIZE)
/* Values per stored spectrum (re and im each): the N / 2 + 1 = 2049 bins rounded up to 16 values
 * (64 bytes of floats, 128 of doubles), so that every spectrum is as aligned as the first (FFTW's
 * new-array execute requires it) and the multiply-accumulate loop has a constant length that every
 * vector width divides (gcc -O2 vectorizes only such loops). The padding bins stay zero. */
#define BIN_STRIDE ((size_t)2064)
_Static_assert(BIN_STRIDE >= FFT_SIZE / 2 + 1 && BIN_STRIDE % 16 == 0, "BIN_STRIDE");
/* Frames the direct path converts at a time. */
#define DIRECT_CHUNK ((size_t)1024)

/* The transforms of the filter's precision. */
typedef union {
  fftwf_plan f32;
  fftw_plan f64;
} CpuPlan;

typedef struct {
  CudafftCpuObject base; /* owns the plans and the arrays */
  CudafftConvolvePath path;
  unsigned channels, rows;
  CudafftSampleFormat format;
  size_t taps;
  size_t real; /* bytes of one sample, history or spectrum value: float for F32, double for F64 */

  /* Direct: per row the taps reversed (coef[k] multiplies the sample taps - 1 - k frames back);
   * per channel a line of the taps - 1 previous samples and the chunk being filtered. */
  double *coef;
  void *line;

  /* Partitioned: per row `parts` partition spectra, scaled by 1/N; per channel a ring of the
   * `parts` latest input spectra (slot `head` the newest) and the previous and current input
   * blocks (the forward transform's input). Every array holds values of `real` bytes. */
  size_t parts, head;
  void *h_re, *h_im;
  void *x_re, *x_im;
  void *blocks;
  void *acc_re, *acc_im; /* the sum of products; the inverse transform's input */
  void *time;            /* the inverse transform's output */
  CpuPlan forward, inverse;
} CpuFilter;

/* Bytes of the values a filter of `format` keeps (its precision). */
static size_t
real_size(CudafftSampleFormat format)
{
  return format == CUDAFFT_SAMPLE_F64 ? sizeof(double) : sizeof(float);
}

/* Refuses, before anything is allocated, a filter whose memory exceeds the machine's: allocations
 * that large may succeed under overcommit and end in an OOM kill when touched. */
static CudafftStatus
check_host_memory(const CudafftConvolveSpec *spec, size_t parts)
{
  const size_t channels = spec->channels, rows = spec->kernel.rows, taps = spec->kernel.taps;
  const size_t real = real_size(spec->format);
  size_t values, bytes = 0;
  int ok;
  if (spec->path == CUDAFFT_CONVOLVE_DIRECT) {
    ok = mul_add_size(channels, taps - 1 + DIRECT_CHUNK, 0, &values) &&
         mul_size(values, real, &bytes) && mul_add_size(rows * sizeof(double), taps, bytes, &bytes);
  } else {
    size_t spectra;
    ok = mul_size(rows + channels, parts, &spectra) &&
         mul_add_size(spectra, 2 * BIN_STRIDE, 2 * BIN_STRIDE + FFT_SIZE, &values) &&
         mul_add_size(channels, FFT_SIZE, values, &values) && mul_size(values, real, &bytes);
  }
  if (!ok)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: a convolution of %zu taps x %zu rows on %zu channels needs "
                        "more host memory than can be addressed",
                        taps, rows, channels);
  const size_t physical = physical_memory();
  if (bytes > physical)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: a convolution of %zu taps x %zu rows on %zu channels needs "
                        "about %.0f MB of host memory; this machine has %.0f MB",
                        taps, rows, channels, (double)bytes / 1e6, (double)physical / 1e6);
  return CUDAFFT_STATUS_OK;
}

/* count zeroed values of the filter's precision that f owns. */
static void *
zeroed_values(CpuFilter *f, size_t count)
{
  return cudafft_cpu_array(&f->base, count * f->real);
}

/* The paths in each precision --------------------------------------------------------------- */

/* The inner loops of both paths (the partitioned path's multiply-accumulate is most of its time):
 * on x86-64, a copy for AVX2 beside the baseline SSE2 one, picked at load time (twice the values
 * per instruction). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

#define REAL float
#define SUFFIX f32
#define FFTW(name) fftwf_##name
#define OWN_PLAN cudafft_cpu_own_plan
#define DESTROY_PLAN cudafft_fftw_destroy
#include "convolve_cpu_path.h"

#define REAL double
#define SUFFIX f64
#define FFTW(name) fftw_##name
#define OWN_PLAN cudafft_cpu_own_double_plan
#define DESTROY_PLAN cudafft_fftw_destroy_double
#include "convolve_cpu_path.h"

/* Create ----------------------------------------------------------------------------------------
 */

static CudafftStatus
direct_init(CpuFilter *f, const CudafftConvolveKernel *kernel)
{
  const size_t taps = kernel->taps;
  f->coef = cudafft_cpu_array(&f->base, kernel->rows * taps * sizeof *f->coef);
  f->line = zeroed_values(f, f->channels * (taps - 1 + DIRECT_CHUNK));
  if (!f->coef || !f->line)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate a direct filter of %zu taps on %u channels",
                        taps, f->channels);
  for (size_t r = 0; r < kernel->rows; r++)
    for (size_t k = 0; k < taps; k++)
      f->coef[r * taps + k] = kernel->taps_data[r * taps + taps - 1 - k];
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
partitioned_init(CpuFilter *f, const CudafftConvolveKernel *kernel)
{
  const size_t parts = f->parts, rows = kernel->rows;
  f->h_re = zeroed_values(f, rows * parts * BIN_STRIDE);
  f->h_im = zeroed_values(f, rows * parts * BIN_STRIDE);
  f->x_re = zeroed_values(f, f->channels * parts * BIN_STRIDE);
  f->x_im = zeroed_values(f, f->channels * parts * BIN_STRIDE);
  f->blocks = zeroed_values(f, f->channels * FFT_SIZE);
  f->acc_re = zeroed_values(f, BIN_STRIDE);
  f->acc_im = zeroed_values(f, BIN_STRIDE);
  f->time = zeroed_values(f, FFT_SIZE);
  if (!f->h_re || !f->h_im || !f->x_re || !f->x_im || !f->blocks || !f->acc_re || !f->acc_im ||
      !f->time)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate %zu partition spectra of %zu rows and the "
                        "delay lines of %u channels",
                        parts, rows, f->channels);
  return f->format == CUDAFFT_SAMPLE_F64 ? partitioned_plan_f64(f, kernel)
                                         : partitioned_plan_f32(f, kernel);
}

static CudafftStatus
cpu_create(const CudafftConvolveSpec *spec, void **impl)
{
  *impl = NULL;
  if (spec->path == CUDAFFT_CONVOLVE_SPLIT) /* the split module composes it of the two below */
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED, "CPU backend: no split path of its own");
  const size_t taps = spec->kernel.taps;
  const size_t parts = (taps + BLOCK - 1) / BLOCK;
  CudafftStatus status = check_host_memory(spec, parts);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  CpuFilter *f = cudafft_cpu_object_new(sizeof *f, "a filter");
  if (!f)
    return CUDAFFT_STATUS_HOST_OUT_OF_MEMORY;
  f->path = spec->path;
  f->channels = spec->channels;
  f->rows = spec->kernel.rows;
  f->format = spec->format;
  f->taps = taps;
  f->real = real_size(spec->format);
  f->parts = parts;
  status = spec->path == CUDAFFT_CONVOLVE_DIRECT ? direct_init(f, &spec->kernel)
                                                 : partitioned_init(f, &spec->kernel);
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_cpu_destroy(f);
    return status;
  }
  *impl = f;
  return CUDAFFT_STATUS_OK;
}

/* Run and reset -------------------------------------------------------------------------------- */

static CudafftStatus
cpu_run(void *impl, const CudafftConvolveJob *job)
{
  CpuFilter *f = impl;
  const int f64 = f->format == CUDAFFT_SAMPLE_F64;
  if (f->path == CUDAFFT_CONVOLVE_DIRECT)
    (f64 ? direct_process_f64 : direct_process_f32)(f, job->in, job->out, job->frames, job->mix);
  else
    (f64 ? partitioned_process_f64 : partitioned_process_f32)(f, job->in, job->out, job->frames,
                                                              job->mix);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_reset(void *impl)
{
  CpuFilter *f = impl;
  if (f->path == CUDAFFT_CONVOLVE_DIRECT) {
    const size_t history = f->taps - 1, width = history + DIRECT_CHUNK;
    for (size_t c = 0; c < f->channels; c++)
      memset((uint8_t *)f->line + c * width * f->real, 0, history * f->real);
    return CUDAFFT_STATUS_OK;
  }
  const size_t spectra = f->channels * f->parts * BIN_STRIDE;
  memset(f->x_re, 0, spectra * f->real);
  memset(f->x_im, 0, spectra * f->real);
  memset(f->blocks, 0, f->channels * FFT_SIZE * f->real);
  f->head = 0;
  return CUDAFFT_STATUS_OK;
}

const CudafftConvolveBackend cudafft_convolve_cpu_backend = {
    cpu_create, cudafft_cpu_destroy, cpu_run, cpu_reset, cudafft_cpu_stream};
