/* matrix_cpu.c: the matrix convolution's CPU backend: uniformly partitioned overlap-save on FFTW,
 * one forward transform per input and block into a delay line every output reads, the
 * multiply-accumulate over each output's non-empty entries and their partitions, one inverse
 * transform per output and block. F32 streams in single precision (FFTW single), F64 streams in
 * double (FFTW double), from one body of code (matrix_cpu_path.h). What an application without a
 * GPU runs, and the benchmark's CPU figure. */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES */

#include "matrix_backend.h"
#include "matrix_values.h"

#include "cpu_backend.h"
#include "errors.h"
#include "fftw_planner.h"
#include "size_math.h"

#include <fftw3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One set of responses: per non-empty entry (entries, ordered by output) its partitions' spectra
 * from partition offset[e] on (re and im apart, `stride` values each), and where each output's
 * entries begin (first[j] .. first[j + 1]). */
typedef struct {
  int made;
  CudafftMatrixEntry *entries;
  size_t count, parts;
  size_t *offset;
  size_t *first; /* outputs + 1 */
  void *re, *im;
} CpuSet;

typedef union {
  fftwf_plan plan_f32;
  fftw_plan plan_f64;
} CpuPlan;

typedef struct {
  unsigned inputs, outputs;
  CudafftSampleFormat format;
  size_t real; /* bytes of one value: float for F32, double for F64 */
  size_t block_size;
  /* Values per spectrum: the L + 1 bins rounded up to 16 values, so that every spectrum is as
   * aligned as the first (FFTW's new-array execute needs it) and the multiply-accumulate loop's
   * length divides by every vector width. The padding bins stay zero. */
  size_t stride;
  /* The delay line: `cap` slots of every input's spectrum, block b's in slot b % cap; `block`
   * the blocks since create/reset. */
  size_t cap, block;
  void *fdl_re, *fdl_im;
  void *prev;            /* inputs x L: each input's previous block */
  void *time;            /* 2L: a transform's real side */
  void *acc_re, *acc_im; /* stride: an output's sum of products */
  void *y_cur, *y_next;  /* outputs x L: a block of each output, by each set during a crossover */
  CpuSet cur, next, queued;
  CpuPlan forward, inverse;
} CpuMatrix;

static void *
cpu_alloc(size_t bytes)
{
  void *p = fftw_malloc(bytes ? bytes : 1);
  if (p)
    memset(p, 0, bytes);
  return p;
}

static void
set_free(CpuSet *set)
{
  free(set->entries);
  free(set->offset);
  free(set->first);
  fftw_free(set->re);
  fftw_free(set->im);
  memset(set, 0, sizeof *set);
}

/* The next set in force, the queued one next; the old one freed. */
static void
promote(CpuMatrix *m)
{
  if (!m->next.made)
    return;
  set_free(&m->cur);
  m->cur = m->next;
  m->next = m->queued;
  memset(&m->queued, 0, sizeof m->queued);
}

#define R float
#define FFTW(x) fftwf_##x
#define PATH(x) x##_f32
#define DESTROY_PLAN cudafft_fftw_destroy
#include "matrix_cpu_path.h"
#undef R
#undef FFTW
#undef PATH
#undef DESTROY_PLAN
#define R double
#define FFTW(x) fftw_##x
#define PATH(x) x##_f64
#define DESTROY_PLAN cudafft_fftw_destroy_double
#include "matrix_cpu_path.h"
#undef R
#undef FFTW
#undef PATH
#undef DESTROY_PLAN

/* Refuses, before anything is allocated, arrays that exceed the machine's memory: allocations
 * that large may succeed under overcommit and end in an OOM kill when touched. */
