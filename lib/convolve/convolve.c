/* convolve.c: the convolution API's front end: validation, the choice of backend and path, the
 * staging of partial blocks (the public lag), the kernel crossover (two backend filters side by
 * side, blended here), draining with zeros. The backends run whole calls without lag. */
#include "convolve_backend.h"

#include "api_getter.h"
#include "backend_choice.h"
#include "sample_values.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)CUDAFFT_CONVOLVE_BLOCK)
/* The longest kernel accepted: 2^26 taps, 23 minutes at 48 kHz. Its spectra take about 540 MB
 * per row, so longer ones would not fit any device anyway; the bound keeps every size computed
 * from taps far from overflowing. */
#define MAX_TAPS ((size_t)1 << 26)

typedef struct {
  void *impl; /* NULL: no filter in this slot */
  CudafftConvolvePath path;
  size_t taps;
} Filter;

struct CudafftConvolve {
  unsigned channels;
  CudafftSampleFormat format;
  size_t frame_bytes;
  CudafftBackend backend;
  const CudafftConvolveBackend *ops;
  int device_id;
  double mix;

  /* The filter in force; the next one, crossing over from `change` (a multiple of BLOCK) to
   * change + BLOCK; a later one set during that crossover, which starts where it ends. */
  Filter current, next, queued;
  size_t change;

  /* Frames since create/reset/drain: pushed in (zeros included while draining) and written out.
   * pushed - produced frames wait in `stage` (only on block-wise stretches: their count is
   * pushed % BLOCK there, and 0 elsewhere). */
  size_t pushed, produced;
  uint8_t *stage;   /* BLOCK frames: a partial input block */
  uint8_t *scratch; /* BLOCK frames: the next filter's output during the crossover */
  uint8_t *tail;    /* BLOCK frames: a drained block of which only the start is wanted */
};

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

static size_t
path_latency(CudafftConvolvePath path)
{
  return path == CUDAFFT_CONVOLVE_PARTITIONED ? BLOCK : 0;
}

static CudafftStatus
filter_create(const CudafftConvolve *cv, const CudafftConvolveBackend *ops,
              const CudafftConvolveKernel *kernel, Filter *filter)
{
  const CudafftConvolveSpec spec = {
      .channels = cv->channels,
      .format = cv->format,
      .kernel = *kernel,
      .path = kernel->taps < CUDAFFT_CONVOLVE_DIRECT_TAPS ? CUDAFFT_CONVOLVE_DIRECT
                                                          : CUDAFFT_CONVOLVE_PARTITIONED,
      .device_id = cv->device_id,
  };
  if (!ops)
    return cudafft_no_cuda_backend();
  void *impl = NULL;
  const CudafftStatus status = ops->create(&spec, &impl);
  if (status != CUDAFFT_STATUS_OK)
    return status;
  filter->impl = impl;
  filter->path = spec.path;
  filter->taps = kernel->taps;
  return CUDAFFT_STATUS_OK;
}

static void
filter_destroy(const CudafftConvolve *cv, Filter *filter)
{
  if (filter->impl)
    cv->ops->destroy(filter->impl);
  filter->impl = NULL;
}

/* The next filter takes over for good; the queued one, if any, crosses over next, from here. */
static void
promote(CudafftConvolve *cv)
{
  filter_destroy(cv, &cv->current);
  cv->current = cv->next;
  cv->next = cv->queued;
  cv->queued = (Filter){0};
  cv->change += BLOCK;
}

/* The newest kernel takes over at once and every history is zero: reset and drain. */
static void
restart(CudafftConvolve *cv)
{
  if (cv->queued.impl) {
    filter_destroy(cv, &cv->next);
    cv->next = cv->queued;
    cv->queued = (Filter){0};
  }
  if (cv->next.impl) {
    filter_destroy(cv, &cv->current);
    cv->current = cv->next;
    cv->next = (Filter){0};
  }
  cv->ops->reset(cv->current.impl); /* nothing to report: reset and drain report nothing */
  cv->pushed = 0;
  cv->produced = 0;
  cv->change = 0;
}

/* The stretch of input that frame `pushed` is in: whether it goes through the backends in whole
 * blocks, and how many frames it has from `pushed` on. Stretches: the current filter alone up to
 * the change, both filters for one block, the next filter alone afterwards (by then promoted). */
static void
stretch_at(const CudafftConvolve *cv, int *blockwise, size_t *left)
{
  const int crossing = cv->next.impl && cv->pushed >= cv->change;
  *blockwise = cv->current.path == CUDAFFT_CONVOLVE_PARTITIONED ||
               (crossing && cv->next.path == CUDAFFT_CONVOLVE_PARTITIONED);
  if (!cv->next.impl)
    *left = SIZE_MAX - cv->pushed;
  else
    *left = (crossing ? cv->change + BLOCK : cv->change) - cv->pushed;
}

