/* convolve_split.c: the split path (convolve_split.h): the backend's own where it has one, else
 * composed: a direct-path head, a near tail of one block filtered in the run that completes its
 * input, and a far tail filtered by a worker thread while the next block's input comes in. The
 * head writes the run's output (mixed); the tails' outputs are added to it a = B - L and a + B
 * frames later. */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES (size_math.h) */
#include "convolve_split.h"

#include "convolve_worker.h"
#include "errors.h"
#include "sample_values.h"
#include "size_math.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)CUDAFFT_CONVOLVE_BLOCK)

/* A tail: a partitioned filter of taps [offset, offset + its taps) and its unmixed output for its
 * latest two blocks, block j at j mod 2. */
typedef struct {
  void *impl; /* NULL: the kernel ends before offset */
  size_t offset;
  uint8_t *output; /* 2 BLOCK frames */
} Tail;

struct CudafftConvolveSplit {
  const CudafftConvolveBackend *ops;
  void *native; /* the backend's own split filter; NULL: composed of the parts below */
  void *head;   /* direct path: taps [0, near.offset) (fewer for a shorter kernel) */
  Tail near;    /* taps [a, a + B), filtered in the run that completes a block */
  Tail far;     /* taps [a + B, taps), filtered by the worker */
  CudafftConvolveWorker *worker; /* for far; NULL without it */
  unsigned channels;
  CudafftSampleFormat format;
  size_t frame_bytes;
  size_t position; /* frames since create or reset */
  uint8_t *gather; /* BLOCK frames: the tails' input block being gathered */
};

size_t
cudafft_convolve_split_head_taps(size_t block_size)
{
  return BLOCK - block_size; /* B for 0 */
}

double *
cudafft_convolve_kernel_columns(const CudafftConvolveKernel *kernel, size_t first, size_t count)
{
  double *taps = malloc(kernel->rows * count * sizeof *taps);
  if (taps)
    for (unsigned r = 0; r < kernel->rows; r++)
      memcpy(taps + r * count, kernel->taps_data + r * kernel->taps + first, count * sizeof *taps);
  return taps;
}

/* A backend filter on `path` for taps [first, first + count) of spec's kernel. */
static CudafftStatus
part_create(const CudafftConvolveBackend *ops, const CudafftConvolveSpec *spec,
            CudafftConvolvePath path, size_t first, size_t count, void **impl)
{
  double *taps = cudafft_convolve_kernel_columns(&spec->kernel, first, count);
  if (!taps)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot copy %zu taps x %u rows of a kernel", count, spec->kernel.rows);
  CudafftConvolveSpec part = *spec;
  part.path = path;
  part.kernel.taps_data = taps;
  part.kernel.taps = count;
  const CudafftStatus status = ops->create(&part, impl);
  free(taps);
  return status;
}

/* The tail of taps [offset, min(taps, offset + count)) of spec's kernel, if the kernel reaches
 * offset. */
static CudafftStatus
tail_create(CudafftConvolveSplit *s, const CudafftConvolveSpec *spec, size_t offset, size_t count,
            Tail *tail)
{
  tail->offset = offset;
  const size_t taps = spec->kernel.taps;
  if (taps <= offset)
    return CUDAFFT_STATUS_OK;
  const size_t own = min_size(taps - offset, count);
  tail->output = calloc(2 * BLOCK, s->frame_bytes);
  if (!tail->output)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the tail blocks of a split filter of %u channels",
                        spec->channels);
  return part_create(s->ops, spec, CUDAFFT_CONVOLVE_PARTITIONED, offset, own, &tail->impl);
}

CudafftStatus
cudafft_convolve_split_create(const CudafftConvolveBackend *ops, const CudafftConvolveSpec *spec,
                              size_t block_size, CudafftConvolveSplit **split)
{
  *split = NULL;
  CudafftConvolveSplit *s = calloc(1, sizeof *s);
  if (!s)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a split filter");
  s->ops = ops;
  s->channels = spec->channels;
  s->format = spec->format;
  s->frame_bytes = spec->channels * cudafft_sample_size(spec->format);
  CudafftConvolveSpec native = *spec;
  native.path = CUDAFFT_CONVOLVE_SPLIT;
  native.block_size = block_size;
  CudafftStatus status = ops->create(&native, &s->native);
  if (status != CUDAFFT_STATUS_UNSUPPORTED) {
    if (status == CUDAFFT_STATUS_OK)
      *split = s;
    else
      free(s);
    return status;
  }
  const size_t a = cudafft_convolve_split_head_taps(block_size), taps = spec->kernel.taps;
  status = part_create(ops, spec, CUDAFFT_CONVOLVE_DIRECT, 0, min_size(taps, a), &s->head);
  if (status == CUDAFFT_STATUS_OK)
    status = tail_create(s, spec, a, BLOCK, &s->near);
  if (status == CUDAFFT_STATUS_OK)
    status = tail_create(s, spec, a + BLOCK, taps, &s->far);
  if (status == CUDAFFT_STATUS_OK && s->far.impl)
    status = cudafft_convolve_worker_create(ops, s->far.impl, BLOCK * s->frame_bytes, &s->worker);
  if (status == CUDAFFT_STATUS_OK && s->near.impl) {
    s->gather = calloc(BLOCK, s->frame_bytes);
    if (!s->gather)
      status = cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                            "cannot allocate the input block of a split filter of %u channels",
                            spec->channels);
  }
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_convolve_split_destroy(s);
    return status;
  }
  *split = s;
  return CUDAFFT_STATUS_OK;
}

