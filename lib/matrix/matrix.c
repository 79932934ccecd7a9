/* matrix.c: the matrix convolution's front end (cudafft/matrix.h): validation, the list of each
 * response set's non-empty entries, staging of partial input blocks (the public lag), the change
 * points of response changes, and draining, of samples in host or in device memory (the staging
 * and copies of the latter are matrix_device.c's); the backends (matrix_backend.h) do the
 * filtering (at block size 0 through matrix_direct.c, whose jobs are blocks of one frame). */
#include "matrix_front.h"

#include "api_getter.h"
#include "backend_choice.h"
#include "errors.h"
#include "sample_values.h"
#include "size_math.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Validation ----------------------------------------------------------------------------------- */

static CudafftStatus
check_responses(const CudafftMatrixResponses *responses, unsigned inputs, unsigned outputs,
                CudafftSampleFormat format)
{
  if (!responses->taps_data)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "matrix responses taps_data is NULL");
  if (responses->taps == 0 || responses->taps > CUDAFFT_MATRIX_MAX_TAPS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "responses of %zu taps are not in 1..%u",
                        responses->taps, CUDAFFT_MATRIX_MAX_TAPS);
  /* One NaN or Inf tap would turn an output into NaN for as long as the responses stay; so
   * would, on an F32 stream, a finite double beyond the float range. */
  const double limit = format == CUDAFFT_SAMPLE_F32 ? FLT_MAX : DBL_MAX;
  const size_t count = (size_t)inputs * outputs * responses->taps; /* <= 2^44 */
  for (size_t n = 0; n < count; n++)
    if (!isfinite(responses->taps_data[n]) || fabs(responses->taps_data[n]) > limit) {
      const size_t row = n / responses->taps;
      return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "the response from input %zu to output %zu has tap %zu = %g (taps must "
                          "be finite and at most %g in magnitude)",
                          row / outputs, row % outputs, n % responses->taps,
                          responses->taps_data[n], limit);
    }
  return CUDAFFT_STATUS_OK;
}

static int
valid_block_size(size_t block_size)
{
  return block_size >= CUDAFFT_MATRIX_MIN_BLOCK && block_size <= CUDAFFT_MATRIX_MAX_BLOCK &&
         (block_size & (block_size - 1)) == 0;
}

static CudafftStatus
check_config(const void *args)
{
  const CudafftMatrixConfig *config = args;
  if (config->inputs == 0 || config->inputs > CUDAFFT_MATRIX_MAX_CHANNELS || config->outputs == 0 ||
      config->outputs > CUDAFFT_MATRIX_MAX_CHANNELS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "a matrix of %u inputs x %u outputs (each must be in 1..%d)",
                        config->inputs, config->outputs, CUDAFFT_MATRIX_MAX_CHANNELS);
  if (config->format != CUDAFFT_SAMPLE_F32 && config->format != CUDAFFT_SAMPLE_F64)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "the matrix convolution takes F32 or F64 samples, not format %d",
                        (int)config->format);
  if (config->block_size != 0 && !valid_block_size(config->block_size))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "block size %zu is not a power of two from %d to %d (or 0: zero latency)",
                        config->block_size, CUDAFFT_MATRIX_MIN_BLOCK, CUDAFFT_MATRIX_MAX_BLOCK);
  return check_responses(&config->responses, config->inputs, config->outputs, config->format);
}

/* Response sets ---------------------------------------------------------------------------------
 */

CudafftStatus
cudafft_matrix_list_entries(const double *taps_data, size_t taps, unsigned inputs, unsigned outputs,
                            size_t L, CudafftMatrixSet *set, CudafftMatrixEntry **entries)
{
  *entries = malloc((size_t)inputs * outputs * sizeof **entries);
  if (!*entries)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot list the entries of a %u x %u matrix", inputs, outputs);
  *set = (CudafftMatrixSet){.taps_data = taps_data, .taps = taps, .entries = *entries};
  for (unsigned j = 0; j < outputs; j++)
    for (unsigned i = 0; i < inputs; i++) {
      const double *h = taps_data + ((size_t)i * outputs + j) * taps;
      size_t last = taps;
      while (last > 0 && h[last - 1] == 0.0)
        last--;
      if (last == 0)
        continue; /* empty: costs nothing */
      const size_t parts = (last + L - 1) / L;
      (*entries)[set->count++] = (CudafftMatrixEntry){.input = i, .output = j, .parts = parts};
      set->parts = max_size(set->parts, parts);
    }
  return CUDAFFT_STATUS_OK;
}

