/* convolve.c: the convolution API's front end: validation, the choice of backend and path, the
 * staging of partial blocks (the public lag), the kernel crossover (two filters side by side,
 * blended in convolve_crossover.c), draining with zeros, and samples in device memory
 * (push_device). The filters (a backend's, or a split one made of two of a backend's) run whole
 * calls without lag; convolve_crossover.c makes them and runs the stretches between changes. */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES (size_math.h) */
#include "device_pointer.h"
#include "convolve_backend.h"
#include "convolve_front.h"
#include "convolve_split.h"

#include "api_getter.h"
#include "backend_choice.h"
#include "device_samples.h"
#include "executor.h"
#include "sample_values.h"
#include "size_math.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest kernel accepted: 2^26 taps, 23 minutes at 48 kHz. Its spectra take about 540 MB
 * per row, so longer ones would not fit any device anyway; the bound keeps every size computed
 * from taps far from overflowing. */
#define MAX_TAPS ((size_t)1 << 26)

/* A push's order on the device (push_device's `after` and `done`): the fence its device input
 * waits for (zeroed once the host has waited for it), where its device output's fence goes (NULL:
 * the push waits for its work), and that fence so far. */
typedef struct {
  CudafftFence after;
  CudafftFence *done;
  CudafftFence last;
} PushOrder;

/* Validation ----------------------------------------------------------------------------------- */

static CudafftStatus
check_mix(double mix)
{
  if (!(mix >= 0.0 && mix <= 1.0)) /* NaN fails both */
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "mix %g is not in 0..1", mix);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
check_kernel(const CudafftConvolveKernel *kernel, unsigned channels, CudafftSampleFormat format)
{
  if (!kernel->taps_data)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "convolution kernel taps_data is NULL");
  if (kernel->taps == 0 || kernel->taps > MAX_TAPS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_SIZE, "a kernel of %zu taps is not in 1..%zu",
                        kernel->taps, MAX_TAPS);
  if (kernel->rows != 1 && kernel->rows != channels)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "a kernel of %u rows for %u channels (1 row for every channel, or one per "
                        "channel)",
                        kernel->rows, channels);
  /* One NaN or Inf tap would turn the whole output into NaN for as long as the kernel stays; so
   * would, on an F32 stream, a finite double beyond the float range, which the single-precision
   * filter rounds to Inf. F64 streams filter in double precision and take any finite tap. */
  const double limit = format == CUDAFFT_SAMPLE_F32 ? FLT_MAX : DBL_MAX;
  const size_t count = kernel->taps * kernel->rows; /* <= 2^36 */
  for (size_t i = 0; i < count; i++)
    if (!isfinite(kernel->taps_data[i]) || fabs(kernel->taps_data[i]) > limit)
      return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "kernel row %zu tap %zu is %g (taps must be finite and at most %g in "
                          "magnitude)",
                          i / kernel->taps, i % kernel->taps, kernel->taps_data[i], limit);
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
check_config(const void *args)
{
  const CudafftConvolveConfig *config = args;
  if (config->channels == 0 || config->channels > CUDAFFT_MAX_CHANNELS)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%u channels is not in 1..%d",
                        config->channels, CUDAFFT_MAX_CHANNELS);
  if (config->format != CUDAFFT_SAMPLE_F32 && config->format != CUDAFFT_SAMPLE_F64)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "the convolution takes F32 or F64 samples, not format %d",
                        (int)config->format);
  const CudafftStatus status = check_mix(config->mix);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  return check_kernel(&config->kernel, config->channels, config->format);
}

/* Filters -------------------------------------------------------------------------------------- */

static int
valid_block_size(size_t block_size)
{
  return block_size == 0 || (block_size >= CUDAFFT_CONVOLVE_MIN_BLOCK && block_size <= BLOCK &&
                             (block_size & (block_size - 1)) == 0);
}

size_t
cudafft_convolve_output_frames(const CudafftConvolve *convolve, size_t frames)
{
  return convolve ? front_output_frames(convolve, frames) : 0;
}

/* Samples in device memory (push_device) ------------------------------------------------------- */

/* Whether the stretch at `pushed` runs on samples in device memory where they are: one filter, of
 * one of the backend's own paths (the CUDA backend's own split path among them). The front end
 * blends a crossover on the host, and the composed split path sums its parts there. */
