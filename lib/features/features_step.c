/* features_step.c: see the header. */
#include "features_step.h"

#include "errors.h"
#include "sample_values.h"

#include <math.h>
#include <string.h>

/* Frames per append at most (fewer where a step's input or output would not fit). */
#define PIECE_FRAMES 256

int
cudafft_features_direct_output(const CudafftFeaturesConfig *c)
{
  return c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES && c->delta_order == 0 &&
         (c->kind == CUDAFFT_FEATURES_MEL || !(c->range > 0.0f));
}

void
cudafft_features_object_describe(CudafftFeaturesObject *o, const CudafftFeaturesConfig *c,
                                 const CudafftFeaturesShape *shape,
                                 const CudafftFeaturesTables *tables, size_t history_capacity,
                                 size_t ring_frames)
{
  const CudafftFeaturesTimeline t = cudafft_features_timeline(c);
  o->channels = c->channels;
  o->history_capacity = (uint32_t)history_capacity;
  o->ring_frames = (uint32_t)ring_frames;
  o->ring_values = c->n_mels + 1;
  o->n_mels = c->n_mels;
  o->n_mfcc = c->kind == CUDAFFT_FEATURES_MFCC ? c->n_mfcc : 0;
  o->base_features = (uint32_t)shape->base_features;
  o->features = (uint32_t)shape->features;
  o->length = (uint32_t)(c->win_length ? c->win_length : c->fft_size);
  o->fft_size = (uint32_t)c->fft_size;
  o->hop = (uint32_t)c->hop;
  o->start_offset = (int32_t)(t.pad_in - t.offset);
  o->pad = c->pad;
  o->zero_end = c->edges == CUDAFFT_FEATURES_EDGES_END;
  o->kind = c->kind;
  o->log = c->log;
  o->energy = c->energy;
  o->power = (int32_t)c->power;
  o->remove_dc = c->remove_dc != 0;
  o->preemphasis = c->preemphasis;
  o->delta_order = (int32_t)c->delta_order;
  o->delta_style = c->delta_style;
  o->delta_reach = (int32_t)t.delta_reach;
  o->precision = c->precision;
  o->layout = c->layout;
  o->output = c->output;
  o->direct = cudafft_features_direct_output(c);
  o->format = c->format;
  o->log_floor = (float)c->log_floor;
  o->db_offset = (float)(10.0 * log10(c->log_floor > c->db_ref ? c->log_floor : c->db_ref));
  o->log_energy_floor = c->energy_floor > 0.0f ? logf(c->energy_floor) : -INFINITY;
  o->bin_scale = tables->bin_scale;
  o->preemph_coeff = c->preemph_coeff;
  o->dither = c->dither;
  o->sample_scale = c->sample_scale;
  o->range = c->range;
  o->shift = c->shift;
  o->scale = c->scale;
  o->regression_norm = tables->regression_norm;
  o->pad_value = c->pad_value;
  o->dither_seed = c->dither_seed;
  o->window_frames = (uint32_t)shape->frames;
  o->window_stride = (uint32_t)c->window_stride;
}

static size_t
smaller(size_t a, size_t b)
{
  return a < b ? a : b;
}