static CudafftStatus
check_bytes(size_t values, size_t real, const char *what)
{
  size_t bytes;
  if (!mul_size(values, 2 * real, &bytes) || bytes > physical_memory())
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: %s need %zu MB, more than this machine's %zu MB", what,
                        megabytes(sat_mul(values, 2 * real)), megabytes(physical_memory()));
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
set_make(CpuMatrix *m, const CudafftMatrixSet *set, CpuSet *dst)
{
  memset(dst, 0, sizeof *dst);
  size_t total = 0;
  for (size_t e = 0; e < set->count; e++)
    total += set->entries[e].parts; /* <= entries x 2^19: no overflow */
  size_t values;
  if (!mul_size(total, m->stride, &values))
    values = SIZE_MAX;
  CudafftStatus status = check_bytes(values, m->real, "the responses' spectra");
  if (status != CUDAFFT_STATUS_OK)
    return status;
  dst->entries = malloc((set->count ? set->count : 1) * sizeof *dst->entries);
  dst->offset = malloc((set->count ? set->count : 1) * sizeof *dst->offset);
  dst->first = calloc(m->outputs + 1, sizeof *dst->first);
  dst->re = cpu_alloc(values * m->real);
  dst->im = cpu_alloc(values * m->real);
  if (!dst->entries || !dst->offset || !dst->first || !dst->re || !dst->im) {
    set_free(dst);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate %zu MB of response spectra",
                        megabytes(sat_mul(values, 2 * m->real)));
  }
  memcpy(dst->entries, set->entries, set->count * sizeof *dst->entries);
  dst->count = set->count;
  dst->parts = set->parts;
  size_t offset = 0;
  for (size_t e = 0; e < set->count; e++) {
    dst->offset[e] = offset;
    offset += set->entries[e].parts;
    dst->first[set->entries[e].output + 1] = e + 1;
  }
  for (unsigned j = 0; j < m->outputs; j++) /* outputs without entries: empty ranges */
    if (dst->first[j + 1] < dst->first[j])
      dst->first[j + 1] = dst->first[j];
  status =
      m->format == CUDAFFT_SAMPLE_F64 ? set_build_f64(m, set, dst) : set_build_f32(m, set, dst);
  if (status != CUDAFFT_STATUS_OK) {
    set_free(dst);
    return status;
  }
  dst->made = 1;
  return CUDAFFT_STATUS_OK;
}

/* The delay line holds at least `parts` slots, keeping the history of the blocks since reset. */
static CudafftStatus
ensure_slots(CpuMatrix *m, size_t parts)
{
  if (parts <= m->cap)
    return CUDAFFT_STATUS_OK;
  const size_t slot_values = m->inputs * m->stride;
  size_t values;
  if (!mul_size(parts, slot_values, &values))
    values = SIZE_MAX;
  CudafftStatus status = check_bytes(values, m->real, "the delay line's spectra");
  if (status != CUDAFFT_STATUS_OK)
    return status;
  uint8_t *re = cpu_alloc(values * m->real), *im = cpu_alloc(values * m->real);
  /* the input transforms write into the delay line: planned on it (matrix_cpu_path.h says why) */
  CpuPlan forward = {0};
  if (re && im) {
    if (m->format == CUDAFFT_SAMPLE_F64)
      forward.plan_f64 = plan_forward_f64(m, re, im);
    else
      forward.plan_f32 = plan_forward_f32(m, re, im);
  }
  if (!re || !im ||
      !(m->format == CUDAFFT_SAMPLE_F64 ? (void *)forward.plan_f64 : (void *)forward.plan_f32)) {
    fftw_free(re);
    fftw_free(im);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate a delay line of %zu MB, or plan its "
                        "transforms",
                        megabytes(sat_mul(values, 2 * m->real)));
  }
  if (m->format == CUDAFFT_SAMPLE_F64)
    cudafft_fftw_destroy_double(m->forward.plan_f64);
  else
    cudafft_fftw_destroy(m->forward.plan_f32);
  m->forward = forward;
  const size_t slot_bytes = slot_values * m->real;
  for (size_t q = 0; q < m->cap && q < m->block; q++) {
    const size_t b = m->block - 1 - q;
    memcpy(re + (b % parts) * slot_bytes, (uint8_t *)m->fdl_re + (b % m->cap) * slot_bytes,
           slot_bytes);
    memcpy(im + (b % parts) * slot_bytes, (uint8_t *)m->fdl_im + (b % m->cap) * slot_bytes,
           slot_bytes);
  }
  fftw_free(m->fdl_re);
  fftw_free(m->fdl_im);
  m->fdl_re = re;
  m->fdl_im = im;
  m->cap = parts;
  return CUDAFFT_STATUS_OK;
}

static void
cpu_destroy(void *impl)
{
  CpuMatrix *m = impl;
  if (!m)
    return;
  set_free(&m->cur);
  set_free(&m->next);
  set_free(&m->queued);
  if (m->format == CUDAFFT_SAMPLE_F64) {
    cudafft_fftw_destroy_double(m->forward.plan_f64);
    cudafft_fftw_destroy_double(m->inverse.plan_f64);
  } else {
    cudafft_fftw_destroy(m->forward.plan_f32);
    cudafft_fftw_destroy(m->inverse.plan_f32);
  }
  fftw_free(m->fdl_re);
  fftw_free(m->fdl_im);
  fftw_free(m->prev);
  fftw_free(m->time);
  fftw_free(m->acc_re);
  fftw_free(m->acc_im);
  fftw_free(m->y_cur);
  fftw_free(m->y_next);
  free(m);
}