/* The front end's list: partitions of the change unit (at block size 0 the backend makes its own
 * lists for its head and tail). */
static CudafftStatus
list_entries(const CudafftMatrix *mx, const CudafftMatrixResponses *responses,
             CudafftMatrixSet *set, CudafftMatrixEntry **entries)
{
  return cudafft_matrix_list_entries(responses->taps_data, responses->taps, mx->inputs, mx->outputs,
                                     mx->change_unit, set, entries);
}

/* Objects -------------------------------------------------------------------------------------- */

static void
matrix_free(void *object)
{
  CudafftMatrix *mx = object;
  if (!mx)
    return;
  if (mx->ops)
    mx->ops->destroy(mx->impl);
  matrix_device_free(mx);
  free(mx->stage);
  free(mx->tail);
  free(mx);
}

CUDAFFT_DEFINE_TRY_BACKEND(try_backend, CudafftMatrix, CudafftMatrixSpec,
                           cudafft_matrix_cpu_backend, cudafft_matrix_cuda_backend)
CUDAFFT_DEFINE_TRY_BACKEND(try_direct_backend, CudafftMatrix, CudafftMatrixSpec,
                           cudafft_matrix_direct_cpu_backend, cudafft_matrix_direct_cuda_backend)

CudafftStatus
cudafft_matrix_create(CudafftMatrix **matrix_out, CudafftBackend backend, int device_id,
                      const CudafftMatrixConfig *config)
{
  CudafftStatus status =
      cudafft_check_create((void **)matrix_out, "cudafft_matrix_create: matrix", config,
                           "matrix config", check_config, backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CudafftMatrix *mx = calloc(1, sizeof *mx);
  if (!mx)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a matrix convolution");
  mx->inputs = config->inputs;
  mx->outputs = config->outputs;
  mx->format = config->format;
  mx->block_size = config->block_size;
  mx->unit = mx->block_size ? mx->block_size : 1;
  mx->change_unit = mx->block_size ? mx->block_size : CUDAFFT_MATRIX_MIN_BLOCK;
  mx->in_frame = config->inputs * cudafft_sample_size(config->format);
  mx->out_frame = config->outputs * cudafft_sample_size(config->format);
  mx->taps = config->responses.taps;
  mx->device_id = device_id;
  /* at most 2048 x 1024 x 8 bytes (16 MiB) each */
  mx->stage = malloc(mx->unit * mx->in_frame);
  mx->tail = malloc(mx->unit * mx->out_frame);
  if (!mx->stage || !mx->tail) {
    matrix_free(mx);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the staging blocks of a %u x %u matrix", config->inputs,
                        config->outputs);
  }
  CudafftMatrixSet set;
  CudafftMatrixEntry *entries;
  status = list_entries(mx, &config->responses, &set, &entries);
  if (status != CUDAFFT_STATUS_OK) {
    matrix_free(mx);
    return status;
  }
  const CudafftMatrixSpec spec = {
      .inputs = mx->inputs,
      .outputs = mx->outputs,
      .format = mx->format,
      .block_size = mx->block_size,
      .set = &set,
      .device_id = device_id,
  };
  status = cudafft_create_on_backend(backend, device_id,
                                     mx->block_size ? try_backend : try_direct_backend, mx, &spec,
                                     &mx->backend, &mx->device_id);
  free(entries);
  if (status != CUDAFFT_STATUS_OK && mx->ops && !mx->impl)
    mx->ops = NULL; /* nothing of the backend's to destroy */
  return cudafft_publish((void **)matrix_out, mx, status, matrix_free);
}

void
cudafft_matrix_destroy(CudafftMatrix *matrix)
{
  matrix_free(matrix);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_matrix_get_backend, CudafftMatrix, object->backend,
                      CUDAFFT_BACKEND_CPU)