static int
runs_in_place(const CudafftConvolve *cv)
{
  const int crossing = cv->next.impl && cv->pushed >= cv->change;
  return !crossing &&
         (cv->current.path != PATH_SPLIT || cudafft_convolve_split_is_native(cv->current.impl));
}

/* *buffer, made (BLOCK frames of host memory) where it is not yet. */
static CudafftStatus
bounce_buffer(const CudafftConvolve *cv, uint8_t **buffer)
{
  if (!*buffer && !(*buffer = malloc(BLOCK * cv->frame_bytes)))
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the host copies of a convolution of %u channels",
                        cv->channels);
  return CUDAFFT_STATUS_OK;
}

/* Waits for this object's own device work that a push did not wait for (it may still read the
 * device stage). */
static CudafftStatus
deferred_done(CudafftConvolve *cv)
{
  const CudafftStatus status = cudafft_fence_wait(cv->deferred);
  if (status == CUDAFFT_STATUS_OK)
    cv->deferred = (CudafftFence){0, 0};
  return status;
}

/* Where the host must read the push's device input itself (a copy), or write the device stage:
 * the device work the input waits for, and this object's own that may still read the stage, is
 * waited for first. */
static CudafftStatus
host_waits(CudafftConvolve *cv, PushOrder *order)
{
  CudafftStatus status = cudafft_fence_wait(order->after);
  if (status == CUDAFFT_STATUS_OK) {
    order->after = (CudafftFence){0, 0};
    status = deferred_done(cv);
  }
  return status;
}

/* front_run() for input and output where on_device says: in place where the stretch allows it
 * (ordered after order->after, and not waited for where order->done asks so), else through host
 * copies of BLOCK frames at a time (whole grains of any stretch: a crossover's X and every grain
 * divide BLOCK). */
static CudafftStatus
run_anywhere(CudafftConvolve *cv, const void *in, size_t frames, uint8_t *out, unsigned on_device,
             PushOrder *order)
{
  if (on_device == 0)
    return front_run(cv, in, frames, out, 0, (CudafftFence){0, 0}, NULL);
  if (runs_in_place(cv)) {
    CudafftFence done = {0, 0};
    const CudafftFence after = on_device & CUDAFFT_IN_DEVICE ? order->after : (CudafftFence){0, 0};
    const CudafftStatus status =
        front_run(cv, in, frames, out, on_device, after,
                  order->done && (on_device & CUDAFFT_OUT_DEVICE) ? &done : NULL);
    if (done.queue != 0)
      order->last = cv->deferred = done;
    return status;
  }
  const size_t fb = cv->frame_bytes;
  CudafftStatus status = on_device & CUDAFFT_IN_DEVICE ? host_waits(cv, order) : CUDAFFT_STATUS_OK;
  if (status != CUDAFFT_STATUS_OK)
    return status;
  status = bounce_buffer(cv, &cv->bounce_in);
  if (status == CUDAFFT_STATUS_OK)
    status = bounce_buffer(cv, &cv->bounce_out);
  for (size_t done = 0, n = 0; done < frames && status == CUDAFFT_STATUS_OK; done += n) {
    n = min_size(frames - done, BLOCK);
    const uint8_t *from = in ? (const uint8_t *)in + done * fb : NULL;
    if (from && (on_device & CUDAFFT_IN_DEVICE)) {
      status = cudafft_device_samples_copy(cv->device_id, cv->bounce_in, from, n * fb);
      from = cv->bounce_in;
    }
    uint8_t *to = out + done * fb;
    uint8_t *host_to = on_device & CUDAFFT_OUT_DEVICE ? cv->bounce_out : to;
    if (status == CUDAFFT_STATUS_OK)
      status = front_run(cv, from, n, host_to, 0, (CudafftFence){0, 0}, NULL);
    if (status == CUDAFFT_STATUS_OK && host_to != to)
      status = cudafft_device_samples_copy(cv->device_id, to, host_to, n * fb);
  }
  return status;
}

/* Moves the `staged` frames waiting in the stage to device memory (to_device) or to host memory,
 * making the device stage at its first use. */
