/* matrix_direct.c: block size 0 (zero latency) of the matrix convolution, on either backend: each
 * response is cut at H = CUDAFFT_MATRIX_MIN_BLOCK taps into a head (taps [0, H)), filtered here in
 * the time domain frame by frame, and a tail (taps [H, taps)), filtered by the backend's own
 * partitioned filter (matrix_cpu.c or matrix_cuda.cu) at block size H:
 *     y_j[n] = sum_i sum_{k<H} h_ij[k] x_i[n - k]  +  z_j[n - H],
 *     z_j[m] = sum_i sum_k h_ij[H + k] x_i[m - k]   (the tail filter's output),
 * which is the header's formula term for term. z[n - H] lies in the tail's block n / H - 1, whose
 * input is complete before frame n comes: so every output frame is written as its input frame is
 * pushed, and the tail never needs the block being gathered.
 *
 * Why not convolve_split.c's design (a head of B - L taps and tails at B = 2048 run by a worker
 * thread): a matrix's head costs inputs x outputs x head taps a frame, which a head of thousands of
 * taps would make the bulk of the work on one host thread; the shortest head the tail's block
 * allows (32 taps) keeps it small, and the backend's partitioned filter at block 32, the work it
 * is built for, does the rest. The head runs on the host for both backends (the same code, so the
 * same result); the CUDA backend's tail runs on the GPU a block of 32 frames at a time.
 *
 * When the tail runs: its block b at the first frame of block b + 1 (lazily, not as block b's last
 * frame comes), so that a change asked at any frame up to its change point s (a multiple of H)
 * reaches the tail's block s / H - 1, whose output is what frames [s, s + H) add: both the head and
 * the tail cross over during those H frames with the header's r, and the sum does as the header
 * says. For the same reason the tail's delay line has seen the blocks before the latest frame's
 * (whole blocks pushed before the last frame, not whole blocks pushed) when a change is asked.
 *
 * Crossovers: the front end hands a change over in the job that holds its change point; the head
 * keeps the old set until the crossover's H frames are out, which may be in later jobs. */
#include "matrix_backend.h"

#include "cudafft_config.h"
#include "errors.h"
#include "sample_values.h"
#include "size_math.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEAD ((size_t)CUDAFFT_MATRIX_MIN_BLOCK)

/* One set's heads: its entries whose first HEAD taps are not all zero, by output, with those taps
 * up to the last nonzero one (length). */
typedef struct {
  int made;
  size_t count;
  unsigned *input, *output;
  size_t *length;
  double *taps; /* count x HEAD */
} Head;

typedef struct {
  const CudafftMatrixBackend *ops; /* the tail's backend */
  void *tail;
  unsigned inputs, outputs;
  CudafftSampleFormat format;
  size_t in_frame, out_frame;
  Head old, cur, next, queued; /* old: the set a crossover leaves, until its last frame is out */
  size_t position;             /* frames since create/reset */
  double *history;       /* inputs x 2 HEAD: each input's previous block, then the current one */
  uint8_t *block;        /* HEAD input frames: the current block, the tail's input */
  uint8_t *z;            /* HEAD output frames: the tail's output for the previous block */
  double *acc, *acc_old; /* HEAD x outputs: the heads' sums, by the set in force and the old one */
} DirectMatrix;

static void
head_free(Head *h)
{
  free(h->input);
  free(h->output);
  free(h->length);
  free(h->taps);
  *h = (Head){0};
}

/* The heads of validated responses (inputs x outputs rows of taps). */
static CudafftStatus
head_make(const DirectMatrix *d, const double *taps_data, size_t taps, Head *h)
{
  const size_t rows = (size_t)d->inputs * d->outputs;
  *h = (Head){.made = 1};
  h->input = malloc(rows * sizeof *h->input);
  h->output = malloc(rows * sizeof *h->output);
  h->length = malloc(rows * sizeof *h->length);
  h->taps = calloc(rows, HEAD * sizeof *h->taps); /* at most 1024 x 1024 x 256 bytes */
  if (!h->input || !h->output || !h->length || !h->taps) {
    head_free(h);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the %zu-tap heads of a %u x %u matrix", HEAD, d->inputs,
                        d->outputs);
  }
  for (unsigned j = 0; j < d->outputs; j++)
    for (unsigned i = 0; i < d->inputs; i++) {
      const double *r = taps_data + ((size_t)i * d->outputs + j) * taps;
      size_t length = min_size(taps, HEAD);
      while (length > 0 && r[length - 1] == 0.0)
        length--;
      if (length == 0)
        continue; /* an empty head costs nothing */
      h->input[h->count] = i;
      h->output[h->count] = j;
      h->length[h->count] = length;
      memcpy(h->taps + h->count * HEAD, r, length * sizeof *r);
      h->count++;
    }
  return CUDAFFT_STATUS_OK;
}

