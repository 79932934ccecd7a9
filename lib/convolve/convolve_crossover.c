/* convolve_crossover.c: the convolution front end's filters and the crossover between them: a
 * filter made for a kernel and a block size (direct, partitioned or split), run over whole
 * stretches of input; a new kernel or block size runs beside the one in force for a crossover of X
 * frames (the larger of their spans), blended linearly, and then takes over; a restart drops to the
 * newest filter with every history zero. convolve.c decides when (pushes, changes, drains,
 * resets) and stages the partial blocks; this file is what a push's stretch does. */
#include "convolve_front.h"
#include "convolve_split.h"

#include "backend_choice.h"
#include "sample_values.h"
#include "size_math.h"

#include <stdio.h>

/* A filter for kernel at block size block_size: direct below CUDAFFT_CONVOLVE_DIRECT_TAPS taps,
 * partitioned at the default block size, split below it. */
CudafftStatus
front_filter_create(const CudafftConvolve *cv, const CudafftConvolveBackend *ops,
                    const CudafftConvolveKernel *kernel, size_t block_size, Filter *filter)
{
  if (!ops)
    return cudafft_no_cuda_backend();
  CudafftConvolveSpec spec = {
      .channels = cv->channels,
      .format = cv->format,
      .kernel = *kernel,
      .path = CUDAFFT_CONVOLVE_DIRECT,
      .device_id = cv->device_id,
  };
  Filter made = {.taps = kernel->taps,
                 .span = block_size ? block_size : CUDAFFT_CONVOLVE_MIN_BLOCK};
  CudafftStatus status;
  if (kernel->taps < CUDAFFT_CONVOLVE_DIRECT_TAPS) {
    made.path = PATH_DIRECT;
    made.grain = 1;
    status = ops->create(&spec, &made.impl);
  } else if (block_size == BLOCK) {
    made.path = PATH_PARTITIONED;
    made.grain = made.latency = BLOCK;
    spec.path = CUDAFFT_CONVOLVE_PARTITIONED;
    status = ops->create(&spec, &made.impl);
  } else {
    made.path = PATH_SPLIT;
    made.grain = block_size ? block_size : 1;
    made.latency = block_size;
    CudafftConvolveSplit *split = NULL;
    status = cudafft_convolve_split_create(ops, &spec, block_size, &split);
    made.impl = split;
  }
  if (status == CUDAFFT_STATUS_OK)
    *filter = made;
  return status;
}

void
front_filter_destroy(const CudafftConvolve *cv, Filter *filter)
{
  if (filter->impl && filter->path == PATH_SPLIT)
    cudafft_convolve_split_destroy(filter->impl);
  else if (filter->impl)
    cv->ops->destroy(filter->impl);
  filter->impl = NULL;
}

static CudafftStatus
filter_run(const CudafftConvolve *cv, const Filter *filter, const CudafftConvolveJob *job)
{
  return filter->path == PATH_SPLIT ? cudafft_convolve_split_run(filter->impl, job)
                                    : cv->ops->run(filter->impl, job);
}

static CudafftStatus
filter_reset(const CudafftConvolve *cv, const Filter *filter)
{
  return filter->path == PATH_SPLIT ? cudafft_convolve_split_reset(filter->impl)
                                    : cv->ops->reset(filter->impl);
}

size_t
front_round_up(size_t n, size_t grid)
{
  return (n + grid - 1) / grid * grid;
}

/* X: the length of the crossover from the filter in force to the next, and its change point's
 * grid. */
size_t
front_crossover(const CudafftConvolve *cv)
{
  return max_size(cv->current.span, cv->next.span);
}

/* The next filter takes over for good; the queued one, if any, crosses over next, from the first
 * point of its own grid. `retired` receives the filter that was in force. */
static void
promote(CudafftConvolve *cv, Filter *retired)
{
  cv->change += front_crossover(cv);
  *retired = cv->current;
  cv->current = cv->next;
  cv->next = cv->queued;
  cv->queued = (Filter){0};
  if (cv->next.impl)
    cv->change = front_round_up(cv->change, front_crossover(cv));
}

/* The newest kernel takes over at once and every history is zero: reset and drain. */
void
front_restart(CudafftConvolve *cv)
{
  if (cv->queued.impl) {
    front_filter_destroy(cv, &cv->next);
    cv->next = cv->queued;
    cv->queued = (Filter){0};
  }
  if (cv->next.impl) {
    front_filter_destroy(cv, &cv->current);
    cv->current = cv->next;
    cv->next = (Filter){0};
  }
  /* reset and drain report nothing: a failed clearing is retried by the next run */
  cv->uncleared = filter_reset(cv, &cv->current) != CUDAFFT_STATUS_OK;
  cv->pushed = 0;
  cv->produced = 0;
  cv->change = 0;
  cv->stage_on_device = 0;
}

/* front_restart() after a failed call, which returns what it gives: the reset runs jobs of its own,
 * and their success clears the thread's message, so the failure's message is put back. */
CudafftStatus
front_restart_after(CudafftConvolve *cv, CudafftStatus status)
{
  char message[512]; /* errors.c's size */
  snprintf(message, sizeof message, "%s", cudafft_last_error_message());
  front_restart(cv);
  return cudafft_fail(status, "%s", message);
}