static CudafftStatus
move_stage(CudafftConvolve *cv, size_t staged, int to_device)
{
  const size_t fb = cv->frame_bytes;
  /* a push that did not wait may still read the device stage, which this writes or moves */
  CudafftStatus status = to_device || cv->stage_on_device ? deferred_done(cv) : CUDAFFT_STATUS_OK;
  if (status == CUDAFFT_STATUS_OK && to_device && !cv->stage_device)
    status = cudafft_device_samples_alloc(cv->device_id, BLOCK * fb, &cv->stage_device);
  if (status != CUDAFFT_STATUS_OK || to_device == cv->stage_on_device)
    return status;
  if (staged > 0)
    status = cudafft_device_samples_copy(cv->device_id, to_device ? cv->stage_device : cv->stage,
                                         to_device ? cv->stage : cv->stage_device, staged * fb);
  if (status == CUDAFFT_STATUS_OK)
    cv->stage_on_device = to_device;
  return status;
}

/* Puts `count` input frames from src (device memory where in_device) after the `staged` frames
 * waiting in the stage, which moves to where src is first. */
static CudafftStatus
stage_frames(CudafftConvolve *cv, size_t staged, const uint8_t *src, size_t count, int in_device,
             PushOrder *order)
{
  const size_t fb = cv->frame_bytes;
  CudafftStatus status = in_device ? host_waits(cv, order) : CUDAFFT_STATUS_OK;
  if (status == CUDAFFT_STATUS_OK)
    status = move_stage(cv, staged, in_device);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  if (!in_device) {
    memcpy(cv->stage + staged * fb, src, count * fb);
    return CUDAFFT_STATUS_OK;
  }
  return cudafft_device_samples_copy(cv->device_id, (uint8_t *)cv->stage_device + staged * fb, src,
                                     count * fb);
}

/* Creation ------------------------------------------------------------------------------------- */

static void
convolve_free(void *object)
{
  CudafftConvolve *cv = object;
  if (!cv)
    return;
  if (cv->ops) {
    front_filter_destroy(cv, &cv->current);
    front_filter_destroy(cv, &cv->next);
    front_filter_destroy(cv, &cv->queued);
  }
  free(cv->kernel);
  free(cv->stage);
  free(cv->scratch);
  free(cv->tail);
  cudafft_device_samples_free(cv->device_id, cv->stage_device);
  free(cv->bounce_in);
  free(cv->bounce_out);
  free(cv);
}

/* Keeps a copy of kernel as the newest (the old copy stays where there is no memory for it). */
static CudafftStatus
keep_kernel(CudafftConvolve *cv, const CudafftConvolveKernel *kernel)
{
  const size_t count = kernel->taps * kernel->rows; /* <= 2^36: check_kernel's bound */
  double *copy = malloc(count * sizeof *copy);
  if (!copy)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot keep a copy of a kernel of %zu taps x %u rows", kernel->taps,
                        kernel->rows);
  memcpy(copy, kernel->taps_data, count * sizeof *copy);
  free(cv->kernel);
  cv->kernel = copy;
  cv->kernel_taps = kernel->taps;
  cv->kernel_rows = kernel->rows;
  return CUDAFFT_STATUS_OK;
}

/* The try_backend of cudafft_create_on_backend() for a convolution: its first filter, for kernel
 * (the spec), on the table for backend and device_id. */
static CudafftStatus
first_filter(void *convolve, const void *kernel, CudafftBackend backend, int device_id)
{
  CudafftConvolve *cv = convolve;
  cv->device_id = device_id;
  cv->ops =
      CUDAFFT_BACKEND_TABLE(backend, cudafft_convolve_cpu_backend, cudafft_convolve_cuda_backend);
  return front_filter_create(cv, cv->ops, kernel, cv->block_size, &cv->current);
}