/* The tail's set (free() *data and *entries after use): taps [HEAD, taps) of every row, or one
 * zero tap a row (every entry empty) for responses no longer than the head. */
static CudafftStatus
tail_set(const DirectMatrix *d, const CudafftMatrixSet *full, CudafftMatrixSet *set, double **data,
         CudafftMatrixEntry **entries)
{
  const size_t rows = (size_t)d->inputs * d->outputs;
  const size_t taps = full->taps > HEAD ? full->taps - HEAD : 1;
  *entries = NULL;
  *data = calloc(rows, taps * sizeof **data);
  if (!*data)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot copy the tails of a %u x %u matrix of %zu taps", d->inputs,
                        d->outputs, full->taps);
  if (full->taps > HEAD)
    for (size_t row = 0; row < rows; row++)
      memcpy(*data + row * taps, full->taps_data + row * full->taps + HEAD, taps * sizeof **data);
  const CudafftStatus status =
      cudafft_matrix_list_entries(*data, taps, d->inputs, d->outputs, HEAD, set, entries);
  if (status != CUDAFFT_STATUS_OK) {
    free(*data);
    *data = NULL;
  }
  return status;
}

static void
direct_destroy(void *impl)
{
  DirectMatrix *d = impl;
  if (!d)
    return;
  if (d->tail)
    d->ops->destroy(d->tail);
  head_free(&d->old);
  head_free(&d->cur);
  head_free(&d->next);
  head_free(&d->queued);
  free(d->history);
  free(d->block);
  free(d->z);
  free(d->acc);
  free(d->acc_old);
  free(d);
}

static CudafftStatus
direct_create(const CudafftMatrixBackend *ops, const CudafftMatrixSpec *spec, void **impl)
{
  *impl = NULL;
  DirectMatrix *d = calloc(1, sizeof *d);
  if (!d)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate a zero-latency matrix convolution");
  d->ops = ops;
  d->inputs = spec->inputs;
  d->outputs = spec->outputs;
  d->format = spec->format;
  d->in_frame = spec->inputs * cudafft_sample_size(spec->format);
  d->out_frame = spec->outputs * cudafft_sample_size(spec->format);
  d->history = calloc((size_t)spec->inputs * 2 * HEAD, sizeof *d->history);
  d->block = calloc(HEAD, d->in_frame);
  d->z = calloc(HEAD, d->out_frame);
  d->acc = malloc(HEAD * spec->outputs * sizeof *d->acc);
  d->acc_old = malloc(HEAD * spec->outputs * sizeof *d->acc_old);
  if (!d->history || !d->block || !d->z || !d->acc || !d->acc_old) {
    direct_destroy(d);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the blocks of a zero-latency %u x %u matrix", spec->inputs,
                        spec->outputs);
  }
  CudafftStatus status = head_make(d, spec->set->taps_data, spec->set->taps, &d->cur);
  CudafftMatrixSet set;
  double *data = NULL;
  CudafftMatrixEntry *entries = NULL;
  if (status == CUDAFFT_STATUS_OK)
    status = tail_set(d, spec->set, &set, &data, &entries);
  if (status == CUDAFFT_STATUS_OK) {
    CudafftMatrixSpec tail = *spec;
    tail.block_size = HEAD;
    tail.set = &set;
    status = ops->create(&tail, &d->tail);
  }
  free(data);
  free(entries);
  if (status != CUDAFFT_STATUS_OK) {
    direct_destroy(d);
    return status;
  }
  *impl = d;
  return CUDAFFT_STATUS_OK;
}

