/* convolve_cpu.c: the convolution's CPU backend: the direct path as the sum itself (in double),
 * the partitioned path as uniformly partitioned overlap-save on FFTW single precision. What the
 * cudaconvolve element falls back to without a GPU, what CI runs, and the benchmark's CPU figure.
 */
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
/* Floats per stored spectrum (re and im each): the N / 2 + 1 = 2049 bins rounded up to 64 bytes, so
 * that every spectrum is as aligned as the first (FFTW's new-array execute requires it) and the
 * multiply-accumulate loop has a constant length that every vector width divides (gcc -O2
 * vectorizes only such loops). The padding bins stay zero. */
#define BIN_STRIDE ((size_t)2064)
_Static_assert(BIN_STRIDE >= FFT_SIZE / 2 + 1 && BIN_STRIDE % 16 == 0, "BIN_STRIDE");
/* Frames the direct path converts at a time. */
#define DIRECT_CHUNK ((size_t)1024)

typedef struct {
  CudafftCpuObject base; /* owns the plans and the arrays */
  CudafftConvolvePath path;
  unsigned channels, rows;
  CudafftSampleFormat format;
  size_t taps;

  /* Direct: per row the taps reversed (coef[k] multiplies the sample taps - 1 - k frames back);
   * per channel a line of the taps - 1 previous samples and the chunk being filtered. */
  double *coef;
  float *line;

  /* Partitioned: per row `parts` partition spectra, scaled by 1/N; per channel a ring of the
   * `parts` latest input spectra (slot `head` the newest) and the previous and current input
   * blocks (the forward transform's input). */
  size_t parts, head;
  float *h_re, *h_im;
  float *x_re, *x_im;
  float *blocks;
  float *acc_re, *acc_im; /* the sum of products; the inverse transform's input */
  float *time;            /* the inverse transform's output */
  fftwf_plan forward, inverse;
} CpuFilter;

/* Refuses, before anything is allocated, a filter whose memory exceeds the machine's: allocations
 * that large may succeed under overcommit and end in an OOM kill when touched. */