/* The stretch of input that frame `pushed` is in: the grain its runs go through the filters in,
 * and how many frames it has from `pushed` on. Stretches: the filter in force alone up to the
 * change, both filters for X frames, the next filter alone afterwards (by then promoted). */
void
front_stretch_at(const CudafftConvolve *cv, size_t *grain, size_t *left)
{
  const int crossing = cv->next.impl && cv->pushed >= cv->change;
  *grain = crossing ? max_size(cv->current.grain, cv->next.grain) : cv->current.grain;
  if (!cv->next.impl)
    *left = SIZE_MAX - cv->pushed;
  else
    *left = (crossing ? cv->change + front_crossover(cv) : cv->change) - cv->pushed;
}

/* Moves the counters on by `frames` frames run through the filters of the stretch at `pushed`,
 * ending the crossover they complete: *retired receives the filter that was in force then (else
 * a slot with no filter), for the caller to destroy or, counting only, to forget. */
static void
advance(CudafftConvolve *cv, size_t frames, Filter *retired)
{
  const int crossing = cv->next.impl && cv->pushed >= cv->change;
  cv->pushed += frames;
  cv->produced += frames;
  *retired = (Filter){0};
  if (crossing && cv->pushed == cv->change + front_crossover(cv))
    promote(cv, retired);
}

/* The next step of a push with `remaining` input frames left, at cv's counters: *taken receives
 * the frames it takes from the input; returns the frames it runs through the filters: *taken,
 * whole grains straight from the input (nothing staged), or a grain once the stage fills with
 * them, or 0 while it fills. */
size_t
front_push_step(const CudafftConvolve *cv, size_t remaining, size_t *taken)
{
  size_t grain, left;
  front_stretch_at(cv, &grain, &left);
  const size_t staged = cv->pushed - cv->produced;
  if (staged == 0 && remaining >= grain) {
    /* a stretch's length is whole grains */
    *taken = (remaining < left ? remaining : left) / grain * grain;
    return *taken;
  }
  *taken = remaining < grain - staged ? remaining : grain - staged;
  return staged + *taken == grain ? grain : 0;
}

/* out = (1 - r) out + r scratch, r = (n - change + 1) / (X + 1) for frame n from `first`. */
static void
blend(const CudafftConvolve *cv, uint8_t *out, size_t frames, size_t first)
{
  const double span = (double)front_crossover(cv);
  for (size_t i = 0; i < frames; i++) {
    const double r = (double)(first + i - cv->change + 1) / (span + 1.0);
    uint8_t *o = out + i * cv->frame_bytes;
    const uint8_t *s = cv->scratch + i * cv->frame_bytes;
    for (unsigned c = 0; c < cv->channels; c++) {
      const double y_old = cudafft_sample_double(cv->format, o, c);
      const double y_new = cudafft_sample_double(cv->format, s, c);
      cudafft_sample_store(cv->format, o, c, (1.0 - r) * y_old + r * y_new);
    }
  }
}

/* Runs `frames` input frames (in NULL: zeros) from frame `pushed` on, all within one stretch and
 * (on a block-wise one) whole blocks, through the filters of that stretch; writes as many output
 * frames to out. in and out are host memory, or device memory where on_device says so (only for a
 * stretch that runs_in_place() allows; then also `after` and `done`, CudafftConvolveJob's, else
 * zeroed and NULL). Moves pushed and produced on and promotes at the end of a crossover. */
CudafftStatus
front_run(CudafftConvolve *cv, const void *in, size_t frames, uint8_t *out, unsigned on_device,
          CudafftFence after, CudafftFence *done)
{
  if (cv->uncleared) {
    /* a history that may hold the samples before a failure must not reach the output */
    const CudafftStatus cleared = filter_reset(cv, &cv->current);
    if (cleared != CUDAFFT_STATUS_OK)
      return cleared; /* its message says what failed */
    cv->uncleared = 0;
  }
  const double mix = cv->mix;
  const int crossing = cv->next.impl && cv->pushed >= cv->change;
  const CudafftConvolveJob job = {in, out, frames, mix, on_device, after, done};
  CudafftStatus status = filter_run(cv, &cv->current, &job);
  if (status == CUDAFFT_STATUS_OK && crossing) {
    /* a crossover stretch is at most BLOCK frames: scratch holds it */
    const CudafftConvolveJob next = {in, cv->scratch, frames, mix, 0, {0, 0}, NULL};
    status = filter_run(cv, &cv->next, &next);
    if (status == CUDAFFT_STATUS_OK)
      blend(cv, out, frames, cv->pushed);
  }
  if (status != CUDAFFT_STATUS_OK)
    return status;
  Filter retired;
  advance(cv, frames, &retired);
  front_filter_destroy(cv, &retired);
  return CUDAFFT_STATUS_OK;
}

/* The frames a push of `frames` frames writes, found by going through push()'s steps on a copy
 * of the counters and filter slots (no filter runs, none is destroyed). */
size_t
front_output_frames(const CudafftConvolve *cv, size_t frames)
{
  CudafftConvolve at = *cv;
  size_t out = 0;
  for (size_t taken = 0, count = 0; taken < frames; taken += count) {
    const size_t ran = front_push_step(&at, frames - taken, &count);
    at.pushed += count - ran; /* staged frames; a grain that fills the stage runs from its start */
    Filter retired;
    advance(&at, ran, &retired); /* counting only: the filters stay where they are */
    out += ran;
  }
  return out;
}