/* LOAD: the tail's set into the tail filter's slot, the heads into ours; a failure empties the
 * slot (and, for the next set, the queued one) as the job says. */
static CudafftStatus
direct_load(DirectMatrix *d, const CudafftMatrixJob *job)
{
  Head *slot = job->slot ? &d->queued : &d->next;
  head_free(slot);
  head_free(&d->queued); /* a new next set: none queued after it */
  Head head;
  CudafftStatus status = head_make(d, job->set->taps_data, job->set->taps, &head);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  CudafftMatrixSet set;
  double *data = NULL;
  CudafftMatrixEntry *entries = NULL;
  status = tail_set(d, job->set, &set, &data, &entries);
  if (status == CUDAFFT_STATUS_OK) {
    const CudafftMatrixJob load = {.kind = CUDAFFT_MATRIX_JOB_LOAD, .set = &set, .slot = job->slot};
    status = d->ops->run(d->tail, &load);
  }
  free(data);
  free(entries);
  if (status != CUDAFFT_STATUS_OK) {
    head_free(&head);
    return status;
  }
  *slot = head;
  return CUDAFFT_STATUS_OK;
}

/* The next heads take over: the ones in force stay as `old` for the crossover. */
static void
start_crossover(DirectMatrix *d)
{
  head_free(&d->old);
  d->old = d->cur;
  d->cur = d->next;
  d->next = d->queued;
  d->queued = (Head){0};
}

/* acc (count x outputs) = the heads' sums for frames [within, within + count) of the current
 * block (history holds them). */
static void
head_sums(const DirectMatrix *d, const Head *h, size_t within, size_t count, double *acc)
{
  memset(acc, 0, count * d->outputs * sizeof *acc);
  for (size_t e = 0; e < h->count; e++) {
    const double *taps = h->taps + e * HEAD;
    const double *x = d->history + (size_t)h->input[e] * 2 * HEAD + HEAD + within;
    const size_t length = h->length[e];
    const unsigned j = h->output[e];
    /* tap by tap over the frames, so that the inner loop runs along the frames (vectorizable
     * without reordering a sum); x[t - k] reaches back at most HEAD - 1 frames, into the previous
     * block */
    double sums[HEAD] = {0};
    for (size_t k = 0; k < length; k++) {
      const double tap = taps[k];
      const double *xk = x - k;
      for (size_t t = 0; t < count; t++)
        sums[t] += tap * xk[t];
    }
    for (size_t t = 0; t < count; t++)
      acc[t * d->outputs + j] += sums[t];
  }
}

/* Frames [within, within + count) of the current block from in (NULL: zeros) into the tail's
 * input block and each input's history. */
static void
gather(DirectMatrix *d, const uint8_t *in, size_t within, size_t count)
{
  if (in)
    memcpy(d->block + within * d->in_frame, in, count * d->in_frame);
  else
    memset(d->block + within * d->in_frame, 0, count * d->in_frame);
  for (unsigned i = 0; i < d->inputs; i++) {
    double *x = d->history + (size_t)i * 2 * HEAD + HEAD + within;
    for (size_t t = 0; t < count; t++)
      x[t] = in ? cudafft_sample_double(d->format, in + t * d->in_frame, i) : 0.0;
  }
}

/* At the first frame of a block: the tail filters the previous block (crossing over during it
 * where `change`), and that block becomes each input's previous one. */
