/* convolve_split.c: the split path (convolve_split.h): a direct-path head and a partitioned tail
 * on one backend; the head writes the run's output (mixed), the tail's output is added to it
 * a = B - L frames later. */
#include "convolve_split.h"

#include "errors.h"
#include "sample_values.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)CUDAFFT_CONVOLVE_BLOCK)

struct CudafftConvolveSplit {
  const CudafftConvolveBackend *ops;
  void *head; /* direct path: taps [0, offset) (fewer for a shorter kernel) */
  void *tail; /* partitioned path: taps [offset, taps); NULL for a kernel of `offset` or fewer */
  size_t offset;
  unsigned channels;
  CudafftSampleFormat format;
  size_t frame_bytes;
  size_t position; /* frames since create or reset */
  uint8_t *gather; /* BLOCK frames: the tail's input block being gathered */
  /* 2 BLOCK frames: the tail's output (unmixed) for its latest two blocks, block j at j mod 2 */
  uint8_t *output;
};

size_t
cudafft_convolve_split_head_taps(size_t block_size)
{
  return BLOCK - block_size; /* B for 0 */
}

/* Rows of taps [first, first + count) of kernel, in a new array (NULL without memory). */
static double *
kernel_columns(const CudafftConvolveKernel *kernel, size_t first, size_t count)
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
  double *taps = kernel_columns(&spec->kernel, first, count);
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

CudafftStatus
cudafft_convolve_split_create(const CudafftConvolveBackend *ops, const CudafftConvolveSpec *spec,
                              size_t block_size, CudafftConvolveSplit **split)
{
  *split = NULL;
  CudafftConvolveSplit *s = calloc(1, sizeof *s);
  if (!s)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a split filter");
  s->ops = ops;
  s->offset = cudafft_convolve_split_head_taps(block_size);
  s->channels = spec->channels;
  s->format = spec->format;
  s->frame_bytes = spec->channels * cudafft_sample_size(spec->format);
  const size_t taps = spec->kernel.taps;
  const size_t head_taps = taps < s->offset ? taps : s->offset;
  CudafftStatus status = part_create(ops, spec, CUDAFFT_CONVOLVE_DIRECT, 0, head_taps, &s->head);
  if (status == CUDAFFT_STATUS_OK && taps > s->offset) {
    status =
        part_create(ops, spec, CUDAFFT_CONVOLVE_PARTITIONED, s->offset, taps - s->offset, &s->tail);
    if (status == CUDAFFT_STATUS_OK) {
      s->gather = calloc(BLOCK, s->frame_bytes);
      s->output = calloc(2 * BLOCK, s->frame_bytes);
      if (!s->gather || !s->output)
        status = cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                              "cannot allocate the tail blocks of a split filter of %u channels",
                              spec->channels);
    }
  }
  if (status != CUDAFFT_STATUS_OK) {
    cudafft_convolve_split_destroy(s);
    return status;
  }
  *split = s;
  return CUDAFFT_STATUS_OK;
}

void
cudafft_convolve_split_destroy(CudafftConvolveSplit *split)
{
  if (!split)
    return;
  if (split->head)
    split->ops->destroy(split->head);
  if (split->tail)
    split->ops->destroy(split->tail);
  free(split->gather);
  free(split->output);
  free(split);
}

void
cudafft_convolve_split_reset(CudafftConvolveSplit *split)
{
  split->ops->reset(split->head);
  if (split->tail) {
    split->ops->reset(split->tail);
    memset(split->output, 0, 2 * BLOCK * split->frame_bytes); /* z before frame 0 is 0 */
  }
  split->position = 0;
}

/* out[i] += mix z[first + i - offset] for `frames` frames (z of negative frames: 0). */
static void
add_tail(const CudafftConvolveSplit *s, uint8_t *out, size_t first, size_t frames, double mix)
{
  for (size_t i = 0; i < frames; i++) {
    const size_t n = first + i;
    if (n < s->offset)
      continue;
    const size_t m = n - s->offset;
    const uint8_t *z = s->output + ((m / BLOCK) % 2 * BLOCK + m % BLOCK) * s->frame_bytes;
    uint8_t *o = out + i * s->frame_bytes;
    for (unsigned c = 0; c < s->channels; c++) {
      const double y = cudafft_sample_double(s->format, o, c);
      cudafft_sample_store(s->format, o, c, y + mix * cudafft_sample_double(s->format, z, c));
    }
  }
}

CudafftStatus
cudafft_convolve_split_run(CudafftConvolveSplit *split, const CudafftConvolveJob *job)
{
  CudafftConvolveSplit *s = split;
  CudafftStatus status = s->ops->run(s->head, job);
  if (status != CUDAFFT_STATUS_OK || !s->tail) {
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
    const size_t count = left < BLOCK - within ? left : BLOCK - within;
    if (in)
      memcpy(s->gather + within * fb, in + done * fb, count * fb);
    else
      memset(s->gather + within * fb, 0, count * fb);
    if (within + count == BLOCK) {
      const size_t block = s->position / BLOCK;
      const CudafftConvolveJob tail = {s->gather, s->output + block % 2 * BLOCK * fb, BLOCK, 1.0f};
      status = s->ops->run(s->tail, &tail);
      if (status != CUDAFFT_STATUS_OK)
        return status;
    }
    add_tail(s, out + done * fb, s->position, count, job->mix);
    s->position += count;
    done += count;
  }
  return CUDAFFT_STATUS_OK;
}