CudafftStatus
cudafft_features_stepper_init(CudafftFeaturesStepper *s, const CudafftFeaturesConfig *c,
                              const CudafftFeaturesShape *shape, size_t budget, size_t aux_reserve)
{
  memset(s, 0, sizeof *s);
  s->config = *c;
  s->shape = *shape;
  s->in_frame_bytes = c->channels * cudafft_sample_size(c->format);
  const size_t in_budget = budget - aux_reserve;
  if (c->hop * s->in_frame_bytes > in_budget)
    return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                        "features: a hop of %zu samples of %u channels (%zu bytes) exceeds a "
                        "device job (%zu bytes)",
                        c->hop, c->channels, c->hop * s->in_frame_bytes, in_budget);
  size_t piece = smaller(PIECE_FRAMES, in_budget / (c->hop * s->in_frame_bytes));
  if (c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES) {
    /* a step's frames and their outputs fit one job */
    if (shape->bytes * 2 > budget)
      return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                          "features: one frame of %u channels x %zu features (%zu bytes) exceeds "
                          "half a device job (%zu bytes): use fewer channels or features a "
                          "stream",
                          c->channels, shape->features, shape->bytes, budget);
    piece = smaller(piece, budget / shape->bytes / 2);
    s->group = c->channels;
    s->units_per_step = 1;
  } else {
    const size_t per_channel = shape->bytes / c->channels;
    if (per_channel > budget)
      return cudafft_fail(CUDAFFT_STATUS_UNSUPPORTED,
                          "features: a window of %zu frames x %zu features (%zu bytes a channel) "
                          "exceeds a device job (%zu bytes)",
                          shape->frames, shape->features, per_channel, budget);
    s->group = (unsigned)smaller(c->channels, budget / per_channel);
    /* windows whose range clamps differ must not share frames' base rows in one step */
    const int overlapping = c->output == CUDAFFT_FEATURES_OUTPUT_WINDOWS &&
                            c->window_stride < c->window_frames &&
                            c->kind != CUDAFFT_FEATURES_MEL && c->range > 0.0f;
    s->units_per_step = s->group == c->channels && !overlapping ? budget / shape->bytes : 1;
    s->units_per_step = s->units_per_step > 0 ? s->units_per_step : 1;
  }
  piece = piece > 0 ? piece : 1;
  cudafft_features_driver_init(&s->driver, c, piece);
  const CudafftFeaturesTimeline t = cudafft_features_timeline(c);
  /* what a step's frames read back from its end (features_driver.c's history start) and what it
   * appends, with room for a held-back frame and the signal pre-emphasis' one sample before */
  s->history_capacity = (size_t)(t.span + t.pad_in + t.offset) + 4 * c->hop + piece * c->hop + 64;
  s->ring_frames =
      cudafft_features_direct_output(c) ? 0 : (size_t)cudafft_features_ring_frames(c, piece);
  return CUDAFFT_STATUS_OK;
}

void
cudafft_features_stepper_reset(CudafftFeaturesStepper *s)
{
  cudafft_features_driver_reset(&s->driver);
  s->pending = 0;
}

static CudafftStatus
submit(CudafftFeaturesStepper *s, const CudafftFeaturesStep *step, const void *in,
       unsigned char *out, size_t out_bytes)
{
  const CudafftFeaturesWork work = {*step, step->has_input ? in : NULL,
                                    step->has_input ? (size_t)step->append_count * s->in_frame_bytes
                                                    : 0,
                                    out_bytes ? out : NULL, out_bytes};
  return s->submit(s->ctx, &work);
}

/* Submits the step being built, if any (an append, its frames). */
static CudafftStatus
flush(CudafftFeaturesStepper *s)
{
  if (!s->pending)
    return CUDAFFT_STATUS_OK;
  s->pending = 0;
  return submit(s, &s->step, s->step_in, NULL, 0);
}

static void
begin_step(CudafftFeaturesStepper *s)
{
  if (s->pending)
    return;
  s->pending = 1;
  memset(&s->step, 0, sizeof s->step);
  s->step.kept = CUDAFFT_FEATURES_UNKNOWN;
  s->step.group = s->config.channels;
  s->step_in = NULL;
}