static CudafftStatus
next_block(DirectMatrix *d, int change)
{
  const CudafftMatrixJob job = {.kind = CUDAFFT_MATRIX_JOB_BLOCKS,
                                .in = d->block,
                                .out = d->z,
                                .blocks = 1,
                                .change_block = {change ? 0 : SIZE_MAX, SIZE_MAX}};
  const CudafftStatus status = d->ops->run(d->tail, &job);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  for (unsigned i = 0; i < d->inputs; i++) {
    double *x = d->history + (size_t)i * 2 * HEAD;
    memcpy(x, x + HEAD, HEAD * sizeof *x);
  }
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
direct_frames(DirectMatrix *d, const CudafftMatrixJob *job)
{
  size_t change[2];
  for (int c = 0; c < 2; c++)
    change[c] = job->change_block[c] == SIZE_MAX ? SIZE_MAX : d->position + job->change_block[c];
  const uint8_t *in = job->in;
  uint8_t *out = job->out;
  for (size_t done = 0; done < job->blocks;) {
    const size_t n = d->position, within = n % HEAD;
    const size_t count = min_size(HEAD - within, job->blocks - done);
    const int changes = within == 0 && (n == change[0] || n == change[1]);
    if (within == 0) {
      /* a change at frame 0: the tail's block before it is silence, so its set needs no
       * crossover */
      const CudafftMatrixJob promote = {.kind = CUDAFFT_MATRIX_JOB_PROMOTE};
      const CudafftStatus status = n > 0     ? next_block(d, changes)
                                   : changes ? d->ops->run(d->tail, &promote)
                                             : CUDAFFT_STATUS_OK;
      if (status != CUDAFFT_STATUS_OK)
        return status;
    }
    if (changes)
      start_crossover(d);
    gather(d, in ? in + done * d->in_frame : NULL, within, count);
    head_sums(d, &d->cur, within, count, d->acc);
    if (d->old.made)
      head_sums(d, &d->old, within, count, d->acc_old);
    uint8_t *o = out + done * d->out_frame;
    for (size_t t = 0; t < count; t++) {
      /* the crossover's block is this one: it started at its first frame */
      const double r = (double)(within + t + 1) / (double)(HEAD + 1);
      const uint8_t *z = d->z + (within + t) * d->out_frame;
      for (unsigned j = 0; j < d->outputs; j++) {
        const size_t a = t * d->outputs + j;
        const double head = d->old.made ? (1 - r) * d->acc_old[a] + r * d->acc[a] : d->acc[a];
        cudafft_sample_store(d->format, o + t * d->out_frame, j,
                             head + cudafft_sample_double(d->format, z, j));
      }
    }
    d->position += count;
    done += count;
    if (d->position % HEAD == 0)
      head_free(&d->old); /* the crossover's last frame is out */
  }
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
direct_run(void *impl, const CudafftMatrixJob *job)
{
  DirectMatrix *d = impl;
  switch (job->kind) {
  case CUDAFFT_MATRIX_JOB_LOAD:
    return direct_load(d, job);
  case CUDAFFT_MATRIX_JOB_PROMOTE: {
    const CudafftStatus status = d->ops->run(d->tail, job);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    Head *last = d->queued.made ? &d->queued : d->next.made ? &d->next : NULL;
    if (last) {
      head_free(&d->cur);
      d->cur = *last;
      *last = (Head){0};
      head_free(&d->next);
    }
    head_free(&d->old); /* in force from now on, without a crossover */
    return CUDAFFT_STATUS_OK;
  }
  case CUDAFFT_MATRIX_JOB_BLOCKS:
    return direct_frames(d, job);
  }
  return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "zero-latency matrix: unknown job");
}

static CudafftStatus
direct_reset(void *impl)
{
  DirectMatrix *d = impl;
  d->position = 0;
  head_free(&d->old);
  memset(d->history, 0, (size_t)d->inputs * 2 * HEAD * sizeof *d->history);
  memset(d->z, 0, HEAD * d->out_frame); /* z before frame 0 is 0 */
  return d->ops->reset(d->tail);
}

static void *
direct_stream(const void *impl)
{
  const DirectMatrix *d = impl;
  return d->ops->stream(d->tail);
}

/* The table whose tails run on `tail_table`. */
#define DIRECT_TABLE(name, tail_table)                                                             \
  static CudafftStatus name##_create(const CudafftMatrixSpec *spec, void **impl)                   \
  {                                                                                                \
    return direct_create(&(tail_table), spec, impl);                                               \
  }                                                                                                \
  const CudafftMatrixBackend name = {.create = name##_create,                                      \
                                     .destroy = direct_destroy,                                    \
                                     .run = direct_run,                                            \
                                     .reset = direct_reset,                                        \
                                     .stream = direct_stream};

DIRECT_TABLE(cudafft_matrix_direct_cpu_backend, cudafft_matrix_cpu_backend)
#if CUDAFFT_HAVE_CUDA
DIRECT_TABLE(cudafft_matrix_direct_cuda_backend, cudafft_matrix_cuda_backend)
#endif