CudafftStatus
cudafft_convolve_create(CudafftConvolve **convolve_out, CudafftBackend backend, int device_id,
                        const CudafftConvolveConfig *config)
{
  CudafftStatus status =
      cudafft_check_create((void **)convolve_out, "cudafft_convolve_create: convolve", config,
                           "convolution config", check_config, backend, device_id);
  if (status != CUDAFFT_STATUS_OK)
    return status;

  CudafftConvolve *cv = calloc(1, sizeof *cv);
  if (!cv)
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY, "cannot allocate a convolution");
  cv->channels = config->channels;
  cv->format = config->format;
  cv->frame_bytes = config->channels * cudafft_sample_size(config->format);
  cv->device_id = device_id;
  cv->mix = config->mix;
  cv->block_size = BLOCK;
  /* at most 2048 x 1024 x 8 bytes (16 MiB) each */
  cv->stage = malloc(BLOCK * cv->frame_bytes);
  cv->scratch = malloc(BLOCK * cv->frame_bytes);
  cv->tail = malloc(BLOCK * cv->frame_bytes);
  if (!cv->stage || !cv->scratch || !cv->tail) {
    convolve_free(cv);
    return cudafft_fail(CUDAFFT_STATUS_HOST_OUT_OF_MEMORY,
                        "cannot allocate the staging blocks of a convolution of %u channels",
                        config->channels);
  }
  status = keep_kernel(cv, &config->kernel);
  if (status != CUDAFFT_STATUS_OK) {
    convolve_free(cv);
    return status;
  }

  status = cudafft_create_on_backend(backend, device_id, first_filter, cv, &config->kernel,
                                     &cv->backend, &cv->device_id);
  return cudafft_publish((void **)convolve_out, cv, status, convolve_free);
}

void
cudafft_convolve_destroy(CudafftConvolve *convolve)
{
  convolve_free(convolve);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_convolve_get_backend, CudafftConvolve,
                      object->backend, CUDAFFT_BACKEND_AUTO)
CUDAFFT_DEFINE_GETTER(int, cudafft_convolve_get_device, CudafftConvolve, object->device_id, -1)

CUDAFFT_DEFINE_GETTER(size_t, cudafft_convolve_frame_bytes, CudafftConvolve, object->frame_bytes, 0)

size_t
cudafft_convolve_latency(const CudafftConvolve *convolve)
{
  if (!convolve)
    return 0;
  /* the filters not in use have latency 0 */
  return max_size(convolve->current.latency,
                  max_size(convolve->next.latency, convolve->queued.latency));
}

CUDAFFT_DEFINE_GETTER(size_t, cudafft_convolve_lag, CudafftConvolve,
                      object->pushed - object->produced, 0)

size_t
cudafft_convolve_max_output(const CudafftConvolve *convolve, size_t frames)
{
  if (!convolve)
    return 0;
  const size_t lag = cudafft_convolve_lag(convolve);
  return frames > SIZE_MAX - lag ? SIZE_MAX : frames + lag;
}

/* The kernel the stream ends with. */
static const Filter *
newest(const CudafftConvolve *cv)
{
  return cv->queued.impl ? &cv->queued : cv->next.impl ? &cv->next : &cv->current;
}

size_t
cudafft_convolve_drain_frames(const CudafftConvolve *convolve, int tail)
{
  if (!convolve)
    return 0;
  return cudafft_convolve_lag(convolve) + (tail ? newest(convolve)->taps - 1 : 0);
}

void
cudafft_convolve_reset(CudafftConvolve *convolve)
{
  if (!convolve)
    return;
  cudafft_checked_memory_forget(&convolve->checked);
  front_restart(convolve);
}

CudafftStatus
cudafft_convolve_set_mix(CudafftConvolve *convolve, double mix)
{
  if (!convolve)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_convolve_set_mix: convolve is NULL");
  const CudafftStatus status = check_mix(mix);
  if (status == CUDAFFT_STATUS_OK)
    convolve->mix = mix;
  return status;
}

/* Makes `filter` (a new kernel or block size) the next one, as the header says: from the first
 * point of its crossover's grid not yet passed, replacing a change not yet begun; or, while a
 * crossover is under way, the one to follow it, replacing any other that was to. */
static void
schedule(CudafftConvolve *cv, Filter filter)
{
  if (cv->next.impl && cv->pushed > cv->change) {
    front_filter_destroy(cv, &cv->queued);
    cv->queued = filter;
  } else {
    front_filter_destroy(cv, &cv->next);
    cv->next = filter;
    cv->change = front_round_up(cv->pushed, front_crossover(cv));
  }
}

/* A filter for kernel at block size block_size that becomes the newest (its kernel kept), or a
 * failure, after which the filter restarts as documented (the old kernel stays). */