CUDAFFT_DEFINE_GETTER(int, cudafft_matrix_get_device, CudafftMatrix,
                      object->backend == CUDAFFT_BACKEND_CPU ? -1 : object->device_id, -1)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_matrix_input_frame_bytes, CudafftMatrix, object->in_frame, 0)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_matrix_output_frame_bytes, CudafftMatrix, object->out_frame,
                      0)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_matrix_get_block_size, CudafftMatrix, object->block_size, 0)
CUDAFFT_DEFINE_GETTER(size_t, cudafft_matrix_lag, CudafftMatrix, object->pushed - object->produced,
                      0)

size_t
cudafft_matrix_output_frames(const CudafftMatrix *matrix, size_t frames)
{
  if (!matrix)
    return 0;
  const size_t L = matrix->unit;
  return (matrix->pushed % L + frames) / L * L;
}

size_t
cudafft_matrix_drain_frames(const CudafftMatrix *matrix, int tail)
{
  if (!matrix)
    return 0;
  const size_t taps = matrix->pending ? matrix->pending_taps[matrix->pending - 1] : matrix->taps;
  return matrix->pushed - matrix->produced + (tail ? taps - 1 : 0);
}

/* Streaming ------------------------------------------------------------------------------------ */

static void
reset_state(CudafftMatrix *mx)
{
  if (mx->pending) {
    const CudafftMatrixJob promote = {.kind = CUDAFFT_MATRIX_JOB_PROMOTE};
    /* Fails only where the GPU's queued work failed (a device error): the responses in force
     * then stay, and the sets to come wait in the backend until a change replaces them. */
    if (mx->ops->run(mx->impl, &promote) == CUDAFFT_STATUS_OK)
      mx->taps = mx->pending_taps[mx->pending - 1];
    mx->pending = 0;
  }
  mx->uncleared = mx->ops->reset(mx->impl) != CUDAFFT_STATUS_OK;
  mx->pushed = mx->produced = 0;
}

void
cudafft_matrix_reset(CudafftMatrix *matrix)
{
  if (!matrix)
    return;
  cudafft_checked_memory_forget(&matrix->checked);
  reset_state(matrix);
}

/* Runs `blocks` whole blocks (in NULL: zeros) from the frame `produced`, crossing over at the
 * pending change's point where it falls among them; in and out in device memory where on_device
 * says (the CUDA backend's block table only). */
static CudafftStatus
run_blocks(CudafftMatrix *mx, const void *in, size_t blocks, void *out, unsigned on_device)
{
  if (mx->uncleared) {
    if (mx->ops->reset(mx->impl) != CUDAFFT_STATUS_OK)
      return cudafft_fail(CUDAFFT_STATUS_CUDA_ERROR, "cannot clear the matrix's history");
    mx->uncleared = 0;
  }
  const size_t L = mx->unit, first = mx->produced / L;
  CudafftMatrixJob job = {.kind = CUDAFFT_MATRIX_JOB_BLOCKS,
                          .in = in,
                          .out = out,
                          .on_device = on_device,
                          .blocks = blocks,
                          .change_block = {SIZE_MAX, SIZE_MAX}};
  unsigned changes = 0; /* change >= produced: in this run where before its end */
  while (changes < mx->pending && mx->change[changes] / L < first + blocks) {
    job.change_block[changes] = mx->change[changes] / L - first;
    changes++;
  }
  const CudafftStatus status = mx->ops->run(mx->impl, &job);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (changes > 0) {
    mx->taps = mx->pending_taps[changes - 1];
    mx->pending -= changes;
    if (mx->pending > 0) { /* the queued change is the next */
      mx->pending_taps[0] = mx->pending_taps[1];
      mx->change[0] = mx->change[1];
    }
  }
  mx->produced += blocks * L;
  return CUDAFFT_STATUS_OK;
}

/* run_blocks() for input and output where on_device says: in place at a block size (the CUDA
 * backend's kernels read and write device memory); through host copies of MATRIX_BOUNCE_FRAMES
 * frames at a time at block size 0, whose filter runs on the host (its heads; matrix_direct.c). */