static CudafftStatus
op_append(void *ctx, const void *in, size_t count, int in_on_device, uint64_t at)
{
  (void)in_on_device;
  CudafftFeaturesStepper *s = ctx;
  const CudafftStatus flushed = flush(s);
  if (flushed != CUDAFFT_STATUS_OK)
    return flushed;
  /* the history keeps what later frames read (SIGNAL pre-emphasis: one sample before) */
  uint64_t keep = cudafft_features_history_start(&s->driver.t, s->driver.made, at);
  if (s->config.preemphasis == CUDAFFT_FEATURES_PREEMPHASIS_SIGNAL && keep > 0)
    keep--;
  if (at + count - keep > s->history_capacity)
    return cudafft_fail(CUDAFFT_STATUS_INVALID_VALUE,
                        "features: %llu samples to hold exceed the history of %zu",
                        (unsigned long long)(at + count - keep), s->history_capacity);
  begin_step(s);
  s->step.append_at = at;
  s->step.append_count = (uint32_t)count;
  s->step.has_input = in != NULL;
  s->step_in = in;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
op_make_frames(void *ctx, uint64_t f0, uint64_t f1, uint64_t length, int ended)
{
  CudafftFeaturesStepper *s = ctx;
  if (s->pending && s->step.f1 > s->step.f0) {
    const CudafftStatus flushed = flush(s);
    if (flushed != CUDAFFT_STATUS_OK)
      return flushed;
  }
  begin_step(s);
  s->step.f0 = f0;
  s->step.f1 = f1;
  s->step.length = length;
  s->step.ended = ended;
  return CUDAFFT_STATUS_OK;
}

static CudafftStatus
op_write_units(void *ctx, const CudafftFeaturesUnits *units)
{
  CudafftFeaturesStepper *s = ctx;
  const CudafftFeaturesConfig *c = &s->config;
  begin_step(s);
  CudafftFeaturesStep step = s->step;
  const void *in = s->step_in;
  s->pending = 0;
  step.kept = units->kept;
  step.made = units->made;
  unsigned char *out = s->out + units->out_index * s->shape.bytes;
  if (c->output == CUDAFFT_FEATURES_OUTPUT_FRAMES) {
    if (cudafft_features_direct_output(c) &&
        (step.f0 != units->first || step.f1 != units->first + units->count))
      return cudafft_fail(
          CUDAFFT_STATUS_INVALID_VALUE, "features: frames %llu..%llu made but %llu..%llu due",
          (unsigned long long)step.f0, (unsigned long long)step.f1,
          (unsigned long long)units->first, (unsigned long long)(units->first + units->count));
    step.first = units->first;
    step.count = units->count;
    step.c0 = 0;
    step.group = c->channels;
    return submit(s, &step, in, out, (size_t)units->count * s->shape.bytes);
  }
  /* windows: several of every channel a step, or one window's channel groups */
  const size_t channel_bytes = s->shape.bytes / c->channels;
  for (uint64_t u = 0; u < units->count;) {
    const uint64_t count =
        s->group == c->channels ? smaller((size_t)(units->count - u), s->units_per_step) : 1;
    for (unsigned c0 = 0; c0 < c->channels; c0 += s->group) {
      step.first = units->first + u;
      step.count = count;
      step.c0 = c0;
      step.group = c->channels - c0 < s->group ? c->channels - c0 : s->group;
      const CudafftStatus status =
          submit(s, &step, in, out + (size_t)u * s->shape.bytes + (size_t)c0 * channel_bytes,
                 (size_t)count * step.group * channel_bytes);
      if (status != CUDAFFT_STATUS_OK)
        return status;
      /* the step's append and frames go with its first job only */
      step.append_count = 0;
      step.has_input = 0;
      step.f0 = step.f1 = 0;
      in = NULL;
    }
    u += count;
  }
  return CUDAFFT_STATUS_OK;
}

static void
op_end_utterance(void *ctx)
{
  (void)flush(ctx); /* a failure shows at the next submit or the call's wait */
}

CudafftStatus
cudafft_features_stepper_run(CudafftFeaturesStepper *s, const void *in, size_t samples,
                             int in_on_device, int finish, void *out, size_t *outputs)
{
  s->out = out;
  s->in_on_device = in_on_device;
  const CudafftFeaturesOps ops = {s, op_append, op_make_frames, op_write_units, op_end_utterance};
  CudafftStatus status = cudafft_features_drive(&s->driver, &ops, in, samples, s->in_frame_bytes,
                                                in_on_device, finish, outputs);
  if (status == CUDAFFT_STATUS_OK)
    status = flush(s);
  if (status != CUDAFFT_STATUS_OK)
    cudafft_features_stepper_reset(s);
  return status;
}