/* out = (1 - r) out + r scratch, r = (n - change + 1) / (BLOCK + 1) for frame n from `first`. */
static void
blend(const CudafftConvolve *cv, uint8_t *out, size_t frames, size_t first)
{
  for (size_t i = 0; i < frames; i++) {
    const double r = (double)(first + i - cv->change + 1) / (double)(BLOCK + 1);
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
 * frames to out. Moves pushed and produced on and promotes at the end of a crossover. */
static CudafftStatus
run(CudafftConvolve *cv, const void *in, size_t frames, uint8_t *out)
{
  const float mix = (float)cv->mix;
  const int crossing = cv->next.impl && cv->pushed >= cv->change;
  const CudafftConvolveJob job = {in, out, frames, mix};
  CudafftStatus status = cv->ops->run(cv->current.impl, &job);
  if (status == CUDAFFT_STATUS_OK && crossing) {
    /* a crossover stretch is one block: scratch holds it */
    const CudafftConvolveJob next = {in, cv->scratch, frames, mix};
    status = cv->ops->run(cv->next.impl, &next);
    if (status == CUDAFFT_STATUS_OK)
      blend(cv, out, frames, cv->pushed);
  }
  if (status != CUDAFFT_STATUS_OK)
    return status;
  cv->pushed += frames;
  cv->produced += frames;
  if (crossing && cv->pushed == cv->change + BLOCK)
    promote(cv);
  return CUDAFFT_STATUS_OK;
}

/* Creation ------------------------------------------------------------------------------------- */

static void
convolve_free(void *object)
{
  CudafftConvolve *cv = object;
  if (!cv)
    return;
  if (cv->ops) {
    filter_destroy(cv, &cv->current);
    filter_destroy(cv, &cv->next);
    filter_destroy(cv, &cv->queued);
  }
  free(cv->stage);
  free(cv->scratch);
  free(cv->tail);
  free(cv);
}

/* The try_backend of cudafft_create_on_backend() for a convolution: its first filter, for kernel
 * (the spec), on the table for backend. */
static CudafftStatus
first_filter(void *convolve, const void *kernel, CudafftBackend backend)
{
  CudafftConvolve *cv = convolve;
  cv->ops =
      CUDAFFT_BACKEND_TABLE(backend, cudafft_convolve_cpu_backend, cudafft_convolve_cuda_backend);
  return filter_create(cv, cv->ops, kernel, &cv->current);
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

  status = cudafft_create_on_backend(backend, first_filter, cv, &config->kernel, &cv->backend);
  return cudafft_publish((void **)convolve_out, cv, status, convolve_free);
}

void
cudafft_convolve_destroy(CudafftConvolve *convolve)
{
  convolve_free(convolve);
}

CUDAFFT_DEFINE_GETTER(CudafftBackend, cudafft_convolve_get_backend, CudafftConvolve,
                      object->backend, CUDAFFT_BACKEND_AUTO)

CUDAFFT_DEFINE_GETTER(size_t, cudafft_convolve_frame_bytes, CudafftConvolve, object->frame_bytes, 0)

size_t
cudafft_convolve_latency(const CudafftConvolve *convolve)
{
  if (!convolve)
    return 0;
  size_t latency = path_latency(convolve->current.path);
  if (convolve->next.impl && path_latency(convolve->next.path) > latency)
    latency = path_latency(convolve->next.path);
  if (convolve->queued.impl && path_latency(convolve->queued.path) > latency)
    latency = path_latency(convolve->queued.path);
  return latency;
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
  if (convolve)
    restart(convolve);
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
  /* Made now, so that a kernel that does not fit is refused here and not mid-stream. */
  Filter filter = {0};
  status = filter_create(cv, cv->ops, kernel, &filter);
  if (status != CUDAFFT_STATUS_OK) {
    restart(cv);
    return status;
  }
  if (cv->next.impl && cv->pushed > cv->change) {
    /* a crossover is under way: this one follows it, replacing any other that was to follow */
    filter_destroy(cv, &cv->queued);
    cv->queued = filter;
  } else {
    /* the first block boundary not yet passed; an earlier change not yet begun is replaced */
    filter_destroy(cv, &cv->next);
    cv->next = filter;
    cv->change = (cv->pushed + BLOCK - 1) / BLOCK * BLOCK;
  }
  return CUDAFFT_STATUS_OK;
}

/* Streaming ------------------------------------------------------------------------------------ */

static int
overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

CudafftStatus
cudafft_convolve_push(CudafftConvolve *convolve, const void *in, size_t frames, void *out,
                      size_t *produced)
{
  if (produced)
    *produced = 0;
  if (!convolve)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_convolve_push: convolve is NULL");
  CudafftConvolve *cv = convolve;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  const size_t fb = cv->frame_bytes;
  if (!produced || (frames > 0 && (!in || !out)))
    status = cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_convolve_push: %s is NULL",
                          !produced ? "produced"
                          : !in     ? "in"
                                    : "out");
  else if (frames > SIZE_MAX / fb - BLOCK) /* so that (frames + lag) fb fits */
    status = cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                          "cudafft_convolve_push: %zu frames is too many", frames);
  else if (overlap(in, frames * fb, out, cudafft_convolve_max_output(cv, frames) * fb))
    status =
        cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "cudafft_convolve_push: in and out overlap");
  if (status != CUDAFFT_STATUS_OK) {
    restart(cv); /* as documented: every failure resets */
    return status;
  }

  const uint8_t *src = in;
  uint8_t *dst = out;
  const size_t first = cv->produced;
  size_t taken = 0;
  while (taken < frames && status == CUDAFFT_STATUS_OK) {
    int blockwise;
    size_t left, count = frames - taken;
    stretch_at(cv, &blockwise, &left);
    uint8_t *o = dst + (cv->produced - first) * fb;
    const size_t staged = cv->pushed - cv->produced;
    if (!blockwise) {
      count = count < left ? count : left;
      status = run(cv, src + taken * fb, count, o);
    } else if (staged == 0 && count >= BLOCK) {
      /* whole blocks straight from the caller's buffer (a stretch's length is whole blocks) */
      count = (count < left ? count : left) / BLOCK * BLOCK;
      status = run(cv, src + taken * fb, count, o);
    } else {
      count = count < BLOCK - staged ? count : BLOCK - staged;
      memcpy(cv->stage + staged * fb, src + taken * fb, count * fb);
      cv->pushed += count;
      if (staged + count == BLOCK) {
        cv->pushed -= BLOCK;
        status = run(cv, cv->stage, BLOCK, o);
      }
    }
    taken += count;
  }
  if (status != CUDAFFT_STATUS_OK) {
    restart(cv);
    return status;
  }
  *produced = cv->produced - first;
  return CUDAFFT_STATUS_OK;
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
  if (!produced || (total > 0 && !out)) {
    restart(cv);
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER, "cudafft_convolve_drain: %s is NULL",
                        !produced ? "produced" : "out");
  }

  uint8_t *dst = out;
  const size_t first = cv->produced;
  CudafftStatus status = CUDAFFT_STATUS_OK;
  while (cv->produced - first < total && status == CUDAFFT_STATUS_OK) {
    int blockwise;
    size_t left;
    stretch_at(cv, &blockwise, &left);
    const size_t wanted = total - (cv->produced - first);
    uint8_t *o = dst + (cv->produced - first) * fb;
    const size_t staged = cv->pushed - cv->produced;
    if (!blockwise) {
      status = run(cv, NULL, wanted < left ? wanted : left, o);
    } else if (staged == 0 && wanted >= BLOCK) {
      const size_t count = (wanted < left ? wanted : left) / BLOCK * BLOCK;
      status = run(cv, NULL, count, o);
    } else {
      /* the last input block, padded with zeros, or a block of which only the start is wanted */
      const void *in = NULL;
      if (staged > 0) {
        memset(cv->stage + staged * fb, 0, (BLOCK - staged) * fb);
        cv->pushed -= staged;
        in = cv->stage;
      }
      const int whole = wanted >= BLOCK;
      status = run(cv, in, BLOCK, whole ? o : cv->tail);
      if (status == CUDAFFT_STATUS_OK && !whole) {
        memcpy(o, cv->tail, wanted * fb);
        cv->produced -= BLOCK - wanted; /* the rest is past the end */
      }
    }
  }
  if (status != CUDAFFT_STATUS_OK) {
    restart(cv);
    return status;
  }
  *produced = total;
  restart(cv);
  return CUDAFFT_STATUS_OK;
}

/* Block size: a placeholder while the split path is built (only the default is taken). */
CudafftStatus
cudafft_convolve_set_block_size(CudafftConvolve *convolve, size_t block_size)
{
  if (!convolve)
    return cudafft_fail(CUDAFFT_STATUS_NULL_POINTER,
                        "cudafft_convolve_set_block_size: convolve is NULL");
  if (block_size != BLOCK)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE, "block size %zu is not supported yet",
                        block_size);
  return CUDAFFT_STATUS_OK;
}

size_t
cudafft_convolve_get_block_size(const CudafftConvolve *convolve)
{
  return convolve ? BLOCK : 0;
}