static CudafftStatus
check_host_memory(const CudafftConvolveSpec *spec, size_t parts)
{
  const size_t channels = spec->channels, rows = spec->kernel.rows, taps = spec->kernel.taps;
  size_t floats, bytes = 0;
  int ok;
  if (spec->path == CUDAFFT_CONVOLVE_DIRECT) {
    ok = mul_add_size(channels, taps - 1 + DIRECT_CHUNK, 0, &floats) &&
         mul_size(floats, sizeof(float), &bytes) &&
         mul_add_size(rows * sizeof(double), taps, bytes, &bytes);
  } else {
    size_t spectra;
    ok = mul_size(rows + channels, parts, &spectra) &&
         mul_add_size(spectra, 2 * BIN_STRIDE, 2 * BIN_STRIDE + FFT_SIZE, &floats) &&
         mul_add_size(channels, FFT_SIZE, floats, &floats) &&
         mul_size(floats, sizeof(float), &bytes);
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

static CudafftStatus
direct_init(CpuFilter *f, const CudafftConvolveKernel *kernel)
{
  const size_t taps = kernel->taps;
  f->coef = cudafft_cpu_array(&f->base, kernel->rows * taps * sizeof *f->coef);
  f->line = cudafft_cpu_array(&f->base, f->channels * (taps - 1 + DIRECT_CHUNK) * sizeof *f->line);
  if (!f->coef || !f->line)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate a direct filter of %zu taps on %u channels",
                        taps, f->channels);
  for (size_t r = 0; r < kernel->rows; r++)
    for (size_t k = 0; k < taps; k++)
      f->coef[r * taps + k] = kernel->taps_data[r * taps + taps - 1 - k];
  return CUDAFFT_STATUS_OK;
}

/* count zeroed floats that f owns. */
static float *
zeroed_floats(CpuFilter *f, size_t count)
{
  return cudafft_cpu_array(&f->base, count * sizeof(float));
}

static CudafftStatus
partitioned_init(CpuFilter *f, const CudafftConvolveKernel *kernel)
{
  const size_t parts = f->parts, rows = kernel->rows;
  f->h_re = zeroed_floats(f, rows * parts * BIN_STRIDE);
  f->h_im = zeroed_floats(f, rows * parts * BIN_STRIDE);
  f->x_re = zeroed_floats(f, f->channels * parts * BIN_STRIDE);
  f->x_im = zeroed_floats(f, f->channels * parts * BIN_STRIDE);
  f->blocks = zeroed_floats(f, f->channels * FFT_SIZE);
  f->acc_re = zeroed_floats(f, BIN_STRIDE);
  f->acc_im = zeroed_floats(f, BIN_STRIDE);
  f->time = zeroed_floats(f, FFT_SIZE);
  if (!f->h_re || !f->h_im || !f->x_re || !f->x_im || !f->blocks || !f->acc_re || !f->acc_im ||
      !f->time)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate %zu partition spectra of %zu rows and the "
                        "delay lines of %u channels",
                        parts, rows, f->channels);

  /* Our own aligned arrays, so FFTW may use SIMD; FFTW_ESTIMATE plans at once. Split real and
   * imaginary parts: the multiply-accumulate reads them as plain float arrays. */
  const fftwf_iodim dim = {.n = (int)FFT_SIZE, .is = 1, .os = 1};
  cudafft_fftw_planner_lock();
  f->forward =
      fftwf_plan_guru_split_dft_r2c(1, &dim, 0, NULL, f->blocks, f->x_re, f->x_im, FFTW_ESTIMATE);
  f->inverse =
      fftwf_plan_guru_split_dft_c2r(1, &dim, 0, NULL, f->acc_re, f->acc_im, f->time, FFTW_ESTIMATE);
  cudafft_fftw_planner_unlock();
  cudafft_cpu_own_plan(&f->base, f->forward);
  cudafft_cpu_own_plan(&f->base, f->inverse);
  if (!f->forward || !f->inverse)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: FFTW could not plan %zu-point real transforms", FFT_SIZE);

  /* Partition p of a row: taps p B .. p B + B - 1, zero-padded to N, its spectrum scaled by 1/N
   * (exact: N is a power of two) so that the inverse transform needs no scaling. */
  const double scale = 1.0 / (double)FFT_SIZE;
  for (size_t r = 0; r < rows; r++) {
    const double *taps = kernel->taps_data + r * kernel->taps;
    for (size_t p = 0; p < parts; p++) {
      const size_t start = p * BLOCK;
      const size_t count = kernel->taps - start < BLOCK ? kernel->taps - start : BLOCK;
      for (size_t i = 0; i < FFT_SIZE; i++)
        f->time[i] = i < count ? (float)(taps[start + i] * scale) : 0.0f;
      const size_t offset = (r * parts + p) * BIN_STRIDE;
      fftwf_execute_split_dft_r2c(f->forward, f->time, f->h_re + offset, f->h_im + offset);
    }
  }
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_create(const CudafftConvolveSpec *spec, void **impl)
{
  *impl = NULL;
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

/* Samples -------------------------------------------------------------------------------------- */

/* count samples of one channel, every `stride` samples from in (NULL: zeros), as floats. */
static void
load_channel(CudafftSampleFormat format, const void *in, size_t stride, size_t count,
             float *restrict dst)
{
  if (!in) {
    memset(dst, 0, count * sizeof *dst);
    return;
  }
  for (size_t i = 0; i < count; i++)
    dst[i] = (float)cudafft_sample_double(format, in, i * stride);
}

/* Direct path ---------------------------------------------------------------------------------- */

/* The inner loops of both paths (the partitioned path's multiply-accumulate is most of its time):
 * on x86-64, a copy for AVX2 beside the baseline SSE2 one, picked at load time (twice the values
 * per instruction). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

/* sums[i] = sum_k coef[k] line[i + k] for i < n, k in increasing order. Eight outputs at a time
 * with the taps outside: eight independent sums that the compiler vectorizes, where one sum at a
 * time is a chain of dependent additions. */
CLONES static void
direct_sums(const double *restrict coef, size_t taps, const float *restrict line, size_t n,
            double *restrict sums)
{
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double acc[8] = {0};
    for (size_t k = 0; k < taps; k++)
      for (size_t j = 0; j < 8; j++)
        acc[j] += coef[k] * line[i + j + k];
    memcpy(sums + i, acc, sizeof acc);
  }
  for (; i < n; i++) {
    double acc = 0.0;
    for (size_t k = 0; k < taps; k++)
      acc += coef[k] * line[i + k];
    sums[i] = acc;
  }
}

static void
direct_process(CpuFilter *f, const void *in, void *out, size_t frames, float mix)
{
  const size_t taps = f->taps, history = taps - 1, width = history + DIRECT_CHUNK;
  const size_t sample = cudafft_sample_size(f->format), channels = f->channels;
  const double wet = mix, dry = 1.0 - (double)mix;
  for (size_t done = 0; done < frames;) {
    const size_t n = frames - done < DIRECT_CHUNK ? frames - done : DIRECT_CHUNK;
    for (size_t c = 0; c < channels; c++) {
      float *line = f->line + c * width;
      const double *coef = f->coef + (f->rows == 1 ? 0 : c) * taps;
      load_channel(f->format, in ? (const uint8_t *)in + (done * channels + c) * sample : NULL,
                   channels, n, line + history);
      double sums[DIRECT_CHUNK];
      direct_sums(coef, taps, line, n, sums);
      for (size_t i = 0; i < n; i++) {
        /* mix 1 leaves the sum alone, so that a delta kernel gives the input back exactly */
        const double y = mix == 1.0f ? sums[i] : wet * sums[i] + dry * line[history + i];
        cudafft_sample_store(f->format, out, (done + i) * channels + c, y);
      }
      memmove(line, line + n, history * sizeof *line);
    }
    done += n;
  }
}

/* Partitioned path ----------------------------------------------------------------------------- */

CLONES static void
mac_first(float *restrict acc_re, float *restrict acc_im, const float *restrict x_re,
          const float *restrict x_im, const float *restrict h_re, const float *restrict h_im)
{
  for (size_t k = 0; k < BIN_STRIDE; k++) {
    acc_re[k] = x_re[k] * h_re[k] - x_im[k] * h_im[k];
    acc_im[k] = x_re[k] * h_im[k] + x_im[k] * h_re[k];
  }
}

CLONES static void
mac_add(float *restrict acc_re, float *restrict acc_im, const float *restrict x_re,
        const float *restrict x_im, const float *restrict h_re, const float *restrict h_im)
{
  for (size_t k = 0; k < BIN_STRIDE; k++) {
    acc_re[k] += x_re[k] * h_re[k] - x_im[k] * h_im[k];
    acc_im[k] += x_re[k] * h_im[k] + x_im[k] * h_re[k];
  }
}

static void
partitioned_process(CpuFilter *f, const void *in, void *out, size_t frames, float mix)
{
  const size_t parts = f->parts, channels = f->channels, count = frames / BLOCK;
  const size_t sample = cudafft_sample_size(f->format);
  const float dry = 1.0f - mix;
  for (size_t c = 0; c < channels; c++) {
    const size_t row = (f->rows == 1 ? 0 : c) * parts * BIN_STRIDE;
    const float *h_re = f->h_re + row, *h_im = f->h_im + row;
    float *x_re = f->x_re + c * parts * BIN_STRIDE, *x_im = f->x_im + c * parts * BIN_STRIDE;
    float *blocks = f->blocks + c * FFT_SIZE, *current = blocks + BLOCK;
    size_t head = f->head;
    for (size_t j = 0; j < count; j++) {
      const size_t first = j * BLOCK * channels + c;
      load_channel(f->format, in ? (const uint8_t *)in + first * sample : NULL, channels, BLOCK,
                   current);
      head = head + 1 == parts ? 0 : head + 1;
      fftwf_execute_split_dft_r2c(f->forward, blocks, x_re + head * BIN_STRIDE,
                                  x_im + head * BIN_STRIDE);
      /* X[j - p] H[p]: the ring runs backwards from the newest spectrum */
      for (size_t p = 0, slot = head; p < parts; p++, slot = slot ? slot - 1 : parts - 1) {
        const size_t x = slot * BIN_STRIDE, h = p * BIN_STRIDE;
        if (p == 0)
          mac_first(f->acc_re, f->acc_im, x_re + x, x_im + x, h_re + h, h_im + h);
        else
          mac_add(f->acc_re, f->acc_im, x_re + x, x_im + x, h_re + h, h_im + h);
      }
      fftwf_execute_split_dft_c2r(f->inverse, f->acc_re, f->acc_im, f->time);
      const float *y = f->time + BLOCK;
      for (size_t i = 0; i < BLOCK; i++) {
        const float v = mix == 1.0f ? y[i] : mix * y[i] + dry * current[i];
        cudafft_sample_store(f->format, out, first + i * channels, v);
      }
      memcpy(blocks, current, BLOCK * sizeof *blocks);
    }
  }
  f->head = (f->head + count) % parts;
}

static CudafftStatus
cpu_run(void *impl, const CudafftConvolveJob *job)
{
  CpuFilter *f = impl;
  if (f->path == CUDAFFT_CONVOLVE_DIRECT)
    direct_process(f, job->in, job->out, job->frames, job->mix);
  else
    partitioned_process(f, job->in, job->out, job->frames, job->mix);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_reset(void *impl)
{
  CpuFilter *f = impl;
  if (f->path == CUDAFFT_CONVOLVE_DIRECT) {
    const size_t history = f->taps - 1, width = history + DIRECT_CHUNK;
    for (size_t c = 0; c < f->channels; c++)
      memset(f->line + c * width, 0, history * sizeof *f->line);
    return CUDAFFT_STATUS_OK;
  }
  const size_t spectra = f->channels * f->parts * BIN_STRIDE;
  memset(f->x_re, 0, spectra * sizeof *f->x_re);
  memset(f->x_im, 0, spectra * sizeof *f->x_im);
  memset(f->blocks, 0, f->channels * FFT_SIZE * sizeof *f->blocks);
  f->head = 0;
  return CUDAFFT_STATUS_OK;
}

const CudafftConvolveBackend cudafft_convolve_cpu_backend = {
    cpu_create, cudafft_cpu_destroy, cpu_run, cpu_reset, cudafft_cpu_stream};