static CudafftStatus
make_newest(CudafftConvolve *cv, const CudafftConvolveKernel *kernel, size_t block_size,
            Filter *filter)
{
  /* Made now, so that a kernel that does not fit is refused here and not mid-stream. */
  CudafftStatus status = front_filter_create(cv, cv->ops, kernel, block_size, filter);
  if (status == CUDAFFT_STATUS_OK && kernel->taps_data != cv->kernel) {
    status = keep_kernel(cv, kernel);
    if (status != CUDAFFT_STATUS_OK)
      front_filter_destroy(cv, filter);
  }
  if (status != CUDAFFT_STATUS_OK)
    return front_restart_after(cv, status);
  return status;
}

CudafftStatus
cudafft_convolve_set_kernel(CudafftConvolve *convolve, const CudafftConvolveKernel *kernel)
{
  if (!convolve || !kernel)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_convolve_set_kernel: %s is NULL",
                        !convolve ? "convolve" : "kernel");
  CudafftConvolve *cv = convolve;
  CudafftStatus status = check_kernel(kernel, cv->channels, cv->format);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  Filter filter = {0};
  status = make_newest(cv, kernel, cv->block_size, &filter);
  if (status == CUDAFFT_STATUS_OK)
    schedule(cv, filter);
  return status;
}

CudafftStatus
cudafft_convolve_set_block_size(CudafftConvolve *convolve, size_t block_size)
{
  if (!convolve)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_convolve_set_block_size: convolve is NULL");
  if (!valid_block_size(block_size))
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "block size %zu is neither 0 nor a power of two from %d to %d", block_size,
                        CUDAFFT_CONVOLVE_MIN_BLOCK, CUDAFFT_CONVOLVE_BLOCK);
  CudafftConvolve *cv = convolve;
  const CudafftConvolveKernel newest = {cv->kernel, cv->kernel_taps, cv->kernel_rows};
  Filter filter = {0};
  const CudafftStatus status = make_newest(cv, &newest, block_size, &filter);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  cv->block_size = block_size;
  if (cv->pushed == 0 && !cv->next.impl) {
    /* nothing filtered yet, nothing pending: no crossover to make */
    front_filter_destroy(cv, &cv->current);
    cv->current = filter;
  } else {
    schedule(cv, filter);
  }
  return CUDAFFT_STATUS_OK;
}

size_t
cudafft_convolve_get_block_size(const CudafftConvolve *convolve)
{
  return convolve ? convolve->block_size : 0;
}

/* Streaming ------------------------------------------------------------------------------------ */

static int
overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

/* cudafft_convolve_push and _push_device (`name`): in and out where on_device says. */
static CudafftStatus
push(CudafftConvolve *convolve, const void *in, size_t frames, void *out, size_t *produced,
     unsigned on_device, const CudafftFence *after, CudafftFence *done, const char *name)
{
  if (produced)
    *produced = 0;
  if (done)
    *done = (CudafftFence){0, 0};
  if (!convolve)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: convolve is NULL", name);
  CudafftConvolve *cv = convolve;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  const size_t fb = cv->frame_bytes;
  if (!produced || (frames > 0 && !in) || (!out && front_output_frames(cv, frames) > 0))
    status = cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "%s: %s is NULL", name,
                          !produced ? "produced"
                          : !in     ? "in"
                                    : "out");
  else
    status = cudafft_device_samples_check_flags(on_device, cv->backend, name);
  if (status == CUDAFFT_STATUS_OK && frames > SIZE_MAX / fb - BLOCK) /* (frames + lag) fb fits */
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: %zu frames is too many", name, frames);
  else if (status == CUDAFFT_STATUS_OK &&
           overlap(in, frames * fb, out, cudafft_convolve_max_output(cv, frames) * fb))
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "%s: in and out overlap", name);
  if (status == CUDAFFT_STATUS_OK && on_device && cv->device_id >= 0)
    status = cudafft_device_pointers_check(&cv->checked, cv->device_id, on_device, in, frames * fb,
                                           out, front_output_frames(cv, frames) * fb, name);
  if (status != CUDAFFT_STATUS_OK)
    return front_restart_after(cv, status); /* as documented: every failure resets */

  const uint8_t *src = in;
  uint8_t *dst = out;
  const size_t first = cv->produced;
  PushOrder order = {{0, 0}, done, {0, 0}};
  status = cudafft_fence_order(after, (on_device & CUDAFFT_IN_DEVICE) != 0, &order.after);
  for (size_t taken = 0, count = 0; taken < frames && status == CUDAFFT_STATUS_OK; taken += count) {
    const size_t staged = cv->pushed - cv->produced;
    const size_t ran = front_push_step(cv, frames - taken, &count);
    uint8_t *o = dst + (cv->produced - first) * fb;
    if (staged == 0 && ran > 0) {
      /* whole grains straight from the caller's buffer */
      status = run_anywhere(cv, src + taken * fb, count, o, on_device, &order);
      continue;
    }
    status = stage_frames(cv, staged, src + taken * fb, count, (on_device & CUDAFFT_IN_DEVICE) != 0,
                          &order);
    if (status == CUDAFFT_STATUS_OK)
      cv->pushed += count;
    if (status == CUDAFFT_STATUS_OK && ran > 0) {
      /* the stage is full: its grain runs from its start */
      cv->pushed -= ran;
      const void *stage = cv->stage_on_device ? cv->stage_device : (const void *)cv->stage;
      const unsigned out_place = on_device & CUDAFFT_OUT_DEVICE;
      /* the device stage is complete (the host wrote it), so it waits for nothing */
      PushOrder staged_order = {{0, 0}, done, order.last};
      status =
          run_anywhere(cv, stage, ran, o, out_place | (cv->stage_on_device ? CUDAFFT_IN_DEVICE : 0),
                       &staged_order);
      order.last = staged_order.last;
    }
  }
  if (status != CUDAFFT_STATUS_OK)
    return front_restart_after(cv, status);
  *produced = cv->produced - first;
  if (done)
    *done = order.last;
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_convolve_push(CudafftConvolve *convolve, const void *in, size_t frames, void *out,
                      size_t *produced)
{
  return push(convolve, in, frames, out, produced, 0, NULL, NULL, "cudafft_convolve_push");
}