static CudafftStatus
run_anywhere(CudafftMatrix *mx, const uint8_t *in, size_t blocks, uint8_t *out, unsigned on_device)
{
  if (on_device == 0 || mx->block_size != 0)
    return run_blocks(mx, in, blocks, out, on_device);
  CudafftStatus status = matrix_bounce_buffers(mx);
  for (size_t done = 0, n = 0; done < blocks && status == CUDAFFT_STATUS_OK; done += n) {
    n = min_size(blocks - done, MATRIX_BOUNCE_FRAMES);
    const uint8_t *from = in ? in + done * mx->in_frame : NULL;
    if (from && (on_device & CUDAFFT_IN_DEVICE)) {
      status = matrix_copy_samples(mx, mx->bounce_in, from, n * mx->in_frame, CUDAFFT_IN_DEVICE);
      from = mx->bounce_in;
    }
    uint8_t *to = out + done * mx->out_frame;
    uint8_t *host_to = on_device & CUDAFFT_OUT_DEVICE ? mx->bounce_out : to;
    if (status == CUDAFFT_STATUS_OK)
      status = run_blocks(mx, from, n, host_to, 0);
    if (status == CUDAFFT_STATUS_OK && host_to != to)
      status = matrix_copy_samples(mx, to, host_to, n * mx->out_frame, CUDAFFT_OUT_DEVICE);
  }
  return status;
}

/* Takes `frames` input frames into the stage or whole blocks straight from in; writes the blocks
 * they complete to out and counts their frames in *produced. in and out in device memory where
 * on_device says. */
static CudafftStatus
push_frames(CudafftMatrix *mx, const uint8_t *in, size_t frames, uint8_t *out, size_t *produced,
            unsigned on_device)
{
  const size_t L = mx->unit;
  while (frames > 0) {
    const size_t staged = mx->pushed - mx->produced;
    size_t blocks;
    CudafftStatus status;
    if (staged > 0 || frames < L) {
      const size_t take = min_size(L - staged, frames);
      status = matrix_stage_frames(mx, staged, in, take, (on_device & CUDAFFT_IN_DEVICE) != 0);
      if (status != CUDAFFT_STATUS_OK)
        return status;
      mx->pushed += take;
      in += take * mx->in_frame;
      frames -= take;
      if (staged + take < L)
        break;
      blocks = 1;
      /* the stage is complete: its block runs from where its frames are */
      const unsigned stage_place = mx->stage_on_device ? CUDAFFT_IN_DEVICE : 0;
      status = run_anywhere(mx, mx->stage_on_device ? mx->stage_device : mx->stage, 1, out,
                            (on_device & CUDAFFT_OUT_DEVICE) | stage_place);
    } else {
      blocks = frames / L;
      mx->pushed += blocks * L;
      status = run_anywhere(mx, in, blocks, out, on_device);
      in += blocks * L * mx->in_frame;
      frames -= blocks * L;
    }
    if (status != CUDAFFT_STATUS_OK)
      return status;
    out += blocks * L * mx->out_frame;
    *produced += blocks * L;
  }
  return CUDAFFT_STATUS_OK;
}

/* cudafft_matrix_push and _push_device (`name`): in and out where on_device says. */
static CudafftStatus
push(CudafftMatrix *matrix, const void *in, size_t frames, void *out, size_t *produced,
     unsigned on_device, const CudafftFence *after, CudafftFence *done, const char *name)
{
  if (done)
    *done = (CudafftFence){0, 0};
  if (!matrix || !produced || (frames > 0 && !in))
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: matrix, produced or in is NULL", name);
  *produced = 0;
  const size_t out_frames = cudafft_matrix_output_frames(matrix, frames);
  if (out_frames > 0 && !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: out is NULL where %zu frames come out",
                        name, out_frames);
  CudafftStatus status = matrix_device_check(matrix, on_device, in, frames * matrix->in_frame, out,
                                             out_frames * matrix->out_frame, after, name);
  if (status == CUDAFFT_STATUS_OK)
    status = push_frames(matrix, in, frames, out, produced, on_device);
  if (status != CUDAFFT_STATUS_OK) {
    reset_state(matrix);
    *produced = 0;
  }
  return status;
}

CudafftStatus
cudafft_matrix_push(CudafftMatrix *matrix, const void *in, size_t frames, void *out,
                    size_t *produced)
{
  return push(matrix, in, frames, out, produced, 0, NULL, NULL, "cudafft_matrix_push");
}

CudafftStatus
cudafft_matrix_push_device(CudafftMatrix *matrix, const void *in, size_t frames, void *out,
                           size_t *produced, unsigned on_device, const CudafftFence *after,
                           CudafftFence *done)
{
  return push(matrix, in, frames, out, produced, on_device, after, done,
              "cudafft_matrix_push_device");
}