/* The inverse split-format real transform of 2L points (FFTW_ESTIMATE: objects are made on every
 * caps change), planned on the sums it runs on; the forward ones are planned on the arrays they
 * write (ensure_slots, set_build). */
static int
make_plans(CpuMatrix *m)
{
  fftw_iodim dim = {.n = (int)(2 * m->block_size), .is = 1, .os = 1};
  cudafft_fftw_planner_lock();
  if (m->format == CUDAFFT_SAMPLE_F64) {
    m->inverse.plan_f64 = fftw_plan_guru_split_dft_c2r(1, &dim, 0, NULL, m->acc_re, m->acc_im,
                                                       m->time, FFTW_ESTIMATE);
  } else {
    fftwf_iodim dimf = {.n = dim.n, .is = 1, .os = 1};
    m->inverse.plan_f32 = fftwf_plan_guru_split_dft_c2r(1, &dimf, 0, NULL, m->acc_re, m->acc_im,
                                                        m->time, FFTW_ESTIMATE);
  }
  cudafft_fftw_planner_unlock();
  return m->format == CUDAFFT_SAMPLE_F64 ? m->inverse.plan_f64 != NULL
                                         : m->inverse.plan_f32 != NULL;
}

static CudafftStatus
cpu_create(const CudafftMatrixSpec *spec, void **impl)
{
  *impl = NULL;
  CpuMatrix *m = calloc(1, sizeof *m);
  if (!m)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "CPU backend: cannot allocate a matrix");
  m->inputs = spec->inputs;
  m->outputs = spec->outputs;
  m->format = spec->format;
  m->real = spec->format == CUDAFFT_SAMPLE_F64 ? sizeof(double) : sizeof(float);
  m->block_size = spec->block_size;
  m->stride = (spec->block_size + 1 + 15) / 16 * 16;
  const size_t L = m->block_size, real = m->real;
  m->prev = cpu_alloc(spec->inputs * L * real);
  m->time = cpu_alloc(2 * L * real);
  m->acc_re = cpu_alloc(m->stride * real);
  m->acc_im = cpu_alloc(m->stride * real);
  m->y_cur = cpu_alloc(spec->outputs * L * real);
  m->y_next = cpu_alloc(spec->outputs * L * real);
  if (!m->prev || !m->time || !m->acc_re || !m->acc_im || !m->y_cur || !m->y_next) {
    cpu_destroy(m);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: cannot allocate the blocks of a %u x %u matrix", spec->inputs,
                        spec->outputs);
  }
  if (!make_plans(m)) {
    cpu_destroy(m);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "CPU backend: FFTW could not plan a %zu-point real transform", 2 * L);
  }
  CudafftStatus status = ensure_slots(m, spec->set->parts ? spec->set->parts : 1);
  if (status == CUDAFFT_STATUS_OK)
    status = set_make(m, spec->set, &m->cur);
  if (status != CUDAFFT_STATUS_OK) {
    cpu_destroy(m);
    return status;
  }
  *impl = m;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
cpu_run(void *impl, const CudafftMatrixJob *job)
{
  CpuMatrix *m = impl;
  switch (job->kind) {
  case CUDAFFT_MATRIX_JOB_LOAD: {
    CpuSet *slot = job->slot ? &m->queued : &m->next;
    set_free(slot);
    set_free(&m->queued); /* a new next set: none queued after it */
    CudafftStatus status = ensure_slots(m, job->set->parts);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    return set_make(m, job->set, slot);
  }
  case CUDAFFT_MATRIX_JOB_PROMOTE:
    while (m->next.made)
      promote(m);
    return CUDAFFT_STATUS_OK;
  case CUDAFFT_MATRIX_JOB_BLOCKS:
    if (m->format == CUDAFFT_SAMPLE_F64)
      run_blocks_f64(m, job);
    else
      run_blocks_f32(m, job);
    return CUDAFFT_STATUS_OK;
  }
  return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "CPU backend: unknown matrix job");
}

static CudafftStatus
cpu_reset(void *impl)
{
  CpuMatrix *m = impl;
  const size_t slot_bytes = m->inputs * m->stride * m->real;
  memset(m->fdl_re, 0, m->cap * slot_bytes);
  memset(m->fdl_im, 0, m->cap * slot_bytes);
  memset(m->prev, 0, m->inputs * m->block_size * m->real);
  m->block = 0;
  return CUDAFFT_STATUS_OK;
}

const CudafftMatrixBackend cudafft_matrix_cpu_backend = {
    .create = cpu_create,
    .destroy = cpu_destroy,
    .run = cpu_run,
    .reset = cpu_reset,
    .stream = cudafft_cpu_stream,
};