static void
tail_destroy(const CudafftConvolveBackend *ops, Tail *tail)
{
  if (tail->impl)
    ops->destroy(tail->impl);
  free(tail->output);
}

void
cudafft_convolve_split_destroy(CudafftConvolveSplit *split)
{
  if (!split)
    return;
  if (split->native)
    split->ops->destroy(split->native);
  cudafft_convolve_worker_destroy(split->worker); /* before the filter it runs */
  if (split->head)
    split->ops->destroy(split->head);
  tail_destroy(split->ops, &split->near);
  tail_destroy(split->ops, &split->far);
  free(split->gather);
  free(split);
}

static CudafftStatus
tail_reset(const CudafftConvolveSplit *s, Tail *tail)
{
  if (!tail->impl)
    return CUDAFFT_STATUS_OK;
  memset(tail->output, 0, 2 * BLOCK * s->frame_bytes); /* z before frame 0 is 0 */
  return s->ops->reset(tail->impl);
}

CudafftStatus
cudafft_convolve_split_reset(CudafftConvolveSplit *split)
{
  if (split->native)
    return split->ops->reset(split->native);
  if (split->worker)
    cudafft_convolve_worker_forget(split->worker); /* the far filter is idle from here */
  split->position = 0;
  /* every part is cleared, whichever fails; the first failure is the one reported */
  const CudafftStatus head = split->ops->reset(split->head);
  const CudafftStatus near = tail_reset(split, &split->near);
  const CudafftStatus far = tail_reset(split, &split->far);
  return head != CUDAFFT_STATUS_OK ? head : near != CUDAFFT_STATUS_OK ? near : far;
}

/* out[i] += mix z[first + i - offset] for `frames` frames, z the tail's output (z of negative
 * frames: 0). */
static void
add_tail(const CudafftConvolveSplit *s, const Tail *tail, uint8_t *out, size_t first, size_t frames,
         double mix)
{
  for (size_t i = 0; i < frames; i++) {
    const size_t n = first + i;
    if (n < tail->offset)
      continue;
    const size_t m = n - tail->offset;
    const uint8_t *z = tail->output + ((m / BLOCK) % 2 * BLOCK + m % BLOCK) * s->frame_bytes;
    uint8_t *o = out + i * s->frame_bytes;
    for (unsigned c = 0; c < s->channels; c++) {
      const double y = cudafft_sample_double(s->format, o, c);
      cudafft_sample_store(s->format, o, c, y + mix * cudafft_sample_double(s->format, z, c));
    }
  }
}

/* Output frames [first, first + frames) need the far tail's blocks up to the one holding
 * z[first + frames - 1 - offset]: waits for the worker to have done them. */
static CudafftStatus
far_ready(const CudafftConvolveSplit *s, size_t first, size_t frames)
{
  const size_t last = first + frames - 1;
  if (!s->worker || last < s->far.offset)
    return CUDAFFT_STATUS_OK;
  return cudafft_convolve_worker_wait(s->worker, (last - s->far.offset) / BLOCK + 1);
}

int
cudafft_convolve_split_is_native(const CudafftConvolveSplit *split)
{
  return split->native != NULL;
}

CudafftStatus
cudafft_convolve_split_run(CudafftConvolveSplit *split, const CudafftConvolveJob *job)
{
  CudafftConvolveSplit *s = split;
  if (s->native)
    return s->ops->run(s->native, job);
  CudafftStatus status = s->ops->run(s->head, job);
  if (status != CUDAFFT_STATUS_OK || !s->near.impl) {
    s->position += job->frames;
    return status;
  }
  /* In pieces that end where the run or a tail block ends: a block's output is added only once
   * it is filtered, and the header's argument says each piece needs no later one. */
  const size_t fb = s->frame_bytes;
  const uint8_t *in = job->in;
  uint8_t *out = job->out;
  for (size_t done = 0; done < job->frames;) {
    const size_t within = s->position % BLOCK;
    const size_t left = job->frames - done;
    const size_t count = min_size(left, BLOCK - within);
    if (in)
      memcpy(s->gather + within * fb, in + done * fb, count * fb);
    else
      memset(s->gather + within * fb, 0, count * fb);
    const int completes = within + count == BLOCK;
    const size_t block = s->position / BLOCK;
    if (completes) {
      const CudafftConvolveJob near = {.in = s->gather,
                                       .out = s->near.output + block % 2 * BLOCK * fb,
                                       .frames = BLOCK,
                                       .mix = 1.0};
      status = s->ops->run(s->near.impl, &near);
    }
    if (status == CUDAFFT_STATUS_OK)
      status = far_ready(s, s->position, count);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    add_tail(s, &s->near, out + done * fb, s->position, count, job->mix);
    if (s->worker)
      add_tail(s, &s->far, out + done * fb, s->position, count, job->mix);
    if (completes && s->worker) {
      /* after the adds above: its output goes where block - 2's was, which they may still read */
      const CudafftConvolveJob far = {.in = s->gather,
                                      .out = s->far.output + block % 2 * BLOCK * fb,
                                      .frames = BLOCK,
                                      .mix = 1.0};
      status = cudafft_convolve_worker_submit(s->worker, &far, BLOCK * fb);
      if (status != CUDAFFT_STATUS_OK)
        return status;
    }
    s->position += count;
    done += count;
  }
  return CUDAFFT_STATUS_OK;
}