/* cudafft_matrix_drain and _drain_device (`name`): out where on_device says. */
static CudafftStatus
drain(CudafftMatrix *matrix, int tail, void *out, size_t *produced, unsigned on_device,
      const char *name)
{
  if (!matrix || !produced)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: matrix or produced is NULL", name);
  *produced = 0;
  size_t remaining = cudafft_matrix_drain_frames(matrix, tail);
  if (remaining > 0 && !out)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: out is NULL where %zu frames come out",
                        name, remaining);
  const size_t L = matrix->unit;
  CudafftStatus status = matrix_device_check(matrix, on_device, NULL, 0, out,
                                             remaining * matrix->out_frame, NULL, name);
  /* frames staged from device memory come back to the host, where draining pads them */
  if (status == CUDAFFT_STATUS_OK)
    status = matrix_move_stage(matrix, matrix->pushed - matrix->produced, 0);
  while (remaining > 0 && status == CUDAFFT_STATUS_OK) {
    /* The staged frames and zeros after them, a block; then the whole blocks of zeros that are
     * wanted whole in one run straight into out (at block size 0 the whole drain), and the last
     * block through `tail`. */
    const size_t staged = matrix->pushed - matrix->produced;
    const void *in = NULL;
    size_t blocks = 1;
    if (staged > 0) {
      memset(matrix->stage + staged * matrix->in_frame, 0, (L - staged) * matrix->in_frame);
      in = matrix->stage;
    } else if (remaining >= L) {
      blocks = remaining / L;
    }
    matrix->pushed = matrix->produced + blocks * L;
    const size_t take = min_size(blocks * L, remaining);
    const int whole = take == blocks * L;
    uint8_t *dst = (uint8_t *)out + *produced * matrix->out_frame;
    status = run_anywhere(matrix, in, blocks, whole ? dst : matrix->tail, whole ? on_device : 0);
    if (status == CUDAFFT_STATUS_OK && !whole)
      status = matrix_copy_samples(matrix, dst, matrix->tail, take * matrix->out_frame, on_device);
    if (status == CUDAFFT_STATUS_OK) {
      *produced += take;
      remaining -= take;
    }
  }
  reset_state(matrix);
  if (status != CUDAFFT_STATUS_OK)
    *produced = 0;
  return status;
}

CudafftStatus
cudafft_matrix_drain(CudafftMatrix *matrix, int tail, void *out, size_t *produced)
{
  return drain(matrix, tail, out, produced, 0, "cudafft_matrix_drain");
}

CudafftStatus
cudafft_matrix_drain_device(CudafftMatrix *matrix, int tail, void *out, size_t *produced)
{
  return drain(matrix, tail, out, produced, CUDAFFT_OUT_DEVICE, "cudafft_matrix_drain_device");
}

CudafftStatus
cudafft_matrix_set_responses(CudafftMatrix *matrix, const CudafftMatrixResponses *responses)
{
  if (!matrix || !responses)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_matrix_set_responses: matrix or responses is NULL");
  CudafftStatus status =
      check_responses(responses, matrix->inputs, matrix->outputs, matrix->format);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  CudafftMatrixSet set;
  CudafftMatrixEntry *entries;
  status = list_entries(matrix, responses, &set, &entries);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  /* A change whose crossover block is being staged (its change point passed) is under way: the
   * new one queues after it; otherwise the new one replaces any change not yet under way. */
  const unsigned slot = matrix->pending > 0 && matrix->change[0] < matrix->pushed ? 1 : 0;
  const CudafftMatrixJob load = {.kind = CUDAFFT_MATRIX_JOB_LOAD, .set = &set, .slot = slot};
  status = matrix->ops->run(matrix->impl, &load);
  free(entries);
  matrix->pending = slot; /* the backend dropped what was in that slot, failed or not */
  if (status != CUDAFFT_STATUS_OK)
    return status;
  const size_t C = matrix->change_unit;
  matrix->pending_taps[slot] = responses->taps;
  matrix->change[slot] = (matrix->pushed + C - 1) / C * C;
  matrix->pending = slot + 1;
  return CUDAFFT_STATUS_OK;
}