CudafftStatus
cudafft_convolve_push_device(CudafftConvolve *convolve, const void *in, size_t frames, void *out,
                             size_t *produced, unsigned on_device, const CudafftFence *after,
                             CudafftFence *done)
{
  return push(convolve, in, frames, out, produced, on_device, after, done,
              "cudafft_convolve_push_device");
}

CudafftStatus
cudafft_convolve_drain(CudafftConvolve *convolve, int tail, void *out, size_t *produced)
{
  if (produced)
    *produced = 0;
  if (!convolve)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_convolve_drain: convolve is NULL");
  CudafftConvolve *cv = convolve;
  const size_t fb = cv->frame_bytes, total = cudafft_convolve_drain_frames(cv, tail);
  if (!produced || (total > 0 && !out))
    return front_restart_after(cv, cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                                                "cudafft_convolve_drain: %s is NULL",
                                                !produced ? "produced" : "out"));

  uint8_t *dst = out;
  const size_t first = cv->produced;
  /* frames staged from device memory come back to the host, where draining pads them */
  CudafftStatus status = move_stage(cv, cv->pushed - cv->produced, 0);
  while (cv->produced - first < total && status == CUDAFFT_STATUS_OK) {
    size_t grain, left;
    front_stretch_at(cv, &grain, &left);
    const size_t wanted = total - (cv->produced - first);
    uint8_t *o = dst + (cv->produced - first) * fb;
    const size_t staged = cv->pushed - cv->produced;
    if (staged == 0 && wanted >= grain) {
      const size_t count = (wanted < left ? wanted : left) / grain * grain;
      status = front_run(cv, NULL, count, o, 0, (CudafftFence){0, 0}, NULL);
    } else {
      /* the last input grain, padded with zeros, or a grain of which only the start is wanted */
      const void *in = NULL;
      if (staged > 0) {
        memset(cv->stage + staged * fb, 0, (grain - staged) * fb);
        cv->pushed -= staged;
        in = cv->stage;
      }
      const int whole = wanted >= grain;
      status = front_run(cv, in, grain, whole ? o : cv->tail, 0, (CudafftFence){0, 0}, NULL);
      if (status == CUDAFFT_STATUS_OK && !whole) {
        memcpy(o, cv->tail, wanted * fb);
        cv->produced -= grain - wanted; /* the rest is past the end */
      }
    }
  }
  if (status != CUDAFFT_STATUS_OK)
    return front_restart_after(cv, status);
  *produced = total;
  front_restart(cv);
  return CUDAFFT_STATUS_OK;
}
